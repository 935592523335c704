"""Tiered yes/no parser (§H.1, Table 14): tiers, echo guard, refusal routing, hostile input."""

from __future__ import annotations

import pytest

from biovqa.parse import parse
from biovqa.parse.yesno import parse_yes_no


@pytest.mark.parametrize(
    "reply, value",
    [
        ("Yes", "yes"),
        ("No", "no"),
        ("yes.", "yes"),
        ("NO!", "no"),
        ("**Yes**", "yes"),
        ('"No."', "no"),
        ("  `yes`  \n", "yes"),
        ("Answer: No", "no"),
        ("<think>they look alike, maybe no</think>Yes", "yes"),
    ],
)
def test_tier1_bare_answers(reply, value):
    p = parse_yes_no(reply)
    assert (p.ok, p.value, p.status, p.detail) == (True, value, "ok", "tier1")


@pytest.mark.parametrize(
    "reply, value",
    [
        ("Yes, they are the same individual.", "yes"),
        ("No. The spot patterns differ.", "no"),
        ("Looking at the stripes: yes", "yes"),
        ("The answer is no, these are different animals", "no"),
        ("Yes or No: Yes", "yes"),  # the echoed phrase is removed, the real answer stays
    ],
)
def test_tier2_word_in_longer_reply(reply, value):
    p = parse_yes_no(reply)
    assert (p.ok, p.value, p.detail) == (True, value, "tier2")


@pytest.mark.parametrize("reply", ["Yes or No", "yes or no.", "Yes/No", "**Yes or No**"])
def test_echo_is_a_failure_not_yes(reply):
    p = parse_yes_no(reply)
    assert not p.ok and p.value is None
    assert p.status == "echo"


@pytest.mark.parametrize(
    "reply",
    [
        "I am not sure.",
        "I'm not sure whether these are the same animal.",
        "I cannot determine this from the photographs.",
        "It is impossible to tell.",
        "I can't tell if they are the same individual.",
        "I don't know",
        "There is no way to tell from these images.",
    ],
)
def test_refusal_is_routed_to_unparsed_not_no(reply):
    p = parse_yes_no(reply)
    assert not p.ok
    assert p.status == "refusal"


def test_both_words_are_ambiguous_and_neither_is_no_answer():
    assert parse_yes_no("Yes. No. Maybe.").status == "ambiguous"
    assert parse_yes_no("They are different animals.").status == "no_answer"
    # "Not the same" carries no yes/no word: Table 14 rejects it rather than guessing No
    assert not parse_yes_no("Not the same individual").ok


@pytest.mark.parametrize("reply", [None, "", "   ", "...", 42, "y" * 1_000_000, "\x00\ufffd"])
def test_hostile_or_empty_replies_never_raise(reply):
    p = parse_yes_no(reply)
    assert not p.ok


def test_dispatcher_routes_yes_no_and_names_unknown_forms():
    assert parse("yes_no", "Yes", {}).value == "yes"
    with pytest.raises(ValueError, match="unknown answer_form"):
        parse("telepathy", "Yes", {})
