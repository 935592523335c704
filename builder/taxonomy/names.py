"""Name normalization shared by the C1 tree, the synonym map and the vernacular index."""

from __future__ import annotations

import functools
import re
import unicodedata

#: The seven catalog ranks, kingdom first; C1 asks phylum … species.
RANKS = ("kingdom", "phylum", "class", "order", "family", "genus", "species")
TREE_RANKS = RANKS[1:]
#: Depth of each rank in the C1 tree (root 0); a skip edge keeps the rank's depth (§C.3, §M.2).
RANK_DEPTH = {rank: i + 1 for i, rank in enumerate(TREE_RANKS)}

_PUNCT = re.compile(r"[^\w\s]|_", re.UNICODE)
_SPACE = re.compile(r"\s+")


@functools.cache
def _runtime_normalizer():
    try:  # the scorer's normalizer, when the runtime module provides one
        from biovqa.taxonomy import normalize_name as runtime_normalize  # type: ignore[attr-defined]
    except ImportError:
        return None
    return runtime_normalize


def normalize_name(name: str | None) -> str:
    """C1 normalization of a taxon or vernacular name: case-fold, strip diacritics and punctuation.

    Prefers the runtime's normalizer when it exists so builder and scorer agree exactly.
    """
    if not name:
        return ""
    runtime = _runtime_normalizer()
    if runtime is not None:
        return runtime(name)
    text = unicodedata.normalize("NFKD", name)
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = _PUNCT.sub(" ", text.casefold())
    return _SPACE.sub(" ", text).strip()


def species_epithet(species: str | None, genus: str | None) -> str | None:
    """The epithet from a catalog ``species`` value, which may hold the epithet or the binomial."""
    if species is None:
        return None
    species = species.strip()
    if not species:
        return None
    parts = species.split()
    if len(parts) >= 2 and genus and parts[0] == genus.strip():
        return " ".join(parts[1:])
    if len(parts) >= 2 and parts[0][:1].isupper():
        return " ".join(parts[1:])
    return species
