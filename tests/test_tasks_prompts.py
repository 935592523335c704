"""The task registry and the §K prompts."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

from biovqa import prompts
from biovqa.schema import ANSWER_FORMS, QUESTION_SCHEMA, empty_record, validate_record
from biovqa.tasks import TASK_IDS, TASKS, get_task, select_tasks

EXPECTED_IDS = (
    "c1.phylum c1.class c1.order c1.family c1.genus c1.species c1.scientific_name c1.common_name "
    "c1.common_name_mcq c2.salience c2.morphology c2.localization c2.naming c3.counting "
    "c3.relative_counting c3.absolute_distance c3.relative_distance c3.localization c3.relative_position "
    "c3.viewpoint c3.ocr c4.easy c4.random c4.hard"
).split()


def test_the_24_stable_task_ids():
    assert list(TASK_IDS) == EXPECTED_IDS


def test_every_task_is_complete():
    for task in TASKS.values():
        assert task.component == task.id.split(".")[0]
        assert set(task.answer_forms) <= set(ANSWER_FORMS)
        assert task.headline_metric and task.floor_rule and task.max_new_tokens > 0
        assert len(task.prompt_hash) == 16
        for dotted in (*task.parsers.values(), task.scorer):
            module, _, name = dotted.rpartition(".")
            assert callable(getattr(importlib.import_module(module), name)), dotted
        assert task.prompts and set(task.wrappers) == {"gemma_system", "internvl_english"}
    assert all(t.max_new_tokens == 15 for t in TASKS.values() if t.component == "c1")
    c2_families = [f for t in TASKS.values() if t.component == "c2" for f in t.families]
    assert sorted(c2_families) == sorted(prompts.C2_FAMILIES)
    assert sum(t.table3 for t in TASKS.values()) == 21  # 22 columns: c4.random gives d′ and acc


def test_prompt_hashes_differ_between_tasks_and_change_with_text(monkeypatch):
    hashes = {t.prompt_hash for t in TASKS.values()}
    assert len(hashes) == 24
    before = get_task("c3.counting").prompt_hash
    monkeypatch.setitem(prompts.C3_INSTRUCTIONS, "counting", "Respond with a number.")
    assert get_task("c3.counting").prompt_hash != before


def test_select_tasks_and_unknown_ids():
    assert [t.id for t in select_tasks(["c4"])] == ["c4.easy", "c4.random", "c4.hard"]
    assert [t.id for t in select_tasks(["c3.ocr", "c1.genus"])] == ["c1.genus", "c3.ocr"]
    with pytest.raises(KeyError, match="unknown task"):
        get_task("c5.nothing")


def test_c1_prompts_follow_section_k1():
    assert (
        prompts.c1_question("phylum", "animal", 0) == "What is the phylum of the animal shown in this image?"
    )
    assert (
        prompts.c1_question("species", "plant", 3) == "Name the species epithet of the plant in this image."
    )
    assert prompts.c1_question("scientific_name", "organism", 2) == (
        "Name the scientific name of the organism shown in this image."
    )
    assert len(prompts.c1_templates("genus")) == 5 and len(prompts.c1_templates("common_name")) == 3
    assert prompts.c1_label("Animalia") == "animal" and prompts.c1_label("Fungi") == "organism"
    q = prompts.c1_mcq_question("animal", ["Green treefrog", "Cane toad", "House mouse", "Barking treefrog"])
    assert q.endswith("? Green treefrog, Cane toad, House mouse, Barking treefrog")
    assert "(A)" not in q
    assert prompts.c1_instruction("species").startswith("Answer with ONLY the species epithet")


def test_c2_and_c3_and_c4_prompts():
    q = prompts.c2_question("attr_bare_value", part="wing", property="color", options=["blue", "purple"])
    assert q == "What is the wing color of this bird? Options: (A) blue, (B) purple"
    assert prompts.c2_instruction("attr_bare_value").startswith("[CRITICAL INSTRUCTIONS")
    assert prompts.c2_instruction("open_genus").startswith("Answer with ONLY the capitalized Genus")
    assert prompts.c2_instruction("open_kind_of") == prompts.c2_instruction("open_common_name")
    with pytest.raises(ValueError, match="needs field"):
        prompts.c2_question("marker_localization", options=["beak"])
    q = prompts.c3_question("counting", "medium", animals="bees", panel="left")
    assert q.startswith("This image consists of two separate photographs") and q.endswith(
        "in the left photograph?"
    )
    assert prompts.c3_question("counting", "easy", animals="fish") == "How many fish are there in this image?"
    q = prompts.c3_question("localization", species="leopard", width=640, height=480)
    assert q.startswith("The whole image is 640 pixels wide and 480 pixels tall. Provide bounding box")
    q = prompts.c3_question("relative_position", directions=["top", "left", "bottom-right", "right"])
    assert q.endswith("Options: top, left, bottom-right, right")
    assert "Yes or No" in prompts.C4_INSTRUCTION


def test_wrappers():
    row = {"task": "c1.genus", "question": "Q?", "instruction": "I."}
    assert prompts.wrap(row, None) == (None, "Q?\nI.")
    assert prompts.wrap(row, "gemma_system")[0] == prompts.GEMMA_SYSTEM
    assert prompts.wrap({**row, "task": "c4.hard"}, "gemma_system")[0] is None  # C4: no system message
    assert prompts.wrap(row, "internvl_english")[1].startswith("Please answer in English. Q?")
    msgs = prompts.build_messages(row, "gemma_system")
    assert [m["role"] for m in msgs] == ["system", "user"] and msgs[1]["content"][0] == {"type": "image"}
    blind = prompts.build_messages(row, None, with_image=False)
    assert all(part["type"] == "text" for part in blind[0]["content"])


def test_schema_validation_names_the_problem():
    rec = empty_record()
    rec.update(qid="x", component="c9", task="c1.genus", answer_form="open_text")
    with pytest.raises(ValueError, match="unknown component"):
        validate_record(rec)
    assert "image_ref" in QUESTION_SCHEMA.names


def test_cli_tasks_json_and_import_is_light():
    out = subprocess.run(
        [sys.executable, "-m", "biovqa.cli", "tasks", "--json"], capture_output=True, text=True, check=True
    )
    assert [t["id"] for t in json.loads(out.stdout)] == EXPECTED_IDS
    code = (
        "import sys, biovqa, biovqa.tasks, biovqa.prompts, biovqa.schema; "
        "bad = [m for m in ('torch', 'transformers', 'evaluate', 'datasets') if m in sys.modules]; print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
