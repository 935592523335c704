"""C3 parsers (Table 14): what each answer form accepts, what it records as a failure, hostile replies."""

from __future__ import annotations

import pytest

from biovqa.parse import parse
from biovqa.parse.boxes import PROMPT_EXAMPLE, parse_box
from biovqa.parse.code import char_accuracy, parse_code
from biovqa.parse.labels import (
    parse_choice_abcd,
    parse_direction,
    parse_viewpoint,
    viewpoint_outcome,
    viewpoint_steps,
)
from biovqa.parse.numbers import parse_integer, parse_number_cm

RCNT_ROW = {
    "options": [
        "Image A (top-left)",
        "Image B (top-right)",
        "Image C (bottom-left)",
        "Image D (bottom-right)",
    ]
}
RDST_ROW = {
    "options": [
        "Beetle A (red dotted box/line)",
        "Beetle B (blue dotted box/line)",
        "Beetle C (green dotted box/line)",
        "Beetle D (white dotted box/line)",
    ]
}
RPOS_ROW = {"options": ["top-left", "right", "bottom", "bottom-right"]}


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("7", 7),
        ("There are 7.", 7),
        ("seven", 7),
        ("Twenty-one beetles", 21),
        ("1,234 bees", 1234),
        ("7.0", 7),
        ("**12**", 12),
        ("I count 12 bees in 3 rows", 12),
        ("none", 0),
    ],
)
def test_integer_accepts(reply, value):
    p = parse_integer(reply)
    assert p.ok and p.value == value


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ("There are many beetles", "no_integer"),
        ("5-7", "range"),
        ("between 5 and 7", "range"),
        ("about 5 to 7 beetles", "range"),
        ("7.5", "non_integer"),
        ("-3", "negative"),
        ("", "empty"),
        (None, "empty"),
        ("   ", "empty"),
        ("9" * 40, "too_large"),
    ],
)
def test_integer_failures(reply, status):
    p = parse_integer(reply)
    assert not p.ok and p.status == status and p.value is None


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("0.87 cm", 0.87),
        ("0.87cm", 0.87),
        ("about 1.2 centimeters", 1.2),
        ("12 mm", 1.2),
        ("0.87", 0.87),
        ("0,87 cm", 0.87),
        ("The scale bar is 1 cm, the red line is 0.45 cm", 0.45),
        ("1.5 inches", 3.81),
    ],
)
def test_number_cm_accepts(reply, value):
    p = parse_number_cm(reply)
    assert p.ok and p.value == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize(
    ("reply", "status"),
    [
        ("0.8-0.9 cm", "range"),
        ("-0.5 cm", "non_positive"),
        ("0 cm", "non_positive"),
        ("a few cm", "no_number"),
        ("1" * 400 + " cm", "not_finite"),
    ],
)
def test_number_cm_failures(reply, status):
    p = parse_number_cm(reply)
    assert not p.ok and p.status == status


@pytest.mark.parametrize(
    ("reply", "value", "detail"),
    [
        ("[10, 20, 30, 40]", (10, 20, 30, 40), ""),
        ("(10,20,30,40)", (10, 20, 30, 40), ""),
        ("box: 10 20 30 40.", (10, 20, 30, 40), ""),
        ("x=10, y=20, width=30, height=40", (10, 20, 30, 40), "keyed"),
        ('{"x1": 1, "y1": 2, "x2": 3, "y2": 4}', (1, 2, 3, 4), "keyed"),
        ('[{"bbox_2d": [100, 200, 300, 400], "label": "zebra"}]', (100, 200, 300, 400), ""),
        ("<box>(12,34),(56,78)</box>", (12, 34, 56, 78), ""),
        ("[0.1, 0.2, 0.5, 0.6], [1, 2, 3, 4]", (0.1, 0.2, 0.5, 0.6), "extra_numbers"),
        ("[1240, 88, 540, 410]", PROMPT_EXAMPLE, "prompt_example"),
    ],
)
def test_box_accepts_raw_numbers(reply, value, detail):
    p = parse_box(reply)
    assert p.ok and p.value == tuple(float(v) for v in value) and p.detail == detail


@pytest.mark.parametrize(
    "reply",
    [
        "The zebra is in the center",
        "1 2 3",
        "",
        None,
        "[a, b, c, d]",
        "[1e999, 2, 3, 4]",
        "x=1e999 y=1 w=2 h=3",
    ],
)
def test_box_failures(reply):
    p = parse_box(reply)
    assert not p.ok and p.status in ("no_box", "empty")


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("front-left", "frontleft"),
        ("front left", "frontleft"),
        ("Front Left.", "frontleft"),
        ("left front", "frontleft"),
        ("backright", "backright"),
        ("rear", "back"),
        ("The animal faces left.", "left"),
        ("up", "up"),
    ],
)
def test_viewpoint_accepts(reply, value):
    p = parse_viewpoint(reply)
    assert p.ok and p.value == value


def test_viewpoint_failures():
    assert parse_viewpoint("I cannot tell").status == "no_viewpoint"
    # an echo of the option list is not an answer, and "back, left" never fuses into backleft
    echo = parse_viewpoint("front, back, left, right, frontleft")
    assert not echo.ok and echo.status == "ambiguous"


def test_viewpoint_steps_table41():
    # Table 41: GT left; answers left, front-left, front, right are 0, 1, 2, 4 steps
    assert [viewpoint_steps("left", a) for a in ("left", "frontleft", "front", "right")] == [0, 1, 2, 4]
    assert viewpoint_steps("left", "up") is None
    assert viewpoint_outcome("left", "frontleft") == "over"
    assert viewpoint_outcome("frontleft", "left") == "under"
    assert viewpoint_outcome("left", "right") == "opposite"
    assert viewpoint_outcome("up", "down") == "off_ring"


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("top-left", "top-left"),
        ("Top Left.", "top-left"),
        ("The specimen is above and to the left.", "top-left"),
        ("upper left", "top-left"),
        ("northwest", "top-left"),
        ("It is to the right.", "right"),
        ("below", "bottom"),
        ("BOTTOM-RIGHT", "bottom-right"),
    ],
)
def test_direction_accepts_offered(reply, value):
    p = parse_direction(reply, RPOS_ROW)
    assert p.ok and p.value == value


def test_direction_not_offered_is_failure():
    assert parse_direction("left", RPOS_ROW).status == "not_offered"
    assert parse_direction("top", RPOS_ROW).status == "not_offered"
    assert parse_direction("somewhere", RPOS_ROW).status == "no_direction"
    # without options every one of the eight is accepted
    assert parse_direction("left", {"options": []}).value == "left"


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("Image A (top-left)", "A"),
        ("Beetle C", "C"),
        ("C", "C"),
        ("(C)", "C"),
        ("c.", "C"),
        ("**B**", "B"),
        ("Answer: D", "D"),
        ("D)", "D"),
        ("The top-right image", "B"),
        ("The one in the bottom left.", "C"),
        ("Image A has 3, Image B has 10, so the answer is Image B", "B"),
        ("I choose A", "A"),
        ("The answer is A.", "A"),
        ("My answer: C", "C"),
    ],
)
def test_choice_accepts(reply, value):
    p = parse_choice_abcd(reply, RCNT_ROW)
    assert p.ok and p.value == value


def test_choice_colour_hints_and_failures():
    assert parse_choice_abcd("the red one", RDST_ROW).value == "A"
    assert parse_choice_abcd("green", RDST_ROW).value == "C"
    assert parse_choice_abcd("Image A or Image B", RCNT_ROW).status == "ambiguous"
    assert parse_choice_abcd("A beetle is shown", RCNT_ROW).status == "no_choice"
    assert parse_choice_abcd("The answer is a guess", RCNT_ROW).status == "no_choice"
    assert parse_choice_abcd("I cannot tell", RCNT_ROW).status == "no_choice"


@pytest.mark.parametrize(
    ("reply", "value", "detail"),
    [
        ("A00000012435", "A00000012435", ""),
        ("The code is A00000012435.", "A00000012435", ""),
        ("a0000 0012 435", "A00000012435", ""),
        ("A-00000-012435", "A00000012435", ""),
        ("A0000001243", "A0000001243", "nonstandard"),
        ("00000012435", "00000012435", "nonstandard"),
    ],
)
def test_code_accepts(reply, value, detail):
    p = parse_code(reply)
    assert p.ok and p.value == value and p.detail == detail


def test_code_failures_and_char_accuracy():
    assert parse_code("ABC").status == "no_code"
    assert parse_code("A123").status == "no_code"
    assert char_accuracy("A00000012435", "A00000012435") == 1.0
    # prefix right, suffix wrong: 7 of 12 positions ("A00000" + the "0")
    assert char_accuracy("A00000099999", "A00000012435") == pytest.approx(7 / 12)
    assert char_accuracy("A00000099999", "A00000012435", 6) == pytest.approx(1 / 6)
    # a short reply: missing characters count as wrong; extra ones too
    assert char_accuracy("A000000", "A00000012435") == pytest.approx(7 / 12)
    assert char_accuracy("A00000012435999", "A00000012435") == pytest.approx(12 / 15)


HOSTILE = [
    None,
    "",
    "\x00" * 1000,
    "a" * 200_000,
    "9" * 50_000,
    "[" * 100_000,
    "1-" * 50_000,
    "1, " * 60_000,
    "1,000" * 20_000 + ",",
    "A" + "1 " * 50_000,
    "🐝" * 10_000,
    "left right " * 20_000,
    "x=1 " * 50_000,
    "Image A " * 10_000,
    12345,  # not a string at all
]
FORMS = ("integer", "number_cm", "box", "viewpoint", "direction", "choice_abcd", "code")


@pytest.mark.parametrize("form", FORMS)
def test_hostile_replies_never_raise(form):
    for reply in HOSTILE:
        p = parse(form, reply, RPOS_ROW if form == "direction" else RCNT_ROW)
        assert isinstance(p.ok, bool)
        if not p.ok:
            assert p.value is None and p.status


@pytest.mark.parametrize("form", FORMS)
def test_non_text_reply_is_a_recorded_failure(form):
    for reply in (12345, b"7", ["A"], 3.5):
        p = parse(form, reply, RCNT_ROW)
        assert not p.ok and p.status == "not_text"


def test_dispatcher_reaches_every_c3_parser():
    assert parse("integer", "7").value == 7
    assert parse("number_cm", "0.5 cm").value == 0.5
    assert parse("box", "[1, 2, 3, 4]").value == (1.0, 2.0, 3.0, 4.0)
    assert parse("viewpoint", "left").value == "left"
    assert parse("direction", "bottom", RPOS_ROW).value == "bottom"
    assert parse("choice_abcd", "B", RCNT_ROW).value == "B"
    assert parse("code", "A00000012345").value == "A00000012345"
