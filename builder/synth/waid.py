"""Synthetic WAID: drone scenes with coloured animal blobs and YOLO labels in the real layout."""

from __future__ import annotations

from pathlib import Path

from builder.synth.scenes import background, det_uuid, draw_ellipses, place_boxes, rng_for, save_jpeg

FOLDER = "waid"
CLASSES = ("sheep", "cattle", "seal", "camelus", "kiang", "zebra")
COLORS = {
    "sheep": (245, 245, 240),
    "cattle": (110, 60, 30),
    "seal": (70, 70, 80),
    "camelus": (200, 150, 80),
    "kiang": (160, 80, 50),
    "zebra": (20, 20, 20),
}
SIZE = (320, 240)
#: counts per class, spread over sparse and dense scenes (stratification has something to do)
COUNTS = (1, 3, 6, 10, 16, 24)


def synth(out_root: Path, seed: int = 42) -> str:
    """Write ``<out_root>/waid/WAID/...``; return the folder name relative to ``out_root``."""
    rng = rng_for("waid", seed)
    base = Path(out_root) / FOLDER / "WAID"
    base.mkdir(parents=True, exist_ok=True)
    (base / "classes.txt").write_text("\n".join(CLASSES), encoding="utf-8")  # no trailing newline, as real
    for ci, cls in enumerate(CLASSES):
        for k, n in enumerate(COUNTS):
            split = ("test", "valid", "train")[k % 3]
            stem = f"{det_uuid(rng)}_jpg.rf.{rng.bytes(16).hex()}"
            img = background(rng, SIZE, (96, 130, 70))
            boxes = place_boxes(rng, SIZE, n, (8, 18))
            draw_ellipses(img, boxes, COLORS[cls])
            save_jpeg(img, base / "images" / split / f"{stem}.jpg")
            W, H = SIZE
            lines = [
                f"{ci} {(x + w / 2) / W:.6f} {(y + h / 2) / H:.6f} {w / W:.6f} {h / H:.6f}"
                for x, y, w, h in boxes
            ]
            lab = base / "labels" / split / f"{stem}.txt"
            lab.parent.mkdir(parents=True, exist_ok=True)
            lab.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return FOLDER
