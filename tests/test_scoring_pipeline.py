"""``biovqa score`` end to end on a hand-made Hub-shaped folder (C4 rows; other components if present)."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biovqa import scoring
from biovqa.schema import QUESTION_SCHEMA, empty_record

SPECIES = ("leopard", "beluga")


def make_dataset(root: Path, n_per: int = 6) -> list[dict]:
    """data/c4/ with two shards: conditions × species × n_per pairs (first half same)."""
    rows = []
    for cond in ("easy", "random", "hard"):
        for sp in SPECIES:
            for i in range(n_per):
                r = empty_record()
                same = i < n_per // 2
                r.update(
                    qid=f"c4.{cond}/{sp}/{i:04d}",
                    component="c4",
                    task=f"c4.{cond}",
                    family=cond,
                    source=sp,
                    question="Is the main subject …",
                    instruction="Answer with one word: Yes or No.",
                    answer="Yes" if same else "No",
                    answer_form="yes_no",
                )
                r["image"] = {"bytes": b"\x89PNG fake", "path": None}
                r["c4"] = {"catalog": sp, "species": sp, "condition": cond, "same": same}
                rows.append(r)
    d = root / "data" / "c4"
    d.mkdir(parents=True)
    half = len(rows) // 2
    for k, chunk in enumerate((rows[:half], rows[half:])):
        pq.write_table(
            pa.Table.from_pylist(chunk, schema=QUESTION_SCHEMA), d / f"test-0000{k}-of-00002.parquet"
        )
    return rows


def reply_for(row: dict) -> str:
    same = row["c4"]["same"]
    # a model that is right on leopards and says "Yes" to every beluga pair
    if row["c4"]["species"] == "beluga":
        return "Yes, same individual."
    return "Yes" if same else "No"


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def dataset(tmp_path):
    rows = make_dataset(tmp_path / "hub")
    return tmp_path / "hub", rows


def test_end_to_end_jsonl(dataset, tmp_path):
    folder, rows = dataset
    preds = [{"qid": r["qid"], "response": reply_for(r)} for r in rows[1:]]  # first question unanswered
    preds.append({"qid": "c4.random/ghost/9999", "response": "Yes"})
    pfile = write_jsonl(tmp_path / "preds.jsonl", preds)
    out = tmp_path / "out"
    result = scoring.score(folder, "c4", pfile, out)

    card = json.loads((out / "scorecard.json").read_text())
    assert sorted(card) == ["c4.easy", "c4.hard", "c4.random"]
    rnd = card["c4.random"]
    for key in ("headline", "headline_metric", "parse_rate", "n", "dprime", "criterion", "accuracy_ci"):
        assert key in rnd
    # leopard: 3 hits, 3 CRs; beluga: 3 hits, 3 FAs -> pooled 6/0/3/3
    assert (rnd["hits"], rnd["misses"], rnd["false_alarms"], rnd["correct_rejections"]) == (6, 0, 3, 3)
    assert rnd["parse_tier"] == {"tier1": 6, "tier2": 6}
    assert card["c4.easy"]["n_unanswered"] == 1 and card["c4.easy"]["unparsed_same"] == 1

    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_unanswered"] == 1
    assert summary["n_unknown_predictions"] == 1
    assert summary["unknown_prediction_examples"] == ["c4.random/ghost/9999"]
    assert result.summary["n_questions"] == len(rows)

    items = pq.read_table(out / "items" / "c4.random.parquet")
    assert items.num_rows == 12
    for col in ("qid", "response", "parsed", "parse_ok", "parse_status", "parse_tier", "cell", "score"):
        assert col in items.column_names
    assert set(items.column("qid").to_pylist()) == {r["qid"] for r in rows if r["task"] == "c4.random"}

    md = (out / "scorecard.md").read_text()
    assert "| phy | cls | ord |" in md and "| d′ | acc |" in md
    floor_line = next(line for line in md.splitlines() if line.startswith("| Floor |"))
    assert floor_line.rstrip().endswith("| .000 | .500 |")


def test_outputs_are_byte_identical_on_rerun(dataset, tmp_path):
    folder, rows = dataset
    pfile = write_jsonl(tmp_path / "p.jsonl", [{"qid": r["qid"], "response": reply_for(r)} for r in rows])
    a, b = tmp_path / "a", tmp_path / "b"
    scoring.score(folder, "c4", pfile, a, model="m")
    scoring.score(folder, "c4", pfile, b, model="m")
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files and files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f


def test_run_directory_matches_plain_jsonl(dataset, tmp_path):
    folder, rows = dataset
    recs = [
        {
            "qid": r["qid"],
            "response": reply_for(r),
            "prompt_hash": "h",
            "tokens_in": 5,
            "tokens_out": 1,
            "latency_s": 0.1,
        }
        for r in rows
    ]
    run = tmp_path / "run"
    for rank in (0, 1):
        (run / "predictions" / f"rank-{rank}").mkdir(parents=True)
        write_jsonl(run / "predictions" / f"rank-{rank}" / "shard-0.jsonl", recs[rank::2])
    (run / "run.json").write_text(json.dumps({"model": "tiny-llava", "revision": "abc"}))
    plain = write_jsonl(
        tmp_path / "plain.jsonl", [{"qid": r["qid"], "response": r["response"]} for r in recs]
    )
    r1 = scoring.score(folder, "c4", run, tmp_path / "o1")
    # an `biovqa eval --out` folder holding one cache-key run folder is accepted too
    outer = tmp_path / "evalout"
    outer.mkdir()
    run.rename(outer / "0123456789ab")
    r3 = scoring.score(folder, "c4", outer, tmp_path / "o3")
    assert r3.scorecard == r1.scorecard
    r2 = scoring.score(folder, "c4", plain, tmp_path / "o2")
    assert r1.scorecard == r2.scorecard
    assert "tiny-llava" in (tmp_path / "o1" / "scorecard.md").read_text()


def test_duplicate_predictions_are_a_clear_error(dataset, tmp_path):
    folder, rows = dataset
    recs = [{"qid": r["qid"], "response": "Yes"} for r in rows]
    recs.append({"qid": rows[3]["qid"], "response": "No"})
    pfile = write_jsonl(tmp_path / "dup.jsonl", recs)
    with pytest.raises(ValueError, match=r"1 duplicate qid.*c4.easy/leopard/0003"):
        scoring.score(folder, "c4", pfile, tmp_path / "out")


def test_bad_lines_are_named_and_counted(dataset, tmp_path):
    folder, rows = dataset
    lines = [json.dumps({"qid": r["qid"], "response": "Yes"}) for r in rows[2:]]
    lines.insert(1, "{not json")
    lines.insert(3, json.dumps({"qid": rows[0]["qid"], "response": 7}))
    lines.append(json.dumps({"response": "Yes"}))
    pfile = tmp_path / "bad.jsonl"
    pfile.write_text("\n".join(lines) + "\n")
    result = scoring.score(folder, "c4", pfile, tmp_path / "out")
    s = result.summary
    assert s["n_bad_prediction_lines"] == 3
    assert any(f"{pfile}:2: invalid JSON" in m for m in s["bad_prediction_lines"])
    assert any(":4: 'response' is int" in m for m in s["bad_prediction_lines"])
    assert any("missing or non-string 'qid'" in m for m in s["bad_prediction_lines"])
    assert s["n_unanswered"] == 2  # rows 0 and 1: the int reply was rejected, not coerced


def test_failing_scorer_is_reported_and_the_rest_goes_on(dataset, tmp_path, monkeypatch):
    folder, rows = dataset
    pfile = write_jsonl(tmp_path / "p.jsonl", [{"qid": r["qid"], "response": "Yes"} for r in rows])
    import biovqa.metrics.c4 as c4mod

    real = c4mod.score_task

    def flaky(task_id, table, responses, resources=None):
        if task_id == "c4.hard":
            raise RuntimeError("boom")
        return real(task_id, table, responses, resources)

    monkeypatch.setattr(c4mod, "score_task", flaky)
    result = scoring.score(folder, "c4", pfile, tmp_path / "out")
    assert "RuntimeError: boom" in result.scorecard["c4.hard"]["error"]
    assert result.scorecard["c4.random"]["headline"] is not None
    assert not (tmp_path / "out" / "items" / "c4.hard.parquet").exists()
    assert "c4.hard" in json.loads((tmp_path / "out" / "summary.json").read_text())["failed_tasks"]


def test_missing_config_and_missing_predictions_name_the_path(dataset, tmp_path):
    folder, rows = dataset
    pfile = write_jsonl(tmp_path / "p.jsonl", [])
    with pytest.raises(FileNotFoundError, match="config 'c2' not found"):
        scoring.score(folder, "c2", pfile, tmp_path / "o")
    with pytest.raises(FileNotFoundError, match="nope.jsonl"):
        scoring.score(folder, "c4", tmp_path / "nope.jsonl", tmp_path / "o")
    empty = scoring.score(folder, "c4", pfile, tmp_path / "o")  # no predictions at all: all unanswered
    assert empty.summary["n_unanswered"] == len(rows)
    assert empty.scorecard["c4.random"]["parse_rate"] == 0.0


def test_cli_score_command(dataset, tmp_path):
    from biovqa.cli import app

    folder, rows = dataset
    pfile = write_jsonl(tmp_path / "p.jsonl", [{"qid": r["qid"], "response": reply_for(r)} for r in rows])
    out = tmp_path / "cli-out"
    res = CliRunner().invoke(
        app,
        [
            "score",
            str(pfile),
            "--dataset",
            str(folder),
            "--config",
            "c4",
            "--out",
            str(out),
            "--task",
            "c4.random",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "c4.random" in res.output and "dprime" in res.output
    assert sorted(json.loads((out / "scorecard.json").read_text())) == ["c4.random"]
    bad = CliRunner().invoke(
        app,
        ["score", str(pfile), "--dataset", str(tmp_path / "nowhere"), "--config", "c4", "--out", str(out)],
    )
    assert bad.exit_code == 2


def test_hub_id_offline_fails_fast_with_a_clear_message(tmp_path):
    pfile = write_jsonl(tmp_path / "p.jsonl", [])
    with pytest.raises(FileNotFoundError, match="someowner/bio-vqa"):
        scoring.score("someowner/bio-vqa", "c4", pfile, tmp_path / "o")


def test_unloadable_c1_resources_fail_the_c1_tasks_not_the_run(tmp_path):
    rows = make_dataset(tmp_path / "hub", n_per=2)
    r = empty_record()
    r.update(qid="c1.genus/treeoflife/0001", component="c1", task="c1.genus", family="genus", answer="Mus")
    r.update(answer_form="open_text", question="What is the genus?", image={"bytes": b"x", "path": None})
    r["c1"] = {"kingdom": "Animalia", "phylum": "Chordata", "genus": "Mus", "species": "musculus"}
    pq.write_table(
        pa.Table.from_pylist([r], schema=QUESTION_SCHEMA),
        tmp_path / "hub" / "data" / "c4" / "test-00002-of-00002.parquet",
    )
    (tmp_path / "hub" / "resources").mkdir()
    (tmp_path / "hub" / "resources" / "taxonomy.parquet").write_bytes(b"not parquet")
    recs = [{"qid": x["qid"], "response": "Yes"} for x in rows] + [{"qid": r["qid"], "response": "Mus"}]
    result = scoring.score(tmp_path / "hub", "c4", write_jsonl(tmp_path / "p.jsonl", recs), tmp_path / "out")
    assert "C1 resources unusable" in result.scorecard["c1.genus"]["error"]
    assert "c1_resources_error" in result.summary
    assert result.scorecard["c4.random"]["headline"] is not None
