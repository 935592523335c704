"""Boxes on Bees and Pollen (LILA) reader.

ASSUMPTION: the real format could not be confirmed. LILA publishes box datasets as COCO json, so
this reader expects one COCO file ``annotations/*.json`` (or ``*.json`` at the root) whose
``file_name`` values are relative to the root (or to ``images/``). Categories whose name contains
``bee`` are counted as bees (pollen boxes are not animals). Any other layout fails with an error
saying what was expected.
"""

from __future__ import annotations

from pathlib import Path

from builder.common import Report, SourceFormatError
from builder.sources.coco import load_coco, to_records
from builder.sources.records import ReadResult

SOURCE = "boxes_on_bees"


def is_bee(category: str) -> bool:
    """Whether a category counts as a bee."""
    return "bee" in category.lower()


def read(root: str | Path, report: Report) -> ReadResult:
    """Read the single COCO file of the dataset."""
    root = Path(root)
    files = sorted((root / "annotations").glob("*.json")) or sorted(root.glob("*.json"))
    if len(files) != 1:
        raise SourceFormatError(
            f"{root}: expected exactly one COCO json in annotations/ (or at the root), found"
            f" {[f.name for f in files]}"
        )
    coco = load_coco(files[0], report)
    img_dir = root / "images" if (root / "images").is_dir() else root
    return to_records(coco, SOURCE, files[0], img_dir, root)
