"""Shared helpers for the C3/C4 builder tests: the synthetic miniature and a blob counter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy import ndimage

from builder.components import c3 as c3_component
from builder.components import c4 as c4_component


def build_miniature(root: Path) -> tuple[dict[str, Path], Path]:
    """Write the C3+C4 miniature and its manifests under ``root``; return (roots, manifest dir)."""
    written = {**c3_component.synth(root / "src"), **c4_component.synth(root / "src")}
    roots = {k: root / "src" / v for k, v in written.items()}
    man = root / "manifests"
    c3_component.manifests(roots, man)
    c4_component.manifests(roots, man)
    return roots, man


def count_blobs(region: np.ndarray, thresh: float = 60.0, min_area: int = 30) -> int:
    """Objects on a smooth background: pixels far from their row's median colour, 8-connected."""
    rgb = region.astype(np.float64)
    bg = np.median(rgb, axis=1, keepdims=True)
    mask = np.abs(rgb - bg).sum(axis=2) > thresh
    labels, n = ndimage.label(mask, structure=np.ones((3, 3)))
    if n == 0:
        return 0
    areas = ndimage.sum(mask, labels, index=np.arange(1, n + 1))
    return int((areas >= min_area).sum())
