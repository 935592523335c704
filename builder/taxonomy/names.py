"""Name helpers shared by the C1 selection, synonym map and vernacular resolution.

Normalization is the runtime scorer's own (:func:`biovqa.taxonomy.normalize_name`), so that the
resources the builder writes match what the scorer looks up, byte for byte.
"""

from __future__ import annotations

from biovqa.taxonomy import normalize_name

__all__ = ["normalize_name", "species_epithet"]


def species_epithet(species: str | None, genus: str | None) -> str | None:
    """The epithet from a catalog ``species`` value, which may hold the epithet or the binomial."""
    if species is None:
        return None
    species = species.strip()
    if not species:
        return None
    parts = species.split()
    if len(parts) >= 2 and (genus and parts[0] == genus.strip() or parts[0][:1].isupper()):
        return " ".join(parts[1:])
    return species
