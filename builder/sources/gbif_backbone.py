"""GBIF Backbone Taxonomy reader (Darwin Core Archive: meta.xml, Taxon.tsv, VernacularName.tsv).

The backbone is tab-separated with NO quoting (``fieldsEnclosedBy=""``): a name such as
``"Sturnus" vulgaris`` keeps its quote characters, so files are parsed with quoting off.
Column names come from ``meta.xml``; without it, the header line is used. Rows with the wrong
number of fields are reported (file, line, reason) and skipped.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv

from builder.common import Report, SourceFormatError

SOURCE_KEY = "gbif_backbone"
_DWC_NS = "{http://rs.tdwg.org/dwc/text/}"

#: Taxon.tsv columns the builder uses (the rest are read past).
TAXON_COLUMNS = (
    "taxonID",
    "parentNameUsageID",
    "acceptedNameUsageID",
    "scientificName",
    "canonicalName",
    "taxonRank",
    "taxonomicStatus",
    "kingdom",
    "phylum",
    "class",
    "order",
    "family",
    "genus",
)
VERNACULAR_COLUMNS = ("taxonID", "vernacularName", "language", "countryCode")
#: ``taxonomicStatus`` values that name an accepted usage (everything else follows acceptedNameUsageID).
ACCEPTED_STATUSES = ("accepted", "doubtful")


@dataclass(frozen=True)
class DwcaFile:
    """One data file of the archive as meta.xml describes it."""

    path: Path
    columns: tuple[str, ...]
    header_lines: int
    delimiter: str


def find_archive(root: str | Path) -> Path:
    """The folder holding meta.xml/Taxon.tsv: ``root`` itself or its single sub-folder that does."""
    root = Path(root)
    if (root / "meta.xml").is_file() or (root / "Taxon.tsv").is_file():
        return root
    hits = sorted(p.parent for p in root.glob("*/Taxon.tsv"))
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise SourceFormatError(f"{root}: no GBIF Backbone archive (meta.xml / Taxon.tsv) found")
    raise SourceFormatError(f"{root}: several backbone archives found: {[str(h) for h in hits]}")


def read_meta(archive: Path) -> dict[str, DwcaFile]:
    """Parse meta.xml into {row type short name ("Taxon", "VernacularName", …): DwcaFile}."""
    meta = archive / "meta.xml"
    try:
        tree = ET.parse(meta)
    except ET.ParseError as exc:
        raise SourceFormatError(f"{meta}: not valid XML: {exc}") from None
    out: dict[str, DwcaFile] = {}
    for elem in tree.getroot():
        tag = elem.tag.removeprefix(_DWC_NS)
        if tag not in ("core", "extension"):
            continue
        row_type = elem.get("rowType", "").rstrip("/").rsplit("/", 1)[-1]
        location = elem.find(f"{_DWC_NS}files/{_DWC_NS}location")
        if location is None or not (location.text or "").strip():
            raise SourceFormatError(f"{meta}: <{tag} rowType={row_type}> has no file location")
        fields: dict[int, str] = {}
        id_elem = elem.find(f"{_DWC_NS}id") if tag == "core" else elem.find(f"{_DWC_NS}coreid")
        if id_elem is not None:
            fields[int(id_elem.get("index", "0"))] = "taxonID"
        for field in elem.findall(f"{_DWC_NS}field"):
            if field.get("index") is None:
                continue  # a constant-valued field: no column in the file
            fields[int(field.get("index"))] = field.get("term", "").rstrip("/").rsplit("/", 1)[-1]
        width = max(fields) + 1 if fields else 0
        columns = tuple(fields.get(i, f"_col{i}") for i in range(width))
        delimiter = elem.get("fieldsTerminatedBy", "\\t").encode().decode("unicode_escape")
        out[row_type] = DwcaFile(
            path=archive / location.text.strip(),
            columns=columns,
            header_lines=int(elem.get("ignoreHeaderLines", "0")),
            delimiter=delimiter,
        )
    return out


def _describe(archive: Path, row_type: str, file_name: str) -> DwcaFile:
    if (archive / "meta.xml").is_file():
        files = read_meta(archive)
        if row_type not in files:
            raise SourceFormatError(f"{archive / 'meta.xml'}: no {row_type} file declared")
        return files[row_type]
    path = archive / file_name
    if not path.is_file():
        raise SourceFormatError(f"{path}: file not found (and no meta.xml to say where it is)")
    with open(path, encoding="utf-8", newline="") as fh:
        header = fh.readline().rstrip("\r\n").split("\t")
    return DwcaFile(path=path, columns=tuple(header), header_lines=1, delimiter="\t")


def read_table(
    spec: DwcaFile, wanted: tuple[str, ...], report: Report, *, required: tuple[str, ...] = ()
) -> pa.Table:
    """Read one archive file as all-string columns ``wanted`` (missing optional ones come back empty)."""
    if not spec.path.is_file():
        raise SourceFormatError(f"{spec.path}: file not found")
    missing = [c for c in required if c not in spec.columns]
    if missing:
        raise SourceFormatError(
            f"{spec.path}: required columns {missing} not declared (have {list(spec.columns)})"
        )
    width = len(spec.columns)
    raised: list[SourceFormatError] = []

    def on_bad_row(row) -> str:
        # pyarrow numbers rows from 1 counting the skipped header lines: the physical line number
        line = row.number if row.number is not None else 0
        try:
            report.error(
                spec.path, line, f"expected {width} tab-separated fields, found {row.actual_columns}"
            )
        except SourceFormatError as exc:  # strict mode: pyarrow would swallow it, re-raise after the read
            raised.append(exc)
            return "error"
        return "skip"

    present = [c for c in wanted if c in spec.columns]
    try:
        table = pacsv.read_csv(
            spec.path,
            read_options=pacsv.ReadOptions(
                column_names=list(spec.columns),
                skip_rows=spec.header_lines,
                use_threads=False,
                block_size=1 << 24,
            ),
            parse_options=pacsv.ParseOptions(
                delimiter=spec.delimiter, quote_char=False, escape_char=False, invalid_row_handler=on_bad_row
            ),
            convert_options=pacsv.ConvertOptions(
                include_columns=present,
                column_types={c: pa.string() for c in present},
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        if raised:
            raise raised[0] from None
        raise SourceFormatError(f"{spec.path}: cannot parse: {exc}") from None
    for col in wanted:
        if col not in present:
            table = table.append_column(col, pa.array([""] * table.num_rows, pa.string()))
    return table.select(list(wanted))


def read_taxa(root: str | Path, report: Report | None = None) -> pa.Table:
    """Taxon.tsv as a table of :data:`TAXON_COLUMNS` (strings; empty string for empty fields)."""
    report = report or Report()
    archive = find_archive(root)
    spec = _describe(archive, "Taxon", "Taxon.tsv")
    return read_table(
        spec, TAXON_COLUMNS, report, required=("taxonID", "acceptedNameUsageID", "canonicalName")
    )


def read_vernaculars(root: str | Path, report: Report | None = None) -> pa.Table:
    """VernacularName.tsv (taxonID, vernacularName, language, countryCode); empty table when absent."""
    report = report or Report()
    archive = find_archive(root)
    try:
        spec = _describe(archive, "VernacularName", "VernacularName.tsv")
    except SourceFormatError:
        if (archive / "VernacularName.tsv").is_file():
            raise
        return pa.table({c: pa.array([], pa.string()) for c in VERNACULAR_COLUMNS})
    return read_table(spec, VERNACULAR_COLUMNS, report, required=("taxonID", "vernacularName"))
