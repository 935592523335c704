"""The OCR control's answer: a specimen code, the letter A followed by eleven digits (§K.3, §G.8).

Table 14 rejects a reply that holds no code-like string. A *code-like string* here is an ``A`` followed
by at least five digits, or a run of at least eight digits, where spaces, hyphens, dots and underscores
between the characters are dropped ("A0000 0012 345" → ``A00000012345``). The value keeps what the model
wrote otherwise (no correction of length or characters: the instruction says not to correct), except
that a lower-case ``a`` is upper-cased. ``detail`` says whether the value has the exact format
(``""``) or not (``"nonstandard"``); both are parsed, so character accuracy can grade near misses.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from biovqa.parse.result import Parsed

MAX_CHARS = 100_000
CODE_FORMAT = re.compile(r"A\d{11}")
#: The codes share a fixed prefix; the informative suffix starts here (see :mod:`biovqa.metrics.c3`).
SUFFIX_START = 6

_WITH_A = re.compile(r"(?<![A-Za-z0-9])[Aa][ ._-]?((?:\d[ ._-]?){4,}\d)(?!\d)")
_DIGITS = re.compile(r"(?<![A-Za-z0-9])((?:\d[ ._-]?){7,}\d)(?!\d)")
_SEPARATORS = re.compile(r"[ ._-]")


def parse_code(response: str | None, row: Mapping | None = None) -> Parsed:
    """The first code-like string in a reply (exact format or not); none is a failure."""
    if response is not None and not isinstance(response, str):
        return Parsed.fail("not_text", type(response).__name__)
    if response is None or not isinstance(response, str) or not response.strip():
        return Parsed.fail("empty")
    text = response[:MAX_CHARS]
    m = _WITH_A.search(text)
    if m is not None:
        value = "A" + _SEPARATORS.sub("", m.group(1))
    else:
        m = _DIGITS.search(text)
        if m is None:
            return Parsed.fail("no_code", text.strip()[:80])
        value = _SEPARATORS.sub("", m.group(1))
    return Parsed(value, True, "ok", "" if CODE_FORMAT.fullmatch(value) else "nonstandard")


def char_accuracy(pred: str, gold: str, start: int = 0) -> float:
    """Position-wise character accuracy over positions ``start…`` of the longer string.

    Characters are compared at the same index (the codes have a fixed layout); a missing or extra
    character counts as wrong, so the denominator is ``max(len(pred), len(gold)) - start``.
    """
    n = max(len(pred), len(gold)) - start
    if n <= 0:
        return float("nan")
    hits = sum(1 for i in range(start, min(len(pred), len(gold))) if pred[i] == gold[i])
    return hits / n
