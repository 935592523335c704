"""SOURCES.toml: where the original source datasets live on disk (shared by builder and runtime)."""

from __future__ import annotations

import tomllib
from pathlib import Path

SOURCE_KEYS = (
    "cub",
    "treeoflife",
    "gbif_backbone",
    "neon_beetles",
    "whaleshark",
    "beluga",
    "hyena",
    "leopard",
    "gzcd",
    "waid",
    "boxes_on_bees",
    "depondfi",
)


def load_sources(path: str | Path) -> dict[str, Path]:
    """Read a SOURCES.toml; relative roots resolve against the file's folder. Unknown keys are errors."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{path}: sources file not found") from None
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: not valid TOML: {exc}") from None
    table = data.get("sources")
    if not isinstance(table, dict):
        raise ValueError(f"{path}: expected a [sources] table mapping source keys to folders")
    roots: dict[str, Path] = {}
    for key, value in table.items():
        if key not in SOURCE_KEYS:
            raise ValueError(f"{path}: unknown source {key!r}; known: {', '.join(SOURCE_KEYS)}")
        if not isinstance(value, str):
            raise ValueError(f"{path}: source {key!r} must be a path string, got {value!r}")
        root = Path(value)
        roots[key] = root if root.is_absolute() else (path.parent / root)
    return roots
