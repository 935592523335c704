"""English vernacular resolution for C1 common names (§3.1, §D.10).

TreeOfLife inherits GBIF's multilingual vernacularName field with no language tag, so a catalog
common name may be Swedish (``åkergroda``) where the answer key needs English (``Moor frog``).
Each (taxon, catalog name) leaves the pipeline at the first stage that settles it:

1. offline triage of the catalog name: non-ASCII letters reject before any other test; a GBIF
   ``en`` tag for that name on that taxon accepts; a GBIF tag in another language only rejects
   (our addition: ``tall`` and ``gran`` are English words but Swedish tree names); otherwise the
   share of tokens found in an English wordlist decides (accept at ≥ :data:`WORDLIST_ACCEPT`);
2. authorities in order, first clean English candidate wins, each lookup behind an on-disk JSON
   cache: the offline :class:`GbifEnglishAuthority` (English vernaculars of the accepted taxon after
   following synonyms) ships; network authorities (iNaturalist, Wikipedia) plug in through the
   :class:`Authority` protocol and are never needed to build. Every candidate passes :func:`gate`;
3. a curated overrides file (TSV: scientific_name, english_name, citation).

A taxon no stage settles has no English name: its rows are excluded with that reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import pyarrow as pa

from builder.taxonomy.names import normalize_name

DATA = Path(__file__).with_name("data")
WORDLIST_ACCEPT = 0.5
_RANK_WORDS = {"kingdom", "phylum", "class", "order", "family", "genus", "species", "subspecies", "tribe"}
_QUALIFIERS = {
    "sp",
    "spp",
    "cf",
    "aff",
    "var",
    "subsp",
    "ssp",
    "indet",
    "unidentified",
    "unknown",
    "incertae",
    "sedis",
}


def load_wordlist(path: Path | None = None) -> frozenset[str]:
    """The triage wordlist (lowercase words; ``#`` comments)."""
    path = path or DATA / "english_words.txt"
    words: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            words.update(line.split())
    return frozenset(words)


def has_non_ascii_letters(name: str) -> bool:
    return any(ch.isalpha() and ord(ch) > 127 for ch in name)


def tokens(name: str) -> list[str]:
    return [t for t in re.split(r"[^a-z]+", name.casefold()) if t]


def gate(candidate: str, scientific_name: str) -> bool:
    """A candidate English name is clean: ASCII letters, no rank words/qualifiers, no echo of the binomial."""
    if not candidate or has_non_ascii_letters(candidate):
        return False
    toks = tokens(candidate)
    if not toks or _RANK_WORDS & set(toks) or _QUALIFIERS & set(toks):
        return False
    sci = set(tokens(scientific_name))
    return not (sci & set(toks))


class Authority(Protocol):
    """One English-name authority: ``lookup`` returns candidates best first (may be empty)."""

    name: str

    def lookup(self, scientific_name: str) -> list[str]: ...


@dataclass
class GbifEnglishAuthority:
    """English vernaculars from the backbone, after following synonyms to the accepted name (offline)."""

    english_by_name: dict[str, list[str]]  # accepted canonical name -> English vernaculars (file order)
    accepted_of: dict[str, list[str]]  # synonym canonical name -> accepted canonical names
    name: str = "gbif"

    def lookup(self, scientific_name: str) -> list[str]:
        out: list[str] = list(self.english_by_name.get(scientific_name, []))
        for acc in self.accepted_of.get(scientific_name, []):
            out.extend(self.english_by_name.get(acc, []))
        return out


@dataclass
class CachedAuthority:
    """Wraps an authority with an on-disk JSON cache {scientific_name: [candidates]}."""

    inner: Authority
    path: Path
    _cache: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.name = self.inner.name
        if self.path.is_file():
            self._cache = json.loads(self.path.read_text(encoding="utf-8"))

    def lookup(self, scientific_name: str) -> list[str]:
        if scientific_name not in self._cache:
            self._cache[scientific_name] = list(self.inner.lookup(scientific_name))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(
                json.dumps(self._cache, sort_keys=True, ensure_ascii=False, indent=0), encoding="utf-8"
            )
            tmp.replace(self.path)
        return self._cache[scientific_name]


def load_overrides(path: Path | None = None) -> dict[str, tuple[str, str]]:
    """Curated overrides TSV -> {scientific_name: (english_name, citation)}; ``#`` lines are comments."""
    path = path or DATA / "vernacular_overrides.tsv"
    out: dict[str, tuple[str, str]] = {}
    if not path.is_file():
        return out
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.rstrip("\r").split("\t")
        if len(parts) < 3 or not parts[0].strip() or not parts[1].strip():
            raise ValueError(f"{path}:{i}: expected scientific_name<TAB>english_name<TAB>citation")
        out[parts[0].strip()] = (parts[1].strip(), parts[2].strip())
    return out


@dataclass(frozen=True)
class Resolution:
    english: str | None  # None: unresolved
    mechanism: str  # triage_en_tag | triage_wordlist | authority:<name> | override | unresolved
    detail: str = ""


@dataclass
class VernacularResolver:
    """Resolve (scientific name, catalog common name) pairs to English, first stage wins."""

    tags: dict[tuple[str, str], set[str]]  # (scientific name, normalized vernacular) -> GBIF language codes
    authorities: Sequence[Authority] = ()
    overrides: dict[str, tuple[str, str]] = field(default_factory=dict)
    wordlist: frozenset[str] = field(default_factory=load_wordlist)

    def triage(self, scientific_name: str, name: str) -> bool | None:
        """True accept, False reject (never None: triage always decides)."""
        if has_non_ascii_letters(name):
            return False
        langs = self.tags.get((scientific_name, normalize_name(name)), set())
        if "en" in langs:
            return True
        if langs:
            return False
        toks = tokens(name)
        if not toks:
            return False
        return sum(t in self.wordlist for t in toks) / len(toks) >= WORDLIST_ACCEPT

    def resolve(self, scientific_name: str, name: str | None) -> Resolution:
        if name and self.triage(scientific_name, name):
            langs = self.tags.get((scientific_name, normalize_name(name)), set())
            return Resolution(name, "triage_en_tag" if "en" in langs else "triage_wordlist")
        for auth in self.authorities:
            for cand in auth.lookup(scientific_name):
                if gate(cand, scientific_name):
                    return Resolution(cand, f"authority:{auth.name}", f"catalog name {name!r} rejected")
        if scientific_name in self.overrides:
            english, citation = self.overrides[scientific_name]
            return Resolution(english, "override", citation)
        return Resolution(None, "unresolved", f"catalog name {name!r} rejected; no authority or override")


def resolver_from_backbone(
    taxa: pa.Table | None,
    vernaculars: pa.Table | None,
    *,
    cache_dir: Path | None = None,
    extra_authorities: Iterable[Authority] = (),
    overrides: dict[str, tuple[str, str]] | None = None,
) -> VernacularResolver:
    """Build the resolver from backbone tables (either may be None when the backbone is absent)."""
    tags: dict[tuple[str, str], set[str]] = {}
    english: dict[str, list[str]] = {}
    accepted_of: dict[str, list[str]] = {}
    if taxa is not None and taxa.num_rows:
        ids = taxa["taxonID"].to_pylist()
        names = taxa["canonicalName"].to_pylist()
        accepted = taxa["acceptedNameUsageID"].to_pylist()
        name_of = dict(zip(ids, names, strict=True))
        for name, acc in zip(names, accepted, strict=True):
            if acc and acc in name_of:
                accepted_of.setdefault(name, []).append(name_of[acc])
        if vernaculars is not None and vernaculars.num_rows:
            for tid, vname, lang in zip(
                vernaculars["taxonID"].to_pylist(),
                vernaculars["vernacularName"].to_pylist(),
                vernaculars["language"].to_pylist(),
                strict=True,
            ):
                sci = name_of.get(tid)
                if sci is None or not vname:
                    continue
                lang = (lang or "").strip().lower()
                tags.setdefault((sci, normalize_name(vname)), set()).add(lang)
                if lang == "en":
                    english.setdefault(sci, []).append(vname.strip())
    authorities: list[Authority] = [GbifEnglishAuthority(english, accepted_of)]
    authorities.extend(extra_authorities)
    if cache_dir is not None:
        authorities = [
            CachedAuthority(a, Path(cache_dir) / f"{a.name}.json") if a.name != "gbif" else a
            for a in authorities
        ]
    return VernacularResolver(
        tags=tags, authorities=authorities, overrides=load_overrides() if overrides is None else overrides
    )
