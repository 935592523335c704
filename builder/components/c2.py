"""C2 (fine-grained attribute grounding, CUB-200-2011): synth, manifests and questions for the CLI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from biovqa import schema
from builder.manifests import c2 as c2_manifest
from builder.questions.c2 import C2Generator
from builder.sources.cub import find_dataset_dir
from builder.synth import cub as cub_synth
from builder.taxonomy.cub_names import NAMES_CSV

SOURCES: tuple[str, ...] = ("cub",)
VALIDATE_BATCH = 512


def _validated(batch: list[dict]) -> list[dict]:
    """Schema-check a batch in one Arrow conversion (per record only to name a failing one)."""
    try:
        pa.Table.from_pylist(batch, schema=schema.QUESTION_SCHEMA)
        for rec in batch:
            if rec["answer_form"] not in schema.ANSWER_FORMS or rec["component"] != "c2":
                raise ValueError(rec["qid"])
            if rec["image"] is None and rec["image_ref"] is None:
                raise ValueError(rec["qid"])
    except (ValueError, TypeError, pa.ArrowException):
        for rec in batch:
            schema.validate_record(rec)  # raises naming the record and field
        raise
    return batch


def _write_name_map(hub_dir: Path) -> None:
    """Release the CUB class -> scientific name map with the dataset (§C.5): resources/cub_names.csv."""
    dst = hub_dir / "resources" / "cub_scientific_names.csv"
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(NAMES_CSV.read_bytes())


def synth(out_root: Path, seed: int = 42) -> dict[str, str]:
    """Write the drawn-bird CUB miniature under ``out_root/cub``; return ``{"cub": "cub"}``."""
    return cub_synth.synth(Path(out_root), seed=seed)


def manifests(roots: dict[str, Path], out_dir: Path, *, strict: bool = False, scale: str = "full") -> dict:
    """Verified CUB manifest (``cub.parquet`` + exclusions + classes) and its audit; summary dict.

    C2 has no sampling budget (every CUB image is used, §3.2), so ``scale`` changes nothing.
    """
    return c2_manifest.build(roots, Path(out_dir), strict=strict, scale=scale)


def questions(manifest_dir: Path, roots: dict[str, Path], hub_dir: Path, *, seed: int = 42) -> Iterator[dict]:
    """Every C2 record (schema-validated), image by image; writes resources/cub_scientific_names.csv."""
    images = c2_manifest.load_images(manifest_dir)
    if not images:
        print("c2: no CUB manifest rows; no C2 questions")
        return
    if "cub" not in roots:
        raise ValueError("c2: the 'cub' source root is needed to render the marker images")
    _write_name_map(Path(hub_dir))
    gen = C2Generator(
        images, c2_manifest.load_classes(manifest_dir), find_dataset_dir(roots["cub"]) / "images", seed=seed
    )
    batch: list[dict] = []
    for rec in gen.items():
        batch.append(rec)
        if len(batch) == VALIDATE_BATCH:
            yield from _validated(batch)
            batch = []
    yield from _validated(batch)
    if gen.skipped:
        print("c2: items skipped: " + ", ".join(f"{k}: {v}" for k, v in sorted(gen.skipped.items())))
