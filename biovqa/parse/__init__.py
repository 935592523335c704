"""One parser per answer form (§K.5, Table 14), behind one dispatcher (Contract 3).

``parse(answer_form, response, row) -> Parsed`` picks the module that owns the answer form and calls,
in that module, ``parse_<answer_form>(response, row)`` when it exists, else ``parse(response, row)``.
Parser modules are imported lazily, so a form whose module is missing or broken fails with a clear
``ImportError`` naming the module, while every other form keeps working.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from biovqa.parse.result import Parsed

#: answer form -> module (under ``biovqa.parse``) that parses it
FORM_MODULES: dict[str, str] = {
    "open_text": "text",
    "mcq_bare": "text",
    "mcq_lettered": "mcq",
    "integer": "numbers",
    "number_cm": "numbers",
    "choice_abcd": "labels",
    "box": "boxes",
    "direction": "labels",
    "viewpoint": "labels",
    "code": "code",
    "yes_no": "yesno",
}

_CACHE: dict[str, Callable[..., Parsed]] = {}

__all__ = ["FORM_MODULES", "Parsed", "get_parser", "parse"]


def get_parser(answer_form: str) -> Callable[..., Parsed]:
    """The callable ``(response, row) -> Parsed`` for one answer form (raises a clear error if absent)."""
    fn = _CACHE.get(answer_form)
    if fn is not None:
        return fn
    module_name = FORM_MODULES.get(answer_form)
    if module_name is None:
        raise ValueError(f"unknown answer_form {answer_form!r}; known: {sorted(FORM_MODULES)}")
    qualified = f"biovqa.parse.{module_name}"
    try:
        module = importlib.import_module(qualified)
    except ImportError as exc:
        raise ImportError(
            f"no parser for answer_form {answer_form!r}: module {qualified} cannot be imported ({exc})"
        ) from exc
    fn = getattr(module, f"parse_{answer_form}", None) or getattr(module, "parse", None)
    if fn is None:
        raise ImportError(f"{qualified} defines neither parse_{answer_form}() nor parse()")
    _CACHE[answer_form] = fn
    return fn


def parse(answer_form: str, response: str | None, row: dict | None = None) -> Parsed:
    """Parse one reply for its answer form; a parser that raises becomes a recorded failure."""
    fn = get_parser(answer_form)
    try:
        return fn(response, row)
    except Exception as exc:  # Contract 3: never raise on a reply; record the failure instead
        return Parsed.fail("parser_error", f"{type(exc).__name__}: {exc}")
