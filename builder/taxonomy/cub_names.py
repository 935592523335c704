"""CUB class -> English common name, coarse category and accepted scientific name (§C.5 "CUB name mapping").

The map is the project-owned ``builder/data/cub_scientific_names.csv`` (one row per CUB class):
``class_id, class_folder, common_name, scientific_name, genus, status, source_name, note``.
It starts from the cvjena/semantic-embeddings Wikispecies list (``source_name``) and is curated:
names superseded by AOS/iNaturalist changes are updated (``note`` says which), three genus-only
classes whose images are one North-American species are resolved (Frigatebird, Nighthawk,
Geococcyx), Sayornis stays ``genus_only`` and Tree Sparrow is ``mixed`` (two genera). The paper's
counts (open_scientific_name 11 668 = all but two classes, open_genus 11 728 = all but one) match
exactly this: scientific names exist for all but Sayornis and Tree Sparrow, genera for all but
Tree Sparrow.

Common names: CUB folder names with the lower-case tokens hyphenated onto the previous one
(``Black_footed_Albatross`` -> ``Black-footed Albatross``), possessives restored (``Brewer's``) and the
``Artic`` typo fixed. The category (``open_kind_of`` / ``category_mcq``) is the head noun, the last
space-separated token of the common name; single-token names (Cardinal, Mallard, Chuck-will's-widow,
…) have none, so those classes get no category questions.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

NAMES_CSV = Path(__file__).resolve().parents[1] / "data" / "cub_scientific_names.csv"
STATUSES = ("species", "genus_only", "mixed")


@dataclass(frozen=True)
class CubName:
    class_id: int
    class_folder: str  # "014.Indigo_Bunting"
    common_name: str  # "Indigo Bunting"
    scientific_name: str  # "" unless status == "species"
    genus: str  # "" when status == "mixed"
    status: str  # species | genus_only | mixed

    @property
    def category(self) -> str:
        """Head noun of the common name ("Bunting"); "" for single-token names."""
        toks = self.common_name.split()
        return toks[-1] if len(toks) > 1 else ""

    @property
    def kind(self) -> str:
        """The modifier before the head noun ("Indigo"); "" when there is no category."""
        toks = self.common_name.split()
        return " ".join(toks[:-1]) if len(toks) > 1 else ""


def load_cub_names(path: str | Path = NAMES_CSV) -> dict[str, CubName]:
    """The map keyed by class folder name; raises ValueError naming the row on a bad entry."""
    return dict(_load(str(path)))


@lru_cache(maxsize=4)
def _load(path: str) -> tuple[tuple[str, CubName], ...]:
    out: dict[str, CubName] = {}
    with open(path, encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.DictReader(fh), start=2):
            try:
                entry = CubName(
                    class_id=int(row["class_id"]),
                    class_folder=row["class_folder"].strip(),
                    common_name=row["common_name"].strip(),
                    scientific_name=row["scientific_name"].strip(),
                    genus=row["genus"].strip(),
                    status=row["status"].strip(),
                )
            except (KeyError, ValueError) as exc:
                raise ValueError(f"{path}:{lineno}: bad row: {exc}") from None
            _check(entry, f"{path}:{lineno}")
            if entry.class_folder in out:
                raise ValueError(f"{path}:{lineno}: duplicate class {entry.class_folder}")
            out[entry.class_folder] = entry
    return tuple(out.items())


def _check(e: CubName, where: str) -> None:
    if e.status not in STATUSES:
        raise ValueError(f"{where}: status {e.status!r} not in {STATUSES}")
    if not e.common_name:
        raise ValueError(f"{where}: empty common name")
    if e.status == "species":
        parts = e.scientific_name.split()
        if len(parts) != 2 or parts[0] != e.genus or not e.genus[:1].isupper():
            raise ValueError(
                f"{where}: species entry needs 'Genus epithet' matching genus, got {e.scientific_name!r}"
            )
    elif e.scientific_name:
        raise ValueError(f"{where}: {e.status} entry must have no scientific name")
    if e.status == "genus_only" and not e.genus:
        raise ValueError(f"{where}: genus_only entry needs a genus")
    if e.status == "mixed" and e.genus:
        raise ValueError(f"{where}: mixed entry must have no genus")
