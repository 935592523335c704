"""Rendering speed: the C3/C4 renderer against a bare PIL decode+encode of the same source images, and
1 vs 2 worker processes. Prints figures; asserts nothing.

    python bench/render.py [--n 48] [--side 2400]

Sources are synthetic JPEG photographs (``--side`` px wide, 3:2) written to a temporary folder; the
specs mix the C3/C4 kinds: one-panel counting canvases, two-panel counting, 2x2 grids, beetle-tray
overlays (lines + boxes, longest side 2048) and C4 pairs. Baseline per spec = for each source image of
the spec, ``Image.open().convert("RGB")`` (full decode) + JPEG encode at quality 90 (4:4:4), i.e. the
cost of touching the same pixels without composing anything.
"""

# ruff: noqa: E402  (sys.path is set before the builder imports)
from __future__ import annotations

import sys
from pathlib import Path

# run from a checkout: make ``builder`` importable (bench/ holds a select.py shadowing the stdlib)
sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import io
import tempfile
import time

import numpy as np
from PIL import Image, ImageDraw

from builder.render import canvas as cv
from builder.render.pairs import render_many


def make_sources(folder: Path, n: int, side: int) -> list[str]:
    rng = np.random.default_rng(42)
    paths = []
    for i in range(n):
        w, h = side, side * 2 // 3
        img = Image.new("RGB", (w, h), tuple(int(v) for v in rng.integers(60, 200, 3)))
        d = ImageDraw.Draw(img)
        for _ in range(60):
            x, y = int(rng.integers(0, w - 80)), int(rng.integers(0, h - 60))
            d.ellipse(
                [x, y, x + int(rng.integers(20, 80)), y + int(rng.integers(15, 60))],
                fill=tuple(int(v) for v in rng.integers(0, 255, 3)),
            )
        noise = rng.integers(-12, 13, (h, w, 3))
        img = Image.fromarray(np.clip(np.asarray(img).astype(int) + noise, 0, 255).astype(np.uint8))
        p = folder / f"src_{i:03d}.jpg"
        img.save(p, quality=90)
        paths.append(str(p))
    return paths


def make_specs(paths: list[str]) -> list[dict]:
    n, specs = len(paths), []
    for i in range(n):
        p = [paths[(i + k) % n] for k in range(4)]
        kind = i % 5
        if kind == 0:
            specs.append({"canvas": list(cv.COUNT_CANVAS), "layout": [1, 1], "panels": [{"path": p[0]}]})
        elif kind == 1:
            specs.append(
                {"canvas": list(cv.COUNT_CANVAS), "layout": [1, 2], "panels": [{"path": q} for q in p[:2]]}
            )
        elif kind == 2:
            specs.append(
                {"canvas": list(cv.GRID_CANVAS), "layout": [2, 2], "panels": [{"path": q} for q in p]}
            )
        elif kind == 3:
            specs.append(
                {
                    "canvas": None,
                    "max_side": cv.TRAY_MAX_SIDE,
                    "panels": [
                        {
                            "path": p[0],
                            "lines": [
                                {"xyxy": [100, 1500, 180, 1500], "color": "blue", "border": "green"},
                                {"xyxy": [600, 300, 600, 420], "color": "red", "border": "white"},
                            ],
                            "boxes": [
                                {"xywh": [500 + 90 * k, 250, 80, 200], "color": c, "dotted": True}
                                for k, c in enumerate(("red", "blue", "green", "white"))
                            ],
                        }
                    ],
                }
            )
        else:
            specs.append(
                {"canvas": list(cv.PAIR_CANVAS), "layout": [1, 2], "panels": [{"path": q} for q in p[:2]]}
            )
    return specs


def baseline(specs: list[dict]) -> None:
    for spec in specs:
        for panel in spec["panels"]:
            img = Image.open(panel["path"]).convert("RGB")
            buf = io.BytesIO()
            img.save(buf, format="JPEG", quality=cv.JPEG_QUALITY, subsampling=0)


def timed(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=48, help="number of specs (and source images)")
    ap.add_argument("--side", type=int, default=2400, help="source image width in pixels")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        paths = make_sources(Path(tmp), args.n, args.side)
        specs = make_specs(paths)
        n_images = sum(len(s["panels"]) for s in specs)
        baseline(specs[:4])  # warm the page cache
        t_base = timed(baseline, specs)
        t_one = timed(render_many, specs, 1)
        t_two = timed(render_many, specs, 2)
        same = render_many(specs[:10], 1) == render_many(specs[:10], 2)
    print(f"specs: {len(specs)} ({n_images} source images of {args.side}x{args.side * 2 // 3})")
    print(f"bare PIL decode+encode : {t_base:7.2f} s  ({t_base / len(specs) * 1000:6.1f} ms/spec)")
    print(
        f"renderer, 1 process    : {t_one:7.2f} s  ({t_one / len(specs) * 1000:6.1f} ms/spec)  "
        f"ratio to bare PIL {t_one / t_base:.2f}x (target <= 1.5x)"
    )
    print(f"renderer, 2 processes  : {t_two:7.2f} s  speed-up {t_one / t_two:.2f}x over 1 process")
    print(f"identical bytes 1 vs 2 processes: {same}")


if __name__ == "__main__":
    main()
