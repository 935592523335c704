"""GZCD (Grevy's Zebra Census Dataset, imageomics/GZCD) reader.

ASSUMPTION: the real file layout could not be confirmed (only the dataset card was seen). GZCD comes
out of the same Wild Me / WBIA pipeline as the LILA sets (GGR 2016/2018 census), so this reader
expects the same COCO export: ``gzcd.coco/annotations/instances_<split>.json`` +
``gzcd.coco/images/<split>/`` with ``name`` (individual), ``viewpoint`` and boxes, categories
``zebra_grevys``, ``zebra_plains``, ``giraffe_reticulated``. A different layout fails with an error
saying exactly this.
"""

from __future__ import annotations

from pathlib import Path

from builder.common import Report
from builder.sources import wildme
from builder.sources.records import ReadResult

SOURCE = "gzcd"
SPECIES = "Grevy's zebra"
GREVYS = "zebra_grevys"
#: The three nested counting targets (§A.3: GZCD yields three questions per image).
NESTED_TARGETS = (
    ("grevys_zebra", "Grevy's zebras", frozenset({"zebra_grevys"})),
    ("zebra", "zebras", frozenset({"zebra_grevys", "zebra_plains"})),
    ("animal", "animals", None),  # None = every category
)


def read(root: str | Path, report: Report) -> ReadResult:
    """Read the GZCD COCO export (see module docstring for the assumed layout)."""
    return wildme.read(root, report, SOURCE)
