"""C1 selection manifest: budgets, caps, exclusion reasons, audit (§L.2), determinism, bad input."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from c1_catalogs import dense_bird_catalog

from builder.common import SourceFormatError
from builder.components import c1
from builder.manifests import c1_select
from builder.manifests.audit import AuditError, AuditSpec, audit
from builder.sources import treeoflife
from builder.synth import treeoflife as synth_tol

CFG = c1_select.SelectionConfig.mini()


def _build(base: Path, **synth_kw) -> tuple[dict, dict[str, Path], Path]:
    folders = c1.synth(base / "src")
    if synth_kw:
        shutil.rmtree(base / "src" / "treeoflife")
        synth_tol.write(base / "src", **synth_kw)
    roots = {k: base / "src" / v for k, v in folders.items()}
    out = base / "manifests"
    return c1.manifests(roots, out, scale="mini"), roots, out


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    return _build(tmp_path_factory.mktemp("c1sel"))


def test_every_row_accounted_for(mini):
    summary, roots, out = mini
    rows = treeoflife.read_catalog(roots["treeoflife"]).num_rows
    assert summary["catalog_rows"] == rows and summary["accounted"]
    assert summary["selected"] + sum(summary["exclusions"].values()) == rows
    for reason in ("not_in_group", "incomplete_lineage", "missing_common_name", "below_resolution",
                   "duplicate_uuid", "image_missing", "image_corrupt", "no_english_common_name", "over_species_cap"):  # fmt: skip
        assert summary["exclusions"].get(reason, 0) >= 1, reason
    excl = pq.read_table(out / "c1_exclusions.parquet").to_pylist()
    per_reason = Counter(e["reason"] for e in excl)
    for reason in ("duplicate_uuid", "image_missing", "image_corrupt", "no_english_common_name"):
        assert per_reason[reason] == summary["exclusions"][reason]
    assert summary["audit"]["violations"] == 0


def test_caps_budgets_groups_and_pins(mini):
    summary, roots, out = mini
    man = pq.read_table(out / "c1_manifest.parquet").to_pylist()
    assert set(summary["per_group"]) == set(c1_select.GROUPS) and all(summary["per_group"].values())
    assert all(v <= CFG.budget_per_group for v in summary["per_group"].values())
    per_species = Counter((r["group"], r["scientific_name"]) for r in man)
    assert all(n <= CFG.cap(g) for (g, _), n in per_species.items())
    # the cap binds in the miniature, Gymnosperms with their relaxed cap (§M.2)
    assert max(n for (g, _), n in per_species.items() if g != "Gymnosperms") == CFG.species_cap
    assert (
        max(n for (g, _), n in per_species.items() if g == "Gymnosperms")
        == CFG.cap("Gymnosperms")
        > CFG.species_cap
    )
    assert len({r["id"] for r in man}) == len(man)
    for r in man:
        assert min(r["width"], r["height"]) >= CFG.min_side
        assert (r["order"] is None) == (r["group"] == "Reptiles")
        assert r["common_name"].isascii()
        assert r["species"] == r["scientific_name"].split()[1]
    # the pinned hash is the sha256 of the stored image bytes
    r = man[0]
    img = treeoflife.load_image(roots["treeoflife"], treeoflife.ImageLoc(r["image_path"], r["image_row"]))
    assert img.sha256 == r["sha256"] and (img.width, img.height) == (r["width"], r["height"])
    # non-English catalog names come out resolved, and the selection follows the hash order
    by_sci = {r["scientific_name"]: r for r in man}
    if "Rana arvalis" in by_sci:
        assert by_sci["Rana arvalis"]["common_name"] == "Moor frog"
        assert by_sci["Rana arvalis"]["catalog_common_name"] == "åkergroda"
    keys = [(r["group"], r["order_key"]) for r in man]
    assert keys == sorted(keys)


def test_deterministic_and_independent_of_row_order(mini, tmp_path):
    _, roots, out = mini
    again = tmp_path / "again"
    c1.manifests(roots, again, scale="mini")
    for name in (
        "c1_manifest.parquet",
        "c1_exclusions.parquet",
        "c1_exposure.parquet",
        "c1_synonym_pairs.parquet",
    ):
        assert (again / name).read_bytes() == (out / name).read_bytes(), name
    # same catalog rows in another order select the same images
    shuffled = tmp_path / "shuffled"
    shutil.copytree(roots["treeoflife"], shuffled)
    cat = pq.read_table(shuffled / "catalog.parquet")
    pq.write_table(cat.take(list(range(cat.num_rows))[::-1]), shuffled / "catalog.parquet")
    c1.manifests({**roots, "treeoflife": shuffled}, tmp_path / "m2", scale="mini")
    assert (tmp_path / "m2" / "c1_manifest.parquet").read_bytes() == (
        out / "c1_manifest.parquet"
    ).read_bytes()


def test_exposure_counts_the_whole_catalog(mini):
    _, roots, out = mini
    exp = dict(
        zip(
            *(pq.read_table(out / "c1_exposure.parquet")[c].to_pylist() for c in ("node", "exposure")),
            strict=True,
        )
    )
    cat = treeoflife.read_catalog(roots["treeoflife"]).to_pylist()
    n_aves = sum(1 for r in cat if r["class"] == "Aves")
    assert exp["Animalia|Chordata|Aves"] == n_aves
    n_lizards = sum(1 for r in cat if r["family"] == "Lacertidae")
    assert exp["Animalia|Chordata|Squamata|Lacertidae"] == n_lizards  # skip edge: no order segment
    assert exp["Fungi|Basidiomycota"] >= 1  # outside the groups, still counted


def test_files_layout_selects_the_same_images(mini, tmp_path):
    summary, _, out = mini
    s2, _, out2 = _build(tmp_path, layout="files")
    assert s2["exclusions"]["image_corrupt"] == 1 and s2["exclusions"]["image_missing"] == 1
    ids = pq.read_table(out / "c1_manifest.parquet")["id"].to_pylist()
    assert pq.read_table(out2 / "c1_manifest.parquet")["id"].to_pylist() == ids
    assert pq.read_table(out2 / "c1_manifest.parquet")["image_row"].to_pylist() == [-1] * len(ids)


def test_missing_sources(tmp_path):
    assert c1.manifests({}, tmp_path / "m")["skipped"]
    folders = c1.synth(tmp_path / "src")
    s = c1.manifests({"treeoflife": tmp_path / "src" / folders["treeoflife"]}, tmp_path / "m", scale="mini")
    assert any("gbif_backbone missing" in m for m in s["messages"])
    assert not (tmp_path / "m" / "c1_synonym_pairs.parquet").exists()
    # without the backbone, Swedish names cannot reach GBIF's English ones: more exclusions, never silent
    assert s["exclusions"]["no_english_common_name"] > 4 and s["accounted"]


def test_strict_mode_raises_on_a_bad_backbone_row(tmp_path):
    folders = c1.synth(tmp_path / "src")
    roots = {k: tmp_path / "src" / v for k, v in folders.items()}
    taxon = roots["gbif_backbone"] / "Taxon.tsv"
    taxon.write_text(taxon.read_text(encoding="utf-8") + "123\tbroken row\n", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"Taxon.tsv:\d+"):
        c1.manifests(roots, tmp_path / "m", strict=True, scale="mini")
    s = c1.manifests(roots, tmp_path / "m2", scale="mini")
    assert len(s["bad_rows"]) == 1 and "Taxon.tsv" in s["bad_rows"][0]


def test_audit_catches_contract_violations(mini):
    _, roots, out = mini
    table = pq.read_table(out / "c1_manifest.parquet")
    assert c1.audit_c1(out / "c1_manifest.parquet", roots["treeoflife"]).ok
    rows = table.to_pylist()
    bird = next(i for i, r in enumerate(rows) if r["group"] == "Birds")
    rows[bird]["family"] = None
    rows[1]["id"] = rows[0]["id"]
    rows[2]["image_path"] = "shards/nowhere.parquet"
    rows[3]["sha256"] = "abc"
    bad = pa.Table.from_pylist(rows, schema=table.schema)
    path = out.parent / "bad.parquet"
    pq.write_table(bad, path)
    result = c1.audit_c1(path, roots["treeoflife"])
    reasons = {(r, why.split(":")[0]) for r, _, why in result.violations}
    assert {(bird, "null_field"), (1, "duplicate_id"), (2, "image_missing"), (3, "bad_sha256")} <= reasons
    with pytest.raises(AuditError, match="contract violations"):
        result.raise_if_failed()
    # the generic audit: a declared exemption (skip edge) is not a violation
    spec = AuditSpec(
        "id",
        ("order",),
        exempt={"order": lambda r: r["group"] == "Reptiles"},
        sha_column=None,
        size_columns=None,
    )
    assert audit(
        pa.table({"id": ["a", "b"], "group": ["Reptiles", "Birds"], "order": [None, None]}), spec
    ).violations == [(1, "b", "null_field: order")]


def test_hash_cut():
    assert c1_select.hash_cut([5, 5], cap=3, need=10) == 1.0
    f = c1_select.hash_cut([1000] * 10, cap=50, need=100)
    assert 0.0095 <= f <= 0.0106  # 10 species x 1000 rows x f >= 100 (with 5 % headroom)


def test_the_hash_cut_only_decides_how_far_the_walk_looks(tmp_path, monkeypatch):
    """The selection is the first rows in hash order under the cap and budget: with no cut at all,
    or with a first cut far too narrow (the walk runs short and the cut widens), the same images."""
    cat = tmp_path / "catalog.parquet"
    dense_bird_catalog(cat, no_common_name=0.6)
    cfg = c1_select.SelectionConfig(budget_per_group=12, species_cap=4, cap_overrides=(), min_side=224)
    base = c1_select.select_from_catalog([cat], tmp_path / "a", config=cfg)
    assert base["accounted"] and base["selected"] == 12
    for reason in ("over_species_cap", "missing_common_name", "not_reached"):
        assert base["exclusions"][reason] > 0, reason
    manifest = (tmp_path / "a" / "c1_manifest.parquet").read_bytes()

    monkeypatch.setattr(c1_select, "hash_cut", lambda *a, **k: 1.0)
    whole = c1_select.select_from_catalog([cat], tmp_path / "b", config=cfg)
    assert (tmp_path / "b" / "c1_manifest.parquet").read_bytes() == manifest
    # every row examined: row-level reasons for all of them, nothing left unreached
    assert whole["accounted"] and "not_reached" not in whole["exclusions"]
    assert whole["exclusions"]["missing_common_name"] > base["exclusions"]["missing_common_name"]

    monkeypatch.setattr(c1_select, "hash_cut", lambda counts, cap, need: min(1.0, need / 20_000))
    narrow = c1_select.select_from_catalog([cat], tmp_path / "c", config=cfg)
    assert narrow["timings_s"]["rounds"] >= 2 and narrow["accounted"]
    assert (tmp_path / "c" / "c1_manifest.parquet").read_bytes() == manifest


def test_corrupt_catalog_names_the_file(tmp_path):
    cat = tmp_path / "catalog.parquet"
    dense_bird_catalog(cat, n=3000)
    pf = pq.ParquetFile(cat)
    data = bytearray(cat.read_bytes())
    start = pf.metadata.row_group(0).column(1).data_page_offset
    data[start + 16 : start + 4000] = b"\xff" * (4000 - 16)  # garble a data page, keep the footer
    cat.write_bytes(bytes(data))
    with pytest.raises(SourceFormatError, match="catalog.parquet"):
        c1_select.select_from_catalog([cat], tmp_path / "out", config=c1_select.SelectionConfig.mini())
