"""C1 answer normalization (§C.1) and the two C1 parsers: open text and the bare-option MCQ (Table 14).

One normalizer, :func:`normalize_name`, is applied to both sides (the paper normalizes gold and
prediction alike): gold answers, option strings, the taxonomy/synonym resources and replies. It takes
NFKD and drops combining marks (diacritics), case-folds, drops bracketed asides ("Dryophytes cinereus
(green treefrog)"), deletes apostrophes, turns every other punctuation/symbol character (emoji included)
into a space, collapses whitespace, then strips leading boilerplate and rank prefixes ("The phylum is
Chordata." → ``chordata``; "Phylum: Chordata" → ``chordata``; "It is a Dryophytes cinereus." →
``dryophytes cinereus``) and a trailing rank word ("Hylidae family" → ``hylidae``).
:func:`normalize_answer` reads a reply: first line with content (markdown/list markers dropped), refusal
detection, then the same normalization.

Bounded work on hostile input: a reply is read from its first :data:`MAX_REPLY_CHARS` characters and at
most :data:`MAX_LINES` non-empty lines (C1 generation is capped at 15 tokens, §K.1), and a normalized
answer is cut to :data:`MAX_ANSWER_CHARS`. The parsers never raise.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from rapidfuzz import fuzz

from biovqa.parse.result import Parsed

MAX_REPLY_CHARS = 4096
MAX_LINES = 8
MAX_ANSWER_CHARS = 256
#: §K.5: the fuzzy fallback threshold, shared with the lettered MCQ parser.
FUZZY_THRESHOLD = 0.86

_APOSTROPHES = "'\u2019\u2018\u02bc`\u00b4"
#: Letters with a stroke or ligatures that NFKD leaves alone ("grønfläckig" → "gronflackig").
_LETTER_FOLDS = {"ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "æ": "ae", "œ": "oe", "ı": "i"}
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,40}>")  # HTML-ish markup: <b>Chordata</b>
# ASCII fast path: apostrophes deleted, every other punctuation character -> space.
_ASCII_TABLE = {ord(c): " " for c in '!"#$%&()*+,-./:;<=>?@[\\]^_{|}~'}
_ASCII_TABLE.update({ord(c): None for c in "'`"})
_ASCII_TABLE.update({i: " " for i in (*range(32), 127)})  # control characters


@lru_cache(maxsize=4096)
def _char_map(ch: str) -> str:
    """Replacement of one non-ASCII character after NFKD: '' for marks/apostrophes, ' ' for punctuation."""
    if ch in _APOSTROPHES:
        return ""
    if ch in _LETTER_FOLDS:
        return _LETTER_FOLDS[ch]
    cat = unicodedata.category(ch)
    if cat[0] == "M":  # combining diacritic
        return ""
    if cat[0] in "PSCZ":  # punctuation, symbols (emoji), control/format, separators
        return " "
    return ch


def _fold(text: str) -> str:
    """Case-fold, strip diacritics and punctuation, collapse whitespace (no bracket handling)."""
    if text.isascii():
        text = text.lower().translate(_ASCII_TABLE)
    else:
        text = unicodedata.normalize("NFKD", text).casefold()
        text = "".join([_char_map(c) if not c.isascii() else c for c in text]).translate(_ASCII_TABLE)
        # casefold can produce new non-ASCII letters only for exotic scripts; they are kept as letters.
    return " ".join(text.split())


def _drop_brackets(text: str) -> str:
    """Remove markup tags and bracketed asides ("Dryophytes cinereus (green treefrog)").

    Asides stay when nothing else remains.
    """
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "(" not in text and "[" not in text:
        return text
    stripped = _BRACKETED.sub(" ", text)
    return stripped if stripped.strip() else text


# ------------------------------------------------------------------------------------------ boilerplate

_RANK_WORDS = (
    r"species\s+epithet|specific\s+epithet|epithet|scientific\s+name|binomial(?:\s+name)?|latin\s+name|"
    r"common\s+name|english\s+name|vernacular(?:\s+name)?|kingdom|phylum|class|order|family|genus|species|"
    r"taxon|name"
)
_SUBJECT = (
    r"(?:(?:the|this|that)\s+)?(?:animal|plant|organism|creature|insect|bird|specimen|species|taxon)"
    r"(?:\s+(?:shown|pictured|depicted))?(?:\s+in\s+(?:this|the)\s+(?:image|picture|photo))?"
)
_LEADING = re.compile(
    r"^(?:"
    r"(?:the\s+)?(?:final\s+|correct\s+|my\s+)?answer(?:\s+is)?|"
    r"(?:i\s+(?:think|believe|guess)|probably|likely|possibly|perhaps|maybe|definitely|certainly)(?:\s+that)?|"
    r"(?:it|this|that)\s+(?:is|appears\s+to\s+be|looks\s+like|seems\s+to\s+be|belongs\s+to|would\s+be)|"
    r"(?:it|this|that)s|"
    r"" + _SUBJECT + r"(?:\s+is|\s+belongs\s+to|\s+appears\s+to\s+be|\s+looks\s+like)|"
    r"(?:the\s+)?(?:correct\s+|final\s+)?(?:" + _RANK_WORDS + r")(?:\s+(?:label|level))?"
    r"(?:\s+(?:of|for)\s+" + _SUBJECT + r")?(?:\s+(?:is|would\s+be))?|"
    r"in\s+(?:this|the)\s+(?:image|picture|photo)|"
    r"a|an|the|called|named|known\s+as|is"
    r")\s+"
)
#: A line that is only a label ("**Answer:**", "Phylum:") carries no answer: the next line is read.
_LABEL_ONLY = re.compile(
    r"^(?:(?:the\s+)?(?:final\s+|correct\s+|my\s+)?answer(?:\s+is)?|(?:the\s+)?(?:" + _RANK_WORDS + r")"
    r"(?:\s+(?:is|of\s+" + _SUBJECT + r"(?:\s+is)?))?|" + _SUBJECT + r"(?:\s+is)?)$"
)
_TRAILING = re.compile(r"\s+(?:" + _RANK_WORDS + r")$")
_REFUSAL = re.compile(
    r"^(?:i\s+(?:am|m)\s+(?:not\s+(?:sure|certain|able)|unable|sorry)|"
    r"i\s+(?:cannot|can\s+not|cant|could\s+not|couldnt|do\s+not|dont|don\s+t|can\s+t)\b|"
    r"(?:im|i\s+m)\s+(?:not\s+sure|unable|sorry)|sorry|unfortunately|unknown|not\s+sure|unsure|"
    r"none|n\s+a|na|no\s+idea|not\s+(?:possible|applicable|enough|visible|determinable)|"
    r"(?:it\s+is\s+|its\s+)?(?:impossible|difficult|hard|not\s+possible)\s+to|unable\s+to|"
    r"there\s+is\s+no|cannot\s+be\s+determined|can\s+not\s+be\s+determined|undetermined|unidentified|"
    r"as\s+an\s+ai)\b"
)
_HEDGE = re.compile(
    r"\b(?:but\s+(?:it\s+)?(?:might|may|could)\s+be|but\s+(?:probably|possibly|likely|perhaps|maybe)|"
    r"(?:it\s+)?(?:might|may|could)\s+be|maybe|perhaps|possibly|probably)\s+(.+)$"
)
_LIST_MARKER = re.compile(r"^\s*(?:[-*+>#•]+|\d{1,2}[.)]|[a-d][.)])\s+")


def _strip_boilerplate(text: str) -> str:
    """Remove leading boilerplate/rank prefixes and trailing rank words from a folded answer."""
    for _ in range(8):  # each pass removes one prefix; bounded so no input loops long
        new = _LEADING.sub("", text, count=1)
        if new == text or not new:
            break
        text = new
    new = _TRAILING.sub("", text)
    return new if new else text


def normalize_name(name: str | None) -> str:
    """C1 normalization (§C.1) of a name or answer; gold, options, resources and replies all use it.

    Case-fold, strip diacritics, punctuation and bracketed asides, then leading boilerplate and rank
    prefixes and a trailing rank word: ``"The phylum is Chordata."`` → ``"chordata"``.
    """
    if not name or not isinstance(name, str):
        return ""
    return _normalize_name(name[:MAX_REPLY_CHARS])  # cache keys stay bounded on hostile input


@lru_cache(maxsize=1 << 16)
def _normalize_name(name: str) -> str:
    folded = _fold(_drop_brackets(name))[:MAX_ANSWER_CHARS].strip()
    return _strip_boilerplate(folded) if folded else ""


def _content_lines(text: str) -> list[str]:
    """The first non-empty lines of a reply (bounded)."""
    lines = []
    for line in text[:MAX_REPLY_CHARS].splitlines():
        line = _LIST_MARKER.sub("", line).strip()
        if line:
            lines.append(line)
            if len(lines) >= MAX_LINES:
                break
    return lines


def _classify(line: str) -> tuple[str, str]:
    """(status, answer) of one line: ("ok", answer), ("refusal", "") or ("empty", "")."""
    folded = _fold(_drop_brackets(line))[:MAX_ANSWER_CHARS].strip()
    if not folded:
        return "empty", ""
    if _LABEL_ONLY.match(folded):
        return "empty", ""
    if _REFUSAL.match(folded):
        hedge = _HEDGE.search(folded)
        if hedge:
            answer = _strip_boilerplate(hedge.group(1))
            if answer and not _REFUSAL.match(answer):
                return "ok", answer
        return "refusal", ""
    return "ok", _strip_boilerplate(folded)


def normalize_answer(response: str) -> tuple[str, str]:
    """Normalize a C1 reply: ``(status, answer)``; status is ``ok``, ``empty`` or ``refusal``.

    Reads the first line that holds an answer ("**Answer:**\\nChordata" reads ``chordata``); a refusal on
    the first content line ("I am not sure") is a refusal unless it hedges to a name ("not sure, maybe
    Chordata" reads ``chordata``).
    """
    return _read_answer(response[:MAX_REPLY_CHARS])[:2]  # cache keys stay bounded on hostile input


@lru_cache(maxsize=1 << 16)
def _read_answer(response: str) -> tuple[str, str, str]:
    """(status, answer, the line the answer was read from) of a reply cut to MAX_REPLY_CHARS."""
    first_status = "empty"
    for i, line in enumerate(_content_lines(response)):
        status, answer = _classify(line)
        if status == "ok":
            return status, answer, line
        if i == 0:
            first_status = status
        if status == "refusal":
            return status, "", ""
    return first_status, "", ""


@lru_cache(maxsize=1 << 12)
def _folded_question(question: str) -> str:
    return _fold(question.split("\n", 1)[0])


def _echo_tail(response: str, question: str | None) -> str | None:
    """None when the reply does not repeat the question; else what follows the repeated question.

    A truncated prefix of the question (generation stops after 15 tokens) is an echo with an empty tail.
    Only replies of four words or more are checked.
    """
    if not question or response.count(" ") + response.count("\n") < 3:
        return None
    folded = _fold(response[:MAX_REPLY_CHARS])
    q = _folded_question(question)
    if not q or folded.count(" ") < 3:
        return None
    if folded.startswith(q):
        return folded[len(q) :].strip()
    return "" if q.startswith(folded) else None


_RANK_WORD_ONLY = re.compile(r"^(?:" + _RANK_WORDS + r")$")


def last_word(text: str) -> str:
    """§K.1 species-epithet rule: the last whitespace-separated word of a reply, normalized.

    Words are split on whitespace before punctuation is folded, so a hyphenated epithet stays one word
    ("Polygonia c-album" → ``c album``, like the gold ``c-album``); bracketed asides and trailing rank
    words ("cinereus (species)", "cinereus epithet") are skipped.
    """
    for token in reversed(_drop_brackets(text[:MAX_REPLY_CHARS]).split()):
        word = _fold(token)
        if word and not _RANK_WORD_ONLY.match(word):
            return word[:MAX_ANSWER_CHARS]
    return ""


def parse_answer(response: str | None, rank: str | None = None, question: str | None = None) -> Parsed:
    """Parse an open C1 reply: any non-empty answer parses (Table 14); value is the normalized answer.

    ``rank == "species"`` keeps only the last word of a multi-word reply, as the paper's inference scripts
    do (§K.1). This understates the species-epithet rank (a binomial of another genus loses its genus);
    the paper analyses species-level naming through the scientific name, and so should users.
    A reply that only repeats the question is an ``echo`` failure; a refusal is a ``refusal`` failure.
    """
    if response is None:
        return Parsed.fail("empty", "no reply")
    if not isinstance(response, str):
        return Parsed.fail("not_text", f"reply of type {type(response).__name__}")
    status, answer, line = _read_answer(response[:MAX_REPLY_CHARS])
    if status == "ok":
        tail = _echo_tail(response, question)
        if tail is not None:
            if not tail:
                return Parsed.fail("echo", "the reply repeats the question")
            status, answer, line = _read_answer(tail[:MAX_REPLY_CHARS])
    if status != "ok":
        return Parsed.fail(status, "no answer in the reply" if status == "empty" else "the model declined")
    if rank == "species":
        word = last_word(line) or answer.rsplit(" ", 1)[-1]
        return Parsed(word, True, "ok", "last word kept" if word != answer else "")
    return Parsed(answer, True, "ok")


def _row_get(row, key: str):
    if row is None:
        return None
    try:
        return row.get(key) if hasattr(row, "get") else row[key]
    except (KeyError, IndexError, TypeError):
        return None


def _row_rank(row) -> str | None:
    c1 = _row_get(row, "c1")
    rank = _row_get(c1, "rank") if c1 else None
    if rank:
        return rank
    task = _row_get(row, "task")
    if isinstance(task, str) and task.startswith("c1."):
        return task[3:]
    return None


def parse_open_text(response: str | None, row: dict | None = None) -> Parsed:
    """Contract 3 parser for C1 open answers (answer form ``open_text``)."""
    try:
        return parse_answer(response, _row_rank(row), _row_get(row, "question"))
    except Exception as exc:  # never raise on a reply (Contract 3)
        return Parsed.fail("parser_error", f"{type(exc).__name__}: {exc}")


# ------------------------------------------------------------------------------------------ bare MCQ


def _contains_words(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


def choose_option(answer: str, option_norms: Sequence[str]) -> tuple[int, str]:
    """Index of the option a normalized answer names and how (``exact``/``contains``/``fuzzy``).

    Order: exact match; then the reply contains exactly one option as whole words (nested options keep
    the longest); then the reply is contained in exactly one option; then the best
    ``rapidfuzz.fuzz.ratio`` ≥ 0.86 when it is unique. ``(-1, reason)`` when none or several match.
    """
    if not answer:
        return -1, "empty"
    if answer in option_norms:  # answer is non-empty, so the equal option is too
        return list(option_norms).index(answer), "exact"
    padded = f" {answer} "  # whole-word containment, as _contains_words
    inside = [i for i, o in enumerate(option_norms) if o and f" {o} " in padded]
    if len(inside) > 1:  # nested options ("green treefrog" in "american green treefrog"): keep the longest
        longest = max(inside, key=lambda i: len(option_norms[i]))
        if all(_contains_words(option_norms[longest], option_norms[i]) for i in inside):
            inside = [longest]
    if len(inside) == 1:
        return inside[0], "contains"
    if len(inside) > 1:
        return -1, "ambiguous"
    if len(answer) >= 3:
        within = [i for i, o in enumerate(option_norms) if padded in f" {o} "]
        if len(within) == 1:
            return within[0], "contained"
        if len(within) > 1:
            return -1, "ambiguous"
    scores = [fuzz.ratio(answer, o) / 100.0 if o else 0.0 for o in option_norms]
    best = max(scores, default=0.0)
    if best >= FUZZY_THRESHOLD:
        winners = [i for i, s in enumerate(scores) if s == best]
        if len(winners) == 1:
            return winners[0], "fuzzy"
        return -1, "ambiguous"
    return -1, "no_option"


def parse_mcq_options(
    response: str | None, options: Sequence[str] | None, question: str | None = None
) -> Parsed:
    """Parse a reply to the bare-option common-name MCQ: value is the chosen option's text."""
    if not options:
        return Parsed.fail("no_options", "the row lists no options")
    parsed = parse_answer(response, None, question)
    if not parsed.ok:
        return parsed
    norms = [normalize_name(o) for o in options]
    index, how = choose_option(parsed.value, norms)
    if index < 0:
        return Parsed.fail(how, f"reply {parsed.value[:80]!r} names no single option")
    return Parsed(options[index], True, "ok", how)


def parse_mcq_bare(response: str | None, row: dict | None = None) -> Parsed:
    """Contract 3 parser for the C1 common-name MCQ (answer form ``mcq_bare``)."""
    try:
        return parse_mcq_options(response, _row_get(row, "options"), _row_get(row, "question"))
    except Exception as exc:  # never raise on a reply (Contract 3)
        return Parsed.fail("parser_error", f"{type(exc).__name__}: {exc}")
