"""C2 manifest: the pinned, verified CUB-200-2011 image list with everything C2 questions need.

Writes under ``out_dir``:

* ``cub.parquet`` — one row per kept image, sorted by id: ``image_id, path`` (relative to
  ``images/``), ``sha256`` (of the file bytes), ``width, height, mode``, ``class_id, class_folder``,
  ``is_training``, ``bbox`` ([x, y, w, h] pixels, clipped to the image), ``parts`` (all 15, with
  ``visible``; hidden parts keep x = y = 0) and ``attributes`` (every label marked present, with its
  certainty 1–4 — the certainty rule is applied by the question generator, see
  :data:`CERTAINTY_RULE`, so the manifest keeps what the source says);
* ``cub.exclusions.parquet`` — ``id, reason`` for every image left out;
* ``cub_classes.parquet`` — class id/folder with common name, category, kind, genus, scientific
  name and map status (``builder.taxonomy.cub_names``).

Verification contract (§L.2): a row exists iff its image decodes and every field its questions need
is present: class (known to the name map), bounding box, all 15 part rows, and attribute labels
when the labels file exists. :func:`audit` re-checks the written file before questions run.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from builder.common import Report, SourceFormatError, sha256_bytes
from builder.sources.cub import N_PARTS, CubData, read_cub
from builder.taxonomy.cub_names import load_cub_names

#: Documented on the dataset card. A present label is a *candidate trait* (may be a gold answer)
#: only at certainty >= 3 (probably/definitely); "guessing" (2) and "not visible" (1) labels never
#: become answers, but every present label, whatever its certainty, counts as true of the image
#: and is never used as a distractor. Among several candidate values of one part+property the gold
#: is the most certain, then the one most typical of the class (class-level continuous label),
#: then the lowest attribute id.
MIN_CANDIDATE_CERTAINTY = 3
CERTAINTY_RULE = (
    "present labels with certainty >= 3 (probably, definitely) are candidate answers; every present "
    "label (any certainty) is true of the image and never a distractor; gold among several values: "
    "highest certainty, then highest class-level frequency, then lowest attribute id"
)
PART_TOLERANCE_PX = 2.0

PART = pa.struct([("part", pa.string()), ("x", pa.float64()), ("y", pa.float64()), ("visible", pa.bool_())])
LABEL = pa.struct(
    [
        ("attribute_id", pa.int16()),
        ("group", pa.string()),
        ("value", pa.string()),
        ("certainty", pa.int8()),
        ("class_percent", pa.float64()),
    ]
)
IMAGES_SCHEMA = pa.schema(
    [
        ("image_id", pa.int32()),
        ("path", pa.string()),
        ("sha256", pa.string()),
        ("width", pa.int32()),
        ("height", pa.int32()),
        ("mode", pa.string()),
        ("class_id", pa.int32()),
        ("class_folder", pa.string()),
        ("is_training", pa.int8()),
        ("bbox", pa.list_(pa.float64())),
        ("parts", pa.list_(PART)),
        ("attributes", pa.list_(LABEL)),
    ]
)
CLASSES_SCHEMA = pa.schema(
    [
        ("class_id", pa.int32()),
        ("class_folder", pa.string()),
        ("common_name", pa.string()),
        ("category", pa.string()),
        ("kind", pa.string()),
        ("genus", pa.string()),
        ("scientific_name", pa.string()),
        ("status", pa.string()),
    ]
)
EXCLUSIONS_SCHEMA = pa.schema([("id", pa.string()), ("reason", pa.string())])


def verify_image(path: Path) -> tuple[str, int, int, str]:
    """``(sha256, width, height, mode)`` after a bounded (DCT-reduced) full decode; raises on failure."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise SourceFormatError(f"{path}: image file missing") from None
    try:
        img = Image.open(io.BytesIO(data))
        w, h = img.size
        if w * h > Image.MAX_IMAGE_PIXELS:
            raise SourceFormatError(f"{path}: {w}x{h} exceeds the decompression-bomb bound")
        mode = img.mode
        img.draft("RGB", (max(1, w // 8), max(1, h // 8)))  # decodes every byte, at reduced size
        img.load()
    except SourceFormatError:
        raise
    except Image.DecompressionBombError:
        raise SourceFormatError(f"{path}: image exceeds the decompression-bomb bound") from None
    except Exception as exc:  # PIL raises many types on corrupt or truncated data
        raise SourceFormatError(f"{path}: cannot decode image: {exc}") from None
    return sha256_bytes(data), w, h, mode


def build_c2_manifest(cub_root: Path, out_dir: Path, report: Report) -> dict:
    """Read CUB under ``cub_root``, verify every image, write the three tables and audit them."""
    data = read_cub(cub_root, report)
    names = load_cub_names()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    labels_by_image = _labels_by_image(data)
    rows: list[dict] = []
    excluded: list[tuple[str, str]] = []
    for image_id in sorted(data.images):
        rel = data.images[image_id]
        row, reason = _image_row(data, names, labels_by_image, image_id, rel, report)
        if row is None:
            excluded.append((str(image_id), reason))
        else:
            rows.append(row)
    for image_id in sorted(set(data.image_class) - set(data.images)):
        excluded.append((str(image_id), "class label for an image not in images.txt"))

    pq.write_table(
        pa.Table.from_pylist(rows, schema=IMAGES_SCHEMA), out_dir / "cub.parquet", compression="zstd"
    )
    pq.write_table(
        pa.Table.from_pylist([{"id": i, "reason": r} for i, r in excluded], schema=EXCLUSIONS_SCHEMA),
        out_dir / "cub.exclusions.parquet",
        compression="zstd",
    )
    class_rows = []
    for cid, folder in sorted(data.classes.items()):
        n = names.get(folder)
        if n is None:
            continue
        class_rows.append(
            {"class_id": cid, "class_folder": folder, "common_name": n.common_name, "category": n.category,
             "kind": n.kind, "genus": n.genus, "scientific_name": n.scientific_name, "status": n.status}
        )  # fmt: skip
    pq.write_table(pa.Table.from_pylist(class_rows, schema=CLASSES_SCHEMA), out_dir / "cub_classes.parquet")
    audit(out_dir)
    summary = {
        "source": "cub",
        "rows": len(rows),
        "excluded": dict(sorted(Counter(r for _, r in excluded).items())),
        "bad_rows": report.n_bad,
        "missing_files": sorted(data.missing_files),
        "attributes_file": str(data.attributes_path.relative_to(data.root.parent))
        if data.attributes_path
        else None,
        "c2_certainty": CERTAINTY_RULE,
        "present_labels": int(sum(len(r["attributes"]) for r in rows)),
    }
    (out_dir / "cub.summary.json").write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n")
    return summary


def _labels_by_image(data: CubData) -> dict[int, list[dict]] | None:
    """Present labels grouped per image (attribute order), or None when the labels file is absent."""
    if data.labels is None:
        return None
    lab = data.labels
    order = np.lexsort((lab.attribute_id, lab.image_id))
    cls_pct = data.class_attribute_percent
    out: dict[int, list[dict]] = {}
    for idx in order:
        image_id, aid = int(lab.image_id[idx]), int(lab.attribute_id[idx])
        attr = data.attributes.get(aid)
        if attr is None:
            continue
        pct = None
        cid = data.image_class.get(image_id)
        if cls_pct is not None and cid is not None and cid <= cls_pct.shape[0]:
            v = float(cls_pct[cid - 1, aid - 1])
            pct = None if np.isnan(v) else v
        out.setdefault(image_id, []).append(
            {"attribute_id": aid, "group": attr.group, "value": attr.value, "certainty": int(lab.certainty[idx]),
             "class_percent": pct}
        )  # fmt: skip
    # images with label lines but nothing present are legitimate (all absent): mark them seen
    for image_id in np.unique(lab.image_id).tolist():
        out.setdefault(int(image_id), [])
    return out


def _image_row(data: CubData, names, labels_by_image, image_id: int, rel: str, report: Report):
    """(row, "") for a verified image, else (None, reason)."""
    cid = data.image_class.get(image_id)
    if cid is None:
        return None, "no class label"
    folder = data.classes.get(cid)
    if folder is None:
        return None, "class id not in classes.txt"
    if folder not in names:
        return None, "class not in the CUB name map"
    if not rel.startswith(folder + "/"):
        return None, "image folder does not match its class"
    bbox = data.bboxes.get(image_id)
    if bbox is None:
        return None, "no bounding box"
    locs = data.part_locs.get(image_id, {})
    if len(locs) != len(data.parts or range(N_PARTS)) or not data.parts:
        return None, "part locations incomplete"
    if labels_by_image is not None and image_id not in labels_by_image:
        return None, "no attribute labels"
    try:
        sha, w, h, mode = verify_image(data.images_dir / rel)
    except SourceFormatError as exc:
        path = str(data.images_dir / rel)
        why = str(exc).removeprefix(path + ": ")  # the path itself may contain any word
        report.error(path, 0, why)
        if why.startswith("image file missing"):
            return None, "image file missing"
        return None, "image too large" if "decompression-bomb" in why else "image undecodable"
    x, y, bw, bh = bbox
    t = PART_TOLERANCE_PX
    if x >= w or y >= h or x + bw > w + t or y + bh > h + t:
        return None, "bounding box outside the image"
    bbox = [x, y, min(bw, w - x), min(bh, h - y)]
    parts = []
    for pid in sorted(data.parts):
        loc = locs.get(pid)
        if loc is None:
            return None, "part locations incomplete"
        if loc.visible and not (-t <= loc.x <= w + t and -t <= loc.y <= h + t):
            return None, "visible part outside the image"
        px, py = (min(max(loc.x, 0.0), w - 1.0), min(max(loc.y, 0.0), h - 1.0)) if loc.visible else (0.0, 0.0)
        parts.append({"part": data.parts[pid], "x": px, "y": py, "visible": loc.visible})
    row = {
        "image_id": image_id,
        "path": rel,
        "sha256": sha,
        "width": w,
        "height": h,
        "mode": mode,
        "class_id": cid,
        "class_folder": folder,
        "is_training": data.is_training.get(image_id),
        "bbox": bbox,
        "parts": parts,
        "attributes": (labels_by_image or {}).get(image_id, []),
    }
    return row, ""


def audit(out_dir: Path) -> None:
    """§L.2 audit of ``cub.parquet``: unique ids, no null/empty required field, geometry inside the image."""
    path = Path(out_dir) / "cub.parquet"
    table = pq.read_table(path)
    for col in ("image_id", "path", "sha256", "width", "height", "class_id", "class_folder", "bbox", "parts"):
        if table.column(col).null_count:
            raise SourceFormatError(f"{path}: audit failed: null values in {col!r}")
    ids = table.column("image_id").to_pylist()
    if len(set(ids)) != len(ids):
        raise SourceFormatError(f"{path}: audit failed: duplicate image ids")
    if ids != sorted(ids):
        raise SourceFormatError(f"{path}: audit failed: rows not sorted by image id")
    for row in table.select(["image_id", "path", "sha256", "width", "height", "bbox", "parts"]).to_pylist():
        where = f"{path}: audit failed: image {row['image_id']}"
        if not row["path"] or len(row["sha256"]) != 64 or row["width"] <= 0 or row["height"] <= 0:
            raise SourceFormatError(f"{where}: empty path/sha256 or non-positive size")
        x, y, bw, bh = row["bbox"]
        if bw <= 0 or bh <= 0 or x + bw > row["width"] + 1e-6 or y + bh > row["height"] + 1e-6:
            raise SourceFormatError(f"{where}: bounding box outside the image")
        if len(row["parts"]) != N_PARTS:
            raise SourceFormatError(f"{where}: {len(row['parts'])} part rows, expected {N_PARTS}")


def build(roots: dict[str, Path], out_dir: Path, *, strict: bool = False, scale: str = "full") -> dict:
    """Component entry: the CUB manifest summary (``c2_certainty`` goes on the dataset card)."""
    if "cub" not in roots:
        print("c2: source 'cub' not configured in SOURCES.toml; skipping the C2 manifest")
        return {"skipped": "source 'cub' not configured"}
    report = Report(strict=strict)
    summary = build_c2_manifest(Path(roots["cub"]), Path(out_dir), report)
    if report.n_bad:
        print(f"c2: {report.summary()}")
    return summary


def load_images(manifest_dir: Path) -> list[dict]:
    """The rows of ``cub.parquet`` (empty list when there is none)."""
    path = Path(manifest_dir) / "cub.parquet"
    return pq.read_table(path).to_pylist() if path.is_file() else []


def load_classes(manifest_dir: Path) -> dict[int, dict]:
    """``cub_classes.parquet`` keyed by class id."""
    path = Path(manifest_dir) / "cub_classes.parquet"
    return {r["class_id"]: r for r in pq.read_table(path).to_pylist()} if path.is_file() else {}
