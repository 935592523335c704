"""Load question configs (local Hub-shaped folder or Hub id) and attach source pixels to ``image_ref`` rows.

Configs are read straight from parquet with pyarrow (``data/<config>/<split>-*.parquet``): no
``datasets`` cache, so an edited or same-named folder can never return stale rows (ecosystem-probe §1).
A Hub id is fetched with ``huggingface_hub.snapshot_download`` (config folder only) and then read the
same way.

Rows whose photo is not redistributed carry ``image_ref`` (source, id, sha256, width, height); the
pixels are resolved against the local source roots of a SOURCES.toml (Contract 6):

- ``cub``: ``<root>/CUB_200_2011/images/<id>`` (or ``<root>/images/<id>`` when the root *is* the
  ``CUB_200_2011`` folder);
- ``treeoflife``: a file ``<root>/images/<id>`` or ``<root>/images/<id>.<ext>``, else the downloader's
  image parquet shards (``<root>/shards/**/*.parquet`` or ``<root>/source=*/server=*/*.parquet``) whose
  ``image`` column holds raw BGR bytes of ``resized_size`` = [height, width];
- every other source (C3/C4 catalogs): ``<root>/<id>``, a path relative to the root (never leaving it).

``sha256`` is checked (when asked) against the stored bytes: the file bytes, or the raw BGR buffer of a
shard row.
"""

from __future__ import annotations

import hashlib
import io
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from biovqa.schema import QUESTION_COLUMNS, QUESTION_SCHEMA

_IMAGE_EXTS = (".jpg", ".jpeg", ".png", ".webp", ".JPG", ".JPEG", ".PNG")


class MissingImagesError(FileNotFoundError):
    """Raised when ``image_ref`` rows cannot be resolved; lists every missing image and where it was sought."""

    def __init__(self, missing: list[dict]):
        self.missing = missing
        lines = [f"{len(missing)} source image(s) could not be attached:"]
        for m in missing[:50]:
            lines.append(f"  {m['qid']}: {m['reason']}")
        if len(missing) > 50:
            lines.append(f"  … and {len(missing) - 50} more")
        lines.append(
            "Fix the roots in SOURCES.toml, or pass --skip-missing to exclude (and count) these items."
        )
        super().__init__("\n".join(lines))


# ----------------------------------------------------------------------------------------- loading


def dataset_folder(dataset: str | Path, config: str) -> Path:
    """A local Hub-shaped folder for ``dataset``: the folder itself, or a snapshot of a Hub id's config."""
    path = Path(dataset).expanduser()
    if path.exists():
        if not path.is_dir():
            raise NotADirectoryError(f"{path}: expected a Hub-shaped dataset folder (with data/<config>/)")
        return path
    if str(dataset).count("/") != 1:
        raise FileNotFoundError(f"{dataset}: no such folder, and not a Hub dataset id (owner/name)")
    from huggingface_hub import snapshot_download

    try:
        local = snapshot_download(
            str(dataset), repo_type="dataset", allow_patterns=[f"data/{config}/*", "resources/*", "README.md"]
        )
    except Exception as exc:  # offline / unknown repo: one clear line, no retry loop
        raise FileNotFoundError(
            f"{dataset}: could not fetch config {config!r} from the Hub ({type(exc).__name__}: {exc}). "
            f"Download it first (hf download {dataset} --repo-type dataset) or pass a local folder."
        ) from None
    return Path(local)


def config_files(folder: Path, config: str, split: str = "test") -> list[Path]:
    """The parquet shards of ``config``/``split`` in a Hub-shaped folder (sorted)."""
    cfg_dir = folder / "data" / config
    if not cfg_dir.is_dir():
        known = sorted(p.name for p in (folder / "data").glob("*") if p.is_dir())
        raise FileNotFoundError(
            f"{folder}: config {config!r} not found (no data/{config}/); available: {known}"
        )
    files = sorted(cfg_dir.glob(f"{split}-*.parquet")) or sorted(cfg_dir.glob(f"{split}.parquet"))
    if not files:
        other = sorted(cfg_dir.glob("*.parquet"))
        if other and not any(p.name.split("-")[0] in ("train", "validation") for p in other):
            files = other  # single-split config written without a split prefix
    if not files:
        raise FileNotFoundError(f"{cfg_dir}: no parquet shards for split {split!r}")
    return files


def _read_shard(path: Path) -> pa.Table:
    try:
        table = pq.read_table(path)
    except Exception as exc:
        raise ValueError(f"{path}: not a readable parquet file: {exc}") from None
    missing = [c for c in QUESTION_COLUMNS if c not in table.column_names]
    if missing:
        raise ValueError(f"{path}: missing question columns {missing}")
    table = table.select(list(QUESTION_COLUMNS))
    try:
        return table.cast(QUESTION_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"{path}: columns do not match the question schema: {exc}") from None


def load_questions(
    dataset: str | Path,
    config: str,
    tasks: Iterable[str] | None = None,
    limit: int | None = None,
    split: str = "test",
) -> pa.Table:
    """The question rows of ``config`` (QUESTION_SCHEMA), sorted by qid.

    ``dataset`` is a local Hub-shaped folder or a Hub id. ``tasks`` keeps exact task ids or component
    prefixes (``c2``); ``limit`` keeps the first N rows *per task* in qid order (deterministic).
    Raises ``ValueError`` for an empty selection and for duplicate qids (naming them).
    """
    folder = dataset_folder(dataset, config)
    files = config_files(folder, config, split)
    table = pa.concat_tables([_read_shard(f) for f in files])
    if table.num_rows == 0:
        raise ValueError(
            f"{folder}: config {config!r} (split {split!r}) holds no questions ({len(files)} shard(s))"
        )
    if tasks:
        wanted = list(tasks)
        task_col = table.column("task").to_pylist()
        keep = [i for i, t in enumerate(task_col) if t in wanted or t.split(".")[0] in wanted]
        if not keep:
            present = sorted(set(task_col))
            raise ValueError(
                f"{folder}: config {config!r} has no rows for tasks {wanted}; present: {present}"
            )
        table = table.take(pa.array(keep, pa.int64()))
    table = table.take(pc.sort_indices(table, sort_keys=[("qid", "ascending")]))
    qids = table.column("qid").to_pylist()
    dup = [q for q, n in Counter(qids).items() if n > 1]
    if dup:
        raise ValueError(f"{folder}: config {config!r} has duplicate qids, e.g. {dup[:5]}")
    if limit is not None:
        if limit < 1:
            raise ValueError(f"limit must be >= 1, got {limit}")
        seen: Counter = Counter()
        keep = []
        for i, t in enumerate(table.column("task").to_pylist()):
            if seen[t] < limit:
                seen[t] += 1
                keep.append(i)
        table = table.take(pa.array(keep, pa.int64()))
    return table


# ------------------------------------------------------------------------------- image resolution


@dataclass
class _TolShards:
    """uuid -> (file, row) index over TreeOfLife image parquet shards (built once per root)."""

    files: list[Path]
    index: dict[str, tuple[int, int]] = field(default_factory=dict)

    @classmethod
    def build(cls, files: list[Path]) -> _TolShards:
        out = cls(files)
        for fi, f in enumerate(files):
            uuids = pq.read_table(f, columns=["uuid"]).column("uuid").to_pylist()
            for ri, u in enumerate(uuids):
                out.index.setdefault(u, (fi, ri))
        return out

    def read(self, uuid: str) -> tuple[bytes, list[int]] | None:
        hit = self.index.get(uuid)
        if hit is None:
            return None
        fi, ri = hit
        pf = pq.ParquetFile(self.files[fi])
        start = 0
        for rg in range(pf.num_row_groups):
            n = pf.metadata.row_group(rg).num_rows
            if ri < start + n:
                t = pf.read_row_group(rg, columns=["uuid", "image", "resized_size"])
                row = t.slice(ri - start, 1).to_pylist()[0]
                return row["image"], list(row["resized_size"])
            start += n
        return None


def bgr_to_ppm(raw: bytes, height: int, width: int) -> bytes:
    """Raw BGR pixels (TreeOfLife shard ``image``) as PPM bytes (lossless, decodable by PIL, no re-encode cost)."""
    import numpy as np

    if len(raw) != height * width * 3:
        raise ValueError(
            f"raw image holds {len(raw)} bytes, expected {height}x{width}x3 = {height * width * 3}"
        )
    rgb = np.frombuffer(raw, dtype=np.uint8).reshape(height, width, 3)[:, :, ::-1]
    return f"P6\n{width} {height}\n255\n".encode() + rgb.tobytes()


class SourceResolver:
    """Reads the bytes of an ``image_ref`` from the configured source roots."""

    def __init__(self, roots: Mapping[str, Path]):
        self.roots = {k: Path(v) for k, v in roots.items()}
        self._tol: dict[Path, _TolShards] = {}

    def _tol_shards(self, root: Path) -> _TolShards:
        if root not in self._tol:
            files = sorted((root / "shards").glob("**/*.parquet")) if (root / "shards").is_dir() else []
            files = files or sorted(root.glob("source=*/server=*/*.parquet"))
            self._tol[root] = _TolShards.build(files)
        return self._tol[root]

    def read(self, ref: Mapping, verify_sha256: bool = False) -> bytes:
        """The image bytes for ``ref``; raises ``FileNotFoundError``/``ValueError`` saying where it looked."""
        source, rid = ref.get("source"), ref.get("id")
        if not source or not rid:
            raise ValueError(f"image_ref without source/id: {dict(ref)}")
        if source not in self.roots:
            raise FileNotFoundError(
                f"source {source!r} has no root in SOURCES.toml (configured: {sorted(self.roots) or 'none'})"
            )
        root = self.roots[source]
        if not root.is_dir():
            raise FileNotFoundError(f"source root for {source!r} does not exist: {root}")
        if Path(rid).is_absolute() or ".." in Path(rid).parts:
            raise ValueError(f"image id {rid!r} of source {source!r} leaves the source root")
        data, stored = None, None
        if source == "cub":
            candidates = [root / "CUB_200_2011" / "images" / rid, root / "images" / rid]
        elif source == "treeoflife":
            base = root / "images" / rid
            candidates = [base, *[base.with_name(base.name + e) for e in _IMAGE_EXTS]]
        else:
            candidates = [root / rid]
        for c in candidates:
            if c.is_file():
                data = stored = c.read_bytes()
                break
        if data is None and source == "treeoflife":
            hit = self._tol_shards(root).read(rid)
            if hit is not None:
                stored, (h, w) = hit
                data = bgr_to_ppm(stored, h, w)
        if data is None:
            where = ", ".join(str(c) for c in candidates)
            if source == "treeoflife":
                where += f", image shards under {root}"
            raise FileNotFoundError(f"{source}:{rid} not found (looked in {where})")
        if verify_sha256 and ref.get("sha256"):
            got = hashlib.sha256(stored).hexdigest()
            if got != ref["sha256"]:
                raise ValueError(f"{source}:{rid} sha256 mismatch: expected {ref['sha256']}, file has {got}")
        return data


_RESOLVERS: dict[tuple, SourceResolver] = {}


def _resolver_for(roots: Mapping[str, Path]) -> SourceResolver:
    key = tuple(sorted((k, str(v)) for k, v in roots.items()))
    if key not in _RESOLVERS:
        _RESOLVERS[key] = SourceResolver(roots)
    return _RESOLVERS[key]


def attach_image_ref(example: dict, roots: Mapping[str, Path], verify_sha256: bool = False) -> dict:
    """Fill ``image`` from ``image_ref`` for one row; made for ``Dataset.map``.

    Example::

        roots = biovqa.sources.load_sources("SOURCES.toml")
        ds = load_dataset("imageomics/Bio-VQA", "c1", split="test").cast_column("image", Image(decode=False))
        ds = ds.map(attach_image_ref, fn_kwargs={"roots": roots})

    Rows that already embed an image are returned unchanged. Raises ``FileNotFoundError`` naming the qid
    and every path tried when the source image is missing.
    """
    image = example.get("image")
    if image is not None and (not isinstance(image, dict) or image.get("bytes") is not None):
        return {"image": image}
    ref = example.get("image_ref")
    if not ref:
        raise ValueError(f"{example.get('qid')}: neither image nor image_ref is set")
    try:
        data = _resolver_for(roots).read(ref, verify_sha256=verify_sha256)
    except (FileNotFoundError, ValueError) as exc:
        raise type(exc)(f"{example.get('qid')}: {exc}") from None
    return {"image": {"bytes": data, "path": None}}


@dataclass
class Attached:
    """Result of :func:`attach_images`: the rows with pixels, and the counted exclusions."""

    table: pa.Table
    excluded: list[dict]  # {"qid", "reason"}


def attach_images(
    rows: pa.Table,
    sources_toml: str | Path | Mapping[str, Path] | None,
    verify_sha256: bool = False,
    skip_missing: bool = False,
) -> Attached:
    """Resolve every ``image_ref`` row without embedded bytes against the source roots.

    Missing or mismatching images raise one :class:`MissingImagesError` listing all of them; with
    ``skip_missing`` those rows are dropped and returned in ``excluded`` (to be counted in run.json).
    """
    images = rows.column("image").to_pylist()
    need = [i for i, im in enumerate(images) if im is None or im.get("bytes") is None]
    if not need:
        return Attached(rows, [])
    qids = rows.column("qid").to_pylist()
    refs = rows.column("image_ref").to_pylist()
    if sources_toml is None:
        missing = [
            {
                "qid": qids[i],
                "reason": "row needs a source image (image_ref) but no --sources SOURCES.toml was given",
            }
            for i in need
        ]
    else:
        if isinstance(sources_toml, Mapping):
            roots = dict(sources_toml)
        else:
            from biovqa.sources import load_sources

            roots = load_sources(sources_toml)
        resolver = _resolver_for(roots)
        missing = []
        for i in need:
            if refs[i] is None:
                missing.append({"qid": qids[i], "reason": "neither image nor image_ref is set"})
                continue
            try:
                images[i] = {"bytes": resolver.read(refs[i], verify_sha256=verify_sha256), "path": None}
            except (FileNotFoundError, ValueError, OSError) as exc:
                missing.append({"qid": qids[i], "reason": str(exc)})
    if missing and not skip_missing:
        raise MissingImagesError(missing)
    idx = rows.schema.get_field_index("image")
    table = rows.set_column(
        idx, rows.schema.field("image"), pa.array(images, type=rows.schema.field("image").type)
    )
    if missing:
        gone = {m["qid"] for m in missing}
        keep = [i for i, q in enumerate(qids) if q not in gone]
        table = table.take(pa.array(keep, pa.int64()))
    return Attached(table, missing)


def decode_image(data: bytes, max_side: int | None = None):
    """Decode image bytes to an RGB PIL image (bounded by ``Image.MAX_IMAGE_PIXELS``), optionally downscaled
    so the longer side is at most ``max_side`` (aspect kept, LANCZOS)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as im:
        im.load()
        img = im.convert("RGB")
    if max_side and max(img.size) > max_side:
        scale = max_side / max(img.size)
        size = (max(1, round(img.width * scale)), max(1, round(img.height * scale)))
        img = img.resize(size, Image.LANCZOS)
    return img
