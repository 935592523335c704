"""C1 scoring: the paper's worked examples (§C.2 synonym table, §C.3 treefrog table) and the scorer contract."""

from __future__ import annotations

import pyarrow as pa
import pytest

from biovqa.metrics.c1 import (
    em_soft,
    exact_match,
    item_stats,
    lin,
    reduce,
    score_task,
    severity,
    wu_palmer,
)
from biovqa.metrics.common import merge_stats
from biovqa.schema import QUESTION_SCHEMA, empty_record
from biovqa.taxonomy import MissingSynonymMapError, Resources, SynonymMap, Taxonomy

# ------------------------------------------------------------------------------------------ fixtures

A = "Animalia"
CHORDATA = f"{A}|Chordata"
AMPHIBIA = f"{CHORDATA}|Amphibia"
ANURA = f"{AMPHIBIA}|Anura"
HYLIDAE = f"{ANURA}|Hylidae"
DRYOPHYTES = f"{HYLIDAE}|Dryophytes"
BUFONIDAE = f"{ANURA}|Bufonidae"
ANAXYRUS = f"{BUFONIDAE}|Anaxyrus"
MAMMALIA = f"{CHORDATA}|Mammalia"
RODENTIA = f"{MAMMALIA}|Rodentia"
MURIDAE = f"{RODENTIA}|Muridae"
MUS = f"{MURIDAE}|Mus"
FELIDAE = f"{MAMMALIA}|Carnivora|Felidae"
SQUAMATA = f"{CHORDATA}|Squamata"  # reptile classes of the backbone; no order (skip edge)
LACERTIDAE = f"{SQUAMATA}|Lacertidae"
CROCODYLIA = f"{CHORDATA}|Crocodylia"


def _node(node_id: str, rank: str, depth: int, count: int) -> dict:
    parent, _, name = node_id.rpartition("|")
    if rank == "species":
        name = f"{parent.rpartition('|')[2]} {name}"
    return {
        "node": node_id,
        "name": name,
        "rank": rank,
        "parent": parent,
        "depth": depth,
        "subtree_count": count,
    }


def treefrog_taxonomy() -> Taxonomy:
    """The §C.3 worked example's round numbers: N = 900 000, Chordata 450 000, Anura 7 500, Dryophytes 30."""
    nodes = [
        _node(A, "kingdom", 0, 899_999),
        _node(CHORDATA, "phylum", 1, 450_000),
        _node(AMPHIBIA, "class", 2, 20_000),
        _node(ANURA, "order", 3, 7_500),
        _node(HYLIDAE, "family", 4, 1_000),
        _node(DRYOPHYTES, "genus", 5, 30),
        _node(f"{DRYOPHYTES}|cinereus", "species", 6, 1),
        _node(f"{DRYOPHYTES}|gratiosus", "species", 6, 1),
        _node(BUFONIDAE, "family", 4, 600),
        _node(ANAXYRUS, "genus", 5, 50),
        _node(f"{ANAXYRUS}|americanus", "species", 6, 1),
        _node(MAMMALIA, "class", 2, 60_000),
        _node(RODENTIA, "order", 3, 5_000),
        _node(MURIDAE, "family", 4, 900),
        _node(MUS, "genus", 5, 40),
        _node(f"{MUS}|musculus", "species", 6, 1),
        _node(f"{MAMMALIA}|Carnivora", "order", 3, 800),
        _node(FELIDAE, "family", 4, 100),
        _node(f"{FELIDAE}|Puma", "genus", 5, 3),
        _node(f"{FELIDAE}|Puma|concolor", "species", 6, 1),
        _node(SQUAMATA, "class", 2, 9_000),
        _node(LACERTIDAE, "family", 4, 300),
        _node(f"{LACERTIDAE}|Zootoca", "genus", 5, 2),
        _node(f"{LACERTIDAE}|Zootoca|vivipara", "species", 6, 1),
        _node(f"{SQUAMATA}|Gekkonidae", "family", 4, 200),
        _node(CROCODYLIA, "class", 2, 50),
    ]
    return Taxonomy.from_nodes(nodes, total=900_000)


SYNONYMS = SynonymMap(
    [
        ("reptilia", "squamata"),
        ("reptilia", "testudines"),
        ("reptilia", "crocodylia"),
        ("reptilia", "sphenodontia"),
        ("felis concolor", "puma concolor"),
        ("hyla cinerea", "dryophytes cinereus"),
    ]
)


@pytest.fixture
def resources() -> Resources:
    return Resources(treefrog_taxonomy(), SYNONYMS, None)


def lineage(path: str) -> dict:
    names = path.split("|")
    ranks = ["kingdom", "phylum", "class", "order", "family", "genus", "species"]
    if names[2] in ("Squamata", "Crocodylia"):
        ranks = ["kingdom", "phylum", "class", "family", "genus", "species"]  # no order: skip edge
    out = dict.fromkeys(["kingdom", "phylum", "class", "order", "family", "genus", "species"])
    out.update(zip(ranks, names, strict=False))
    if out["species"]:
        out["scientific_name"] = f"{out['genus']} {out['species']}"
    return out


def make_table(
    task: str, rank: str, items: list[tuple[str, str]], options: list[list[str]] | None = None
) -> pa.Table:
    """Rows of one task: (gold answer, species lineage path)."""
    recs = []
    for i, (answer, path) in enumerate(items):
        rec = empty_record()
        rec.update(
            qid=f"{task}/treeoflife/{i:06d}",
            component="c1",
            task=task,
            family=rank,
            source="treeoflife",
            question=f"What is the {rank.replace('_', ' ')} of the animal shown in this image?",
            instruction="Answer with ONLY the name.",
            answer=answer,
            answer_form="mcq_bare" if options else "open_text",
            image_ref={
                "source": "treeoflife",
                "id": f"uuid-{i}",
                "sha256": "0" * 64,
                "width": 10,
                "height": 10,
            },
            c1={"rank": rank, "group": "test", **lineage(path)},
        )
        if options:
            rec["options"] = options[i]
            rec["answer_index"] = options[i].index(answer)
        recs.append(rec)
    return pa.Table.from_pylist(recs, schema=QUESTION_SCHEMA).drop_columns(["image"])


FROG = f"{DRYOPHYTES}|cinereus"
TREEFROG_REPLIES = [
    "Dryophytes cinereus",
    "Hyla cinerea",
    "Dryophytes gratiosus",
    "Anaxyrus americanus",
    "Mus musculus",
]


# ------------------------------------------------------------------------------------------ worked examples


def test_treefrog_table_exactly(resources):
    table = make_table("c1.scientific_name", "scientific_name", [("Dryophytes cinereus", FROG)] * 5)
    ts = score_task("c1.scientific_name", table, TREEFROG_REPLIES, resources)
    it = ts.items
    assert it["em"] == [1, 0, 0, 0, 0]
    assert it["em_soft"] == [1, 1, 0, 0, 0]
    assert it["lca_height"] == [0, 0, 1, 3, 5]
    assert [round(x, 2) for x in it["wup"]] == [1.00, 1.00, 0.83, 0.50, 0.17]
    assert [round(x, 2) for x in it["lin"]] == [1.00, 1.00, 0.75, 0.35, 0.05]
    assert it["lin"][2:] == pytest.approx([0.752, 0.349, 0.051], abs=5e-4)  # calibration.md
    assert it["resolution"] == ["exact", "synonym", "name", "name", "name"]
    assert it["score"] == [1.0, 0.0, 0.0, 0.0, 0.0]
    m = ts.metrics
    assert m["headline"] == m["em"] == pytest.approx(0.2)
    assert m["headline_metric"] == "em"
    assert m["em_soft"] == pytest.approx(0.4)
    assert m["em_soft_gap"] == pytest.approx(0.2)
    assert m["wup"] == pytest.approx((1 + 1 + 10 / 12 + 0.5 + 2 / 12) / 5)
    # eq. 8 conditions on ŷ ≠ y: the synonym's height 0 counts; conditioning on EM-soft drops it
    assert m["severity"] == pytest.approx((0 + 1 + 3 + 5) / 4)
    assert m["severity_soft_wrong"] == pytest.approx(3.0)
    assert m["unresolved_share"] == 0.0
    assert m["parse_rate"] == 1.0 and m["n"] == 5
    assert m["synonyms"] == "ok" and m["tree_metrics"] == "ok"


def test_pure_single_item_functions(resources):
    tax = resources.taxonomy
    assert exact_match("The species is Dryophytes cinereus.", "Dryophytes cinereus") == 1
    assert exact_match("Hyla cinerea", "Dryophytes cinereus") == 0
    assert exact_match(None, "x") == 0
    assert em_soft("Hyla cinerea", "Dryophytes cinereus", SYNONYMS) == 1
    assert em_soft("Dryophytes gratiosus", "Dryophytes cinereus", SYNONYMS) == 0
    with pytest.raises(MissingSynonymMapError):
        em_soft("Hyla cinerea", "Dryophytes cinereus", None)
    assert severity(tax, f"{MUS}|musculus", FROG) == 5
    assert wu_palmer(tax, f"{DRYOPHYTES}|gratiosus", FROG) == pytest.approx(10 / 12)
    assert lin(tax, f"{ANAXYRUS}|americanus", FROG) == pytest.approx(0.349, abs=5e-4)
    with pytest.raises(KeyError):
        severity(tax, "No|Such", FROG)


def test_synonym_table_reptilia_and_puma(resources):
    lizard = f"{LACERTIDAE}|Zootoca|vivipara"
    table = make_table(
        "c1.class", "class", [("Squamata", lizard), ("Squamata", lizard), ("Squamata", lizard)]
    )
    ts = score_task("c1.class", table, ["Reptilia", "Crocodylia", "Squamata"], resources)
    assert ts.items["em"] == [0, 0, 1]
    assert ts.items["em_soft"] == [1, 0, 1]  # Reptilia credited for a lizard, Crocodylia not
    assert ts.items["resolution"][1] == "name"
    assert ts.items["lca_height"][1] == 1  # Crocodylia meets Squamata at Chordata
    puma = make_table(
        "c1.scientific_name", "scientific_name", [("Puma concolor", f"{FELIDAE}|Puma|concolor")]
    )
    ts = score_task("c1.scientific_name", puma, ["Felis concolor"], resources)
    assert ts.items["em"] == [0] and ts.items["em_soft"] == [1]
    assert ts.items["wup"] == [1.0]


def test_skip_edge_family_question_for_a_reptile(resources):
    lizard = f"{LACERTIDAE}|Zootoca|vivipara"
    table = make_table("c1.family", "family", [("Lacertidae", lizard)] * 3)
    ts = score_task("c1.family", table, ["Gekkonidae", "Hylidae", "Lacertidae"], resources)
    # Gekkonidae and Lacertidae meet at the class Squamata (depth 2) across the missing order
    assert ts.items["lca_height"] == [2, 3, 0]
    assert ts.items["wup"][0] == pytest.approx(2 * 2 / 8)
    assert ts.items["wup"][1] == pytest.approx(2 * 1 / 8)


def test_unresolved_answers_and_other_ranks(resources):
    table = make_table("c1.order", "order", [("Anura", FROG)] * 4)
    ts = score_task("c1.order", table, ["Banana", "Hylidae", "Rodentia", None], resources)
    assert ts.items["resolution"] == ["unresolved", "name_other_rank", "name", "parse_failed"]
    assert ts.items["lca_height"] == [None, 0, 2, None]  # Hylidae sits below Anura: height 0
    assert ts.items["wup"][0] == 0.0 and ts.items["wup"][3] == 0.0
    m = ts.metrics
    assert m["unresolved_share"] == pytest.approx(2 / 4)  # banana and the missing reply
    assert m["severity"] == pytest.approx((0 + 2) / 2)
    assert m["parse_rate"] == pytest.approx(3 / 4)


def test_species_epithet_resolves_inside_the_gold_genus(resources):
    table = make_table("c1.species", "species", [("cinereus", FROG)] * 3)
    ts = score_task("c1.species", table, ["Dryophytes cinereus", "gratiosus", "musculus"], resources)
    assert ts.items["parsed"] == ["cinereus", "gratiosus", "musculus"]  # §K.1 last-word rule
    assert ts.items["em"] == [1, 0, 0]
    assert ts.items["resolution"] == ["exact", "congener", "unresolved"]
    assert ts.items["lca_height"] == [0, 1, None]


# ------------------------------------------------------------------------------------------ contract


def test_without_resources_only_em_and_floor(resources):
    table = make_table("c1.scientific_name", "scientific_name", [("Dryophytes cinereus", FROG)] * 5)
    ts = score_task("c1.scientific_name", table, TREEFROG_REPLIES)
    m = ts.metrics
    assert m["em"] == pytest.approx(0.2)
    assert m["em_soft"] is None and m["wup"] is None and m["lin"] is None and m["severity"] is None
    assert m["tree_metrics"].startswith("unavailable") and m["synonyms"].startswith("unavailable")
    assert ts.items["em_soft"] == [None] * 5 and ts.items["wup"] == [None] * 5
    assert ts.items["resolution"] == ["exact", "no_tree", "no_tree", "no_tree", "no_tree"]
    with pytest.raises(MissingSynonymMapError):
        score_task("c1.scientific_name", table, TREEFROG_REPLIES, require_synonyms=True)


def test_missing_synonym_map_raises_never_falls_back(resources):
    table = make_table("c1.scientific_name", "scientific_name", [("Dryophytes cinereus", FROG)] * 5)
    no_syn = Resources(
        resources.taxonomy, None, None, notes={"synonyms": "unavailable: x/synonyms.parquet is missing"}
    )
    with pytest.raises(MissingSynonymMapError, match="synonyms.parquet"):
        score_task("c1.scientific_name", table, TREEFROG_REPLIES, no_syn)
    ts = score_task("c1.scientific_name", table, TREEFROG_REPLIES, no_syn, require_synonyms=False)
    assert ts.metrics["em_soft"] is None and "missing" in ts.metrics["synonyms"]
    assert ts.metrics["wup"] is not None  # the tree still works
    # without the map the old name resolves nowhere: unresolved, never silently counted as a synonym
    assert ts.items["resolution"][1] == "unresolved" and ts.items["em_soft"][1] is None


def test_floor_and_lift_on_a_hand_computed_case(resources):
    items = [("Chordata", FROG)] * 6 + [("Arthropoda", FROG)] * 3 + [("Mollusca", FROG)]
    table = make_table("c1.phylum", "phylum", items)
    replies = ["Chordata"] * 6 + ["Chordata"] * 3 + ["Mollusca"]  # 7 of 10 right
    ts = score_task("c1.phylum", table, replies)
    m = ts.metrics
    assert m["floor_answer"] == "chordata" and m["floor"] == pytest.approx(0.6)
    assert m["em"] == pytest.approx(0.7)
    assert m["lift"] == pytest.approx((0.7 - 0.6) / (1 - 0.6))


def test_floor_ties_break_alphabetically():
    table = make_table("c1.phylum", "phylum", [("Mollusca", FROG), ("Chordata", FROG)])
    assert score_task("c1.phylum", table, ["x", "y"]).metrics["floor_answer"] == "chordata"


def test_hostile_replies_are_counted_failures(resources):
    replies = [
        None,
        "",
        "   ",
        "I am not sure",
        "🐸",
        "x" * 1_000_000,
        "What is the genus of the animal shown in",
    ]
    table = make_table("c1.genus", "genus", [("Dryophytes", FROG)] * len(replies))
    ts = score_task("c1.genus", table, replies, resources)
    assert ts.items["parse_status"] == ["empty", "empty", "empty", "refusal", "empty", "ok", "echo"]
    assert ts.metrics["parse_rate"] == pytest.approx(1 / 7)
    assert ts.metrics["em"] == 0.0
    assert ts.metrics["parse_status"] == {"echo": 1, "empty": 4, "ok": 1, "refusal": 1}
    odd = make_table("c1.genus", "genus", [("Dryophytes", FROG)] * 3)
    ts = score_task("c1.genus", odd, [5, "5", ["Dryophytes"]], resources)  # not text: recorded, no raise
    assert ts.items["parse_status"] == ["not_text", "ok", "not_text"]


def test_mcq_common_name(resources):
    opts = [["Green treefrog", "American toad", "House mouse", "Barking treefrog"]] * 4
    table = make_table("c1.common_name_mcq", "common_name", [("Green treefrog", FROG)] * 4, options=opts)
    replies = ["Green treefrog", "The answer is American toad.", "treefrog", "green tree frog"]
    ts = score_task("c1.common_name_mcq", table, replies, resources)
    assert ts.items["parsed"] == ["Green treefrog", "American toad", None, "Green treefrog"]
    assert ts.items["parse_status"] == ["ok", "ok", "ambiguous", "ok"]
    assert ts.items["em"] == [1, 0, 0, 1]
    m = ts.metrics
    assert m["floor"] == pytest.approx(0.25) and m["floor_rule"].startswith("uniform")
    assert m["lift"] == pytest.approx((0.5 - 0.25) / 0.75)
    # no vernacular index in these resources: tree metrics are null, not 0
    assert m["wup"] is None and m["lin"] is None and "vernacular" in m["tree_metrics"]


def test_common_name_tree_metrics_through_the_vernacular_index(resources):
    vern = {"green treefrog": FROG, "american toad": f"{ANAXYRUS}|americanus", "treefrogs": DRYOPHYTES}
    res = Resources(resources.taxonomy, SYNONYMS, vern)
    table = make_table("c1.common_name", "common_name", [("Green treefrog", FROG)] * 4)
    ts = score_task("c1.common_name", table, ["Green treefrog", "American toad", "Treefrogs", "Froggy"], res)
    assert ts.items["resolution"] == ["exact", "vernacular", "vernacular", "unresolved"]
    assert ts.items["lca_height"] == [0, 3, 1, None]
    assert ts.items["wup"][1] == pytest.approx(0.5)


def test_additive_stats_two_halves_equal_the_whole(resources):
    golds = [("Dryophytes cinereus", FROG)] * 5 + [("Mus musculus", f"{MUS}|musculus")] * 3
    replies = TREEFROG_REPLIES + ["Mus musculus", "Puma concolor", None]
    table = make_table("c1.scientific_name", "scientific_name", golds)
    _, whole = item_stats("c1.scientific_name", table, replies, resources)
    _, a = item_stats("c1.scientific_name", table.slice(0, 3), replies[:3], resources)
    _, b = item_stats("c1.scientific_name", table.slice(3), replies[3:], resources)
    merged = reduce("c1.scientific_name", merge_stats(a, b))
    expected = reduce("c1.scientific_name", whole)
    assert merged.keys() == expected.keys()
    for key, value in expected.items():
        if isinstance(value, float):
            assert merged[key] == pytest.approx(value, rel=1e-12), key
        else:
            assert merged[key] == value, key


def test_deterministic_and_validates_inputs(resources):
    table = make_table("c1.scientific_name", "scientific_name", [("Dryophytes cinereus", FROG)] * 5)
    first = score_task("c1.scientific_name", table, TREEFROG_REPLIES, resources)
    second = score_task("c1.scientific_name", table, TREEFROG_REPLIES, resources)
    assert first == second
    with pytest.raises(ValueError, match="responses for 5 rows"):
        score_task("c1.scientific_name", table, TREEFROG_REPLIES[:2], resources)
    with pytest.raises(ValueError, match="not a C1 task"):
        score_task("c2.naming", table, TREEFROG_REPLIES, resources)


def test_missing_gold_is_counted_not_dropped(resources):
    table = make_table("c1.genus", "genus", [("Dryophytes", FROG), ("", FROG)])
    ts = score_task("c1.genus", table, ["Dryophytes", "Dryophytes"], resources)
    assert ts.metrics["n"] == 2 and ts.metrics["gold_missing"] == 1
    assert ts.items["resolution"] == ["exact", "no_gold"]


def test_rows_without_lineage_fall_back_to_the_gold_name(resources):
    table = make_table("c1.genus", "genus", [("Dryophytes", FROG)] * 3)
    c1 = table.column("c1").combine_chunks()
    fields = [c1.field(i) for i in range(c1.type.num_fields)]
    nulled = pa.StructArray.from_arrays(fields, fields=list(c1.type), mask=pa.array([False, True, False]))
    with_null = table.set_column(table.schema.get_field_index("c1"), "c1", nulled)
    replies = ["Dryophytes", "Anaxyrus", "Mus"]
    ts = score_task("c1.genus", with_null, replies, resources)
    assert ts.items["lca_height"] == [0, 2, 4]
    bare = score_task("c1.genus", table.drop_columns(["c1", "question"]), replies, resources)
    assert bare.items["lca_height"] == [0, 2, 4]
    assert bare.metrics["gold_unresolved"] == 0


def test_floor_prediction_reproduces_the_floor():
    from biovqa.metrics.c1 import floor_prediction

    items = [("Chordata", FROG)] * 3 + [("chordata.", FROG)] + [("Arthropoda", FROG)] * 3
    table = make_table("c1.phylum", "phylum", items)
    replies = floor_prediction("c1.phylum", table)
    assert replies == ["Chordata"] * 7
    m = score_task("c1.phylum", table, replies).metrics
    assert m["em"] == m["floor"] == pytest.approx(4 / 7)
    assert m["lift"] == 0.0
    opts = [["B", "A", "C", "D"], ["A", "B", "C", "D"]]
    mcq = make_table("c1.common_name_mcq", "common_name", [("A", FROG), ("A", FROG)], options=opts)
    assert floor_prediction("c1.common_name_mcq", mcq) == ["B", "A"]
