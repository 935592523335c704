"""C1 readers: GBIF Backbone DwC-A and TreeOfLife-200M catalog/images, on generated and real files."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from builder.common import Report, SourceFormatError
from builder.sources import gbif_backbone, treeoflife
from builder.synth import gbif_backbone as synth_backbone
from builder.synth import treeoflife as synth_tol
from builder.taxonomy.synonyms import synonym_pairs


@pytest.fixture(scope="module")
def backbone(tmp_path_factory) -> Path:
    return synth_backbone.write(tmp_path_factory.mktemp("bb"))


@pytest.fixture(scope="module")
def tol(tmp_path_factory) -> Path:
    return synth_tol.write(tmp_path_factory.mktemp("tol"))


# ----------------------------------------------------------------------------------------- backbone


def test_real_archaea_backbone_reads_whole(shared_sources):
    root = shared_sources / "gbif-backbone"
    report = Report(strict=True)
    taxa = gbif_backbone.read_taxa(root, report)
    assert taxa.num_rows == 838
    statuses = dict(zip(*np.unique(taxa["taxonomicStatus"].to_pylist(), return_counts=True), strict=True))
    assert statuses == {"accepted": 743, "synonym": 88, "homotypic synonym": 4, "doubtful": 3}
    # synonym rows carry the accepted taxon's classification; the map follows acceptedNameUsageID
    row = taxa.filter(pc.equal(taxa["taxonID"], "1000132")).to_pylist()[0]
    assert row["canonicalName"] == "Methanobacterium thermoflexum" and row["genus"] == "Methanothermobacter"
    pairs = synonym_pairs(taxa, report)
    assert ("Methanobacterium thermoflexum", "Methanothermobacter thermoflexus") in pairs or any(
        p[0] == "Methanobacterium thermoflexum" for p in pairs
    )
    vern = gbif_backbone.read_vernaculars(root, report)
    assert vern.to_pylist()[1] == {
        "taxonID": "2",
        "vernacularName": "arkéer",
        "language": "sv",
        "countryCode": "SE",
    }


def test_meta_xml_declares_columns(backbone):
    files = gbif_backbone.read_meta(backbone)
    assert files["Taxon"].columns[:4] == ("taxonID", "datasetID", "parentNameUsageID", "acceptedNameUsageID")
    assert files["VernacularName"].columns[:3] == ("taxonID", "vernacularName", "language")
    assert files["Taxon"].delimiter == "\t" and files["Taxon"].header_lines == 1


def test_miniature_backbone_round_trip(backbone):
    taxa = gbif_backbone.read_taxa(backbone, Report(strict=True))
    felis = taxa.filter(pc.equal(taxa["canonicalName"], "Felis concolor")).to_pylist()[0]
    assert felis["taxonID"] == "2435104" and felis["acceptedNameUsageID"] == "2435099"
    pairs = synonym_pairs(taxa)
    assert {p[1] for p in pairs if p[0] == "Reptilia"} == {
        "Squamata",
        "Testudines",
        "Crocodylia",
        "Sphenodontia",
    }
    assert ("Hyla cinerea", "Dryophytes cinereus") in pairs
    # reptiles have no order: the family hangs from the class
    lacertidae = taxa.filter(pc.equal(taxa["canonicalName"], "Lacertidae")).to_pylist()[0]
    squamata = taxa.filter(pc.equal(taxa["canonicalName"], "Squamata")).to_pylist()[0]
    assert lacertidae["parentNameUsageID"] == squamata["taxonID"] and lacertidae["order"] == ""


def _copy(backbone: Path, tmp_path: Path) -> Path:
    dst = tmp_path / "bb"
    shutil.copytree(backbone, dst)
    return dst


def test_no_quote_handling(backbone, tmp_path):
    dst = _copy(backbone, tmp_path)
    text = (dst / "Taxon.tsv").read_text(encoding="utf-8")
    text = text.replace("\tRana temporaria\t", '\t"Rana" temporaria\t')
    (dst / "Taxon.tsv").write_text(text, encoding="utf-8")
    taxa = gbif_backbone.read_taxa(dst, Report(strict=True))
    assert '"Rana" temporaria' in taxa["canonicalName"].to_pylist()


def test_crlf_reads_like_lf(backbone, tmp_path):
    dst = _copy(backbone, tmp_path)
    for name in ("Taxon.tsv", "VernacularName.tsv"):
        data = (dst / name).read_bytes().replace(b"\n", b"\r\n")
        (dst / name).write_bytes(data)
    assert gbif_backbone.read_taxa(dst, Report(strict=True)).equals(gbif_backbone.read_taxa(backbone))
    assert gbif_backbone.read_vernaculars(dst).equals(gbif_backbone.read_vernaculars(backbone))


def test_truncated_taxon_file_reports_the_line(backbone, tmp_path):
    dst = _copy(backbone, tmp_path)
    data = (dst / "Taxon.tsv").read_bytes()
    cut = data[: data.rindex(b"\t", 0, len(data) - 2)]  # cut inside the last row
    (dst / "Taxon.tsv").write_bytes(cut)
    n_lines = cut.count(b"\n") + 1
    report = Report()
    taxa = gbif_backbone.read_taxa(dst, report)
    assert taxa.num_rows == n_lines - 2  # header and the cut row
    assert report.n_bad == 1 and report.bad[0].line == n_lines and "fields" in report.bad[0].reason
    with pytest.raises(SourceFormatError, match=rf"Taxon.tsv:{n_lines}"):
        gbif_backbone.read_taxa(dst, Report(strict=True))


def test_missing_files_and_bad_meta(backbone, tmp_path):
    dst = _copy(backbone, tmp_path)
    (dst / "meta.xml").unlink()  # falls back to the header line
    assert gbif_backbone.read_taxa(dst).num_rows == gbif_backbone.read_taxa(backbone).num_rows
    (dst / "meta.xml").write_text("<archive><core", encoding="utf-8")
    with pytest.raises(SourceFormatError, match="meta.xml"):
        gbif_backbone.read_taxa(dst)
    (dst / "meta.xml").unlink()
    (dst / "Taxon.tsv").unlink()
    with pytest.raises(SourceFormatError, match="no GBIF Backbone archive"):
        gbif_backbone.read_taxa(dst)


def test_dangling_accepted_link_is_a_bad_row(backbone):
    taxa = gbif_backbone.read_taxa(backbone)
    row = {c: "" for c in taxa.column_names} | {
        "taxonID": "9",
        "canonicalName": "Ghost name",
        "acceptedNameUsageID": "123",
    }
    taxa = pa.concat_tables([taxa, pa.Table.from_pylist([row], schema=taxa.schema)])
    report = Report()
    pairs = synonym_pairs(taxa, report)
    assert all(p[0] != "Ghost name" for p in pairs)
    assert report.n_bad == 1 and "acceptedNameUsageID 123" in report.bad[0].reason
    with pytest.raises(SourceFormatError):
        synonym_pairs(taxa, Report(strict=True))


# ---------------------------------------------------------------------------------------- treeoflife


def test_real_taxonopy_outputs_read_as_catalogs(shared_sources, tmp_path):
    src = shared_sources / "treeoflife-200m" / "taxonopy_examples"
    (tmp_path / "a").mkdir()
    shutil.copy(src / "input" / "sample.parquet", tmp_path / "a" / "catalog.parquet")
    cat = treeoflife.read_catalog(tmp_path / "a")
    assert cat.num_rows == 7 and cat["common_name"].null_count == 7  # column absent: nulls
    (tmp_path / "b").mkdir()
    shutil.copy(
        src / "resolved_with_common_names" / "sample.resolved.parquet", tmp_path / "b" / "catalog.parquet"
    )
    cat = treeoflife.read_catalog(tmp_path / "b")
    assert cat.to_pylist()[0]["common_name"] == "Human" and cat.to_pylist()[0]["species"] == "Homo sapiens"


def test_miniature_catalog_and_shards_round_trip(tol):
    rows, sizes, defects = synth_tol.catalog_rows(42)
    cat = treeoflife.read_catalog(tol)
    assert cat.num_rows == len(rows) and 200 <= cat.num_rows <= 500
    assert cat["uuid"].to_pylist() == [r["uuid"] for r in rows]
    assert treeoflife.image_layout(tol) == "shards"
    idx = treeoflife.shard_index(tol)
    first = idx.to_pylist()[0]
    img = treeoflife.load_image(tol, treeoflife.ImageLoc(first["path"], first["row"]))
    w, h = sizes[first["uuid"]]
    assert (img.width, img.height) == (w, h) == (first["width"], first["height"])
    # BGR bytes decode back to exactly the drawn RGB picture
    assert np.array_equal(np.asarray(img.image), np.asarray(synth_tol.draw_image(first["uuid"], w, h)))
    missing = [u for u, d in defects.items() if d == "missing"]
    assert missing and missing[0] not in set(idx["uuid"].to_pylist())


def test_corrupt_and_oversized_pixels(tol):
    _, _, defects = synth_tol.catalog_rows(42)
    corrupt = next(u for u, d in defects.items() if d == "corrupt")
    idx = treeoflife.shard_index(tol).to_pylist()
    loc = next(r for r in idx if r["uuid"] == corrupt)
    with pytest.raises(SourceFormatError, match=rf"row {loc['row']}.*expected"):
        treeoflife.load_image(tol, treeoflife.ImageLoc(loc["path"], loc["row"]))
    with pytest.raises(SourceFormatError, match="decompression bomb"):
        treeoflife.decode_bgr(b"\0" * 12, 100_000, 100_000, "bomb")


def test_files_layout_and_truncated_jpeg(tmp_path):
    root = synth_tol.write(tmp_path, layout="files")
    assert treeoflife.image_layout(root) == "files"
    files = treeoflife.file_index(root)
    _, _, defects = synth_tol.catalog_rows(42)
    corrupt = next(u for u, d in defects.items() if d == "corrupt")
    with pytest.raises(SourceFormatError, match="cannot decode"):
        treeoflife.load_file(root, files[corrupt])
    ok = next(u for u in files if u not in defects)
    assert treeoflife.load_file(root, files[ok]).width >= 64


def test_truncated_or_incomplete_catalog(tol, tmp_path):
    (tmp_path / "t").mkdir()
    data = (tol / "catalog.parquet").read_bytes()
    (tmp_path / "t" / "catalog.parquet").write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceFormatError, match="catalog.parquet"):
        treeoflife.read_catalog(tmp_path / "t")
    (tmp_path / "m").mkdir()
    pq.write_table(
        pq.read_table(tol / "catalog.parquet").drop_columns(["family"]), tmp_path / "m" / "catalog.parquet"
    )
    with pytest.raises(SourceFormatError, match="family"):
        treeoflife.read_catalog(tmp_path / "m")
    with pytest.raises(SourceFormatError, match="no TreeOfLife catalog"):
        treeoflife.catalog_files(tmp_path / "nothing")
