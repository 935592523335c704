"""C4 (individual re-identification): synth, manifests and questions for the builder CLI.

Catalogs: WhaleSharkID, BelugaID, HyenaID, LeopardID, GZCD. Pair difficulty comes from the embedder
chosen by ``BIOVQA_EMBEDDER`` (``auto`` = DINOv2 when its weights are cached locally, else the
documented fallback; ``dinov2``; ``fallback``); its name is in every row's ``c4.embedder``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from builder.components.c3 import render_processes
from builder.manifests import c4 as c4_manifests
from builder.questions import c4 as c4_questions
from builder.synth import wildme

SOURCES: tuple[str, ...] = c4_manifests.CATALOGS


def synth(out_root: Path, seed: int = 42) -> dict[str, str]:
    """Write the five patterned-individual catalogs (COCO, LILA layout); ``{source key: folder}``."""
    return {key: wildme.synth(Path(out_root), key, seed) for key in SOURCES}


def manifests(roots: dict[str, Path], out_dir: Path, *, strict: bool = False, scale: str = "full") -> dict:
    """Verified manifests of the named catalogs + summary (``scale``: pair budgets cap at what exists)."""
    return c4_manifests.build(roots, Path(out_dir), strict=strict, scale=scale)


def questions(manifest_dir: Path, roots: dict[str, Path], hub_dir: Path, *, seed: int = 42) -> Iterator[dict]:
    """Every C4 pair record (validated), deterministic given the seed and the embedder."""
    from builder.embed import get_embedder

    present = {k: Path(v) for k, v in roots.items() if k in SOURCES}
    embedder = get_embedder(os.environ.get("BIOVQA_EMBEDDER", "auto"))
    return c4_questions.generate(
        Path(manifest_dir), present, seed=seed, processes=render_processes(), embedder=embedder
    )
