"""C1 questions: nine types per image (eight for reptiles), answers by construction, MCQ, resources."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biovqa import prompts, schema
from biovqa.taxonomy import load_resources, normalize_name
from builder.components import c1


def _run(base: Path):
    folders = c1.synth(base / "src")
    roots = {k: base / "src" / v for k, v in folders.items()}
    c1.manifests(roots, base / "m", scale="mini")
    records = list(c1.questions(base / "m", roots, base / "hub"))
    return records, pq.read_table(base / "m" / "c1_manifest.parquet").to_pylist(), base / "hub"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("c1q"))


def test_nine_types_per_image_eight_for_reptiles(built):
    records, manifest, _ = built
    per_image = Counter(r["image_ref"]["id"] for r in records)
    for row in manifest:
        assert per_image[row["id"]] == (8 if row["group"] == "Reptiles" else 9)
    assert not any(r["task"] == "c1.order" and r["c1"]["group"] == "Reptiles" for r in records)
    assert len(records) == sum(per_image.values())
    assert len({r["qid"] for r in records}) == len(records)


def test_answers_and_prompts_by_construction(built):
    records, manifest, _ = built
    by_id = {r["id"]: r for r in manifest}
    for rec in records:
        schema.validate_record(rec)
        row = by_id[rec["image_ref"]["id"]]
        rank = rec["c1"]["rank"]
        assert rec["qid"] == f"{rec['task']}/treeoflife/{row['id']}"
        assert rec["image"] is None and rec["image_ref"] == {
            "source": "treeoflife", "id": row["id"], "sha256": row["sha256"], "width": row["width"], "height": row["height"]
        }  # fmt: skip
        label = {"Animalia": "animal", "Plantae": "plant"}[row["kingdom"]]
        assert rec["c1"]["label"] == label
        if rank == "common_name_mcq":
            assert rec["answer_form"] == "mcq_bare" and rec["answer"] == row["common_name"]
            assert rec["options"][rec["answer_index"]] == row["common_name"] and len(set(rec["options"])) == 4
            assert rec["question"] == prompts.c1_mcq_question(label, rec["options"])
            assert rec["question"].endswith(", ".join(rec["options"]))
            assert rec["instruction"] == prompts.c1_instruction("multiple_choice")
            continue
        expected = {"scientific_name": row["scientific_name"], "common_name": row["common_name"]}.get(
            rank, row.get(rank)
        )
        assert rec["answer"] == expected and rec["answer_form"] == "open_text" and rec["answer_index"] == -1
        assert rec["question"] == prompts.c1_question(rank, label, rec["c1"]["template_index"])
        assert rec["instruction"] == prompts.c1_instruction(rank)
        assert rec["difficulty"] == rec["c1"]["prevalence_tier"]
    species = [r for r in records if r["task"] == "c1.species"]
    assert all(" " not in r["answer"] and r["answer"].islower() for r in species)
    # every template gets drawn somewhere
    assert {r["c1"]["template_index"] for r in records if r["task"] == "c1.family"} == set(range(5))
    assert {r["c1"]["template_index"] for r in records if r["task"] == "c1.common_name"} == set(range(3))


def test_mcq_distractors_same_class_and_not_right(built):
    records, manifest, hub = built
    res = load_resources(hub)
    tax, vern = res.taxonomy, res.vernacular
    names_by_class = defaultdict(set)
    for row in manifest:
        names_by_class[row["class"]].add(row["common_name"])
    same_class = 0
    for rec in (r for r in records if r["task"] == "c1.common_name_mcq"):
        gold = tax.index(vern[normalize_name(rec["answer"])])
        klass = rec["c1"]["class"]
        distractors = [o for i, o in enumerate(rec["options"]) if i != rec["answer_index"]]
        for d in distractors:
            node = tax.index(vern[normalize_name(d)])
            assert tax.lca(node, gold) not in (node, gold)  # never another right answer
        if len(names_by_class[klass]) >= 4:
            same_class += 1
            assert all(d in names_by_class[klass] for d in distractors)
        c = rec["c1"]
        assert c["ndd"] >= 1 and c["mcq_tier"] == rec["difficulty"] and 0 < c["confusability"] <= 0.5
        assert c["ndd_rank"] in ("root", "kingdom", "phylum", "class", "order", "family", "genus")
    assert same_class > 0


def test_difficulty_columns_filled(built):
    records, _, _ = built
    for rec in records:
        c = rec["c1"]
        assert c["target_taxon"] and c["resolution_mechanism"] in ("exact", "vernacular", "lineage", "anchor")
        assert c["exposure"] >= 1 and c["reference_cell"]
        assert rec["difficulty"] in ("easy", "medium", "hard", "degenerate")
    tiers = Counter(r["difficulty"] for r in records if r["task"] == "c1.genus")
    assert set(tiers) <= {"easy", "medium", "hard"} and len(tiers) == 3
    phylum = {r["c1"]["reference_cell"] for r in records if r["task"] == "c1.phylum"}
    assert phylum == {"all/phylum (degenerate)"}  # Table 27: a handful of phyla
    # taxon-deterministic: one tier per (cell, target)
    seen = {}
    for rec in records:
        if rec["task"] != "c1.common_name_mcq":
            key = (rec["c1"]["reference_cell"], rec["c1"]["target_taxon"])
            assert seen.setdefault(key, rec["c1"]["prevalence_tier"]) == rec["c1"]["prevalence_tier"]


def test_resources_round_trip(built):
    records, manifest, hub = built
    res = load_resources(hub)
    syn = res.require_synonyms()
    assert syn.credits("reptilia", "squamata") and not syn.credits("crocodylia", "squamata")
    assert syn.credits("felis concolor", "puma concolor")
    tax = res.taxonomy
    assert all(tax.lineage_index(r) is not None for r in manifest)
    opiliones = [k for k, v in res.vernacular.items() if k == "daddy longlegs"]
    if opiliones:
        assert tax.ranks[tax.index(res.vernacular["daddy longlegs"])] in ("order", "family", "species")
    lizard = next(r for r in manifest if r["group"] == "Reptiles")
    node = tax.lineage_index(lizard, "family")
    assert tax.depths[node] == 4 and tax.ranks[tax.parent_index[node]] == "class"


def test_deterministic(built, tmp_path):
    records, _, hub = built
    again, _, hub2 = _run(tmp_path)
    assert again == records
    for name in ("taxonomy.parquet", "synonyms.parquet", "vernacular.parquet"):
        assert (hub / "resources" / name).read_bytes() == (hub2 / "resources" / name).read_bytes()
