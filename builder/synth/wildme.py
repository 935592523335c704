"""Synthetic Wild Me catalogs (and GZCD): patterned individuals seen several times, COCO in LILA layout.

Each individual carries its own random spot/stripe pattern per viewpoint (left and right flanks differ,
as on real animals), is photographed two or three times per viewpoint with jittered position, size,
brightness and background, and is annotated with its ``name``, ``viewpoint`` and box. A few sightings
are unnamed (``"____"``). Whale shark annotations carry only the single polygon (no ``bbox``), as some
exports do, so the reader's polygon → box path is exercised.
"""

from __future__ import annotations

from pathlib import Path

from builder.synth.scenes import (
    background,
    det_uuid,
    draw_individual,
    pattern_marks,
    place_boxes,
    rng_for,
    save_jpeg,
    write_json,
)

SIZE = (256, 192)
#: key -> (folder, coco prefix, year, category, body rgb, mark rgb, pattern kind, background rgb, viewpoints)
CATALOGS = {
    "whaleshark": (
        "whaleshark",
        "whaleshark",
        2020,
        "whaleshark",
        (70, 90, 120),
        (235, 235, 235),
        "spots",
        (30, 110, 150),
        ("left", "right"),
    ),
    "beluga": (
        "beluga",
        "beluga",
        2022,
        "beluga",
        (225, 225, 220),
        (150, 150, 150),
        "spots",
        (20, 70, 110),
        ("up", "right"),
    ),
    "hyena": (
        "hyena",
        "hyena",
        2022,
        "hyena",
        (175, 135, 85),
        (60, 40, 25),
        "spots",
        (150, 160, 90),
        ("left", "right", "frontleft"),
    ),
    "leopard": (
        "leopard",
        "leopard",
        2022,
        "leopard",
        (225, 175, 75),
        (25, 20, 15),
        "spots",
        (110, 130, 70),
        ("left", "right"),
    ),
    "gzcd": (
        "gzcd",
        "gzcd",
        2016,
        "zebra_grevys",
        (240, 240, 238),
        (15, 15, 15),
        "stripes",
        (190, 170, 120),
        ("left", "right"),
    ),
}
N_INDIVIDUALS = 6


def _polygon(box):
    x, y, w, h = box
    return [[x, y, x + w, y, x + w, y + h, x, y + h]]


def synth(out_root: Path, key: str, seed: int = 42) -> str:
    """Write one catalog under ``<out_root>/<folder>/<prefix>.coco/``; return the folder."""
    folder, prefix, year, cat, body, mark, kind, bg, viewpoints = CATALOGS[key]
    rng = rng_for(f"wildme:{key}", seed)
    coco = Path(out_root) / folder / f"{prefix}.coco"
    split = f"train{year}"
    images, anns = [], []
    categories = [{"id": 1, "name": cat, "supercategory": "animal"}]
    if key == "gzcd":
        categories += [
            {"id": 2, "name": "zebra_plains", "supercategory": "animal"},
            {"id": 3, "name": "giraffe_reticulated", "supercategory": "animal"},
        ]

    def add_image(img, objs):
        iid = len(images) + 1
        name = f"{iid:012d}.jpg"
        save_jpeg(img, coco / "images" / split / name)
        images.append(
            {
                "id": iid,
                "file_name": name,
                "width": SIZE[0],
                "height": SIZE[1],
                "date_captured": "NA",
                "uuid": det_uuid(rng),
            }
        )
        for cat_id, box, indiv, vp in objs:
            ann = {
                "id": len(anns) + 1,
                "image_id": iid,
                "category_id": cat_id,
                "name": indiv,
                "viewpoint": vp,
                "theta": 0.0,
                "segmentation": _polygon(box),
                "uuid": det_uuid(rng),
                "iscrowd": 0,
            }
            if key != "whaleshark":
                ann["bbox"] = list(box)
            anns.append(ann)

    sightings = []
    for k in range(N_INDIVIDUALS):
        indiv = f"{prefix.upper()}-{k + 1:03d}"
        for vp in viewpoints:
            marks = pattern_marks(rng, kind, 14 if kind == "spots" else 9)
            for _ in range(int(rng.integers(2, 4))):
                sightings.append((indiv, vp, marks))
    for _ in range(2):  # unnamed sightings
        sightings.append(("____", viewpoints[0], pattern_marks(rng, kind, 14 if kind == "spots" else 9)))
    order = rng.permutation(len(sightings))
    for j in order:
        indiv, vp, marks = sightings[j]
        img = background(rng, SIZE, tuple(int(c) for c in bg), spread=25)
        w = int(SIZE[0] * rng.uniform(0.55, 0.75))
        h = int(w * rng.uniform(0.5, 0.6))
        x = int(rng.integers(6, SIZE[0] - w - 6))
        y = int(rng.integers(6, SIZE[1] - h - 6))
        shade = float(rng.uniform(0.85, 1.1))
        b = tuple(min(255, int(c * shade)) for c in body)
        draw_individual(img, (x, y, w, h), b, mark, marks, kind, vp)
        add_image(img, [(1, (x, y, w, h), indiv, vp)])
    if key == "gzcd":  # herd photographs for counting (three nested targets)
        for n_g, n_p, n_gir in (
            (1, 0, 0),
            (2, 1, 0),
            (3, 0, 1),
            (4, 2, 0),
            (5, 1, 2),
            (6, 3, 1),
            (2, 2, 2),
            (8, 0, 0),
        ):
            img = background(rng, SIZE, (190, 170, 120), spread=10)
            boxes = place_boxes(rng, SIZE, n_g + n_p + n_gir, (16, 28), aspect=(0.55, 0.7), rotate=False)
            objs = []
            for i, box in enumerate(boxes):
                if i < n_g:
                    draw_individual(
                        img,
                        box,
                        (240, 240, 238),
                        (15, 15, 15),
                        pattern_marks(rng, "stripes", 5),
                        "stripes",
                        "left",
                    )
                    objs.append((1, box, "____", "left"))
                elif i < n_g + n_p:
                    draw_individual(
                        img,
                        box,
                        (230, 225, 215),
                        (70, 55, 40),
                        pattern_marks(rng, "stripes", 4),
                        "stripes",
                        "right",
                    )
                    objs.append((2, box, "____", "right"))
                else:
                    draw_individual(
                        img,
                        box,
                        (205, 140, 60),
                        (110, 60, 20),
                        pattern_marks(rng, "spots", 6),
                        "spots",
                        "front",
                    )
                    objs.append((3, box, "____", "front"))
            add_image(img, objs)
    write_json(
        {
            "images": images,
            "annotations": anns,
            "categories": categories,
            "info": {"description": f"synthetic {key} miniature", "year": year},
        },
        coco / "annotations" / f"instances_{split}.json",
    )
    return folder
