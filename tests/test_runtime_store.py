"""The prediction store: atomic shards, torn files, resume numbering, deterministic merge."""

from __future__ import annotations

import json

from biovqa.run.store import PredictionStore, resolve_run_dir


def _rec(q, r="x"):
    return {"qid": q, "response": r, "prompt_hash": "h", "tokens_in": 1, "tokens_out": 1, "latency_s": 0.5}


def test_append_read_and_continue_numbering(tmp_path):
    store = PredictionStore(tmp_path)
    w = store.writer(0)
    w.append([_rec("a"), _rec("b")])
    w.append([])
    w.append([_rec("c")])
    assert [p.name for p in store.shard_files()] == ["shard-000000.jsonl", "shard-000001.jsonl"]
    w2 = store.writer(0)  # a resumed run continues after the last shard
    assert w2.next_number == 2
    store.writer(1).append([_rec("d")])
    assert sorted(store.read()) == ["a", "b", "c", "d"]


def test_torn_tmp_and_bad_lines_are_ignored_and_reported(tmp_path, capsys):
    store = PredictionStore(tmp_path)
    store.writer(0).append([_rec("a")])
    rank = tmp_path / "predictions" / "rank-0"
    (rank / ".shard-000001.jsonl.tmp").write_text('{"qid": "b", "resp')  # killed mid-write
    (rank / "shard-000002.jsonl").write_text(
        '{"qid": "c"}\n{"qid": "d", "resp\n{"qid": "a", "response": "dup"}\n'
    )
    recs = store.read()
    assert sorted(recs) == ["a", "c"] and recs["a"]["response"] == "x"
    assert any("shard-000002.jsonl:2: bad prediction line" in w for w in store.warnings)
    assert any("duplicate prediction for a" in w for w in store.warnings)
    store.writer(0)
    assert not (rank / ".shard-000001.jsonl.tmp").exists()  # cleaned by the next writer


def test_merged_is_sorted_without_latency(tmp_path):
    store = PredictionStore(tmp_path)
    store.writer(1).append([_rec("b", "2")])
    store.writer(0).append([_rec("a", "1")])
    path = store.write_merged(store.read())
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [x["qid"] for x in lines] == ["a", "b"] and "latency_s" not in lines[0]


def test_resolve_run_dir(tmp_path):
    (tmp_path / "k1").mkdir()
    (tmp_path / "k1" / "run.json").write_text("{}")
    assert resolve_run_dir(tmp_path) == tmp_path / "k1"
    (tmp_path / "k2").mkdir()
    (tmp_path / "k2" / "run.json").write_text("{}")
    try:
        resolve_run_dir(tmp_path)
    except ValueError as exc:
        assert "k1, k2" in str(exc)
    else:
        raise AssertionError("expected an error for two runs")
