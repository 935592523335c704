"""The C1 tree (skip edges, depths, subtree counts, LCA), the synonym map and the resource files."""

from __future__ import annotations

import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from biovqa.taxonomy import (
    MissingSynonymMapError,
    SynonymMap,
    Taxonomy,
    build_vernacular_index,
    lineage_node_id,
    load_resources,
    save_resources,
)


def lineage(kingdom, phylum, cls, order, family, genus, epithet):
    return {
        "kingdom": kingdom,
        "phylum": phylum,
        "class": cls,
        "order": order,
        "family": family,
        "genus": genus,
        "species": epithet,
        "scientific_name": f"{genus} {epithet}",
    }


GREEN_TREEFROG = lineage("Animalia", "Chordata", "Amphibia", "Anura", "Hylidae", "Dryophytes", "cinereus")
BARKING_TREEFROG = lineage("Animalia", "Chordata", "Amphibia", "Anura", "Hylidae", "Dryophytes", "gratiosus")
TOAD = lineage("Animalia", "Chordata", "Amphibia", "Anura", "Bufonidae", "Anaxyrus", "americanus")
MOUSE = lineage("Animalia", "Chordata", "Mammalia", "Rodentia", "Muridae", "Mus", "musculus")
# Reptiles have no order in the backbone (§M.2): the family hangs under the class by a skip edge.
LIZARD = lineage("Animalia", "Chordata", "Squamata", None, "Lacertidae", "Zootoca", "vivipara")
WALL_LIZARD = lineage("Animalia", "Chordata", "Squamata", None, "Lacertidae", "Podarcis", "muralis")
GECKO = lineage("Animalia", "Chordata", "Squamata", None, "Gekkonidae", "Hemidactylus", "turcicus")
PINE = lineage("Plantae", "Tracheophyta", "Pinopsida", "Pinales", "Pinaceae", "Pinus", "strobus")
ROWS = [GREEN_TREEFROG, BARKING_TREEFROG, TOAD, MOUSE, LIZARD, WALL_LIZARD, GECKO, PINE, GREEN_TREEFROG]


@pytest.fixture
def tree() -> Taxonomy:
    return Taxonomy.from_lineages(ROWS)


def idx(tax: Taxonomy, row: dict, rank: str = "species") -> int:
    i = tax.lineage_index(row, rank)
    assert i is not None
    return i


def test_depths_follow_the_rank_convention(tree):
    frog = idx(tree, GREEN_TREEFROG)
    depths = [tree.depths[i] for i in tree.ancestors(frog)]
    assert depths == [6, 5, 4, 3, 2, 1, 0, 0]  # species … phylum, kingdom, root
    node = tree.node(frog)
    assert node["node"] == "Animalia|Chordata|Amphibia|Anura|Hylidae|Dryophytes|cinereus"
    assert node["name"] == "Dryophytes cinereus" and node["name_norm"] == "dryophytes cinereus"
    assert node["parent"] == "Animalia|Chordata|Amphibia|Anura|Hylidae|Dryophytes"


def test_skip_edge_keeps_rank_depths(tree):
    family = idx(tree, LIZARD, "family")
    assert tree.ranks[family] == "family" and tree.depths[family] == 4
    parent = tree.parent_index[family]
    assert tree.ranks[parent] == "class" and tree.names[parent] == "Squamata" and tree.depths[parent] == 2
    assert lineage_node_id(LIZARD, "family") == "Animalia|Chordata|Squamata|Lacertidae"
    assert lineage_node_id(LIZARD, "order") is None
    # two reptile families meet at the class: climb 2 ranks from the family (4 → 2), wup = 2·2/(4+4)
    other = idx(tree, GECKO, "family")
    assert tree.height(other, family) == 2
    assert tree.wu_palmer(other, family) == pytest.approx(0.5)
    # lizard species of two genera in one family meet at the family
    assert tree.height(idx(tree, WALL_LIZARD), idx(tree, LIZARD)) == 2
    # nothing was dropped: every lineage row is in the tree
    assert tree.problems == []


def test_subtree_counts_count_nodes_and_n_is_the_node_total(tree):
    # distinct nodes: 2 kingdoms, 2 phyla, 4 classes, 3 orders, 6 families, 7 genera, 8 species
    assert len(tree) == 32
    assert tree.total == 33  # + the root, so IC(root) = 0
    assert tree.subtree_counts[idx(tree, GREEN_TREEFROG)] == 1
    assert tree.subtree_counts[idx(tree, GREEN_TREEFROG, "genus")] == 3
    assert (
        tree.subtree_counts[idx(tree, GREEN_TREEFROG, "order")] == 1 + 4 + 3
    )  # Anura + Hylidae (4 nodes) + Bufonidae (3)
    assert tree.subtree_counts[idx(tree, GREEN_TREEFROG, "phylum")] == 24
    assert tree.ic[tree.root] == 0.0
    frog = idx(tree, GREEN_TREEFROG)
    assert tree.ic[frog] == pytest.approx(math.log(33))


def test_lca_and_similarities(tree):
    frog, barking, toad, mouse, pine = (
        idx(tree, r) for r in (GREEN_TREEFROG, BARKING_TREEFROG, TOAD, MOUSE, PINE)
    )
    assert tree.names[tree.lca(frog, barking)] == "Dryophytes"
    assert tree.names[tree.lca(frog, toad)] == "Anura"
    assert tree.names[tree.lca(frog, mouse)] == "Chordata"
    assert tree.lca(frog, pine) == tree.root
    assert [tree.height(p, frog) for p in (frog, barking, toad, mouse, pine)] == [0, 1, 3, 5, 6]
    assert tree.wu_palmer(barking, frog) == pytest.approx(10 / 12)
    assert tree.wu_palmer(pine, frog) == 0.0
    assert tree.lin(frog, frog) == 1.0
    assert tree.lin(pine, frog) == 0.0
    assert tree.closest([mouse, toad, pine], frog) == toad


def test_name_lookup(tree):
    assert [tree.ranks[i] for i in tree.find("anura", "order")] == ["order"]
    assert tree.find("anura", "family") == ()
    assert len(tree.find("dryophytes cinereus")) == 1
    assert tree.find("nonexistent") == ()


def test_conflicting_lineages_are_reported_not_dropped():
    # the same path once as a family (skip edge) and once as an order: first wins, the clash is listed
    odd = lineage("Animalia", "Chordata", "Squamata", "Lacertidae", "Lacertidae2", "Zootoca", "vivipara")
    tax = Taxonomy.from_lineages([LIZARD, odd, {"kingdom": None}])
    assert any("is a order here but a family before" in p for p in tax.problems)
    assert any("row 2: no taxon names" in p for p in tax.problems)


def test_synonym_map_is_set_valued_and_one_way():
    syn = SynonymMap(
        [
            ("Reptilia", "Squamata"),
            ("Reptilia", "Testudines"),
            ("Reptilia", "Crocodylia"),
            ("Reptilia", "Sphenodontia"),
            ("Felis concolor", "Puma concolor"),
            ("Hyla cinerea", "Dryophytes cinereus"),
        ],
        normalize=True,
    )
    assert syn.resolve("reptilia") == {"squamata", "testudines", "crocodylia", "sphenodontia"}
    assert syn.credits("reptilia", "squamata")  # a lizard answered Reptilia is credited
    assert not syn.credits("crocodylia", "squamata")  # Crocodylia is accepted: resolves onto itself
    assert syn.resolve("crocodylia") == {"crocodylia"}
    assert not syn.credits("squamata", "reptilia")  # one way: the gold's synonyms never count
    assert syn.credits("felis concolor", "puma concolor")
    assert not syn.credits("puma concolor", "felis concolor")
    assert syn.resolve("unmapped name") == {"unmapped name"}


def test_vernacular_index_maps_shared_names_to_their_lca(tree):
    pairs = [
        ("Green treefrog", lineage_node_id(GREEN_TREEFROG)),
        ("Treefrog", lineage_node_id(GREEN_TREEFROG)),
        ("Treefrog", lineage_node_id(BARKING_TREEFROG)),
        ("Lizard", lineage_node_id(LIZARD)),
        ("Lizard", lineage_node_id(GECKO)),
    ]
    index = build_vernacular_index(pairs, tree)
    assert index["green treefrog"] == lineage_node_id(GREEN_TREEFROG)
    assert index["treefrog"] == lineage_node_id(GREEN_TREEFROG, "genus")
    assert index["lizard"] == "Animalia|Chordata|Squamata"  # the class, across the skip edges
    with pytest.raises(ValueError, match="not in the taxonomy"):
        build_vernacular_index([("x", "No|Such|Node")], tree)


def test_resources_round_trip_and_deterministic_bytes(tmp_path, tree):
    syn = SynonymMap([("hyla cinerea", "dryophytes cinereus")])
    vern = {"green treefrog": lineage_node_id(GREEN_TREEFROG)}
    out = save_resources(tmp_path / "a", tree, syn, vern)
    save_resources(tmp_path / "b", tree, syn, vern)
    for name in ("taxonomy.parquet", "synonyms.parquet", "vernacular.parquet"):
        assert (out / name).read_bytes() == (tmp_path / "b" / "resources" / name).read_bytes()
    res = load_resources(tmp_path / "a")
    assert res.taxonomy.total == tree.total
    assert res.taxonomy.ids == sorted(tree.ids)
    frog = res.taxonomy.lineage_index(GREEN_TREEFROG)
    assert res.taxonomy.depths[frog] == 6 and res.taxonomy.subtree_counts[frog] == 1
    assert res.synonyms.credits("hyla cinerea", "dryophytes cinereus")
    assert res.vernacular == vern
    assert res.require_synonyms() is res.synonyms
    table = pq.read_table(out / "taxonomy.parquet")
    assert table.column_names == ["node", "name", "name_norm", "rank", "parent", "depth", "subtree_count"]
    top = [r for r in table.to_pylist() if r["rank"] == "kingdom"]
    assert {r["parent"] for r in top} == {""}


def test_missing_synonym_map_raises_when_required(tmp_path, tree):
    save_resources(tmp_path, tree, None)
    res = load_resources(tmp_path)
    assert res.synonyms is None
    assert "synonyms.parquet is missing" in res.notes["synonyms"]
    with pytest.raises(MissingSynonymMapError, match="synonyms.parquet"):
        res.require_synonyms()


def test_missing_or_broken_taxonomy_is_a_clear_error(tmp_path, tree):
    with pytest.raises(FileNotFoundError, match="taxonomy.parquet"):
        load_resources(tmp_path / "nowhere")
    out = save_resources(tmp_path, tree, None)
    table = pq.read_table(out / "taxonomy.parquet")
    parents = table.column("parent").to_pylist()
    parents[3] = "No|Such|Parent"
    broken = table.set_column(table.schema.get_field_index("parent"), "parent", pa.array(parents))
    pq.write_table(broken, out / "taxonomy.parquet")
    with pytest.raises(ValueError, match=r"taxonomy.parquet.*row 3.*No\|Such\|Parent"):
        load_resources(tmp_path)


def test_load_without_total_metadata_uses_the_top_level_counts(tmp_path, tree):
    out = save_resources(tmp_path, tree, None)
    table = pq.read_table(out / "taxonomy.parquet").replace_schema_metadata(None)
    pq.write_table(table, out / "taxonomy.parquet")
    assert load_resources(tmp_path).taxonomy.total == tree.total
