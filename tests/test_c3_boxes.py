"""Box geometry for C3 localization: IoU by hand, the eight conventions, convention detection (§G.5)."""

from __future__ import annotations

import numpy as np
import pytest

from biovqa.parse.boxes import (
    CONVENTIONS,
    detect_convention,
    from_abs_xywh,
    iou,
    iou_many,
    mean_iou_by_convention,
    to_abs_xywh,
)


def test_iou_by_hand():
    # half-overlap: inter 5×5 = 25, union 100 + 100 − 25 = 175
    assert iou([0, 0, 10, 10], [5, 5, 10, 10]) == pytest.approx(25 / 175)
    # no overlap, and boxes that only touch along an edge
    assert iou([0, 0, 10, 10], [20, 20, 5, 5]) == 0.0
    assert iou([0, 0, 10, 10], [10, 0, 10, 10]) == 0.0
    # containment: inner 5×5 in outer 10×10 → 25 / 100
    assert iou([0, 0, 10, 10], [2, 2, 5, 5]) == pytest.approx(0.25)
    assert iou([2, 2, 5, 5], [0, 0, 10, 10]) == pytest.approx(0.25)
    # identical boxes, and empty boxes never divide by zero
    assert iou([3, 4, 5, 6], [3, 4, 5, 6]) == 1.0
    assert iou([0, 0, 0, 0], [0, 0, 0, 0]) == 0.0
    assert iou([0, 0, 0, 10], [0, 0, 10, 10]) == 0.0


def test_iou_many_matches_scalar():
    rng = np.random.default_rng(0)
    a = rng.uniform(0, 100, (50, 4))
    b = rng.uniform(0, 100, (50, 4))
    got = iou_many(a, b)
    assert got == pytest.approx([iou(x, y) for x, y in zip(a, b, strict=True)])


def test_conventions_by_hand():
    w, h = 2000, 1000
    assert to_abs_xywh([100, 200, 300, 400], "abs_xywh", w, h) == (100, 200, 300, 400)
    assert to_abs_xywh([100, 200, 300, 400], "abs_xyxy", w, h) == (100, 200, 200, 200)
    assert to_abs_xywh([100, 200, 300, 400], "n1000_xyxy", w, h) == (200, 200, 400, 200)
    assert to_abs_xywh([10, 20, 30, 40], "n100_xywh", w, h) == (200, 200, 600, 400)
    assert to_abs_xywh([0.1, 0.2, 0.3, 0.4], "n01_xyxy", w, h) == pytest.approx((200, 200, 400, 200))
    # corners in the wrong order are sorted; negative sizes become empty boxes
    assert to_abs_xywh([300, 400, 100, 200], "abs_xyxy", w, h) == (100, 200, 200, 200)
    assert to_abs_xywh([10, 10, -5, 5], "abs_xywh", w, h) == (10, 10, 0, 5)
    with pytest.raises(ValueError, match="unknown box convention"):
        to_abs_xywh([1, 2, 3, 4], "n255_xywh", w, h)


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_each_convention_round_trips(convention):
    box, w, h = (123.0, 45.0, 678.0, 90.5), 1920, 1080
    written = from_abs_xywh(box, convention, w, h)
    assert to_abs_xywh(written, convention, w, h) == pytest.approx(box)


def _synthetic_model(convention: str, n: int = 60, seed: int = 1):
    """Gold boxes on images of varied sizes and a model that answers them, jittered, in ``convention``."""
    rng = np.random.default_rng(seed)
    sizes = np.stack([rng.integers(400, 4000, n), rng.integers(300, 3000, n)], axis=1).astype(float)
    x = rng.uniform(0, 0.5, n) * sizes[:, 0]
    y = rng.uniform(0, 0.5, n) * sizes[:, 1]
    bw = rng.uniform(0.1, 0.45, n) * sizes[:, 0]
    bh = rng.uniform(0.1, 0.45, n) * sizes[:, 1]
    gold = np.stack([x, y, bw, bh], axis=1)
    noisy = gold * rng.uniform(0.93, 1.07, gold.shape)
    raw = np.array([from_abs_xywh(b, convention, *s) for b, s in zip(noisy, sizes, strict=True)])
    if convention.startswith(("abs", "n1000", "n100")):
        raw = np.round(raw)  # models write integers in these formats
    return raw, gold, sizes


@pytest.mark.parametrize("convention", CONVENTIONS)
def test_detect_convention_picks_the_models_format(convention):
    raw, gold, sizes = _synthetic_model(convention)
    assert detect_convention(raw, gold, sizes) == convention
    scores = mean_iou_by_convention(raw, gold, sizes)
    assert scores[convention] > 0.7
    assert max(scores.values()) == scores[convention]


def test_detect_convention_ties_and_empty_go_to_the_prompt_format():
    assert detect_convention(np.zeros((0, 4)), np.zeros((0, 4)), np.zeros((0, 2))) == "abs_xywh"
    # on 1000×1000 images abs and n1000 coincide: the prompt's own format wins the tie
    gold = np.array([[100.0, 100.0, 300.0, 300.0]])
    assert detect_convention(gold, gold, np.array([[1000.0, 1000.0]])) == "abs_xywh"
