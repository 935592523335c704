"""The Hub writer, Lite selection, dataset card and publish dry run, on hand-made records."""

from __future__ import annotations

import hashlib
import io

import pytest
from PIL import Image

from biovqa import prompts
from biovqa.schema import empty_record
from builder.hub.card import render_card
from builder.hub.lite import select_lite, stratum_of
from builder.hub.publish import PublishError, dry_run, files_to_upload, upload
from builder.hub.writer import ConfigWriter, iter_config


def _png(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (16, 12), color).save(buf, format="PNG")
    return buf.getvalue()


def _c4_record(i: int) -> dict:
    rec = empty_record()
    rec.update(
        qid=f"c4.random/gzcd/{i:04d}",
        component="c4",
        task="c4.random",
        family="random",
        source="gzcd",
        question=prompts.C4_QUESTION,
        instruction=prompts.C4_INSTRUCTION,
        answer="Yes" if i % 2 else "No",
        answer_form="yes_no",
        image={"bytes": _png((i * 20 % 255, 10, 10)), "path": None},
        c4={
            "catalog": "gzcd",
            "species": "zebra",
            "condition": "random",
            "same": bool(i % 2),
            "embedder": "fallback",
        },
    )
    return rec


def _c1_record(i: int) -> dict:
    rec = empty_record()
    rec.update(
        qid=f"c1.phylum/treeoflife/{i:04d}",
        component="c1",
        task="c1.phylum",
        family="phylum",
        source="treeoflife",
        question=prompts.c1_question("phylum", "animal", i % 5),
        instruction=prompts.c1_instruction("phylum"),
        answer="Chordata",
        answer_form="open_text",
        difficulty=["easy", "medium", "hard"][i % 3],
        image_ref={"source": "treeoflife", "id": f"uuid-{i}", "sha256": "0" * 64, "width": 64, "height": 48},
        c1={"group": "Aves", "rank": "phylum", "phylum": "Chordata"},
    )
    return rec


def _build(hub, n=12):
    writers = {"c1": ConfigWriter(hub, "c1"), "c4": ConfigWriter(hub, "c4")}
    for cfg in ("c2", "c3"):
        ConfigWriter(hub, cfg).close()
    strata = []
    for i in range(n):
        for rec in (_c1_record(i), _c4_record(i)):
            writers[rec["component"]].add(rec)
            strata.append((rec["qid"], rec["task"], stratum_of(rec)))
    for w in writers.values():
        w.close()
    qids, report = select_lite(strata, per_task=5)
    lite = ConfigWriter(hub, "lite")
    for cfg in ("c1", "c4"):
        for rec in iter_config(hub, cfg):
            if rec["qid"] in set(qids):
                lite.add(rec)
    lite.close()
    counts = {"c1": n, "c2": 0, "c3": 0, "c4": n, "lite": lite.n_rows}
    card = render_card(
        counts=counts,
        nbytes={},
        task_counts={"c1.phylum": n, "c4.random": n},
        lite_counts=lite.tasks,
        info={},
    )
    (hub / "README.md").write_text(card)
    return qids, report


def _digest(folder):
    h = hashlib.sha256()
    for f in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(f.relative_to(folder).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()


def test_hub_folder_loads_every_config_and_is_byte_identical(tmp_path):
    from datasets import load_dataset

    hub = tmp_path / "a" / "bio-vqa"
    qids, report = _build(hub)
    assert report["c1.phylum"]["selected"] == 5 and report["c4.random"]["selected"] == 5
    assert sorted(qids) == qids
    with pytest.raises(ValueError, match="c2"):  # an empty config is left out of the card
        load_dataset(str(hub), "c2", split="test", cache_dir=str(tmp_path / "cache-c2"))
    for cfg, n in {"c1": 12, "c4": 12, "lite": 10}.items():
        ds = load_dataset(str(hub), cfg, split="test", cache_dir=str(tmp_path / f"cache-{cfg}"))
        assert len(ds) == n
    c4 = load_dataset(str(hub), "c4", split="test", cache_dir=str(tmp_path / "cache-img"))
    assert c4[0]["image"].size == (16, 12)
    assert c4[0]["c4"]["catalog"] == "gzcd"
    hub2 = tmp_path / "b" / "bio-vqa"
    _build(hub2)
    assert _digest(hub) == _digest(hub2)


def test_lite_is_stratified_and_deterministic():
    items = [(f"q{i}", "c1.phylum", (["easy", "hard"][i % 4 == 0],)) for i in range(400)]
    a, rep = select_lite(items, per_task=40)
    b, _ = select_lite(list(reversed(items)), per_task=40)
    assert a == b and len(a) == 40
    hard = {q for q, _, s in items if s == ("hard",)}
    assert len(hard & set(a)) == 10  # 100 of 400 items are hard -> a quarter of the slots
    small, rep = select_lite(items[:7], per_task=40)
    assert len(small) == 7 and rep["c1.phylum"]["note"]


def test_publish_dry_run_and_upload_errors(tmp_path, monkeypatch):
    hub = tmp_path / "bio-vqa-pub"
    _build(hub)
    (hub / "data" / "c1" / ".tmp-99999.parquet").write_bytes(b"x")
    report = dry_run(hub)
    assert report["configs"]["lite"] == 10
    assert "README.md" in report["files"] and not any(".tmp-" in f for f in report["files"])
    assert [str(p) for p in files_to_upload(hub)] == report["files"]
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    with pytest.raises(PublishError, match="no token"):
        upload(hub, "owner/name")
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_value")
    with pytest.raises(PublishError) as err:  # HF_HUB_OFFLINE=1 in tests: fails fast, one line, no token
        upload(hub, "owner/name")
    assert "hf_secret_token_value" not in str(err.value) and "\n" not in str(err.value)


def test_dry_run_rejects_a_folder_without_card(tmp_path):
    with pytest.raises(PublishError, match="missing dataset card"):
        dry_run(tmp_path)
