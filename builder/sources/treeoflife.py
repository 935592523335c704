"""TreeOfLife-200M reader: the catalog parquet and the images (BGR parquet shards or files by uuid).

Layouts accepted under the source root:

* catalog: ``catalog.parquet``, ``dataset/catalog.parquet`` or ``catalog/*.parquet``; columns
  ``uuid``, the seven ranks, ``scientific_name``, ``common_name`` (alias ``provided_common_name``);
  any other column is ignored and a missing optional column reads as null. ``species`` may hold the
  epithet (TreeOfLife-10M style) or the binomial (TaxonoPy output): :func:`species_epithet` handles both.
* images: parquet shards ``shards/**/*.parquet`` (the TreeOfLife-toolbox layout
  ``source=<s>/server=<h>/data_*.parquet``) with ``uuid, image, resized_size``, where ``image`` is raw
  BGR bytes of length H×W×3 and ``resized_size`` is ``[H, W]``; or files ``images/<uuid>.<ext>``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image

from builder.common import MAX_IMAGE_PIXELS, SourceFormatError, open_image_checked, sha256_bytes

SOURCE_KEY = "treeoflife"
RANK_COLUMNS = ("kingdom", "phylum", "class", "order", "family", "genus", "species")
#: Catalog columns the builder reads, with accepted aliases (first present wins).
CATALOG_ALIASES: dict[str, tuple[str, ...]] = {
    "uuid": ("uuid",),
    **{r: (r,) for r in RANK_COLUMNS},
    "scientific_name": ("scientific_name", "scientificName"),
    "common_name": ("common_name", "provided_common_name", "vernacularName"),
}
REQUIRED = ("uuid", *RANK_COLUMNS)
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp")


def catalog_files(root: str | Path) -> list[Path]:
    """The catalog parquet file(s) under a TreeOfLife root."""
    root = Path(root)
    for cand in (root / "catalog.parquet", root / "dataset" / "catalog.parquet"):
        if cand.is_file():
            return [cand]
    files = sorted((root / "catalog").glob("*.parquet")) if (root / "catalog").is_dir() else []
    if not files:
        raise SourceFormatError(
            f"{root}: no TreeOfLife catalog (catalog.parquet, dataset/catalog.parquet, catalog/*.parquet)"
        )
    return files


def catalog_columns(files: list[Path]) -> dict[str, str | None]:
    """Map each builder column to the catalog column that holds it (None when absent); checks required ones."""
    try:
        names = set(pq.read_schema(files[0]).names)
    except Exception as exc:
        raise SourceFormatError(f"{files[0]}: not a readable parquet file: {exc}") from None
    mapping = {
        col: next((a for a in aliases if a in names), None) for col, aliases in CATALOG_ALIASES.items()
    }
    missing = [c for c in REQUIRED if mapping[c] is None]
    if missing:
        raise SourceFormatError(f"{files[0]}: catalog lacks required columns {missing} (has {sorted(names)})")
    for extra in ("resized_size", "width", "height"):
        mapping[extra] = extra if extra in names else None
    return mapping


def read_catalog(root: str | Path) -> pa.Table:
    """The whole catalog as a normalized table (small catalogs / tests; selection streams via DuckDB)."""
    files = catalog_files(root)
    mapping = catalog_columns(files)
    tables = []
    for f in files:
        try:
            t = pq.read_table(f, columns=[v for k, v in mapping.items() if v and k in CATALOG_ALIASES])
        except Exception as exc:
            raise SourceFormatError(f"{f}: cannot read catalog: {exc}") from None
        cols = {}
        for col in CATALOG_ALIASES:
            src = mapping[col]
            cols[col] = t[src].cast(pa.string()) if src else pa.nulls(t.num_rows, pa.string())
        tables.append(pa.table(cols))
    return pa.concat_tables(tables)


@dataclass(frozen=True)
class ImageLoc:
    """Where one image lives: a shard file + row, or a file."""

    path: str  # relative to the source root
    row: int  # row in the shard; -1 for a file


def shard_files(root: str | Path) -> list[Path]:
    root = Path(root)
    return sorted((root / "shards").rglob("*.parquet")) if (root / "shards").is_dir() else []


def image_layout(root: str | Path) -> str:
    """``"shards"``, ``"files"`` or ``"none"`` for a TreeOfLife root."""
    root = Path(root)
    if shard_files(root):
        return "shards"
    if (root / "images").is_dir():
        return "files"
    return "none"


def shard_index(root: str | Path) -> pa.Table:
    """uuid, path, row, height, width for every shard row (reads only the small columns)."""
    root = Path(root)
    parts = []
    for f in shard_files(root):
        try:
            t = pq.read_table(f, columns=["uuid", "resized_size"])
        except Exception as exc:
            raise SourceFormatError(
                f"{f}: not a readable image shard (uuid, image, resized_size): {exc}"
            ) from None
        h, w = [], []
        for size in t["resized_size"].to_pylist():
            ok = isinstance(size, list) and len(size) == 2 and None not in size
            h.append(int(size[0]) if ok else -1)
            w.append(int(size[1]) if ok else -1)
        rel = f.relative_to(root).as_posix()
        parts.append(
            pa.table(
                {
                    "uuid": t["uuid"].cast(pa.string()),
                    "path": pa.array([rel] * t.num_rows, pa.string()),
                    "row": pa.array(np.arange(t.num_rows), pa.int64()),
                    "height": pa.array(h, pa.int64()),
                    "width": pa.array(w, pa.int64()),
                }
            )
        )
    if not parts:
        return pa.table(
            {"uuid": [], "path": [], "row": [], "height": [], "width": []},
            schema=pa.schema(
                [
                    ("uuid", pa.string()),
                    ("path", pa.string()),
                    ("row", pa.int64()),
                    ("height", pa.int64()),
                    ("width", pa.int64()),
                ]
            ),
        )
    return pa.concat_tables(parts)


def file_index(root: str | Path) -> dict[str, str]:
    """{uuid: relative path} of the files under ``images/`` (first suffix in IMAGE_SUFFIXES order wins)."""
    root = Path(root)
    out: dict[str, str] = {}
    folder = root / "images"
    if not folder.is_dir():
        return out
    for p in sorted(folder.rglob("*")):
        if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file():
            out.setdefault(p.stem, p.relative_to(root).as_posix())
    return out


@dataclass(frozen=True)
class LoadedImage:
    sha256: str
    width: int
    height: int
    image: Image.Image


def decode_bgr(data: bytes, height: int, width: int, name: str) -> Image.Image:
    """Raw BGR bytes (H×W×3) to an RGB PIL image; SourceFormatError when the length does not match."""
    if height <= 0 or width <= 0:
        raise SourceFormatError(f"{name}: bad resized_size [{height}, {width}]")
    if height * width > MAX_IMAGE_PIXELS:
        raise SourceFormatError(f"{name}: image too large ({width}x{height}, decompression bomb guard)")
    if data is None or len(data) != height * width * 3:
        got = "null" if data is None else len(data)
        raise SourceFormatError(
            f"{name}: image has {got} bytes, expected {height}x{width}x3 = {height * width * 3}"
        )
    arr = np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3)[:, :, ::-1]
    return Image.fromarray(np.ascontiguousarray(arr), "RGB")


def load_shard_rows(root: Path, rel: str, rows: list[int]) -> dict[int, LoadedImage | SourceFormatError]:
    """Decode the given rows of one shard; each row maps to its image or to the error that names it."""
    path = Path(root) / rel
    out: dict[int, LoadedImage | SourceFormatError] = {}
    try:
        t = pq.read_table(path, columns=["uuid", "image", "resized_size"])
    except Exception as exc:
        err = SourceFormatError(f"{path}: cannot read shard: {exc}")
        return dict.fromkeys(rows, err)
    for r in rows:
        name = f"{path}:row {r}"
        try:
            if r >= t.num_rows:
                raise SourceFormatError(f"{name}: row out of range ({t.num_rows} rows)")
            data = t["image"][r].as_py()
            size = t["resized_size"][r].as_py()
            if not size or len(size) != 2:
                raise SourceFormatError(f"{name}: resized_size {size!r} is not [height, width]")
            img = decode_bgr(data, int(size[0]), int(size[1]), name)
            out[r] = LoadedImage(sha256_bytes(data), img.width, img.height, img)
        except SourceFormatError as exc:
            out[r] = exc
    return out


def load_file(root: Path, rel: str) -> LoadedImage:
    """Read and fully decode one image file (bounded); SourceFormatError names the file."""
    path = Path(root) / rel
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceFormatError(f"{path}: cannot read image: {exc}") from None
    img = open_image_checked(data, str(path))
    return LoadedImage(sha256_bytes(data), img.width, img.height, img)


def load_image(root: str | Path, loc: ImageLoc) -> LoadedImage:
    """One image by location (shard row or file)."""
    if loc.row >= 0:
        res = load_shard_rows(Path(root), loc.path, [loc.row])[loc.row]
        if isinstance(res, SourceFormatError):
            raise res
        return res
    return load_file(Path(root), loc.path)


def image_bytes_png(img: Image.Image) -> bytes:
    """PNG bytes of a decoded image (for callers that need to embed a TreeOfLife picture)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()
