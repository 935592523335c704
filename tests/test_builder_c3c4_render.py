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


def test_fallback_embedder_is_deterministic_and_normalised(photos):
    from builder.embed import ThumbHistEmbedder, get_embedder

    emb = get_embedder("auto")  # no DINOv2 weights in the offline test cache -> the documented fallback
    assert isinstance(emb, ThumbHistEmbedder) and emb.name.startswith("fallback:")
    a, b = emb.embed_paths(photos), ThumbHistEmbedder().embed_paths(photos)
    assert np.array_equal(a, b) and np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert (a @ a.T)[0, 0] == pytest.approx(1.0) and (a @ a.T)[0, 1] < 0.999
    with pytest.raises(ValueError, match="unknown embedder"):
        get_embedder("clip")


def test_count_stratification_balances_sparse_and_dense():
    from builder.questions.c3 import N_STRATA, stratified

    rng = np.random.default_rng(42)
    counts = [int(c) for c in np.concatenate([np.full(900, 2), np.arange(3, 103)])]  # mostly sparse
    items = list(range(len(counts)))
    picked = stratified(items, counts, 100, rng)
    assert len(picked) == 100 and picked == sorted(set(picked))
    dense = sum(counts[i] > 2 for i in picked)
    assert dense >= (N_STRATA - 1) * 100 // N_STRATA  # dense strata are not drowned by the sparse bulk
    assert stratified(items[:50], counts[:50], 100, rng) == items[:50]


@pytest.mark.slow
def test_dinov2_embedder_code_path_with_a_tiny_offline_model(tmp_path, photos):
    """The DINOv2 path (AutoModel + AutoImageProcessor, local files only) on a tiny random Dinov2 built offline."""
    pytest.importorskip("torch")
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model

    from builder.embed import DinoV2Embedder

    cfg = Dinov2Config(
        hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64, image_size=56
    )
    Dinov2Model(cfg).save_pretrained(tmp_path)
    BitImageProcessor(size={"shortest_edge": 56}, crop_size={"height": 56, "width": 56}).save_pretrained(
        tmp_path
    )
    emb = DinoV2Embedder(str(tmp_path), batch_size=3)
    a = emb.embed_paths(photos)
    assert a.shape == (4, 32) and np.allclose(np.linalg.norm(a, axis=1), 1.0)
    assert np.allclose(a, emb.embed_paths(photos))  # batches of 3 then 1: same vectors
