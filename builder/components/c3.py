"""C3 (quantitative spatial reasoning): synth, manifests and questions for the builder CLI.

Sources: WAID, Boxes on Bees, 2018-NEON-beetles, DePondFi, GZCD (counting, relative counting; beetles
also distances, relative position, OCR) and WhaleSharkID, HyenaID, LeopardID, GZCD (localization,
viewpoint). Rendering runs in ``BIOVQA_RENDER_PROCESSES`` worker processes (default 1; the bytes do
not depend on it).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from builder.manifests import c3 as c3_manifests
from builder.questions import c3 as c3_questions
from builder.synth import boxes_on_bees, depondfi, neon_beetles, waid, wildme

SOURCES: tuple[str, ...] = (
    "neon_beetles",
    "waid",
    "boxes_on_bees",
    "depondfi",
    "gzcd",
    "whaleshark",
    "hyena",
    "leopard",
)


def synth(out_root: Path, seed: int = 42) -> dict[str, str]:
    """Write the miniature of every C3 source in its real layout; ``{source key: folder}``."""
    out_root = Path(out_root)
    written = {
        "neon_beetles": neon_beetles.synth(out_root, seed),
        "waid": waid.synth(out_root, seed),
        "boxes_on_bees": boxes_on_bees.synth(out_root, seed),
        "depondfi": depondfi.synth(out_root, seed),
    }
    for key in ("gzcd", "whaleshark", "hyena", "leopard"):
        written[key] = wildme.synth(out_root, key, seed)
    return written


def manifests(roots: dict[str, Path], out_dir: Path, *, strict: bool = False, scale: str = "full") -> dict:
    """Verified manifests of the named C3 sources (missing ones skipped with a message) + summary.

    ``scale`` changes nothing here: subset budgets (500 images) apply at question time and take all
    images when fewer exist, which is what the miniature needs.
    """
    return c3_manifests.build(SOURCES, roots, Path(out_dir), strict=strict, scale=scale)


def render_processes() -> int:
    """Worker processes for rendering (``BIOVQA_RENDER_PROCESSES``, default 1)."""
    return max(1, int(os.environ.get("BIOVQA_RENDER_PROCESSES", "1")))


def questions(manifest_dir: Path, roots: dict[str, Path], hub_dir: Path, *, seed: int = 42) -> Iterator[dict]:
    """Every C3 record (validated), deterministic given the seed, in a stable order."""
    present = {k: Path(v) for k, v in roots.items() if k in SOURCES}
    return c3_questions.generate(Path(manifest_dir), present, seed=seed, processes=render_processes())
