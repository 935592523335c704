"""The Hub-loadable evaluate modules (cards/metrics/*): layout, offline loading, same numbers as ``biovqa score``.

``import evaluate`` costs ~10 s, so every test that needs it shares one module-scoped fixture.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from biovqa import scoring
from biovqa.schema import QUESTION_SCHEMA, empty_record

CARDS = Path(__file__).resolve().parents[1] / "cards" / "metrics"
MODULES = ("cags", "bio_vqa_c1", "bio_vqa_c3", "bio_vqa_c4")


@pytest.fixture(scope="module")
def evaluate_mod():
    assert os.environ.get("HF_EVALUATE_OFFLINE") == "1"  # conftest: never the network
    return pytest.importorskip("evaluate")


@pytest.mark.parametrize("name", MODULES)
def test_module_folder_layout(name):
    folder = CARDS / name
    module = (folder / f"{name}.py").read_text()
    readme = (folder / "README.md").read_text()
    front = readme.split("---")[1]
    for field in ("title:", "sdk: gradio", "app_file: app.py", "- evaluate", "- metric"):
        assert field in front, (name, field)
    for section in (
        "## Description",
        "## How to use",
        "## Inputs",
        "## Outputs",
        "## Limitations",
        "## Citation",
    ):
        assert section in readme, (name, section)
    assert "bio-vqa" in (folder / "requirements.txt").read_text()
    assert f"{name}.py" in (folder / "app.py").read_text()
    # evaluate scans imports line by line: one module per import statement
    for line in module.splitlines():
        assert not re.match(r"^\s*import\s+\w+\s*,", line), line
        assert "import torch" not in line


@pytest.mark.parametrize("name", MODULES)
def test_every_module_loads_offline(evaluate_mod, name):
    module = evaluate_mod.load(str(CARDS / name))
    assert module.name == name


def _c4_folder(root: Path) -> tuple[Path, list[dict], list[str]]:
    rows, replies = [], []
    patterns = {
        "leopard": ["Yes", "Yes", "No", "No", "Yes", "No"],
        "beluga": ["Yes.", "I am not sure", "Yes, same whale.", "Yes", "No", "**No**"],
    }
    for sp, answers in patterns.items():
        for i, reply in enumerate(answers):
            r = empty_record()
            r.update(
                qid=f"c4.random/{sp}/{i:03d}",
                component="c4",
                task="c4.random",
                family="random",
                source=sp,
                answer="Yes" if i % 2 == 0 else "No",
                answer_form="yes_no",
            )
            r["image"] = {"bytes": b"png", "path": None}
            r["c4"] = {"catalog": sp, "species": sp, "condition": "random", "same": i % 2 == 0}
            rows.append(r)
            replies.append(reply)
    (root / "data" / "c4").mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(rows, schema=QUESTION_SCHEMA), root / "data" / "c4" / "test-00000.parquet"
    )
    return root, rows, replies


def test_c4_module_gives_the_same_numbers_as_biovqa_score(evaluate_mod, tmp_path):
    folder, rows, replies = _c4_folder(tmp_path / "hub")
    pfile = tmp_path / "p.jsonl"
    pfile.write_text(
        "".join(
            json.dumps({"qid": r["qid"], "response": x}) + "\n" for r, x in zip(rows, replies, strict=True)
        )
    )
    card = scoring.score(folder, "c4", pfile, tmp_path / "out").scorecard["c4.random"]

    module = evaluate_mod.load(str(CARDS / "bio_vqa_c4"))
    refs = [r["answer"] for r in rows]
    species = [r["c4"]["species"] for r in rows]
    got = module.compute(predictions=replies, references=refs, species=species, condition="random")
    for key in ("dprime", "criterion", "accuracy", "balanced_accuracy", "mcc", "kappa", "parse_rate", "n"):
        assert got[key] == pytest.approx(card[key], abs=1e-12), key
    assert got["accuracy_ci"] == pytest.approx(card["accuracy_ci"])
    assert got["counts"]["unparsed_different"] == card["unparsed_different"] == 1
    assert got["per_species"]["beluga"]["dprime"] == pytest.approx(card["per_species"]["beluga"]["dprime"])

    # streaming the same items in batches changes nothing
    for lo in range(0, len(rows), 5):
        module.add_batch(
            predictions=replies[lo : lo + 5], references=refs[lo : lo + 5], species=species[lo : lo + 5]
        )
    assert module.compute()["dprime"] == pytest.approx(card["dprime"])

    with pytest.raises(ValueError, match="not Yes or No"):
        module.compute(predictions=["Yes"], references=["Maybe"], species=["x"])


def _c2_items():
    """Hand-made C2 items (a size question and a colour question) as partial question records."""
    size = ["very small", "small", "medium", "large"]
    colours = ["blue", "purple", "yellow", "green"]
    items = [
        {
            "answer": "medium",
            "options": size,
            "family": "attr_bare_value",
            "c2": {"part": "body", "property": "size", "kernel": "ordinal"},
        },
        {
            "answer": "blue",
            "options": colours,
            "family": "attr_bare_value",
            "c2": {"part": "wing", "property": "color", "kernel": "color"},
        },
    ] * 3
    replies = ["(B) small", "(A) blue", "(C) medium", "(B) purple", "I don't know", "yellow"]
    return items, replies


def test_cags_module_gives_the_same_numbers_as_the_scorer(evaluate_mod):
    c2 = pytest.importorskip("biovqa.metrics.c2")
    if not hasattr(c2, "score_task"):
        pytest.skip("C2 scorer not available yet")
    from biovqa.metrics.bridge import score_records

    items, replies = _c2_items()
    for it in items:
        it.setdefault("answer_form", "mcq_lettered")
        it["answer_index"] = it["options"].index(it["answer"])
    direct = score_records("c2", [dict(it) for it in items], replies).tasks["c2.morphology"].metrics

    module = evaluate_mod.load(str(CARDS / "cags"), "items")
    got = module.compute(
        predictions=replies,
        references=[it["answer"] for it in items],
        options=[it["options"] for it in items],
        family=[it["family"] for it in items],
        item=[json.dumps({"c2": it["c2"]}) for it in items],
    )
    assert got["n"] == 6
    assert got["cags"] == pytest.approx(direct["headline"])
    assert got["exact_match"] == pytest.approx(direct["em"])
    assert got["gs_raw"] == pytest.approx(direct["gs_raw"])


def test_cags_card_worked_example(evaluate_mod):
    """README example: size small / medium / very large against gold medium -> cags .25, 1, -.5 (mean .25)."""
    c2 = pytest.importorskip("biovqa.metrics.c2")
    if not hasattr(c2, "score_task"):
        pytest.skip("C2 scorer not available yet")
    module = evaluate_mod.load(str(CARDS / "cags"), "items")
    opts = ["small", "medium", "large", "very large"]
    got = module.compute(
        predictions=["(A) small", "(B) medium", "(D) very large"],
        references=["medium"] * 3,
        options=[opts] * 3,
        family=["attr_bare_value"] * 3,
        item=[json.dumps({"c2": {"property": "size"}})] * 3,
    )
    assert got["cags"] == pytest.approx((0.25 + 1.0 - 0.5) / 3)
    assert got["exact_match"] == pytest.approx(1 / 3)
    assert got["gs_raw"] == pytest.approx((0.75 + 1.0 + 0.5) / 3)


_FROGS = [
    {"kingdom": "Animalia", "phylum": "Chordata", "class": "Amphibia", "order": "Anura", "family": "Hylidae",
     "genus": "Dryophytes", "species": "cinereus", "scientific_name": "Dryophytes cinereus"},
    {"kingdom": "Animalia", "phylum": "Chordata", "class": "Amphibia", "order": "Anura", "family": "Hylidae",
     "genus": "Dryophytes", "species": "gratiosus", "scientific_name": "Dryophytes gratiosus"},
    {"kingdom": "Animalia", "phylum": "Chordata", "class": "Amphibia", "order": "Anura", "family": "Bufonidae",
     "genus": "Anaxyrus", "species": "americanus", "scientific_name": "Anaxyrus americanus"},
    {"kingdom": "Animalia", "phylum": "Chordata", "class": "Mammalia", "order": "Rodentia", "family": "Muridae",
     "genus": "Mus", "species": "musculus", "scientific_name": "Mus musculus"},
]  # fmt: skip


def test_c1_module_gives_the_same_numbers_as_the_scorer(evaluate_mod, tmp_path):
    taxonomy = pytest.importorskip("biovqa.taxonomy")
    c1 = pytest.importorskip("biovqa.metrics.c1")
    if not hasattr(c1, "score_task"):
        pytest.skip("C1 scorer not available yet")
    from biovqa.metrics.bridge import score_records

    tax = taxonomy.Taxonomy.from_lineages(_FROGS)
    syn = taxonomy.SynonymMap([("hyla cinerea", "dryophytes cinereus")], normalize=True)
    taxonomy.save_resources(tmp_path, tax, syn)
    gold = _FROGS[0]
    replies = [
        "Dryophytes cinereus",
        "Hyla cinerea",
        "Dryophytes gratiosus",
        "Anaxyrus americanus",
        "Mus musculus",
    ]
    items = [json.dumps({"c1": gold})] * len(replies)
    module = evaluate_mod.load(str(CARDS / "bio_vqa_c1"))
    got = module.compute(
        predictions=replies,
        references=[gold["scientific_name"]] * len(replies),
        rank=["scientific_name"] * len(replies),
        item=items,
        resources_dir=str(tmp_path),
    )
    records = [{"answer": gold["scientific_name"], "family": "scientific_name", "task": "c1.scientific_name",
                "c1": gold} for _ in replies]  # fmt: skip
    direct = score_records("c1", records, replies, taxonomy.load_resources(tmp_path))
    m = direct.tasks["c1.scientific_name"].metrics
    for key in ("em", "em_soft", "wup", "lin", "parse_rate"):
        assert got[key] == pytest.approx(m[key]), key
    assert got["em"] == pytest.approx(1 / 5)
    assert got["em_soft"] == pytest.approx(2 / 5)  # the synonym Hyla cinerea is accepted
    with pytest.raises(ValueError, match="resources_dir"):
        module.compute(predictions=["x"], references=["y"], rank=["genus"], item=["{}"])


def test_c3_module_gives_the_same_numbers_as_the_scorer(evaluate_mod):
    c3 = pytest.importorskip("biovqa.metrics.c3")
    if not hasattr(c3, "score_task"):
        pytest.skip("C3 scorer not available yet")
    from biovqa.metrics.bridge import score_records

    golds = [3, 7, 12, 5, 9, 0]
    replies = ["3", "There are 8 beetles.", "12", "many", "10", "0"]
    records = [
        {"answer": str(g), "task": "c3.counting",
         "c3": {"corpus": "neon_beetles", "tier": "single", "counts": [g], "target_panel": 0,
                "gold_value": float(g), "plate_id": f"p{i // 2}"}}
        for i, g in enumerate(golds)
    ]  # fmt: skip
    direct = score_records("c3", [dict(r) for r in records], replies).tasks["c3.counting"].metrics
    module = evaluate_mod.load(str(CARDS / "bio_vqa_c3"))
    got = module.compute(
        predictions=replies,
        references=[r["answer"] for r in records],
        task=[r["task"] for r in records],
        item=[json.dumps({"c3": r["c3"]}) for r in records],
    )
    assert got["n"] == 6
    for key in ("headline", "floor", "lift", "parse_rate"):
        assert got[key] == pytest.approx(direct[key], nan_ok=True), key
    assert got["headline_metric"] == direct["headline_metric"] == "cas"
