"""The §C.5 kernels and their worked examples: ordinal, pattern, anatomy, paired, soft Jaccard, naming."""

from __future__ import annotations

import pytest

from biovqa.metrics.c2.anatomy import AnatomyLayout, default_layout
from biovqa.metrics.c2.kernels import KernelSet, kernel_for, pattern_similarity, soft_jaccard
from biovqa.metrics.c2.naming import common_name_similarity, genus_similarity, scientific_similarity, token_f1

K = KernelSet()


@pytest.mark.parametrize(
    "a,b,prop,part,expected",
    [
        ("small (5 - 9 in)", "medium (9 - 16 in)", "size", None, 0.75),
        ("very small (3 - 5 in)", "very large (32 - 72 in)", "size", None, 0.0),
        ("large", "medium", "size", None, 0.75),
        ("shorter than head", "about the same as head", "length", "bill", 0.5),
        ("shorter than head", "longer than head", "length", "bill", 0.0),
        ("longer than head", "longer than head", "length", "bill", 1.0),
    ],
)
def test_ordinal(a, b, prop, part, expected):
    assert K.similarity("ordinal", a, b, part=part, prop=prop) == pytest.approx(expected)


def test_pattern():
    pat = K.patterned
    assert pattern_similarity("spotted", "striped", pat) == 0.5
    assert pattern_similarity("multi-colored", "striped", pat) == 0.5
    assert pattern_similarity("solid", "striped", pat) == 0.0
    assert pattern_similarity("solid", "solid", pat) == 1.0


# §C.5 anatomy table; the shipped layout is the median layout of calibration.md.
PAPER_ANATOMY = [
    ("nape", "crown", 0.922),
    ("beak", "forehead", 0.857),
    ("crown", "belly", 0.430),
    ("beak", "tail", 0.0),
]
MEDIAN_LAYOUT = {
    ("nape", "crown"): 0.837,
    ("beak", "forehead"): 0.903,
    ("crown", "belly"): 0.440,
    ("beak", "tail"): 0.0,
}


@pytest.mark.parametrize("a,b,paper", PAPER_ANATOMY)
def test_anatomy_pairs(a, b, paper):
    layout = default_layout()
    sim = layout.similarity(a, b)
    # exactly the median-of-part_locs layout (calibration.md) ...
    assert sim == pytest.approx(MEDIAN_LAYOUT[(a, b)], abs=0.001)
    # ... which is within 0.09 of the paper's figures (the paper's normalisation differs somewhat)
    assert sim == pytest.approx(paper, abs=0.09)
    assert layout.similarity(b, a) == sim


def test_anatomy_left_right_wing_is_0883_and_names_normalise():
    layout = default_layout()
    assert layout.similarity("left wing", "right wing") == pytest.approx(0.883, abs=1e-3)
    assert layout.similarity("Left Wing", "left_wing") == 1.0
    assert layout.similarity("beak", "no such part") == 0.0
    assert 0.0 <= layout.similarity("wing", "breast") <= 1.0


def test_anatomy_from_2d_diameter():
    layout = AnatomyLayout.from_2d({"beak": (1.0, 0.0), "tail": (0.0, 0.0), "left_wing": (0.5, 0.0)}, 0.0)
    assert layout.d_max == 1.0
    assert layout.similarity("beak", "left wing") == pytest.approx(0.5)


def test_paired_attribute():
    assert K.pair("wing color: blue", "wing color: purple") == pytest.approx(0.749, abs=0.001)
    # layout-dependent (paper: 0.952 and 0.395); ordering preserved: region right + colour close wins
    near_region = K.pair("wing color: blue", "breast color: blue")
    far = K.pair("wing color: blue", "tail color: yellow")
    assert near_region == pytest.approx(0.952, abs=0.03)
    assert far == pytest.approx(0.395, abs=0.01)
    assert near_region > K.pair("wing color: blue", "wing color: purple") > far
    assert K.pair("bill color: black", "bill color: black") == 1.0
    assert K.pair("size: small (5 - 9 in)", "size: medium (9 - 16 in)") == pytest.approx(0.5 + 0.5 * 0.75)


def test_soft_jaccard():
    assert soft_jaccard(frozenset({"left", "right"}), frozenset({"left"})) == 0.5
    assert soft_jaccard(frozenset({"left", "right"}), frozenset()) == 0.0
    assert soft_jaccard(frozenset({"left"}), frozenset({"right"})) == 0.0
    assert soft_jaccard(frozenset(), frozenset()) == 1.0
    assert K.similarity("set", "both", "left", family="visibility_side") == 0.5
    assert K.similarity("set", "both", "none", family="visibility_side") == 0.0
    opts = ("breast", "beak", "left wing", "none", "all three")
    assert K.similarity(
        "set", "all three", "beak", family="visibility_partset", options=opts
    ) == pytest.approx(1 / 3)
    assert K.similarity("set", "none", "beak", family="visibility_partset", options=opts) == 0.0


def test_naming_table_17():
    assert token_f1("song sparrow", "fox sparrow") == 0.5
    assert common_name_similarity("song sparrow", "fox sparrow") == pytest.approx(0.700, abs=5e-4)
    assert common_name_similarity("american crow", "fox sparrow") == 0.0
    assert scientific_similarity("melospiza georgiana", "melospiza melodia") == pytest.approx(0.575, abs=5e-4)
    assert scientific_similarity("corvus brachyrhynchos", "melospiza melodia") == pytest.approx(
        0.054, abs=5e-4
    )
    assert genus_similarity("melospiza", "melospiza") == 1.0
    assert genus_similarity("", "melospiza") == 0.0


def test_same_genus_lift():
    genus_of = {"lincoln sparrow": "melospiza", "song sparrow": "melospiza", "fox sparrow": "passerella"}
    assert common_name_similarity("lincoln sparrow", "song sparrow", genus_of) == 0.75
    assert common_name_similarity("fox sparrow", "song sparrow", genus_of) == pytest.approx(0.7)
    assert common_name_similarity("swamp thing", "song sparrow", genus_of, gold_genus="melospiza") == 0.0


@pytest.mark.parametrize(
    "family,part,prop,declared,expected",
    [
        ("attr_bare_value", "wing", "color", None, "color"),
        ("attr_bare_value", None, "size", None, "ordinal"),
        ("attr_bare_value", "bill", "length", None, "ordinal"),
        ("attr_bare_value", "breast", "pattern", None, "pattern"),
        ("attr_bare_value", "bill", "shape", None, "exact"),
        ("attr_group_value", None, None, None, "pair"),
        ("marker_localization", None, None, None, "anatomy"),
        ("visibility_side", None, None, None, "set"),
        ("visibility_partset", None, None, None, "set"),
        ("category_mcq", None, None, None, "naming"),
        ("open_scientific_name", None, None, None, "scientific"),
        ("open_genus", None, None, None, "genus"),
        ("attr_bare_value", "wing", "color", "exact", "exact"),
    ],
)
def test_kernel_dispatch(family, part, prop, declared, expected):
    assert kernel_for(family, part, prop, declared) == expected


def test_kernel_dispatch_errors():
    with pytest.raises(ValueError, match="family"):
        kernel_for("nonsense")
    with pytest.raises(ValueError, match="kernel"):
        kernel_for("attr_bare_value", declared="cosine")
