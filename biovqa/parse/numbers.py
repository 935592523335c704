"""Numeric answers for C3: counting (one integer) and absolute distance (a number in cm).

Table 14: counting rejects a reply that holds no integer ("There are many beetles"); absolute distance
rejects a reply that holds no number in centimetres. Choices where the paper is silent:

* Number words (zero … ninety-nine, "none") count as integers, but only when the reply holds no digit.
* A count of more than 15 digits is a recorded failure (``too_large``), a non-finite length ``not_finite``.
* A range ("5-7", "5 to 7", "between 5 and 7") is a recorded failure (``range``): the instruction asks
  for a single estimate, and taking either end would invent an answer the model did not give.
* A decimal is accepted for counting only when it is integral ("7.0"); "7.5" fails (``non_integer``).
* Several numbers: the first one counts (for cm, the first one carrying a length unit, skipping one
  that restates the 1 cm scale bar when another candidate exists).
* Units for distance: cm/centimetre(s) as given; mm and m (metre) and inch(es) are converted to cm, since
  the conversion is exact and the model stated its unit; a bare number is read as cm (the question asks
  in cm). Non-positive lengths fail (``non_positive``). A decimal comma ("0,87") is read as a point.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from biovqa.parse.result import Parsed

MAX_CHARS = 100_000  # longer replies are scanned up to here (regexes here are linear; this bounds time)
MAX_INTEGER_DIGITS = 15  # beyond this a "count" is not a number float64 can hold exactly: recorded failure

_UNITS = {
    "cm": 1.0,
    "centimeter": 1.0,
    "centimeters": 1.0,
    "centimetre": 1.0,
    "centimetres": 1.0,
    "mm": 0.1,
    "millimeter": 0.1,
    "millimeters": 0.1,
    "millimetre": 0.1,
    "millimetres": 0.1,
    "m": 100.0,
    "meter": 100.0,
    "meters": 100.0,
    "metre": 100.0,
    "metres": 100.0,
    "inch": 2.54,
    "inches": 2.54,
}

_ONES = {
    "zero": 0,
    "none": 0,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
_TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}

_INT_TOKEN = re.compile(r"(?<![\d.,])(-?)(\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(\.\d+)?(?![\d])")
_RANGE_AFTER = re.compile(r"\s*(?:-|–|—|~|to|or)\s*\d")
_BETWEEN_BEFORE = re.compile(r"(?:between|from)\s*$|\d\s*(?:-|–|—|~|to|or)\s*$")
_WORD_NUMBER = re.compile(
    r"\b(?:("
    + "|".join(_TENS)
    + r")(?:[\s-]+("
    + "|".join(k for k in _ONES if _ONES[k] < 10 and k != "none")
    + r"))?|("
    + "|".join(_ONES)
    + r"))\b"
)
_NUMBER_UNIT = re.compile(
    r"(?<![\d.,])(-?)(\d+(?:[.,]\d+)?|\.\d+)(?![\d])\s*"
    r"(cm|centimet(?:er|re)s?|mm|millimet(?:er|re)s?|met(?:er|re)s?|m|inch(?:es)?)?(?![a-z])",
    re.IGNORECASE,
)


def _text(response: str | None) -> str | None:
    if response is None or not isinstance(response, str):
        return None
    text = response[:MAX_CHARS].strip()
    return text or None


def parse_integer(response: str | None, row: Mapping | None = None) -> Parsed:
    """One count from a reply: first integer (digits, "1,234", or a number word); ranges fail."""
    if response is not None and not isinstance(response, str):
        return Parsed.fail("not_text", type(response).__name__)
    text = _text(response)
    if text is None:
        return Parsed.fail("empty")
    match = _INT_TOKEN.search(text)
    if match is None:
        words = _WORD_NUMBER.search(text.lower())
        if words is None:
            return Parsed.fail("no_integer", text[:80])
        tens, unit, ones = words.groups()
        value = _ONES[ones] if ones else _TENS[tens] + (_ONES[unit] if unit else 0)
        return Parsed(value, True, "ok", "number_word")
    sign, digits, frac = match.groups()
    if _RANGE_AFTER.match(text, match.end()) or _BETWEEN_BEFORE.search(text[: match.start()].lower()):
        return Parsed.fail("range", text[:80])
    if frac and int(frac[1:]) != 0:
        return Parsed.fail("non_integer", match.group(0))
    digits = digits.replace(",", "")
    if len(digits.lstrip("0")) > MAX_INTEGER_DIGITS:
        return Parsed.fail("too_large", match.group(0)[:40])
    value = int(digits)
    if sign and value != 0:
        return Parsed.fail("negative", match.group(0))
    return Parsed(value, True, "ok", "")


def _to_float(token: str) -> float:
    # A comma is a decimal comma unless it groups thousands ("1,234").
    if "," in token:
        head, tail = token.split(",", 1)
        token = head + tail if len(tail) == 3 and head != "0" else head + "." + tail
    return float(token)


def _lead_in(text: str, candidates: list[re.Match], match: re.Match) -> str:
    """The text between the previous number (or the start) and this one."""
    prev_end = 0
    for m in candidates:
        if m.start() >= match.start():
            break
        prev_end = m.end()
    return text[prev_end : match.start()]


def parse_number_cm(response: str | None, row: Mapping | None = None) -> Parsed:
    """A length in cm: "0.87 cm", "0.87cm", "about 1.2 centimeters", "12 mm" (→ 1.2); ranges fail."""
    if response is not None and not isinstance(response, str):
        return Parsed.fail("not_text", type(response).__name__)
    text = _text(response)
    if text is None:
        return Parsed.fail("empty")
    candidates = list(_NUMBER_UNIT.finditer(text))
    if not candidates:
        return Parsed.fail("no_number", text[:80])
    with_unit = [m for m in candidates if m.group(3)]
    if with_unit:
        # "the 1 cm scale bar … 0.87 cm": skip a restatement of the scale bar when something else is left.
        not_scale = [m for m in with_unit if "scale" not in _lead_in(text, candidates, m).lower()]
        chosen = (not_scale or with_unit)[0]
    else:
        chosen = candidates[0]
    sign, token, unit = chosen.groups()
    if _RANGE_AFTER.match(text, chosen.end(2)) or _BETWEEN_BEFORE.search(text[: chosen.start()].lower()):
        return Parsed.fail("range", text[:80])
    try:
        value = _to_float(token)
    except ValueError:
        return Parsed.fail("no_number", token)
    factor = _UNITS[unit.lower()] if unit else 1.0
    value = round(value * factor, 10) if factor != 1.0 else value  # 12 mm -> 1.2, not 1.2000000000000002
    if sign:
        value = -value
    if not math.isfinite(value):
        return Parsed.fail("not_finite", chosen.group(0)[:40])
    if not value > 0:
        return Parsed.fail("non_positive", chosen.group(0)[:40])
    detail = "" if unit and factor == 1.0 else ("no_unit" if not unit else f"converted_from_{unit.lower()}")
    return Parsed(value, True, "ok", detail)
