"""Drawing primitives for the C3/C4 synthetic miniatures (correct by construction).

Every scene is drawn from a seeded ``numpy`` generator; objects never touch each other or the image
border (a gap of at least ``GAP`` pixels), so the number of drawn objects *is* the annotation count
and a connected-component count of the picture recovers it.
"""

from __future__ import annotations

import json
import uuid
import zlib
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from builder.common import jpeg_bytes

GAP = 4
JPEG_QUALITY = 92


def rng_for(name: str, seed: int) -> np.random.Generator:
    """A generator seeded by ``seed`` and a stable hash of ``name`` (independent streams per source)."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def det_uuid(rng: np.random.Generator) -> str:
    """A deterministic version-4 UUID string."""
    return str(uuid.UUID(bytes=rng.bytes(16), version=4))


def background(rng: np.random.Generator, size: tuple[int, int], base: tuple[int, int, int], spread: int = 12):
    """A smooth vertical-gradient background around ``base`` (no texture that could look like objects)."""
    w, h = size
    top = np.clip(np.array(base) + rng.integers(-spread, spread + 1, 3), 0, 255)
    bottom = np.clip(np.array(base) + rng.integers(-spread, spread + 1, 3), 0, 255)
    t = np.linspace(0, 1, h)[:, None, None]
    arr = (top[None, None, :] * (1 - t) + bottom[None, None, :] * t).repeat(w, axis=1)
    return Image.fromarray(arr.astype(np.uint8), "RGB")


def place_boxes(
    rng: np.random.Generator,
    size: tuple[int, int],
    n: int,
    wh_range: tuple[int, int],
    aspect: tuple[float, float] = (0.5, 0.9),
    taken: list[tuple[float, float, float, float]] | None = None,
    tries: int = 4000,
    rotate: bool = True,
) -> list[tuple[int, int, int, int]]:
    """Up to ``n`` non-overlapping ``[x, y, w, h]`` boxes (``GAP`` apart, inside the image)."""
    W, H = size
    taken = list(taken or [])
    out: list[tuple[int, int, int, int]] = []
    for _ in range(tries):
        if len(out) == n:
            break
        w = int(rng.integers(wh_range[0], wh_range[1] + 1))
        h = max(4, int(w * rng.uniform(*aspect)))
        if rotate and rng.random() < 0.5:
            w, h = h, w
        if w + 2 * GAP >= W or h + 2 * GAP >= H:
            continue
        x = int(rng.integers(GAP, W - w - GAP))
        y = int(rng.integers(GAP, H - h - GAP))
        if any(
            x < tx + tw + GAP and tx < x + w + GAP and y < ty + th + GAP and ty < y + h + GAP
            for tx, ty, tw, th in taken + out
        ):
            continue
        out.append((x, y, w, h))
    return out


def draw_ellipses(img: Image.Image, boxes, fill, outline=None) -> None:
    """Filled ellipses inscribed in the boxes."""
    d = ImageDraw.Draw(img)
    for x, y, w, h in boxes:
        d.ellipse([x, y, x + w - 1, y + h - 1], fill=fill, outline=outline)


def save_jpeg(img: Image.Image, path: Path) -> None:
    """Write a deterministic JPEG, creating parent folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(jpeg_bytes(img, quality=JPEG_QUALITY))


def write_json(obj, path: Path) -> None:
    """Deterministic JSON (sorted keys, fixed separators)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def pattern_marks(rng: np.random.Generator, kind: str, n: int) -> list[tuple[float, ...]]:
    """An individual's identifying marks in unit body coordinates (spots or stripes)."""
    if kind == "stripes":
        return [
            (float(rng.uniform(-0.7, 0.7)), float(rng.uniform(-0.2, 0.2)), float(rng.uniform(0.03, 0.09)))
            for _ in range(n)
        ]
    return [
        (float(rng.uniform(-0.8, 0.8)), float(rng.uniform(-0.6, 0.6)), float(rng.uniform(0.04, 0.11)))
        for _ in range(n)
    ]


def draw_individual(
    img: Image.Image,
    box: tuple[int, int, int, int],
    body: tuple[int, int, int],
    mark: tuple[int, int, int],
    marks: list[tuple[float, ...]],
    kind: str,
    facing: str,
) -> None:
    """A patterned animal: body ellipse in ``box``, head on the ``facing`` side, identity marks on the body."""
    d = ImageDraw.Draw(img)
    x, y, w, h = box
    head_w = int(w * 0.22)
    if facing in ("left", "right"):  # head overlaps the body so the animal is one connected shape
        bx = x + int(head_w * 0.7) if facing == "left" else x
        bw = w - int(head_w * 0.7)
        hx = x if facing == "left" else x + w - head_w
        d.ellipse([hx, y + h * 0.2, hx + head_w, y + h * 0.7], fill=body)
    else:
        bx, bw = x, w
        d.ellipse([x + w * 0.35, y, x + w * 0.65, y + h * 0.3], fill=body)
    d.ellipse([bx, y + h * 0.1, bx + bw, y + h], fill=body)
    cx, cy, rx, ry = bx + bw / 2, y + h * 0.55, bw / 2, h * 0.45
    for m in marks:
        if kind == "stripes":
            sx, tilt, sw = m
            px = cx + sx * rx
            d.line(
                [(px - tilt * ry, cy - ry * 0.8), (px + tilt * ry, cy + ry * 0.8)],
                fill=mark,
                width=max(1, int(sw * rx)),
            )
        else:
            sx, sy, r = m
            px, py, rr = cx + sx * rx * 0.85, cy + sy * ry * 0.85, max(1.0, r * rx)
            d.ellipse([px - rr, py - rr, px + rr, py + rr], fill=mark)
