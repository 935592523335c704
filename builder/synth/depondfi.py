"""Synthetic DePondFi: pond scenes with fish, one ``x,y`` keypoint file per image (9 per fish)."""

from __future__ import annotations

from pathlib import Path

from PIL import ImageDraw

from builder.synth.scenes import background, place_boxes, rng_for, save_jpeg

FOLDER = "depondfi"
SIZE = (320, 240)
COUNTS = (1, 2, 3, 5, 7, 9, 11, 4)


def fish_keypoints(box) -> list[tuple[float, float]]:
    """Nine keypoints (snout, eye, dorsal, pectoral, belly, anal, caudal top/bottom, tail) inside the box."""
    x, y, w, h = box
    rel = [
        (0.05, 0.5),
        (0.2, 0.4),
        (0.45, 0.1),
        (0.35, 0.6),
        (0.5, 0.9),
        (0.65, 0.75),
        (0.95, 0.1),
        (0.95, 0.9),
        (0.8, 0.5),
    ]
    return [(round(x + a * (w - 1), 1), round(y + b * (h - 1), 1)) for a, b in rel]


def synth(out_root: Path, seed: int = 42) -> str:
    """Write ``<out_root>/depondfi/train/<n>.jpg`` with ``<n>.txt`` beside each image."""
    rng = rng_for("depondfi", seed)
    root = Path(out_root) / FOLDER / "train"
    for i, n in enumerate(COUNTS, start=1):
        img = background(rng, SIZE, (40, 90, 100))
        boxes = place_boxes(rng, SIZE, n, (24, 40), aspect=(0.4, 0.5), rotate=False)
        d = ImageDraw.Draw(img)
        lines = []
        for x, y, w, h in boxes:
            d.ellipse([x, y, x + w * 0.85, y + h - 1], fill=(235, 140, 40))
            d.polygon([(x + w * 0.8, y + h / 2), (x + w - 1, y), (x + w - 1, y + h - 1)], fill=(235, 140, 40))
            lines += [f"{px},{py}" for px, py in fish_keypoints((x, y, w, h))]
        save_jpeg(img, root / f"{i}.jpg")
        (root / f"{i}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return FOLDER
