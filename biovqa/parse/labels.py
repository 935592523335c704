"""Label answers for C3: viewpoints (ten labels), directions (eight), and the A–D choices.

Viewpoint (§K.3, Table 14): the ten accepted answers ``front back left right frontleft frontright
backleft backright up down``; "front-left", "front left", "Front Left.", "left front" all read as
``frontleft``, "rear" as ``back``, "top"/"bottom" as ``up``/``down`` (as the builder maps the sources). The eight compound/cardinal labels sit on a 45° ring; ``up`` and
``down`` sit off it. :func:`viewpoint_steps` counts 45° steps on the ring and :func:`viewpoint_outcome`
names the error class; the ``over`` class (§G.3) is a compound answer one step from a cardinal gold
label ("front-left" for ``left``): the correct side plus a component the annotation does not carry.

Directions (§K.3, Table 10, §G.7): ``top bottom left right top-left top-right bottom-left
bottom-right``, with synonyms (above/upper/up/north → top, below/lower/down/under/beneath/south →
bottom, west/east, "upper left", "above and to the left", "northwest"). Each question offers four of
them; the first offered direction the reply names is the answer, and a reply naming none of the four
fails (``not_offered`` when it names another direction, ``no_direction`` when it names none).

Choices (relative counting and distance): "Image A (top-left)", "Beetle C", "(C)", "C", "Answer: C";
without a letter, a panel position ("top-left") or a beetle colour ("the red one") named in the options.
A reply naming two different letters is ``ambiguous`` unless it states a conclusion ("answer is C").

In every parser the first matching mention wins; more than two distinct viewpoints in one reply (an echo
of the option list) is ``ambiguous``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from biovqa.parse.result import Parsed
from biovqa.prompts import VIEWPOINTS as VIEWPOINTS  # re-exported: the ten labels of the §K.3 instruction

MAX_CHARS = 100_000


#: bearing of each ring viewpoint in degrees (front = facing the camera); up/down are off the ring
VIEWPOINT_BEARING: dict[str, int] = {
    "front": 0,
    "frontright": 45,
    "right": 90,
    "backright": 135,
    "back": 180,
    "backleft": 225,
    "left": 270,
    "frontleft": 315,
}
DIRECTIONS: tuple[str, ...] = (
    "top",
    "bottom",
    "left",
    "right",
    "top-left",
    "top-right",
    "bottom-left",
    "bottom-right",
)
#: bearing of each direction on the 45° ring (top = 0°, clockwise)
DIRECTION_BEARING: dict[str, int] = {
    "top": 0,
    "top-right": 45,
    "right": 90,
    "bottom-right": 135,
    "bottom": 180,
    "bottom-left": 225,
    "left": 270,
    "top-left": 315,
}
LETTERS: tuple[str, ...] = ("A", "B", "C", "D")
#: default hints when the options do not spell them out: 2×2 grid positions and beetle line colours
_PANEL_HINTS = {"top left": "A", "top right": "B", "bottom left": "C", "bottom right": "D"}
_BEETLE_HINTS = {"red": "A", "blue": "B", "green": "C", "white": "D"}


def _clean(response: str | None) -> str | None:
    if response is None or not isinstance(response, str):
        return None
    text = response[:MAX_CHARS].strip()
    return text or None


def _norm(text: str) -> str:
    """Lower case; hyphens/underscores to spaces; other punctuation to a " . " break (so that "back,
    left" never reads as "backleft"); collapsed whitespace."""
    text = re.sub(r"[^a-z0-9\s_-]+", " . ", text.lower())
    return " ".join(re.sub(r"[\s_-]+", " ", text).split())


# ------------------------------------------------------------------------------------------ viewpoint
#: the builder maps the sources' top/bottom to up/down (builder.sources.records); replies get the same
_VP_ALIASES = {"rear": "back", "top": "up", "bottom": "down"}
_VP_PATTERN = re.compile(
    r"\b(?:(front|back|rear)\s?(left|right)|(left|right)\s(front|back|rear)|"
    r"(front|back|rear|left|right|up|down|top|bottom))\b"
)


@lru_cache(maxsize=4096)
def canonical_viewpoint(text: str | None) -> str | None:
    """The viewpoint label a short text names (``"Front-Left."`` → ``frontleft``), else None."""
    if not text:
        return None
    found = _viewpoint_mentions(_norm(text))
    return found[0] if found else None


def _viewpoint_mentions(norm: str) -> list[str]:
    out: list[str] = []
    for m in _VP_PATTERN.finditer(norm):
        fb1, lr1, lr2, fb2, single = m.groups()
        if single:
            label = _VP_ALIASES.get(single, single)
        else:
            fb = (fb1 or fb2).replace("rear", "back")
            label = fb + (lr1 or lr2)
        if label not in out:
            out.append(label)
    return out


def parse_viewpoint(response: str | None, row: Mapping | None = None) -> Parsed:
    """One of the ten viewpoint labels; none named (or an echo of the list) is a failure."""
    if response is not None and not isinstance(response, str):
        return Parsed.fail("not_text", type(response).__name__)
    text = _clean(response)
    if text is None:
        return Parsed.fail("empty")
    found = _viewpoint_mentions(_norm(text))
    if not found:
        return Parsed.fail("no_viewpoint", text[:80])
    if len(found) > 2:
        return Parsed.fail("ambiguous", ",".join(found))
    return Parsed(found[0], True, "ok", "" if len(found) == 1 else "first_of:" + ",".join(found))


def viewpoint_steps(gold: str, pred: str) -> int | None:
    """45° steps between two ring viewpoints (0–4); 0 for equal labels; None when one is off the ring."""
    if gold == pred:
        return 0
    a, b = VIEWPOINT_BEARING.get(gold), VIEWPOINT_BEARING.get(pred)
    if a is None or b is None:
        return None
    d = abs(a - b) % 360
    return min(d, 360 - d) // 45


def viewpoint_outcome(gold: str, pred: str) -> str:
    """Error class: exact, over (compound answer, cardinal gold, one step), under (the reverse),
    two_steps, three_steps, opposite, off_ring (up/down involved and not equal)."""
    steps = viewpoint_steps(gold, pred)
    if steps is None:
        return "off_ring"
    if steps == 1:
        return "over" if len(pred) > len(gold) else "under"
    return {0: "exact", 2: "two_steps", 3: "three_steps", 4: "opposite"}[steps]


# ------------------------------------------------------------------------------------------ direction
_V_UP = r"top|upper|up|above|north"
_V_DOWN = r"bottom|lower|down|below|beneath|under|underneath|south"
_H = r"left|right|west|east"
_DIR_PATTERN = re.compile(
    rf"\b(?:({_V_UP}|{_V_DOWN})\s?(?:and\s)?(?:(?:to|on)\s)?(?:the\s)?({_H})|"
    rf"({_H})\s?(?:and\s)?(?:(?:to|on)\s)?(?:the\s)?(top|upper|bottom|lower)|"
    rf"(north|south)(east|west)|({_V_UP}|{_V_DOWN}|{_H}))\b"
)


def _vertical(word: str) -> str:
    return "top" if re.fullmatch(_V_UP, word) else "bottom"


def _horizontal(word: str) -> str:
    return "left" if word in ("left", "west") else "right"


def _direction_mentions(norm: str) -> list[str]:
    out: list[str] = []
    for m in _DIR_PATTERN.finditer(norm):
        v1, h1, h2, v2, ns, ew, single = m.groups()
        if single:
            label = _vertical(single) if re.fullmatch(f"{_V_UP}|{_V_DOWN}", single) else _horizontal(single)
        elif ns:
            label = f"{'top' if ns == 'north' else 'bottom'}-{_horizontal(ew)}"
        else:
            label = f"{_vertical(v1 or v2)}-{_horizontal(h1 or h2)}"
        if label not in out:
            out.append(label)
    return out


@lru_cache(maxsize=4096)
def canonical_direction(text: str | None) -> str | None:
    """The direction a short text names (``"Upper Left"`` → ``top-left``), else None."""
    if not text:
        return None
    found = _direction_mentions(_norm(text))
    return found[0] if found else None


def offered_directions(row: Mapping | None) -> tuple[str, ...]:
    """The canonical directions a row offers (its ``options``); all eight when the row lists none."""
    options = (row or {}).get("options") or []
    offered = tuple(d for d in (canonical_direction(o) for o in options) if d)
    return offered or DIRECTIONS


def parse_direction(response: str | None, row: Mapping | None = None) -> Parsed:
    """The first offered direction the reply names; naming none of the offered four is a failure."""
    if response is not None and not isinstance(response, str):
        return Parsed.fail("not_text", type(response).__name__)
    text = _clean(response)
    if text is None:
        return Parsed.fail("empty")
    found = _direction_mentions(_norm(text))
    if not found:
        return Parsed.fail("no_direction", text[:80])
    offered = offered_directions(row)
    for label in found:
        if label in offered:
            return Parsed(label, True, "ok", "")
    return Parsed.fail("not_offered", ",".join(found))


def direction_steps(gold: str, pred: str) -> int:
    """45° steps between two directions on the ring (0–4)."""
    d = abs(DIRECTION_BEARING[gold] - DIRECTION_BEARING[pred]) % 360
    return min(d, 360 - d) // 45


# --------------------------------------------------------------------------------------------- choice
_QUALIFIED = re.compile(
    r"\b(?:image|beetle|panel|photo(?:graph)?|picture|specimen|option|choice)\s*[\(\[]?([abcd])\b(?![-'])",
    re.IGNORECASE,
)
_CONCLUSION = re.compile(
    r"(?i:\b(?:answer|choice|option)\s*(?:is|would be|:)?\s*:?\s*(?:image|beetle|panel|option)?)\s*"
    r"[\(\[*]*([A-D])\b(?![-'])"
)
_PAREN = re.compile(r"[\(\[]([A-Da-d])[\)\]]")
_LEADING = re.compile(r"^[\s*_\"'`]*([A-D])(?:[\).:,]|\s*$|\s+[\(\-])")
_UPPER = re.compile(r"(?<![A-Za-z'])([A-D])(?![A-Za-z'])")
_TRAILING = re.compile(r"(?<![A-Za-z'])([A-D])[\s.!)\]*_\"'`]*$")


def _option_hints(row: Mapping | None) -> dict[str, str]:
    """Words that name an option without its letter: grid positions or beetle colours."""
    options = [str(o) for o in ((row or {}).get("options") or [])]
    hints: dict[str, str] = {}
    for i, opt in enumerate(options[:4]):
        inner = re.search(r"\(([^)]*)\)", opt)
        if inner:
            words = _norm(inner.group(1)).split(" dotted")[0].split(" . ")[0].strip()
            if words:
                hints[words] = LETTERS[i]
    if not hints:
        joined = " ".join(options).lower()
        hints = dict(_BEETLE_HINTS) if "beetle" in joined else dict(_PANEL_HINTS)
    return hints


def parse_choice_abcd(response: str | None, row: Mapping | None = None) -> Parsed:
    """A letter A–D ("Image A (top-left)", "Beetle C", "C"); value is the letter."""
    if response is not None and not isinstance(response, str):
        return Parsed.fail("not_text", type(response).__name__)
    text = _clean(response)
    if text is None:
        return Parsed.fail("empty")
    bare = re.sub(r"[\s*_\"'`.:!()\[\]]+", "", text)
    if len(bare) == 1 and bare.upper() in LETTERS:
        return Parsed(bare.upper(), True, "ok", "")
    letters: list[str] = []
    for pattern in (_QUALIFIED, _PAREN):
        for m in pattern.finditer(text):
            letter = m.group(1).upper()
            if letter not in letters:
                letters.append(letter)
    if not letters:
        concl = _CONCLUSION.search(text)
        if concl:
            return Parsed(concl.group(1), True, "ok", "conclusion")
        lead = _LEADING.match(text)
        if lead:
            return Parsed(lead.group(1), True, "ok", "leading_letter")
        trail = _TRAILING.search(text)
        if trail:
            return Parsed(trail.group(1), True, "ok", "trailing_letter")
        uppers = list(dict.fromkeys(m.group(1) for m in _UPPER.finditer(text) if m.group(1) != "A"))
        if len(uppers) == 1:
            letters = uppers
    if len(letters) == 1:
        return Parsed(letters[0], True, "ok", "")
    if len(letters) > 1:
        concl = list(_CONCLUSION.finditer(text))
        if concl:
            return Parsed(concl[-1].group(1), True, "ok", "conclusion")
        return Parsed.fail("ambiguous", ",".join(letters))
    norm = _norm(text)
    hinted = []
    for words, letter in _option_hints(row).items():
        m = re.search(rf"\b{re.escape(words)}\b", norm)
        if m:
            hinted.append((m.start(), letter))
    if hinted:
        distinct = {letter for _, letter in hinted}
        if len(distinct) == 1:
            return Parsed(hinted[0][1], True, "ok", "option_hint")
        return Parsed.fail("ambiguous", ",".join(sorted(distinct)))
    return Parsed.fail("no_choice", text[:80])


def letter_index(letter: str | None) -> int:
    """0–3 for A–D, −1 otherwise."""
    return LETTERS.index(letter) if letter in LETTERS else -1


def choice_gold(
    answer_index: int | None, answer: str | None, options: Sequence[str] | None = None
) -> str | None:
    """The gold letter of a choice row: ``answer_index`` when set, else the letter ``answer`` names."""
    if answer_index is not None and 0 <= answer_index < 4:
        return LETTERS[answer_index]
    parsed = parse_choice_abcd(answer, {"options": list(options or [])})
    return parsed.value if parsed.ok else None
