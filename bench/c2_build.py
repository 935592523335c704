"""Time the C2 builder stages; prints figures (never asserted in tests).

    python bench/c2_build.py [--label-images 11788] [--repeat 3]

1. ``image_attribute_labels.txt`` at full scale (11 788 images x 312 = 3 677 856 lines, CRLF, like the
   real file) read by the streaming reader: lines/s and peak RSS growth.
2. Marker rendering against the bare PIL work on the same images (decode + JPEG encode), on the drawn
   miniature: the DESIGN.md budget is render <= 1.5x bare.
3. The whole C2 question stage on the miniature: items/s (schema validation included).
"""

# ruff: noqa: E402
from __future__ import annotations

import sys
from pathlib import Path

# Run from the checkout: the repo root replaces bench/ on the path and makes ``builder`` importable.
sys.path[0] = str(Path(__file__).resolve().parents[1])

import argparse
import io
import random
import resource
import tempfile
import time

import numpy as np
from PIL import Image

from builder.common import Report, jpeg_bytes
from builder.components import c2 as component
from builder.manifests import c2 as c2_manifest
from builder.questions.c2 import MARKER_JPEG_QUALITY, C2Generator, _item_rng
from builder.render.markers import render_markers
from builder.sources.cub import find_dataset_dir, read_image_attribute_labels


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_labels(tmp: Path, n_images: int) -> None:
    rng = np.random.default_rng(42)
    n = n_images * 312
    image_id = np.repeat(np.arange(1, n_images + 1), 312)
    attr = np.tile(np.arange(1, 313), n_images)
    present = (rng.random(n) < 0.1).astype(int)
    cert = rng.integers(1, 5, n)
    path = tmp / "image_attribute_labels.txt"
    with open(path, "w", newline="") as fh:
        for start in range(0, n, 500_000):
            sl = slice(start, start + 500_000)
            rows = zip(image_id[sl], attr[sl], present[sl], cert[sl], strict=True)
            fh.write("".join(f"{a} {b} {c} {d} 27.7080\r\n" for a, b, c, d in rows))
    size_mb = path.stat().st_size / 1e6
    rss0 = _rss_mb()
    t0 = time.perf_counter()
    labels = read_image_attribute_labels(path, Report(strict=True))
    dt = time.perf_counter() - t0
    print(
        f"labels: {n:,} lines ({size_mb:.0f} MB) in {dt:.2f} s = {n / dt / 1e6:.2f} M lines/s; "
        f"{len(labels.image_id):,} present kept; peak RSS +{_rss_mb() - rss0:.0f} MB"
    )


def bench_render(root: Path, manifest_dir: Path, repeat: int) -> None:
    rows = c2_manifest.load_images(manifest_dir)
    images_dir = find_dataset_dir(root) / "images"
    gen = C2Generator(rows, c2_manifest.load_classes(manifest_dir), images_dir)
    placements = [
        gen.marker_placement(r, _item_rng(42, f"c2.localization/cub/{r['image_id']:06d}-marker"))
        for r in rows
    ]
    datas = [(images_dir / r["path"]).read_bytes() for r in rows]

    def bare():
        for data in datas:
            jpeg_bytes(Image.open(io.BytesIO(data)), quality=MARKER_JPEG_QUALITY)

    def render():
        for data, placed in zip(datas, placements, strict=True):
            markers, _, radius = placed
            img = Image.open(io.BytesIO(data))
            jpeg_bytes(render_markers(img, markers, radius), quality=MARKER_JPEG_QUALITY)

    def best(fn):
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    tb, tr = best(bare), best(render)
    n = len(rows)
    print(
        f"markers: {n} images; bare decode+encode {tb / n * 1e3:.2f} ms/img, decode+render+encode "
        f"{tr / n * 1e3:.2f} ms/img, ratio {tr / tb:.2f} (budget <= 1.5)"
    )


def bench_questions(root: Path, manifest_dir: Path) -> None:
    t0 = time.perf_counter()
    n = sum(1 for _ in component.questions(manifest_dir, {"cub": root}, manifest_dir / "hub"))
    dt = time.perf_counter() - t0
    print(f"questions: {n} records in {dt:.2f} s = {n / dt:,.0f} records/s (validated, markers rendered)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label-images", type=int, default=11_788)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    random.seed(42)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        component.synth(tmp)
        root = tmp / "cub"
        t0 = time.perf_counter()
        component.manifests({"cub": root}, tmp / "manifests")
        print(f"manifest: miniature in {time.perf_counter() - t0:.2f} s")
        bench_render(root, tmp / "manifests", args.repeat)
        bench_questions(root, tmp / "manifests")
        bench_labels(tmp, args.label_images)


if __name__ == "__main__":
    main()
