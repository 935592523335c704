"""Synthetic Boxes on Bees: hive-frame scenes with striped bee blobs, COCO json (assumed layout)."""

from __future__ import annotations

from pathlib import Path

from PIL import ImageDraw

from builder.synth.scenes import background, draw_ellipses, place_boxes, rng_for, save_jpeg, write_json

FOLDER = "boxes-on-bees"
SIZE = (320, 240)
COUNTS = (4, 9, 15, 22, 30, 40, 52, 64)


def synth(out_root: Path, seed: int = 42) -> str:
    """Write ``<out_root>/boxes-on-bees/{images/, annotations/instances.json}``."""
    rng = rng_for("boxes_on_bees", seed)
    root = Path(out_root) / FOLDER
    images, anns = [], []
    for i, n in enumerate(COUNTS, start=1):
        img = background(rng, SIZE, (205, 160, 70))
        boxes = place_boxes(rng, SIZE, n, (9, 14), aspect=(0.55, 0.7))
        draw_ellipses(img, boxes, (60, 40, 20))
        d = ImageDraw.Draw(img)
        for x, y, w, h in boxes:  # a yellow band across the abdomen, inside the blob
            if w >= h:
                d.line([(x + w * 0.6, y + h * 0.3), (x + w * 0.6, y + h * 0.7)], fill=(230, 200, 40), width=1)
            else:
                d.line([(x + w * 0.3, y + h * 0.6), (x + w * 0.7, y + h * 0.6)], fill=(230, 200, 40), width=1)
        name = f"frame_{i:04d}.jpg"
        save_jpeg(img, root / "images" / name)
        images.append({"id": i, "file_name": name, "width": SIZE[0], "height": SIZE[1]})
        for x, y, w, h in boxes:
            anns.append(
                {
                    "id": len(anns) + 1,
                    "image_id": i,
                    "category_id": 1,
                    "bbox": [x, y, w, h],
                    "area": w * h,
                    "iscrowd": 0,
                }
            )
    cats = [
        {"id": 1, "name": "bee", "supercategory": "animal"},
        {"id": 2, "name": "pollen", "supercategory": "object"},
    ]
    write_json(
        {"images": images, "annotations": anns, "categories": cats}, root / "annotations" / "instances.json"
    )
    return FOLDER
