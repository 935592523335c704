"""Pinned manifests for the C3/C4 sources: one parquet of verified image rows per source.

The verification contract (§L.2): a row exists iff its image decodes and every field its questions
need is present (boxes inside the image, declared size = real size, lines inside the image). Every
excluded image is written with its reason to ``<source>.exclusions.parquet`` and counted in the
summary; bad source rows are reported with file and line.
"""

from __future__ import annotations

import io
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from builder.common import Report, SourceFormatError, sha256_bytes
from builder.sources.records import ReadResult

BOX_TOLERANCE_PX = 3.0

OBJECT = pa.struct(
    [
        ("category", pa.string()),
        ("x", pa.float64()),
        ("y", pa.float64()),
        ("w", pa.float64()),
        ("h", pa.float64()),
        ("individual", pa.string()),
        ("viewpoint", pa.string()),
        ("ann_id", pa.string()),
    ]
)
OBJECTS_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("path", pa.string()),
        ("sha256", pa.string()),
        ("width", pa.int32()),
        ("height", pa.int32()),
        ("n_objects", pa.int32()),
        ("objects", pa.list_(OBJECT)),
    ]
)
LINE = pa.list_(pa.float64(), 4)
BEETLE = pa.struct(
    [
        ("individual", pa.int32()),
        ("length", LINE),
        ("width", LINE),
        ("length_cm", pa.float64()),
        ("width_cm", pa.float64()),
    ]
)
BEETLES_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("path", pa.string()),
        ("sha256", pa.string()),
        ("width", pa.int32()),
        ("height", pa.int32()),
        ("annotator", pa.string()),
        ("cm_pix", pa.float64()),
        ("scalebar", LINE),
        ("n_individuals", pa.int32()),
        ("count_verified", pa.bool_()),
        ("scientific_name", pa.string()),
        ("genus", pa.string()),
        ("species", pa.string()),
        ("code", pa.string()),
        ("beetles", pa.list_(BEETLE)),
    ]
)
EXCLUSIONS_SCHEMA = pa.schema([("id", pa.string()), ("reason", pa.string())])


def verify_image(path: Path) -> tuple[str, int, int]:
    """``(sha256, width, height)`` of an image file after a full (DCT-reduced) decode; raises on failure."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise SourceFormatError(f"{path}: image file missing") from None
    try:
        img = Image.open(io.BytesIO(data))
        size = img.size
        if size[0] * size[1] > Image.MAX_IMAGE_PIXELS:
            raise SourceFormatError(f"{path}: {size[0]}x{size[1]} exceeds the decompression-bomb bound")
        img.draft("RGB", (max(1, size[0] // 8), max(1, size[1] // 8)))  # verify every byte, decode small
        img.load()
    except SourceFormatError:
        raise
    except Image.DecompressionBombError as exc:
        raise SourceFormatError(f"{path}: exceeds the decompression-bomb bound: {exc}") from None
    except Exception as exc:
        raise SourceFormatError(f"{path}: cannot decode image: {exc}") from None
    return sha256_bytes(data), size[0], size[1]


def write_table(rows: list[dict], schema: pa.Schema, path: Path) -> None:
    """Deterministic parquet (rows sorted by id by the caller)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, compression="zstd")


def objects_manifest(source: str, read: ReadResult, root: Path, out_dir: Path, report: Report) -> dict:
    """Verify the records of an object-annotated source and write ``<source>.parquet`` + exclusions."""
    rows, excluded = [], list(read.excluded)
    for rec in read.records:
        try:
            sha, w, h = verify_image(root / rec.path)
        except SourceFormatError as exc:
            report.error(root / rec.path, 0, str(exc).split(": ", 1)[-1])
            excluded.append((rec.id, "image missing or undecodable"))
            continue
        if (rec.width is not None and rec.width != w) or (rec.height is not None and rec.height != h):
            excluded.append(
                (rec.id, f"declared size {rec.width}x{rec.height} differs from the image {w}x{h}")
            )
            continue
        objs, bad = [], False
        for o in rec.objects:
            x, y, bw, bh = o.box
            if o.normalized:
                x, y, bw, bh = x * w, y * h, bw * w, bh * h
            t = BOX_TOLERANCE_PX
            if x < -t or y < -t or x + bw > w + t or y + bh > h + t:
                bad = True
                break
            x, y = max(0.0, x), max(0.0, y)
            bw, bh = min(bw, w - x), min(bh, h - y)
            objs.append(
                {
                    "category": o.category,
                    "x": round(x, 3),
                    "y": round(y, 3),
                    "w": round(bw, 3),
                    "h": round(bh, 3),
                    "individual": o.individual,
                    "viewpoint": o.viewpoint,
                    "ann_id": o.ann_id,
                }
            )
        if bad:
            excluded.append((rec.id, "box outside the image"))
            continue
        rows.append(
            {
                "id": rec.id,
                "path": rec.path,
                "sha256": sha,
                "width": w,
                "height": h,
                "n_objects": len(objs),
                "objects": objs,
            }
        )
    return _finish(source, rows, excluded, OBJECTS_SCHEMA, out_dir, report)


def beetles_manifest(plates, excluded_in, root: Path, out_dir: Path, report: Report) -> dict:
    """Verify NEON-beetle plates (image + lines inside it) and write ``neon_beetles.parquet``.

    A plate whose count cannot be verified stays (its measurements are usable) with
    ``count_verified=False`` and an exclusion row ``<picture>#count``; excluded beetles appear as
    ``<picture>_<individual>``."""
    rows, excluded = [], list(excluded_in)
    for p in plates:
        try:
            sha, w, h = verify_image(root / p.path)
        except SourceFormatError as exc:
            report.error(root / p.path, 0, str(exc).split(": ", 1)[-1])
            excluded.append((p.picture_id, "image missing or undecodable"))
            continue
        lines = [p.scalebar] + [ln for b in p.beetles for ln in (b.length, b.width)]
        if any(not (0 <= v <= w) for ln in lines for v in (ln.x1, ln.x2)) or any(
            not (0 <= v <= h) for ln in lines for v in (ln.y1, ln.y2)
        ):
            excluded.append(
                (p.picture_id, "measurement or scale-bar line outside the image (coordinate frame?)")
            )
            continue
        if not p.count_verified:
            excluded.append((f"{p.picture_id}#count", p.count_reason))
        rows.append(
            {
                "id": p.picture_id,
                "path": p.path,
                "sha256": sha,
                "width": w,
                "height": h,
                "annotator": p.annotator,
                "cm_pix": p.cm_pix,
                "scalebar": [p.scalebar.x1, p.scalebar.y1, p.scalebar.x2, p.scalebar.y2],
                "n_individuals": p.n_individuals,
                "count_verified": p.count_verified,
                "scientific_name": p.scientific_name,
                "genus": p.genus,
                "species": p.species,
                "code": p.code,
                "beetles": [
                    {
                        "individual": b.individual,
                        "length": [b.length.x1, b.length.y1, b.length.x2, b.length.y2],
                        "width": [b.width.x1, b.width.y1, b.width.x2, b.width.y2],
                        "length_cm": b.length_cm,
                        "width_cm": b.width_cm,
                    }
                    for b in p.beetles
                ],
            }
        )
    return _finish("neon_beetles", rows, excluded, BEETLES_SCHEMA, out_dir, report)


def _finish(source, rows, excluded, schema, out_dir: Path, report: Report) -> dict:
    rows.sort(key=lambda r: r["id"])
    ids = [r["id"] for r in rows]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})
        raise SourceFormatError(f"{source}: duplicate image ids in the manifest: {dup[:5]}")
    write_table(rows, schema, out_dir / f"{source}.parquet")
    excluded = sorted(set(excluded))
    write_table(
        [{"id": i, "reason": r} for i, r in excluded],
        EXCLUSIONS_SCHEMA,
        out_dir / f"{source}.exclusions.parquet",
    )
    audit(out_dir / f"{source}.parquet")
    return {
        "rows": len(rows),
        "excluded": dict(sorted(Counter(r for _, r in excluded).items())),
        "bad_rows": report.n_bad,
    }


def audit(path: Path) -> None:
    """§L.2 audit: every required column of every row is non-null and non-empty; raise otherwise."""
    table = pq.read_table(path)
    required = [
        c
        for c in ("id", "path", "sha256", "width", "height", "objects", "beetles", "cm_pix")
        if c in table.column_names
    ]
    for col in required:
        arr = table.column(col)
        if arr.null_count:
            raise SourceFormatError(f"{path}: audit failed: {arr.null_count} null values in {col!r}")
    for col in ("id", "path", "sha256"):
        if any(not v for v in table.column(col).to_pylist()):
            raise SourceFormatError(f"{path}: audit failed: empty {col!r}")
    if any(v <= 0 for v in table.column("width").to_pylist() + table.column("height").to_pylist()):
        raise SourceFormatError(f"{path}: audit failed: non-positive image size")


def load(out_dir: Path, source: str) -> list[dict]:
    """The rows of one manifest (empty when the source had no manifest)."""
    path = Path(out_dir) / f"{source}.parquet"
    return pq.read_table(path).to_pylist() if path.is_file() else []


def _read_source(source: str, root: Path, report: Report):
    from builder.sources import boxes_on_bees, depondfi, gzcd, neon_beetles, waid, wildme

    if source == "neon_beetles":
        return neon_beetles.read(root, report)
    readers = {
        "waid": waid.read,
        "boxes_on_bees": boxes_on_bees.read,
        "depondfi": depondfi.read,
        "gzcd": gzcd.read,
    }
    if source in readers:
        return readers[source](root, report)
    if source in wildme.CATALOGS:
        return wildme.read(root, report, source)
    raise KeyError(f"no C3/C4 reader for source {source!r}")


def build(
    sources, roots: dict[str, Path], out_dir: Path, *, strict: bool = False, scale: str = "full"
) -> dict:
    """Write the manifests of ``sources`` found in ``roots``; return ``{source: summary}``.

    A source missing from ``roots`` is skipped with a message; in tolerant mode a source whose files
    are unusable as a whole is reported in its summary (``error``) and the others go on.
    """
    import sys

    out_dir = Path(out_dir)
    summary: dict = {"scale": scale}
    for source in sources:
        root = roots.get(source)
        if root is None or not Path(root).exists():
            print(f"[manifests] {source}: not configured or missing, skipped", file=sys.stderr)
            summary[source] = {"skipped": "not configured or missing"}
            continue
        report = Report(strict=strict)
        try:
            read = _read_source(source, Path(root), report)
            if source == "neon_beetles":
                summary[source] = beetles_manifest(*read, Path(root), out_dir, report)
            else:
                summary[source] = objects_manifest(source, read, Path(root), out_dir, report)
        except SourceFormatError as exc:
            if strict:
                raise
            print(f"[manifests] {source}: {exc}", file=sys.stderr)
            summary[source] = {"error": str(exc), "bad_rows": report.n_bad}
            continue
        summary[source]["bad_row_examples"] = [str(b) for b in report.bad[:20]]
        if report.bad:
            print(f"[manifests] {source}: {report.summary()}", file=sys.stderr)
    per = [v for v in summary.values() if isinstance(v, dict)]
    summary["rows"] = sum(v.get("rows", 0) for v in per)
    summary["excluded_total"] = sum(sum(v.get("excluded", {}).values()) for v in per)
    summary["bad_rows"] = sum(v.get("bad_rows", 0) for v in per)
    summary["sources_failed"] = sum("error" in v for v in per)
    return summary
