"""Bounding boxes for C3 localization: parse four raw numbers, convert under one of eight conventions.

The prompt asks for ``[x, y, width, height]`` in absolute pixels, but models answer in their own
training format (§C.6, §G.5, Table 43): absolute pixels or coordinates normalized to [0, 1], [0, 100]
or [0, 1000], each as ``xywh`` or ``xyxy``. The parser therefore keeps the four numbers *raw*;
:func:`to_abs_xywh` converts them under a named convention, and :func:`detect_convention` picks, per
model, the convention with the best mean IoU against the gold boxes (ties go to the earlier entry of
:data:`CONVENTIONS`, which starts with the format the prompt asks for).

Choices where the paper is silent: keyed forms ({"x1":…, "y2":…}, "x=…, width=…") are read in the order
x, y, then width/x2, then height/y2; a reply with more than four numbers in a row keeps the first four
(``detail="extra_numbers"``); repeating the prompt's example box is parsed (and will score near zero),
flagged ``detail="prompt_example"``, as Table 43 counts such replies as parsed. Converted boxes are not
clipped to the image; ``xyxy`` corners given in the wrong order are sorted; a negative width or height
becomes an empty box.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from biovqa.parse.result import Parsed

MAX_CHARS = 100_000

#: The eight box conventions of Table 43: scale × layout. The prompt's own format comes first.
CONVENTIONS: tuple[str, ...] = (
    "abs_xywh",
    "abs_xyxy",
    "n1000_xyxy",
    "n1000_xywh",
    "n100_xyxy",
    "n100_xywh",
    "n01_xyxy",
    "n01_xywh",
)
_SCALE = {"abs": None, "n1000": 1000.0, "n100": 100.0, "n01": 1.0}
PROMPT_EXAMPLE = (1240.0, 88.0, 540.0, 410.0)

_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
_SEP = r"[\s,;()\[\]{}<>]+"
_FOUR = re.compile(rf"(?<![\w.])({_NUM}){_SEP}({_NUM}){_SEP}({_NUM}){_SEP}({_NUM})(?!\.\d)(?!\w)")
_MORE = re.compile(rf"{_SEP}{_NUM}")
_KEYED = re.compile(
    rf"[\"']?\b(x_?min|y_?min|x_?max|y_?max|x1|y1|x2|y2|x0|y0|left|top|right|bottom|width|height|x|y|w|h)\b[\"']?"
    rf"\s*[:=]\s*({_NUM})",
    re.IGNORECASE,
)
_SLOT = {
    "x": 0, "x1": 0, "x0": 0, "xmin": 0, "x_min": 0, "left": 0,
    "y": 1, "y1": 1, "y0": 1, "ymin": 1, "y_min": 1, "top": 1,
    "w": 2, "width": 2, "x2": 2, "xmax": 2, "x_max": 2, "right": 2,
    "h": 3, "height": 3, "y2": 3, "ymax": 3, "y_max": 3, "bottom": 3,
}  # fmt: skip


def parse_box(response: str | None, row: Mapping | None = None) -> Parsed:
    """Four raw numbers from a reply (brackets, parentheses, bare, ``x=…``, JSON); no box → failure."""
    if response is not None and not isinstance(response, str):
        return Parsed.fail("not_text", type(response).__name__)
    if response is None or not isinstance(response, str) or not response.strip():
        return Parsed.fail("empty")
    text = response[:MAX_CHARS]
    keyed = _keyed_box(text)
    if keyed is not None:
        return _parsed(keyed, "keyed")
    match = _FOUR.search(text)
    if match is None:
        return Parsed.fail("no_box", text.strip()[:80])
    nums = tuple(float(g) for g in match.groups())
    extra = _MORE.match(text, match.end()) is not None
    return _parsed(nums, "extra_numbers" if extra else "")


def _keyed_box(text: str) -> tuple[float, ...] | None:
    slots: list[float | None] = [None] * 4
    for m in _KEYED.finditer(text):
        slot = _SLOT[m.group(1).lower()]
        if slots[slot] is None:
            slots[slot] = float(m.group(2))
        if all(s is not None for s in slots):
            return tuple(slots)  # type: ignore[arg-type]
    return None


def _parsed(nums: tuple[float, ...], detail: str) -> Parsed:
    if not all(np.isfinite(nums)):
        return Parsed.fail("no_box", "non-finite number")
    if tuple(nums) == PROMPT_EXAMPLE:
        detail = "prompt_example"
    return Parsed(tuple(nums), True, "ok", detail)


def format_box(nums: Sequence[float]) -> str:
    """The reply text of a box, ``[x, y, w, h]`` with exact float round-trip through :func:`parse_box`."""
    return "[" + ", ".join(repr(float(v)) for v in nums) + "]"


def to_abs_xywh(nums: Sequence[float], convention: str, width: float, height: float) -> tuple[float, ...]:
    """Raw box numbers read under ``convention``, as absolute-pixel ``(x, y, w, h)``."""
    out = to_abs_xywh_many(np.asarray([nums], dtype=float), convention, np.asarray([[width, height]], float))
    return tuple(float(v) for v in out[0])


def to_abs_xywh_many(nums: np.ndarray, convention: str, sizes: np.ndarray) -> np.ndarray:
    """Vectorized :func:`to_abs_xywh`: ``nums`` (N, 4) raw, ``sizes`` (N, 2) image width and height."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown box convention {convention!r}; expected one of {CONVENTIONS}")
    scale_name, layout = convention.split("_")
    nums = np.asarray(nums, dtype=float).reshape(-1, 4)
    sizes = np.asarray(sizes, dtype=float).reshape(-1, 2)
    scale = _SCALE[scale_name]
    if scale is None:
        a = nums.copy()
    else:
        wh = np.concatenate([sizes, sizes], axis=1)
        a = nums / scale * wh
    if layout == "xyxy":
        x0, x1 = np.minimum(a[:, 0], a[:, 2]), np.maximum(a[:, 0], a[:, 2])
        y0, y1 = np.minimum(a[:, 1], a[:, 3]), np.maximum(a[:, 1], a[:, 3])
        return np.stack([x0, y0, x1 - x0, y1 - y0], axis=1)
    a[:, 2:] = np.maximum(a[:, 2:], 0.0)
    return a


def from_abs_xywh(box: Sequence[float], convention: str, width: float, height: float) -> tuple[float, ...]:
    """The inverse of :func:`to_abs_xywh`: an absolute ``(x, y, w, h)`` box written in ``convention``."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown box convention {convention!r}; expected one of {CONVENTIONS}")
    scale_name, layout = convention.split("_")
    x, y, w, h = (float(v) for v in box)
    nums = [x, y, w, h] if layout == "xywh" else [x, y, x + w, y + h]
    scale = _SCALE[scale_name]
    if scale is not None:
        nums = [v / d * scale for v, d in zip(nums, (width, height, width, height), strict=True)]
    return tuple(nums)


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two ``(x, y, w, h)`` boxes (0 when both are empty)."""
    return float(iou_many(np.asarray([a], float), np.asarray([b], float))[0])


def iou_many(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise IoU of two (N, 4) arrays of ``(x, y, w, h)`` boxes."""
    a = np.asarray(a, dtype=float).reshape(-1, 4)
    b = np.asarray(b, dtype=float).reshape(-1, 4)
    ix = np.clip(np.minimum(a[:, 0] + a[:, 2], b[:, 0] + b[:, 2]) - np.maximum(a[:, 0], b[:, 0]), 0, None)
    iy = np.clip(np.minimum(a[:, 1] + a[:, 3], b[:, 1] + b[:, 3]) - np.maximum(a[:, 1], b[:, 1]), 0, None)
    inter = ix * iy
    union = a[:, 2] * a[:, 3] + b[:, 2] * b[:, 3] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)
    return np.nan_to_num(out, nan=0.0)


def mean_iou_by_convention(parsed_boxes: np.ndarray, gold_boxes: np.ndarray, sizes: np.ndarray) -> dict:
    """Mean IoU of the parsed boxes under each of the eight conventions (NaN when there are none)."""
    parsed_boxes = np.asarray(parsed_boxes, dtype=float).reshape(-1, 4)
    if len(parsed_boxes) == 0:
        return {c: float("nan") for c in CONVENTIONS}
    return {
        c: float(iou_many(to_abs_xywh_many(parsed_boxes, c, sizes), gold_boxes).mean()) for c in CONVENTIONS
    }


def detect_convention(parsed_boxes, gold_boxes, sizes) -> str:
    """The convention under which a model's parsed boxes reach the best mean IoU (§G.5).

    ``parsed_boxes`` (N, 4) raw numbers of the parsed replies, ``gold_boxes`` (N, 4) absolute xywh,
    ``sizes`` (N, 2) image width and height. Ties, and no boxes at all, give the prompt's ``abs_xywh``.
    """
    scores = mean_iou_by_convention(parsed_boxes, gold_boxes, sizes)
    best, best_score = CONVENTIONS[0], -1.0
    for c in CONVENTIONS:
        if scores[c] > best_score:  # strict: earlier conventions win ties; NaN never wins
            best, best_score = c, scores[c]
    return best
