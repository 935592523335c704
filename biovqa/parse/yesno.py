"""Tiered yes/no parser for C4 (§H.1, Table 14, §K.4).

Tiers, tried in this order:

* guards: an empty reply fails ``"empty"``; reasoning blocks (``<think>…</think>``) are dropped;
* tier 1 (``detail="tier1"``): the whole reply is a bare *Yes* or *No* once markdown, quotes,
  brackets and trailing punctuation are stripped (``"**Yes.**"``, ``"'no'"``);
* echo guard: the prompt's own ``"Yes or No"`` (also ``yes/no``) is removed before looking for a word;
  a reply that held nothing else fails ``"echo"``, never *Yes* (§H.1);
* refusal guard: abstentions (``"I am not sure"``, ``"I cannot determine"`` …) fail ``"refusal"``,
  never *No* although they contain ``not``/``cannot`` (§H.1);
* tier 2 (``detail="tier2"``): exactly one of *yes* / *no* occurs as an isolated word in a longer
  reply (``"Yes, they are the same"``); both present fails ``"ambiguous"``, neither ``"no_answer"``.

Choice (the paper lists further "prefix" and "negated" tiers that no reply needed, §H.1): they are not
implemented; Table 14 rejects any reply without a clear Yes or No, so ``"Not the same animal"`` fails.
"""

from __future__ import annotations

import re

from biovqa.parse.result import Parsed

#: Longest reply inspected; longer replies are cut (a model that rambles this long gets its first part read).
MAX_CHARS = 20_000

_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.IGNORECASE | re.DOTALL)
# Markdown emphasis, code ticks, quotes, brackets and punctuation around a bare answer.
_STRIP_CHARS = " \t\r\n*_`~#>\"'“”‘’«»()[]{}.,;:!?¡¿-–—"
_ANSWER_PREFIX = re.compile(r"^(?:final\s+)?answer\s*[:\-–—]\s*", re.IGNORECASE)
_ECHO = re.compile(r"\byes\s*(?:or|/|\|)\s*no\b|\bno\s*(?:or|/|\|)\s*yes\b", re.IGNORECASE)
_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")

_REFUSALS = re.compile(
    r"""
    \b(?:i\s*(?:am|'m)\s*(?:not\s+(?:sure|certain|able)|unsure|uncertain|unable))
    | \bnot\s+(?:sure|certain)\b
    | \b(?:can\s*not|cannot|can't|can’t|could\s*not|couldn't|unable\s+to|impossible\s+to|not\s+possible\s+to|hard\s+to|difficult\s+to)
      \s+(?:\w+\s+){0,3}?(?:determine|tell|say|know|judge|confirm|verify|decide|identify|be\s+determined|answer)\b
    | \b(?:i\s+)?(?:do\s*not|don't|don’t)\s+know\b
    | \bunclear\b | \binconclusive\b | \bundeterminable\b | \bcannot\s+be\s+(?:determined|confirmed|verified)\b
    | \bno\s+way\s+to\s+(?:tell|know|determine|say|be\s+sure)\b
    | \bnot\s+enough\s+(?:information|detail|evidence)\b | \binsufficient\s+(?:information|detail|evidence)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)


def _clean(text: str) -> str:
    text = _THINK.sub(" ", text[:MAX_CHARS])
    return text.strip()


def _bare(text: str) -> str | None:
    """``"yes"``/``"no"`` when the reply is nothing but that word (tier 1), else None."""
    core = _ANSWER_PREFIX.sub("", text.strip(_STRIP_CHARS)).strip(_STRIP_CHARS).lower()
    return core if core in ("yes", "no") else None


def parse_yes_no(response: str | None, row: dict | None = None) -> Parsed:
    """Parse a C4 reply into ``"yes"``/``"no"``; the tier is ``detail`` (``"tier1"``/``"tier2"``)."""
    if response is None:
        return Parsed.fail("empty", "no reply")
    if not isinstance(response, str):
        return Parsed.fail("not_text", f"reply is {type(response).__name__}, not text")
    text = _clean(response)
    if not text.strip(_STRIP_CHARS):
        return Parsed.fail("empty", "blank reply")

    bare = _bare(text)
    if bare is not None:
        return Parsed(bare, True, "ok", "tier1")

    without_echo = _ECHO.sub(" ", text)
    echoed = without_echo != text
    if _REFUSALS.search(without_echo):
        return Parsed.fail("refusal", "abstention phrasing")
    words = set(_WORD.findall(without_echo.lower()))
    has_yes, has_no = "yes" in words, "no" in words
    if has_yes and has_no:
        return Parsed.fail("ambiguous", "both yes and no in the reply")
    if has_yes or has_no:
        return Parsed("yes" if has_yes else "no", True, "ok", "tier2")
    if echoed:
        return Parsed.fail("echo", "reply only echoes 'Yes or No'")
    return Parsed.fail("no_answer", "no yes/no word in the reply")


def parse(response: str | None, row: dict | None = None) -> Parsed:
    """Parser entry point used by :func:`biovqa.parse.parse` for the ``yes_no`` answer form."""
    return parse_yes_no(response, row)
