"""C4 manifests: the five re-ID catalogs (same verified object manifests as C3 uses, see ``c3``)."""

from __future__ import annotations

from pathlib import Path

from builder.manifests import c3

CATALOGS = ("whaleshark", "beluga", "hyena", "leopard", "gzcd")


def build(roots: dict[str, Path], out_dir: Path, *, strict: bool = False, scale: str = "full") -> dict:
    """Write ``<catalog>.parquet`` for every configured catalog; return the summaries."""
    return c3.build(CATALOGS, roots, out_dir, strict=strict, scale=scale)
