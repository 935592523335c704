"""Lettered multiple choice, the §K.5 five-step resolver used by every C2 item.

1. :func:`normalize` — lower-case, ``_`` -> space, gray -> grey, punctuation stripped except ``: - ( )``,
   whitespace collapsed.
2. Format detection — the literal ``Options:`` (or a non-empty ``options`` column) selects the MCQ branch,
   with an ordered letter -> option-text map (:func:`option_map`).
3. Gold — ``"(A) text"`` or a bare value (:func:`gold_index`).
4. Prediction — scaffolding stripped, first line kept, explicit letter markers and verbatim option
   text detected and reconciled; the letter wins a disagreement and the mismatch is recorded; if
   neither is found, a fuzzy match at 0.86 (rapidfuzz ``fuzz.ratio``); otherwise a recorded failure.
5. Routing — :func:`route_family` maps the template phrase to one of the ten C2 families.

Hostile replies never raise: ``None``/empty, 1 MB strings, emoji, echoed prompts and refusals come
back as ``Parsed(ok=False, status=...)``. Only the first :data:`MAX_REPLY_CHARS` characters of a
reply are read (a C2 answer is one short line; this bounds the work on megabyte replies).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

from rapidfuzz import fuzz, process

from .result import Parsed

#: Replies are cut to this many characters before any other work.
MAX_REPLY_CHARS = 4096
#: At most this many non-empty lines are examined (the first, plus lead-in lines before it).
MAX_LINES = 4
#: Fuzzy fallback threshold (§K.5), on rapidfuzz's 0-100 ``fuzz.ratio`` scale.
FUZZY_THRESHOLD = 86.0
LETTERS = string.ascii_uppercase

_KEEP = set(":-()")
_PUNCT_TO_SPACE = {ord(c): " " for c in string.punctuation if c not in _KEEP and c != "'"}
_PUNCT_TO_SPACE.update({ord("'"): None, ord("\u2019"): None, ord("\u2018"): None})
_PUNCT_TO_SPACE.update({ord(c): " " for c in "\u201c\u201d\u2013\u2014\u2026\u00b7\u2022\t\r\n\u00a0"})
_GRAY = re.compile(r"gray")


def normalize(text: str) -> str:
    """§K.5 step 1: ``"Blue_Jay."`` -> ``"blue jay"``; keeps colons, hyphens and parentheses."""
    t = text.lower().replace("_", " ")
    if "gray" in t:
        t = _GRAY.sub("grey", t)
    return " ".join(t.translate(_PUNCT_TO_SPACE).split())


@lru_cache(maxsize=65536)
def _normalize_option(text: str) -> str:
    return normalize(text)


class MCQChoice(NamedTuple):
    """A resolved reply: option ``index`` (0-based), its ``letter``, and how it was found.

    ``via`` is ``"letter"``, ``"text"``, ``"letter_text"`` (both, agreeing), ``"mismatch"`` (both,
    disagreeing: the letter wins, ``text_index`` is what the text named) or ``"fuzzy"``.
    """

    index: int
    letter: str
    via: str
    text_index: int = -1

    @property
    def mismatch(self) -> bool:
        return self.via == "mismatch"


# --- step 2: options -------------------------------------------------------------------------

_OPT_IN_QUESTION = re.compile(r"\(([A-Z])\)\s*([^()]*?)(?=\s*,?\s*\([A-Z]\)|\s*$)")


def options_from_question(question: str) -> list[str]:
    """Option texts listed after ``Options:`` in the question, e.g. ``"Options: (A) red, (B) blue"``."""
    pos = question.find("Options:")
    if pos < 0:
        return []
    tail = question[pos + len("Options:") : pos + len("Options:") + 20000]
    return [m.group(2).strip().rstrip(",").strip() for m in _OPT_IN_QUESTION.finditer(tail)]


def is_mcq(row: dict) -> bool:
    """§K.5 step 2: the literal ``Options:`` or a non-empty ``options`` column selects the MCQ branch."""
    return bool(row.get("options")) or "Options:" in (row.get("question") or "")


class OptionIndex:
    """Normalised option texts of one item with the lookups the resolver needs (cache one per option set)."""

    __slots__ = ("texts", "norm", "by_text", "n", "letters", "key")

    def __init__(self, options: tuple[str, ...] | list[str]):
        self.texts = tuple(options)
        self.norm = tuple(_normalize_option(o) for o in self.texts)
        self.n = len(self.texts)
        self.letters = LETTERS[: self.n]
        by_text: dict[str, int] = {}
        for i, t in enumerate(self.norm):
            by_text.setdefault(t, i)
        self.by_text = by_text
        #: order-free identity of the option set (the chance baseline does not depend on order)
        self.key = frozenset(self.norm)


def option_map(row: dict) -> dict[str, str]:
    """Ordered letter -> option text map of a row (``options`` column, else parsed from the question)."""
    opts = list(row.get("options") or []) or options_from_question(row.get("question") or "")
    return {LETTERS[i]: o for i, o in enumerate(opts[: len(LETTERS)])}


# --- step 3: gold ----------------------------------------------------------------------------

_GOLD_LETTER = re.compile(r"^\s*\(([A-Za-z])\)\s*(.*)$", re.S)


def gold_index(row: dict, index: OptionIndex | None = None) -> int:
    """The gold option index: ``answer_index`` when set, else ``"(A) text"`` or a bare value in ``answer``.

    Raises ``ValueError`` naming the qid when the gold cannot be found among the options.
    """
    ai = row.get("answer_index")
    index = index or OptionIndex(list(option_map(row).values()))
    if ai is not None and 0 <= ai < index.n:
        return int(ai)
    answer = row.get("answer") or ""
    m = _GOLD_LETTER.match(answer)
    if m:
        i = LETTERS.find(m.group(1).upper())
        if 0 <= i < index.n:
            return i
        answer = m.group(2)
    i = index.by_text.get(normalize(answer), -1)
    if i < 0:
        raise ValueError(
            f"row {row.get('qid')!r}: gold {row.get('answer')!r} is not among the options {index.texts}"
        )
    return i


# --- step 4: the prediction -------------------------------------------------------------------

THINK_BLOCK = re.compile(r"<think>.*?</think>", re.S | re.I)
# Conversational lead-ins, matched on the normalised line (anchored, no nested quantifiers).
SCAFFOLD = re.compile(
    r"^(?:(?:sure|okay|ok|yes|well|so|certainly|of course)\s+)?"
    r"(?:(?:i think|i believe|based on the image|looking at the image|in this image|from the image)\s+)?"
    r"(?:(?:the\s+)?(?:correct\s+|final\s+|best\s+|right\s+)?(?:answer|option|choice)(?:\s+is)?\s*:?\s*"
    r"|(?:it is|it s|this is)\s+)?"
)
_LEADIN = re.compile(r"(?:answer|here|option|choice|is)\s*:?$")
_PAREN_LETTER = re.compile(r"\(([A-Za-z])\)")
_LEAD_LETTER = re.compile(r"^[\s*_`#>\"']*([A-Z])\s*[).:](?:\s|$)")
_ANSWER_LETTER = re.compile(r"\b(?i:answer|option|choice)\s*(?i:is\s*)?:?\s*\(?([A-Z])\)?(?:[\s.,;:!*]|$)")
_BARE_LETTER = re.compile(r"^[\s*_`#>\"'(]*([A-Za-z])[\s*_`\"').:!]*$")
_REFUSAL = re.compile(
    r"\b(?:sorry|cannot|can not|can't|cant|unable|not possible|impossible|don't know|dont know|not sure|"
    r"no bird|not visible|unclear)\b",
    re.I,
)


@dataclass(frozen=True, slots=True)
class _Line:
    """What one reply line says, independent of the options (cached per reply)."""

    paren: tuple[int, ...]  # letter positions named by "(X)" markers, in order
    other: tuple[int, ...]  # single-letter candidates: "B)"/"B." lead, "Answer: B", bare "B" (priority order)
    body: str  # normalised text with scaffolding and a leading letter marker removed
    leadin: bool  # "Sure, here is the answer:" lets the resolver read the next line
    echo: bool  # the line repeats the "Options:" list


def _analyze_line(line: str) -> _Line:
    paren = tuple(LETTERS.find(m.group(1).upper()) for m in _PAREN_LETTER.finditer(line))
    other = []
    if not paren:
        for pat in (_LEAD_LETTER, _ANSWER_LETTER, _BARE_LETTER):
            m = pat.search(line)
            if m:
                other.append(LETTERS.find(m.group(1).upper()))
    norm = normalize(line)
    body = _strip_letter_prefix(SCAFFOLD.sub("", norm, count=1).strip())
    return _Line(paren, tuple(other), body, bool(_LEADIN.search(norm)), "options:" in line.lower())


#: Reply analyses by reply text; cleared when it grows past :data:`_ANALYSIS_CACHE_MAX` entries.
_ANALYSIS: dict[str, tuple[tuple[_Line, ...], str, bool]] = {}
_ANALYSIS_CACHE_MAX = 500_000


def _analyze(response: str) -> tuple[tuple[_Line, ...], str, bool]:
    """(line analyses, first line for the failure detail, refusal?) of a reply; cached."""
    hit = _ANALYSIS.get(response)
    if hit is not None:
        return hit
    text = response[:MAX_REPLY_CHARS]
    if "<think>" in text or "<THINK>" in text:
        text = THINK_BLOCK.sub(" ", text)
    lines = [ln for ln in (s.strip() for s in text.splitlines()[: MAX_LINES * 4]) if ln][:MAX_LINES]
    infos = tuple(_analyze_line(ln) for ln in lines)
    first = lines[0][:80] if lines else ""
    out = (infos, first, bool(lines) and bool(_REFUSAL.search(lines[0])))
    if len(_ANALYSIS) >= _ANALYSIS_CACHE_MAX:
        _ANALYSIS.clear()
    _ANALYSIS[response] = out
    return out


def _text_match(norm_line: str, norm: tuple[str, ...]) -> tuple[int, bool]:
    """(option index named verbatim by the line, ambiguous?); -1 when none. ``norm``: normalised options."""
    if norm_line in norm:
        return norm.index(norm_line), False  # the first equal option, as OptionIndex.by_text
    padded = f" {norm_line} "
    hits = [(len(t), k) for k, t in enumerate(norm) if t and f" {t} " in padded]
    if not hits:
        return -1, False
    hits.sort(reverse=True)
    best_len, best = hits[0]
    best_text = norm[best]
    # A shorter hit inside the longest one ("wing" in "left wing") is not a competitor.
    rivals = [k for _, k in hits[1:] if norm[k] != best_text and norm[k] not in best_text]
    return (-1, True) if rivals else (best, False)


def _strip_letter_prefix(norm_line: str) -> str:
    """Drop a leading ``(b)`` / ``b)`` / ``b:`` so the rest can be compared with option text."""
    if len(norm_line) >= 3 and norm_line[0] == "(" and norm_line[2] == ")":
        return norm_line[3:].strip()
    if (
        len(norm_line) >= 2
        and norm_line[0].isalpha()
        and norm_line[1] in "):"
        and (len(norm_line) == 2 or norm_line[2] == " ")
    ):
        return norm_line[2:].strip()
    return norm_line


def _resolve_line(info: _Line, norm: tuple[str, ...]) -> MCQChoice | str:
    """Resolve one analysed line against the normalised options; returns the choice or a failure status."""
    n = len(norm)
    letters = [i for i in info.paren if 0 <= i < n]
    if not letters:
        letters = [i for i in info.other if 0 <= i < n][:1]
    distinct = len(set(letters))
    if distinct > 1:
        return "echo" if distinct >= max(3, n - 1) else "ambiguous"
    body = info.body
    t_idx, t_amb = _text_match(body, norm) if body else (-1, False)
    if letters:
        li = letters[0]
        if t_idx >= 0 and t_idx != li:
            return MCQChoice(li, LETTERS[li], "mismatch", t_idx)
        return MCQChoice(li, LETTERS[li], "letter_text" if t_idx == li else "letter", t_idx)
    if t_idx >= 0:
        return MCQChoice(t_idx, LETTERS[t_idx], "text", t_idx)
    if t_amb:
        return "ambiguous"
    if body:
        hit = process.extractOne(body, norm, scorer=fuzz.ratio, score_cutoff=FUZZY_THRESHOLD)
        if hit is not None:
            return MCQChoice(hit[2], LETTERS[hit[2]], "fuzzy", hit[2])
    return "no_option"


def resolve_norm(response: Any, norm: tuple[str, ...]) -> tuple[MCQChoice | None, str, str]:
    """(choice or None, status, detail) of a reply against normalised option texts; never raises.

    The work behind :func:`resolve`, without building an :class:`OptionIndex` or a :class:`Parsed`
    (the C2 scorer calls it once per distinct (reply, option set)).
    """
    if not isinstance(response, str):
        return None, "empty", "no reply"
    if not norm:
        return None, "no_options", "the item lists no options"
    infos, first, refusal = _analyze(response)
    if not infos:
        return None, "empty", ""
    status = "no_option"
    for k, info in enumerate(infos):
        if info.echo:
            return None, "echo", "reply repeats the option list"
        out = _resolve_line(info, norm)
        if isinstance(out, MCQChoice):
            detail = f"mismatch: text names {LETTERS[out.text_index]}" if out.via == "mismatch" else out.via
            return out, "ok", detail
        status = out
        if k + 1 < len(infos) and not info.leadin:
            break
    if status == "no_option" and refusal:
        status = "refusal"
    return None, status, first


class ReplyResolver:
    """:func:`resolve_norm` for many items at once: same results, with caches shared across option sets.

    A one-line reply resolves the same way against every option set with the same number of options in
    which its text names the same option (the text match ``(t, ambiguous)``); only the fuzzy fallback
    reads the option texts further, so those results are not cached. Caches are emptied past
    ``max_entries`` entries.
    """

    def __init__(self, max_entries: int = 200_000):
        self.max_entries = max_entries
        self._single: dict[str, _Line | None] = {}
        self._out: dict[tuple, tuple[MCQChoice | None, str]] = {}

    def __call__(self, response: Any, norm: tuple[str, ...]) -> tuple[MCQChoice | None, str]:
        """(choice or None, status) of ``response`` against the normalised options ``norm``."""
        if type(response) is not str or not norm:
            return resolve_norm(response, norm)[:2]
        single = self._single
        info = single.get(response, _NOT_SEEN)
        if info is _NOT_SEEN:
            infos = _analyze(response)[0]
            info = infos[0] if len(infos) == 1 and not infos[0].echo else None
            if len(single) >= self.max_entries:
                single.clear()
            single[response] = info
        if info is None:  # empty, echoed or multi-line: the general resolver
            return resolve_norm(response, norm)[:2]
        body = info.body
        if not body:
            t, amb = -1, False
        elif body in norm:
            t, amb = norm.index(body), False
        else:
            t, amb = _text_match(body, norm)
        key = (response, len(norm), t, amb)
        hit = self._out.get(key)
        if hit is not None:
            return hit
        choice, status, _ = resolve_norm(response, norm)
        hit = (choice, status)
        fuzzy_read = bool(body) and t < 0 and not amb
        if fuzzy_read and (choice is None or choice.via == "fuzzy"):
            return hit  # depends on the option texts themselves
        if len(self._out) >= self.max_entries:
            self._out.clear()
        self._out[key] = hit
        return hit


_NOT_SEEN = object()


def resolve(response: Any, index: OptionIndex) -> Parsed:
    """§K.5 step 4 against a prepared :class:`OptionIndex`; never raises."""
    choice, status, detail = resolve_norm(response, index.norm)
    if choice is None:
        return Parsed.fail(status, detail)
    return Parsed(choice, True, "ok", detail)


def parse_mcq_lettered(response: Any, row: dict) -> Parsed:
    """Parse a reply to a lettered MCQ row (``options`` column or ``Options:`` in the question)."""
    try:
        index = OptionIndex(list(option_map(row).values()))
        return resolve(response, index)
    except Exception as exc:  # a parser must never raise on hostile input
        return Parsed.fail("error", f"{type(exc).__name__}: {exc}"[:200])


# --- step 5: routing --------------------------------------------------------------------------

SIDE_LABELS = frozenset({"left", "right", "both", "none"})


def route_family(question: str, options: list[str] | tuple[str, ...] = ()) -> str | None:
    """§K.5 step 5: the C2 family a question belongs to, by template phrase in priority order."""
    q = normalize(question or "")
    has_options = bool(options) or "options:" in q
    if "marked with the" in q:
        return "marker_localization"
    if "most prominently visible" in q:
        return "attr_group_value"
    if "are visible in this image" in q or "visible in this image" in q:
        opts = options or options_from_question(question)
        is_side = bool(opts) and {normalize(o) for o in opts} == SIDE_LABELS
        return "visibility_side" if is_side else "visibility_partset"
    if "what type of bird" in q:
        return "category_mcq" if has_options else "open_common_name"
    if "scientific name" in q:
        return "open_scientific_name"
    if "common name" in q:
        return "open_common_name"
    if "genus of the bird" in q:
        return "open_genus"
    if q.startswith("what kind of"):
        return "open_kind_of"
    if has_options and q.startswith("what is the") and "of this bird" in q:
        return "attr_bare_value"
    return None
