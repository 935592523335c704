"""Renderers: overlays sized relative to the image, fixed canvases, same bytes for 1 or 2 processes."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from builder.render import canvas as cv
from builder.render import overlays as ov
from builder.render.pairs import render, render_image, render_many


@pytest.fixture(scope="module")
def photos(tmp_path_factory):
    d = tmp_path_factory.mktemp("render")
    rng = np.random.default_rng(0)
    paths = []
    for i, size in enumerate([(640, 480), (300, 500), (1200, 400), (256, 192)]):
        arr = rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
        p = d / f"p{i}.jpg"
        Image.fromarray(arr).save(p, quality=90)
        paths.append(str(p))
    return paths


def test_canvas_size_is_fixed_whatever_the_panels(photos):
    for layout, n in (([1, 1], 1), ([1, 2], 2), ([2, 2], 4)):
        img = render_image(
            {"canvas": list(cv.COUNT_CANVAS), "layout": layout, "panels": [{"path": p} for p in photos[:n]]}
        )
        assert img.size == cv.COUNT_CANVAS


def test_panels_keep_aspect_and_halve_the_area():
    w, h = 640, 480
    one = cv.fit_geometry(w, h, *cv.panel_rects(cv.COUNT_CANVAS, 1, 1)[0][2:])
    two = cv.fit_geometry(w, h, *cv.panel_rects(cv.COUNT_CANVAS, 1, 2)[0][2:])
    assert one[1] / one[2] == pytest.approx(w / h, rel=0.01) and two[1] / two[2] == pytest.approx(
        w / h, rel=0.01
    )
    assert (two[1] * two[2]) / (one[1] * one[2]) == pytest.approx(0.25, rel=0.05) or two[1] * two[2] < one[
        1
    ] * one[2]


def test_overlay_lines_scale_with_the_image():
    assert ov.stroke_width((320, 240)) == 3 and ov.stroke_width((2048, 1365)) == 8


def test_no_canvas_spec_downscales_to_max_side_and_maps_overlays(photos):
    spec = {
        "canvas": None,
        "max_side": 600,
        "panels": [
            {"path": photos[2], "lines": [{"xyxy": [0, 200, 1200, 200], "color": "red", "border": "white"}]}
        ],
    }
    img = np.asarray(render_image(spec)).astype(int)
    assert img.shape[:2] == (200, 600)
    red = (img[..., 0] > 200) & (img[..., 1] < 60) & (img[..., 2] < 60)
    ys, xs = np.nonzero(red)
    assert abs(ys.mean() - 100) < 2 and xs.max() - xs.min() > 590


def test_render_many_same_bytes_for_one_and_two_processes(photos):
    specs = [
        {
            "canvas": list(cv.PAIR_CANVAS),
            "layout": [1, 2],
            "panels": [{"path": photos[i % 4]}, {"path": photos[(i + 1) % 4]}],
        }
        for i in range(6)
    ]
    one = render_many(specs, processes=1)
    two = render_many(specs, processes=2)
    assert one == two and one[0] == render(specs[0])
    assert Image.open(io.BytesIO(one[0])).size == cv.PAIR_CANVAS
