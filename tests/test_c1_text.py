"""C1 normalization (§C.1) and the open-text / bare-option MCQ parsers (Table 14, §K.1)."""

from __future__ import annotations

import pytest

from biovqa.parse.text import normalize_name, parse_answer, parse_mcq_bare, parse_open_text

PHYLUM_Q = "What is the phylum of the animal shown in this image?"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("The phylum is Chordata.", "chordata"),  # the paper's own example
        ("chordata", "chordata"),
        ("Phylum: Chordata", "chordata"),
        ("It is a Dryophytes cinereus.", "dryophytes cinereus"),
        ("**Chordata**", "chordata"),
        ('"Chordata"', "chordata"),
        ("`Chordata`.", "chordata"),
        ("Chordata\nThis is because it has a notochord.", "chordata"),
        ("**Answer:**\nChordata", "chordata"),
        ("- Hylidae family", "hylidae"),
        ("1. Anura", "anura"),
        ("The family of the animal shown in this image is Hylidae.", "hylidae"),
        ("This animal belongs to the order Anura.", "anura"),
        ("The correct order label is Anura", "anura"),
        ("Scientific name: *Dryophytes cinereus*", "dryophytes cinereus"),
        ("Green treefrog (Dryophytes cinereus)", "green treefrog"),
        ("It's a toad", "toad"),
        ("Cooper's Hawk", "coopers hawk"),
        ("Ǻkergroda", "akergroda"),  # diacritics stripped
        ("grønfläckig padda", "gronflackig padda"),
        ("🐸 Dryophytes cinereus 🐸", "dryophytes cinereus"),
        ("Red-tailed  Hawk", "red tailed hawk"),
        ("<b>Chordata</b>", "chordata"),
        ("\x00Chordata\u200b", "chordata"),
        ("ＣＨＯＲＤＡＴＡ", "chordata"),  # full-width letters (NFKD)
        ("I'm not sure, but it might be Anura", "anura"),  # a hedge that still names a taxon
    ],
)
def test_normalization_examples(reply, expected):
    parsed = parse_answer(reply, None, PHYLUM_Q)
    assert parsed.ok, parsed
    assert parsed.value == expected


def test_gold_and_reply_normalize_alike():
    # The paper normalizes both sides: 'The phylum is Chordata.' and 'chordata' compare equal.
    assert normalize_name("The phylum is Chordata.") == normalize_name("chordata") == "chordata"
    assert normalize_name("Dryophytes cinereus") == "dryophytes cinereus"
    assert normalize_name(None) == "" and normalize_name("") == ""


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        (None, "empty"),
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("🐸🐸🐸", "empty"),
        ("...", "empty"),
        ("**Answer:**", "empty"),
        ("I am not sure", "refusal"),
        ("I'm not sure.", "refusal"),
        ("I cannot determine the species from this image.", "refusal"),
        ("Sorry, I can't help with that.", "refusal"),
        ("Unknown", "refusal"),
        ("What is the phylum of the animal shown in this image?", "echo"),
        ("What is the phylum of the animal shown in", "echo"),  # echo cut by the 15-token cap
        (12345, "not_text"),
    ],
)
def test_hostile_replies_are_recorded_failures(reply, status):
    parsed = parse_answer(reply, None, PHYLUM_Q)
    assert not parsed.ok
    assert parsed.value is None
    assert parsed.status == status


def test_echo_followed_by_an_answer_parses():
    parsed = parse_answer(f"{PHYLUM_Q} Chordata", None, PHYLUM_Q)
    assert parsed.ok and parsed.value == "chordata"


def test_huge_reply_is_bounded_and_parses():
    parsed = parse_answer("Chordata " + "x" * 1_000_000, None, PHYLUM_Q)
    assert parsed.ok
    assert parsed.value.startswith("chordata")
    assert len(parsed.value) <= 256
    many_lines = "\n" * 500_000 + "Chordata"
    assert not parse_answer(many_lines).ok  # only the first lines of a reply are read


def test_species_rank_keeps_the_last_word():
    # §K.1: the inference scripts keep only the last word of a multi-word species-epithet reply.
    assert parse_answer("Dryophytes cinereus", "species").value == "cinereus"
    assert parse_answer("The species epithet is cinereus.", "species").value == "cinereus"
    assert parse_answer("Hyla cinerea", "species").value == "cinerea"
    assert parse_answer("Dryophytes cinereus", "scientific_name").value == "dryophytes cinereus"
    # words split on whitespace before punctuation folds: a hyphenated epithet stays one word
    assert parse_answer("Polygonia c-album", "species").value == normalize_name("c-album") == "c album"
    assert parse_answer("cinereus (species epithet)", "species").value == "cinereus"
    assert parse_answer("I am not sure", "species").status == "refusal"


def test_parse_open_text_reads_rank_and_question_from_the_row():
    row = {"task": "c1.species", "question": PHYLUM_Q, "c1": {"rank": "species"}}
    assert parse_open_text("Dryophytes cinereus", row).value == "cinereus"
    assert parse_open_text("Dryophytes cinereus", {"task": "c1.species"}).value == "cinereus"
    assert parse_open_text("Chordata", None).value == "chordata"
    assert parse_open_text(None, row).status == "empty"


OPTIONS = ["Green treefrog", "American toad", "House mouse", "Barking treefrog"]


@pytest.mark.parametrize(
    ("reply", "value", "how"),
    [
        ("Green Treefrog", "Green treefrog", "exact"),
        ("green treefrog.", "Green treefrog", "exact"),
        ("The answer is American toad", "American toad", "exact"),
        ("It is the House mouse, a rodent", "House mouse", "contains"),
        ("mouse", "House mouse", "contained"),
        ("Grene treefrog", "Green treefrog", "fuzzy"),
    ],
)
def test_mcq_bare_matches_option_text(reply, value, how):
    parsed = parse_mcq_bare(reply, {"options": OPTIONS, "question": "Among the four options, ..."})
    assert parsed.ok, parsed
    assert parsed.value == value
    assert parsed.detail == how


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ("treefrog", "ambiguous"),  # inside two options
        ("Green treefrog or American toad", "ambiguous"),
        ("Bullfrog", "no_option"),
        ("I am not sure", "refusal"),
        (None, "empty"),
    ],
)
def test_mcq_bare_failures(reply, status):
    parsed = parse_mcq_bare(reply, {"options": OPTIONS})
    assert not parsed.ok and parsed.status == status


def test_mcq_bare_nested_options_keep_the_longest():
    options = ["Green treefrog", "American green treefrog", "House mouse", "Common toad"]
    assert parse_mcq_bare("American green treefrog", {"options": options}).value == "American green treefrog"
    assert parse_mcq_bare("It is an American green treefrog!", {"options": options}).value == (
        "American green treefrog"
    )


def test_mcq_bare_without_options_is_a_failure_not_an_error():
    assert parse_mcq_bare("Green treefrog", {"options": []}).status == "no_options"
    assert parse_mcq_bare("Green treefrog", None).status == "no_options"
