"""§K.5 resolver: letters, text, reconciliation, fuzzy fallback, hostile replies, routing."""

from __future__ import annotations

import pytest

from biovqa.parse import parse
from biovqa.parse.mcq import (
    MCQChoice,
    OptionIndex,
    gold_index,
    normalize,
    option_map,
    options_from_question,
    parse_mcq_lettered,
    resolve,
    route_family,
)

OPTS = ("red", "blue", "brown", "black", "white")
IX = OptionIndex(OPTS)


def choice(reply: str) -> MCQChoice:
    p = resolve(reply, IX)
    assert p.ok, (reply, p)
    return p.value


def test_normalize_step1():
    assert normalize("Blue_Jay.") == normalize("blue jay") == normalize("  BLUE   jay  ") == "blue jay"
    assert normalize("Gray") == "grey"
    assert normalize("bill color: Black-ish (dark)!") == "bill color: black-ish (dark)"


@pytest.mark.parametrize(
    "reply,index,via",
    [
        ("(B) blue", 1, "letter_text"),
        ("B", 1, "letter"),
        ("B)", 1, "letter"),
        ("B.", 1, "letter"),
        ("Answer: B", 1, "letter"),
        ("**B**", 1, "letter"),
        ("(b)", 1, "letter"),
        ("brown", 2, "text"),
        ("Brown.", 2, "text"),
        ("The answer is (C) brown.", 2, "letter_text"),
        ("The wing is black", 3, "text"),
        ("(C) brown\nBecause the feathers look brown in this light.", 2, "letter_text"),
        ("Sure, here is the answer:\n(D) black", 3, "letter_text"),
        ("<think>maybe red?</think>(E) white", 4, "letter_text"),
    ],
)
def test_resolves(reply, index, via):
    c = choice(reply)
    assert (c.index, c.via) == (index, via)
    assert c.letter == "ABCDE"[index]


def test_letter_wins_mismatch_is_recorded():
    c = choice("(B) Red")
    assert c.index == 1 and c.letter == "B" and c.mismatch and c.text_index == 0
    assert "mismatch" in resolve("(B) Red", IX).detail


def test_first_line_only():
    # the second line is not a lead-in continuation, so its letter is never read
    p = resolve("I think it might be\n(B) blue", IX)
    assert not p.ok


def test_fuzzy_boundary_at_086():
    long_opt = "abcdefghij" * 5
    ix = OptionIndex(("red", long_opt, "blue"))
    at = list(long_opt)
    for k in range(7):
        at[k * 7] = "z"  # fuzz.ratio = 86.0 exactly
    below = list(long_opt)
    for k in range(8):
        below[k * 6] = "z"  # 84.0
    p = resolve("".join(at), ix)
    assert p.ok and p.value.index == 1 and p.value.via == "fuzzy"
    assert not resolve("".join(below), ix).ok
    assert resolve("blak", IX).value.index == 3  # 88.9
    assert not resolve("abcdefx", OptionIndex(("abcdefg", "zzz"))).ok  # 85.7


@pytest.mark.parametrize(
    "reply,status",
    [
        (None, "empty"),
        ("", "empty"),
        ("   \n\t  ", "empty"),
        ("🐦🐦🐦", "no_option"),
        ("x" * 1_000_000, "no_option"),
        ("Options: (A) red, (B) blue, (C) brown, (D) black, (E) white", "echo"),
        ("(A) red (B) blue (C) brown (D) black", "echo"),
        ("I'm sorry, I cannot determine that from the image.", "refusal"),
        ("red or blue", "ambiguous"),
        ("(F) pink", "no_option"),
        (12345, "empty"),
    ],
)
def test_hostile_replies_are_counted_failures(reply, status):
    p = resolve(reply, IX)
    assert not p.ok and p.value is None and p.status == status


def test_megabyte_reply_with_answer_first_is_parsed():
    # bounded work: only the first MAX_REPLY_CHARS are read (speed is measured in bench/, not here)
    p = resolve("(C) brown " + "blah " * 200_000, IX)
    assert p.ok and p.value.index == 2


def test_article_a_is_not_a_letter():
    assert choice("A bird with a blue wing").index == 1
    assert choice("The answer is a blue one").index == 1


def test_options_from_question_and_row():
    q = "Which of the eyes of the bird are visible in this image? Options: (A) Left, (B) Right, (C) Both, (D) None"
    assert options_from_question(q) == ["Left", "Right", "Both", "None"]
    row = {"question": q, "options": [], "answer": "(C) Both", "answer_index": -1}
    assert option_map(row) == {"A": "Left", "B": "Right", "C": "Both", "D": "None"}
    assert gold_index(row) == 2
    assert gold_index({**row, "answer": "both"}) == 2
    p = parse_mcq_lettered("(C) Both", row)
    assert p.ok and p.value.index == 2
    with pytest.raises(ValueError, match="q1"):
        gold_index({**row, "qid": "q1", "answer": "sideways"})


def test_dispatcher_reaches_the_mcq_parser():
    row = {
        "question": "What is the wing color of this bird? Options: (A) red, (B) blue",
        "options": ["red", "blue"],
    }
    p = parse("mcq_lettered", "(B) blue", row)
    assert p.ok and p.value.index == 1
    assert not parse("mcq_lettered", None, row).ok


def test_parse_never_raises_on_broken_row():
    p = parse_mcq_lettered("(A) red", {"options": None, "question": None})
    assert not p.ok


@pytest.mark.parametrize(
    "question,options,family",
    [
        (
            "What is the body part of this bird marked with the yellow dot? Options: (A) beak",
            ["beak"],
            "marker_localization",
        ),
        (
            "Which of the following is the most prominently visible physical trait of the bird in this image? Options: (A) bill color: black",
            ["bill color: black"],
            "attr_group_value",
        ),
        (
            "Which of the following parts of the bird are visible in this image?",
            ["breast", "beak", "left wing", "None", "All three"],
            "visibility_partset",
        ),
        (
            "Which of the eyes of the bird are visible in this image?",
            ["Left", "Right", "Both", "None"],
            "visibility_side",
        ),
        ("What type of bird is this in the image?", ["Gull", "Grebe"], "category_mcq"),
        ("What is the common name of the bird?", [], "open_common_name"),
        ("What is the scientific name of the bird?", [], "open_scientific_name"),
        ("What is the genus of the bird?", [], "open_genus"),
        ("What kind of gull is the bird in this image?", [], "open_kind_of"),
        ("What is the bill color of this bird?", ["white", "black"], "attr_bare_value"),
        ("How many beetles are there?", [], None),
    ],
)
def test_route_family(question, options, family):
    assert route_family(question, options) == family
