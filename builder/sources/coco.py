"""Generic COCO-style annotation reader shared by the Wild Me sets, GZCD and Boxes on Bees.

Reads ``images[].{id, file_name, width, height}``, ``annotations[].{id, image_id, category_id, bbox,
segmentation, name, viewpoint}`` and ``categories[].{id, name}``. Wild Me extras: ``name`` is the
individual (``"____"`` = unknown → None); ``segmentation`` holds one polygon, from which the box is
derived when ``bbox`` is absent (WildlifeDatasets does the same). Problems are reported per entry
(``annotations[17] (id=…)``); an image with any bad annotation is excluded, because its object list
would be incomplete.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from builder.common import Report, SourceFormatError
from builder.sources.records import ImageRecord, Obj, ReadResult, normalize_viewpoint

UNKNOWN_NAMES = {"____", "", "unknown", "none"}


@dataclass
class CocoFile:
    images: dict[object, dict] = field(default_factory=dict)
    annotations: dict[object, list[dict]] = field(default_factory=lambda: defaultdict(list))
    categories: dict[object, str] = field(default_factory=dict)
    bad_images: set = field(default_factory=set)


def load_coco(path: str | Path, report: Report) -> CocoFile:
    """Parse and check a COCO json; raise SourceFormatError when the file itself is unusable."""
    path = Path(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8-sig"))
    except FileNotFoundError:
        raise SourceFormatError(f"{path}: COCO annotation file not found") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceFormatError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict) or not all(
        isinstance(data.get(k), list) for k in ("images", "annotations")
    ):
        raise SourceFormatError(
            f"{path}: expected a COCO object with 'images' and 'annotations' lists (and 'categories'),"
            f" got keys {sorted(data)[:10] if isinstance(data, dict) else type(data).__name__}"
        )
    coco = CocoFile()
    for i, cat in enumerate(data.get("categories") or []):
        if not isinstance(cat, dict) or "id" not in cat or not isinstance(cat.get("name"), str):
            report.error(path, i + 1, f"categories[{i}]: expected {{id, name}}, got {cat!r:.80}")
            continue
        coco.categories[cat["id"]] = cat["name"]
    for i, img in enumerate(data["images"]):
        where = f"images[{i}]"
        if not isinstance(img, dict) or "id" not in img or not isinstance(img.get("file_name"), str):
            report.error(path, i + 1, f"{where}: expected {{id, file_name, …}}, got {img!r:.80}")
            continue
        if img["id"] in coco.images:
            report.error(path, i + 1, f"{where}: duplicate image id {img['id']!r}; both excluded")
            coco.bad_images.add(img["id"])
            continue
        coco.images[img["id"]] = img
    for i, ann in enumerate(data["annotations"]):
        where = f"annotations[{i}] (id={ann.get('id') if isinstance(ann, dict) else '?'})"
        if not isinstance(ann, dict) or "image_id" not in ann:
            report.error(path, i + 1, f"{where}: expected an object with image_id")
            continue
        if ann["image_id"] not in coco.images:
            report.error(path, i + 1, f"{where}: image_id {ann['image_id']!r} is not in images")
            continue
        box = annotation_box(ann)
        if box is None:
            report.error(path, i + 1, f"{where}: no usable bbox [x, y, w, h] or single polygon")
            coco.bad_images.add(ann["image_id"])
            continue
        if ann.get("category_id") not in coco.categories:
            report.error(path, i + 1, f"{where}: category_id {ann.get('category_id')!r} not in categories")
            coco.bad_images.add(ann["image_id"])
            continue
        coco.annotations[ann["image_id"]].append({**ann, "_box": box})
    return coco


def annotation_box(ann: dict) -> tuple[float, float, float, float] | None:
    """``[x, y, w, h]`` from ``bbox``, else the extent of the single ``segmentation`` polygon."""
    bbox = ann.get("bbox")
    if isinstance(bbox, list | tuple) and len(bbox) == 4:
        try:
            x, y, w, h = (float(v) for v in bbox)
        except (TypeError, ValueError):
            return None
        return (x, y, w, h) if w > 0 and h > 0 else None
    seg = ann.get("segmentation")
    if isinstance(seg, list) and len(seg) == 1 and isinstance(seg[0], list) and len(seg[0]) >= 6:
        try:
            xs = [float(v) for v in seg[0][0::2]]
            ys = [float(v) for v in seg[0][1::2]]
        except (TypeError, ValueError):
            return None
        w, h = max(xs) - min(xs), max(ys) - min(ys)
        return (min(xs), min(ys), w, h) if w > 0 and h > 0 else None
    return None


def individual_name(ann: dict) -> str | None:
    """The Wild Me individual name; None for the unknown marker ``"____"``."""
    name = ann.get("name")
    if isinstance(name, int | float) and not isinstance(name, bool):
        name = str(name)
    if not isinstance(name, str) or name.strip().lower() in UNKNOWN_NAMES:
        return None
    return name.strip()


def to_records(
    coco: CocoFile, source: str, json_path: Path, image_dir: Path, root: Path, *, id_prefix: str = ""
) -> ReadResult:
    """Turn a parsed COCO file into records (image paths relative to ``root``), in image-id order."""
    out = ReadResult()
    for img_id in sorted(coco.images, key=lambda v: (str(type(v)), v)):
        img = coco.images[img_id]
        iid = f"{id_prefix}{img['id']}"
        if img_id in coco.bad_images:
            out.excluded.append((iid, f"bad annotation entry in {json_path.name}"))
            continue
        objs = []
        for ann in sorted(coco.annotations.get(img_id, []), key=lambda a: str(a.get("id", ""))):
            objs.append(
                Obj(
                    category=coco.categories[ann["category_id"]],
                    box=ann["_box"],
                    individual=individual_name(ann),
                    viewpoint=normalize_viewpoint(ann.get("viewpoint")),
                    ann_id=str(ann.get("id", "")),
                )
            )
        if not objs:
            out.excluded.append((iid, "no annotations: completeness unverifiable"))
            continue
        rel = (image_dir / img["file_name"]).relative_to(root).as_posix()
        w, h = img.get("width"), img.get("height")
        out.records.append(
            ImageRecord(
                source,
                iid,
                rel,
                tuple(objs),
                int(w) if isinstance(w, int | float) else None,
                int(h) if isinstance(h, int | float) else None,
            )
        )
    return out
