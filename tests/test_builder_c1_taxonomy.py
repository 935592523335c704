"""C1 taxonomy resources: synonym direction, vernacular resolution, tiers (§C.2, §D.10, §E)."""

from __future__ import annotations

import math

import pytest

from biovqa.taxonomy import SynonymMap, Taxonomy
from builder.sources import gbif_backbone
from builder.synth import gbif_backbone as synth_backbone
from builder.taxonomy import vernacular as V
from builder.taxonomy.synonyms import synonym_pairs, synonym_table
from builder.taxonomy.tiers import Item, confusability, difficulty_columns, percentiles, resolve_target


def _lin(phylum, klass, order, family, genus, epithet, kingdom="Animalia"):
    return {"kingdom": kingdom, "phylum": phylum, "class": klass, "order": order, "family": family,
            "genus": genus, "species": epithet}  # fmt: skip


ZOOTOCA = _lin("Chordata", "Squamata", None, "Lacertidae", "Zootoca", "vivipara")
LACERTA = _lin("Chordata", "Squamata", None, "Lacertidae", "Lacerta", "agilis")
NATRIX = _lin("Chordata", "Squamata", None, "Colubridae", "Natrix", "natrix")
ARGIOPE = _lin("Arthropoda", "Arachnida", "Araneae", "Araneidae", "Argiope", "aurantia")
CONGENER = _lin("Chordata", "Squamata", None, "Lacertidae", "Zootoca", "carniolica")


@pytest.fixture(scope="module")
def backbone(tmp_path_factory):
    root = synth_backbone.write(tmp_path_factory.mktemp("bb"))
    return gbif_backbone.read_taxa(root), gbif_backbone.read_vernaculars(root)


def test_zootoca_worked_example():
    tax = Taxonomy.from_lineages([ZOOTOCA, LACERTA, NATRIX, ARGIOPE, CONGENER])
    g = tax.lineage_index(ZOOTOCA)
    assert tax.depths[g] == 6  # skip edge: no order, the family keeps depth 4
    d = [tax.lineage_index(x) for x in (LACERTA, NATRIX, ARGIOPE)]
    ndd, rank, conf, tier = confusability(tax, g, d)
    assert (ndd, rank, tier) == (2, "family", "medium")
    assert conf == pytest.approx((2**-2 + 2**-4 + 2**-6) / 3) and round(conf, 3) == pytest.approx(0.109)
    ndd, rank, conf, tier = confusability(tax, g, [tax.lineage_index(CONGENER), d[1], d[2]])
    assert (ndd, rank, tier) == (1, "genus", "hard")
    assert round(conf, 3) == 0.193


def test_synonyms_set_valued_and_one_way(backbone):
    taxa, _ = backbone
    table = synonym_table(synonym_pairs(taxa))
    syn = SynonymMap(zip(table["name_norm"].to_pylist(), table["accepted_norm"].to_pylist(), strict=True))
    assert syn.resolve("reptilia") == {"squamata", "testudines", "crocodylia", "sphenodontia"}
    assert syn.credits("reptilia", "squamata")  # Reptilia for a lizard: credited
    assert not syn.credits("crocodylia", "squamata")  # Crocodylia for a lizard: not
    assert syn.credits("felis concolor", "puma concolor") and not syn.credits(
        "puma concolor", "felis concolor"
    )
    assert syn.credits("hyla cinerea", "dryophytes cinereus")
    assert syn.credits("magnoliophyta", "tracheophyta")
    kept = synonym_table(synonym_pairs(taxa), keep_accepted={"puma concolor"})
    assert kept.to_pylist() == [{"name_norm": "felis concolor", "accepted_norm": "puma concolor"}]


def test_vernacular_triage_and_stages(backbone, tmp_path):
    taxa, vern = backbone
    r = V.resolver_from_backbone(taxa, vern, overrides=V.load_overrides())
    # non-ASCII rejects first; a Swedish tag rejects English-looking words; GBIF English follows
    assert r.resolve("Rana arvalis", "åkergroda") == V.Resolution(
        "Moor frog", "authority:gbif", r.resolve("Rana arvalis", "åkergroda").detail
    )
    assert r.resolve("Pinus sylvestris", "tall").english == "Scots pine"
    assert r.resolve("Picea abies", "gran").english == "Norway spruce"
    assert r.resolve("Juniperus communis", "en").english == "Common juniper"
    assert r.resolve("Anguis fragilis", "kopparödla").english == "Slow worm"
    # accepted as shipped: en tag, or English wordlist when GBIF has no tag for it
    assert r.resolve("Puma concolor", "Cougar").mechanism == "triage_en_tag"
    assert r.resolve("Puma concolor", "Mountain lion") == V.Resolution("Mountain lion", "triage_wordlist")
    # curated override, then nothing left
    assert r.resolve("Sphagnum palustre", "sumpvitmossa") == V.Resolution(
        "Blunt-leaved bog-moss", "override", V.load_overrides()["Sphagnum palustre"][1]
    )
    assert r.resolve("Chimaera monstrosa", "havmus").english is None


def test_gate_and_cache(tmp_path):
    assert V.gate("Moor frog", "Rana arvalis")
    assert not V.gate("Rana species", "Rana arvalis")  # echo + rank word
    assert not V.gate("frog sp", "Rana arvalis")
    assert not V.gate("grönfläckig padda", "Bufotes viridis")

    class Counting:
        name = "fake"
        calls = 0

        def lookup(self, sci):
            Counting.calls += 1
            return ["Rana frog", "Moor frog"]

    auth = V.CachedAuthority(Counting(), tmp_path / "fake.json")
    res = V.VernacularResolver(tags={}, authorities=[auth], overrides={})
    assert res.resolve("Rana arvalis", "xqzv").english == "Moor frog"  # first candidate fails the gate
    again = V.VernacularResolver(tags={}, authorities=[V.CachedAuthority(Counting(), tmp_path / "fake.json")])
    assert again.resolve("Rana arvalis", "xqzv").mechanism == "authority:fake"
    assert Counting.calls == 1  # second resolver answered from the on-disk cache


def test_percentile_is_item_weighted_mid_rank():
    p = percentiles({"a": 2, "b": 1, "c": 1}, {"a": 10, "b": 5, "c": 5})
    assert p == {"b": 0.5 / 4, "c": 1.5 / 4, "a": 3 / 4}  # ties on exposure broken by name


def _items(group, rank, lineages):
    return [
        Item(f"q{i}", group, rank, lin, lin[rank] if rank != "species" else lin["species"])
        for i, lin in enumerate(lineages)
    ]


def test_cells_escalate_and_degenerate():
    fams = [_lin("Chordata", "Aves", "Passeriformes", f"Fam{i}", f"Gen{i}", "x") for i in range(7)]
    tax = Taxonomy.from_lineages(fams)
    exposure = {tax.ids[tax.lineage_index(f, "family")]: 10 * (i + 1) for i, f in enumerate(fams)}
    items = _items("Birds", "family", fams) + _items("Birds", "phylum", fams[:2])
    cols, log = difficulty_columns(items, tax, {}, exposure)
    assert [c["reference_cell"] for c in cols[:7]] == ["Birds/family"] * 7
    # p = (i + 0.5) / 7: 0.07 0.21 | 0.36 0.50 0.64 | 0.79 0.93
    assert [c["prevalence_tier"] for c in cols[:7]] == [
        "hard",
        "hard",
        "medium",
        "medium",
        "medium",
        "easy",
        "easy",
    ]
    assert all(c["resolution_mechanism"] == "exact" for c in cols)
    assert cols[7]["prevalence_tier"] == "degenerate" and cols[7]["prevalence_percentile"] is None
    assert any("degenerate (Birds, phylum)" in line for line in log)
    # a thin group cell escalates to the rank class pooled over all groups
    other = [_lin("Chordata", "Mammalia", "Carnivora", "Felidae", "Puma", "concolor")]
    tax2 = Taxonomy.from_lineages(fams + other)
    exp2 = {tax2.ids[tax2.lineage_index(f, "family")]: 10 * (i + 1) for i, f in enumerate(fams + other)}
    cols2, log2 = difficulty_columns(
        _items("Birds", "family", fams) + _items("Mammals", "family", other), tax2, {}, exp2
    )
    assert cols2[-1]["reference_cell"] == "all/family" and cols2[-1]["prevalence_tier"] in (
        "hard",
        "medium",
        "easy",
    )
    assert cols2[-1]["exposure"] == 80 and cols2[-1]["log10_exposure"] == pytest.approx(math.log10(81))
    assert any("escalate (Mammals, family)" in line for line in log2)


def test_target_resolution_steps():
    tax = Taxonomy.from_lineages([ZOOTOCA, LACERTA, ARGIOPE])
    vern = {
        "viviparous lizard": tax.ids[tax.lineage_index(ZOOTOCA)],
        "wall lizards": tax.ids[tax.lineage_index(ZOOTOCA, "family")],
    }
    assert resolve_target(tax, vern, Item("a", "Reptiles", "family", ZOOTOCA, "Lacertidae"))[1] == "exact"
    node, mech = resolve_target(tax, vern, Item("b", "Reptiles", "common_name", ZOOTOCA, "Wall lizards"))
    assert mech == "vernacular" and tax.ranks[node] == "family"
    node, mech = resolve_target(tax, vern, Item("c", "Reptiles", "species", ZOOTOCA, "vivipara"))
    assert mech == "lineage" and tax.names[node] == "Zootoca vivipara"
    assert (
        resolve_target(tax, vern, Item("d", "Reptiles", "scientific_name", ZOOTOCA, "Zootoca vivipara"))[1]
        == "exact"
    )
    node, mech = resolve_target(tax, vern, Item("e", "Reptiles", "order", ZOOTOCA, ""))
    assert mech == "anchor" and tax.names[node] == "Zootoca vivipara"
