"""Wild Me re-ID sets on LILA (WhaleSharkID, BelugaID, HyenaID, LeopardID) in their COCO layout.

Layout (from the WildlifeDatasets loaders; no real annotation file was available to check):
``<prefix>.coco/annotations/instances_<split><year>.json`` with images under
``<prefix>.coco/images/<split><year>/<file_name>`` (12-digit zero-padded names). The root may hold
the ``*.coco`` folder or be it. Image ids become ``<split><year>/<image id>``.
"""

from __future__ import annotations

from pathlib import Path

from builder.common import Report, SourceFormatError
from builder.sources.coco import load_coco, to_records
from builder.sources.records import ReadResult

#: catalog key -> (LILA archive prefix, species as named in questions)
CATALOGS = {
    "whaleshark": ("whaleshark", "whale shark"),
    "beluga": ("beluga", "beluga whale"),
    "hyena": ("hyena", "spotted hyena"),
    "leopard": ("leopard", "leopard"),
}


def annotation_files(root: str | Path) -> list[tuple[Path, Path]]:
    """``(instances json, image folder)`` pairs of a Wild Me COCO export under ``root``."""
    root = Path(root)
    cocos = [root] if root.name.endswith(".coco") else sorted(root.glob("*.coco"))
    pairs = []
    for coco in cocos:
        for js in sorted((coco / "annotations").glob("instances_*.json")):
            split = js.stem.removeprefix("instances_")
            pairs.append((js, coco / "images" / split))
    if not pairs:
        raise SourceFormatError(
            f"{root}: no Wild Me COCO export found (expected <prefix>.coco/annotations/instances_<split>.json"
            " and <prefix>.coco/images/<split>/)"
        )
    return pairs


def read(root: str | Path, report: Report, source: str) -> ReadResult:
    """Read every instances file of one catalog into records (one per image, all its annotations)."""
    root = Path(root)
    out = ReadResult()
    for js, img_dir in annotation_files(root):
        coco = load_coco(js, report)
        part = to_records(coco, source, js, img_dir, root, id_prefix=f"{img_dir.name}/")
        out.records.extend(part.records)
        out.excluded.extend(part.excluded)
    return out
