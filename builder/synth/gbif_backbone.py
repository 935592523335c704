"""Synthetic miniature of the GBIF Backbone Taxonomy in its real Darwin Core Archive layout.

Real taxon names (:mod:`builder.synth.c1_taxa`); ids are synthetic except the two known backbone
keys (2435099 *Puma concolor*, 2435104 *Felis concolor*). Files: ``meta.xml`` (core + the
VernacularName extension), ``Taxon.tsv`` (23 columns, no quoting), ``VernacularName.tsv``.
"""

from __future__ import annotations

from pathlib import Path

from builder.synth.c1_taxa import EXTRA_VERNACULARS, SYNONYMS, TAXA

FOLDER = "backbone"
BACKBONE_DATASET = "d7dddbf4-2cf0-4f39-9b2a-bb099caae36c"
COL_DATASET = "7ddf754f-d193-4cc9-b351-99906754a03b"
TAXON_HEADER = (
    "taxonID datasetID parentNameUsageID acceptedNameUsageID originalNameUsageID scientificName "
    "scientificNameAuthorship canonicalName genericName specificEpithet infraspecificEpithet taxonRank "
    "nameAccordingTo namePublishedIn taxonomicStatus nomenclaturalStatus taxonRemarks kingdom phylum "
    "class order family genus"
).split()
VERNACULAR_HEADER = (
    "taxonID",
    "vernacularName",
    "language",
    "country",
    "countryCode",
    "sex",
    "lifeStage",
    "source",
)
_KNOWN_IDS = {"Puma concolor": 2435099, "Felis concolor": 2435104}
_COUNTRY = {"sv": ("Sweden", "SE"), "da": ("Denmark", "DK"), "en": ("", "")}

_TERMS = {
    "taxonID": "http://rs.tdwg.org/dwc/terms/taxonID",
    "datasetID": "http://rs.tdwg.org/dwc/terms/datasetID",
    "parentNameUsageID": "http://rs.tdwg.org/dwc/terms/parentNameUsageID",
    "acceptedNameUsageID": "http://rs.tdwg.org/dwc/terms/acceptedNameUsageID",
    "originalNameUsageID": "http://rs.tdwg.org/dwc/terms/originalNameUsageID",
    "scientificName": "http://rs.tdwg.org/dwc/terms/scientificName",
    "scientificNameAuthorship": "http://rs.tdwg.org/dwc/terms/scientificNameAuthorship",
    "canonicalName": "http://rs.gbif.org/terms/1.0/canonicalName",
    "genericName": "http://rs.gbif.org/terms/1.0/genericName",
    "specificEpithet": "http://rs.tdwg.org/dwc/terms/specificEpithet",
    "infraspecificEpithet": "http://rs.tdwg.org/dwc/terms/infraspecificEpithet",
    "taxonRank": "http://rs.tdwg.org/dwc/terms/taxonRank",
    "nameAccordingTo": "http://rs.tdwg.org/dwc/terms/nameAccordingTo",
    "namePublishedIn": "http://rs.tdwg.org/dwc/terms/namePublishedIn",
    "taxonomicStatus": "http://rs.tdwg.org/dwc/terms/taxonomicStatus",
    "nomenclaturalStatus": "http://rs.tdwg.org/dwc/terms/nomenclaturalStatus",
    "taxonRemarks": "http://rs.tdwg.org/dwc/terms/taxonRemarks",
    "kingdom": "http://rs.tdwg.org/dwc/terms/kingdom",
    "phylum": "http://rs.tdwg.org/dwc/terms/phylum",
    "class": "http://rs.tdwg.org/dwc/terms/class",
    "order": "http://rs.tdwg.org/dwc/terms/order",
    "family": "http://rs.tdwg.org/dwc/terms/family",
    "genus": "http://rs.tdwg.org/dwc/terms/genus",
}
_VTERMS = (
    "http://rs.tdwg.org/dwc/terms/vernacularName",
    "http://purl.org/dc/terms/language",
    "http://rs.tdwg.org/dwc/terms/country",
    "http://rs.tdwg.org/dwc/terms/countryCode",
    "http://rs.tdwg.org/dwc/terms/sex",
    "http://rs.tdwg.org/dwc/terms/lifeStage",
    "http://purl.org/dc/terms/source",
)


def meta_xml() -> str:
    """meta.xml declaring Taxon.tsv (core) and VernacularName.tsv, as in the real backbone."""
    attrs = 'encoding="UTF-8" fieldsTerminatedBy="\\t" linesTerminatedBy="\\n" fieldsEnclosedBy="" ignoreHeaderLines="1"'
    core = "".join(f'    <field index="{i}" term="{_TERMS[c]}"/>\n' for i, c in enumerate(TAXON_HEADER))
    vern = "".join(f'    <field index="{i + 1}" term="{t}"/>\n' for i, t in enumerate(_VTERMS))
    return (
        '<archive xmlns="http://rs.tdwg.org/dwc/text/" metadata="eml.xml">\n'
        f'  <core {attrs} rowType="http://rs.tdwg.org/dwc/terms/Taxon">\n'
        "    <files>\n      <location>Taxon.tsv</location>\n    </files>\n"
        '    <id index="0" />\n' + core + "  </core>\n"
        f'  <extension {attrs} rowType="http://rs.gbif.org/terms/1.0/VernacularName">\n'
        "    <files>\n      <location>VernacularName.tsv</location>\n    </files>\n"
        '    <coreid index="0" />\n' + vern + "  </extension>\n</archive>\n"
    )


def backbone_rows() -> tuple[list[dict[str, str]], list[tuple[str, ...]]]:
    """Taxon rows (dicts over TAXON_HEADER) and vernacular rows for the miniature."""
    rows: list[dict[str, str]] = []
    ids: dict[tuple[str, str], int] = {}
    next_id = [1_000_000]

    def add(rank: str, name: str, parent: int | None, classification: dict[str, str], **extra: str) -> int:
        key = (rank, name)
        if key in ids and "acceptedNameUsageID" not in extra:
            return ids[key]
        taxon_id = _KNOWN_IDS.get(name)
        if taxon_id is None:
            next_id[0] += 1
            taxon_id = next_id[0]
        parts = name.split()
        row = dict.fromkeys(TAXON_HEADER, "")
        row.update(
            taxonID=str(taxon_id),
            datasetID=BACKBONE_DATASET if rank == "kingdom" else COL_DATASET,
            parentNameUsageID="" if parent is None else str(parent),
            scientificName=name,
            canonicalName=name,
            genericName=parts[0] if rank in ("genus", "species") else name,
            specificEpithet=parts[1] if rank == "species" else "",
            taxonRank=rank,
            taxonomicStatus="accepted",
            **classification,
        )
        row.update(extra)
        rows.append(row)
        if "acceptedNameUsageID" not in extra:
            ids[key] = taxon_id
        return taxon_id

    for t in TAXA:
        cls: dict[str, str] = {"kingdom": t.kingdom}
        parent = add("kingdom", t.kingdom, None, dict(cls))
        for rank, name in (
            ("phylum", t.phylum),
            ("class", t.klass),
            ("order", t.order),
            ("family", t.family),
        ):
            if not name:
                continue  # reptiles: no order in the backbone, the family hangs from the class
            cls[rank] = name
            parent = add(rank, name, parent, dict(cls))
        cls["genus"] = t.genus
        parent = add("genus", t.genus, parent, dict(cls))
        add("species", t.binomial, parent, dict(cls))

    by_name = {r["canonicalName"]: r for r in rows if r["taxonomicStatus"] == "accepted"}
    for name, rank, status, targets in SYNONYMS:
        for target in targets:  # a pro-parte synonym is one row per accepted target
            acc = by_name[target]
            cls = {k: acc[k] for k in ("kingdom", "phylum", "class", "order", "family", "genus")}
            add(
                rank,
                name,
                int(acc["parentNameUsageID"] or 0) or None,
                cls,
                acceptedNameUsageID=acc["taxonID"],
                taxonomicStatus=status,
            )

    vern: list[tuple[str, ...]] = []
    for t in TAXA:
        taxon_id = by_name[t.binomial]["taxonID"]
        names: list[tuple[str, str]] = []
        if t.catalog_name:
            names.append(t.catalog_name)
        if t.english:
            names.append((t.english, "en"))
        names.extend(EXTRA_VERNACULARS.get(t.binomial, ()))
        for name, lang in names:
            country, code = _COUNTRY.get(lang, ("", ""))
            vern.append((taxon_id, name, lang, country, code, "", "", "synthetic miniature"))
    return rows, vern


def write(out_root: Path) -> Path:
    """Write the backbone miniature under ``out_root/backbone``; return that folder."""
    folder = Path(out_root) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    rows, vern = backbone_rows()
    (folder / "meta.xml").write_text(meta_xml(), encoding="utf-8", newline="\n")
    with open(folder / "Taxon.tsv", "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\t".join(TAXON_HEADER) + "\n")
        for row in rows:
            fh.write("\t".join(row[c] for c in TAXON_HEADER) + "\n")
    with open(folder / "VernacularName.tsv", "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\t".join(VERNACULAR_HEADER) + "\n")
        for v in vern:
            fh.write("\t".join(v) + "\n")
    return folder
