"""HF backend on tiny random VLMs (built offline), blind mode, floor baseline, registry, offline errors."""

from __future__ import annotations

import json

import pytest

from biovqa.models.base import ModelNotAvailable
from biovqa.run.runner import EvalSettings, run_eval
from builder import tiny_vlms

CORRUPT = "c3.counting/synth/0002"


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny models gain nothing from threads, and OpenMP spin-waits crawl when the CPUs are shared."""
    import torch

    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def ds(tmp_path_factory):
    root = tmp_path_factory.mktemp("ds")
    return tiny_vlms.make_question_folder(root, per_task=3, corrupt_qids=(CORRUPT,))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    return {kind: build(root / kind) for kind, build in tiny_vlms.BUILDERS.items()}


def _run(model, ds, out, **kw):
    folder, sources = ds
    kw.setdefault("max_new_tokens", 8)  # tiny random models rarely stop: keep generation short
    settings = EvalSettings(
        model=str(model),
        dataset=str(folder),
        out=str(out),
        sources=str(sources) and str(sources),
        progress=False,
        score=False,
        **kw,
    )
    return run_eval(settings)


def _lines(result):
    return [json.loads(x) for x in result.predictions_path.read_text().splitlines()]


@pytest.mark.parametrize("kind", list(tiny_vlms.BUILDERS))
def test_batch_size_does_not_change_greedy_outputs(kind, models, ds, tmp_path):
    r1 = _run(models[kind], ds, tmp_path, batch_size=1)
    r8 = _run(models[kind], ds, tmp_path, batch_size=8)
    assert r1.run_dir != r8.run_dir  # batch size is part of the cache key
    a, b = _lines(r1), _lines(r8)
    assert [x["qid"] for x in a] == [x["qid"] for x in b] and len(a) == r1.n_items == 15
    assert [x["response"] for x in a] == [x["response"] for x in b]
    answered = [x for x in b if x["error"] is None]
    assert len(answered) == 14 and all(isinstance(x["response"], str) for x in answered)
    assert all(0 < x["tokens_out"] <= 8 for x in answered)
    bad = next(x for x in b if x["qid"] == CORRUPT)  # corrupt bytes: a recorded error, the run goes on
    assert bad["response"] is None and "image could not be decoded" in bad["error"]
    meta = json.loads((r8.run_dir / "run.json").read_text())
    assert meta["status"] == "complete" and meta["n_errors"] == 1 and meta["batch_size"] == 8
    assert meta["dtype"] == "float32" and meta["max_new_tokens"]["c1.phylum"] == 8


def test_blind_mode_withholds_the_image(models, ds, tmp_path):
    seen = _lines(_run(models["llava"], ds, tmp_path, batch_size=4))
    blind = _run(models["llava"], ds, tmp_path, batch_size=4, blind=True)
    lines = _lines(blind)
    assert all(x["error"] is None for x in lines)  # no pixels needed, so the corrupt image does not matter
    by_q = {x["qid"]: x for x in seen}
    assert all(x["tokens_in"] < by_q[x["qid"]]["tokens_in"] for x in lines if by_q[x["qid"]]["error"] is None)
    meta = json.loads((blind.run_dir / "run.json").read_text())
    assert meta["blind"] is True


def test_resume_in_process_skips_answered_items(models, ds, tmp_path):
    first = _run(models["gemma3"], ds, tmp_path, batch_size=4, tasks=["c1"])
    assert first.n_answered_now == 5
    again = _run(models["gemma3"], ds, tmp_path, batch_size=4)
    assert again.run_dir == first.run_dir and again.n_resumed == 5 and again.n_answered_now == 15 - 5


def test_floor_model_needs_no_weights_and_no_sources(ds, tmp_path):
    folder, _ = ds
    r = run_eval(
        EvalSettings(model="floor", dataset=str(folder), out=str(tmp_path), progress=False, score=False)
    )
    by_q = {x["qid"]: x["response"] for x in _lines(r)}
    assert {by_q[q] for q in by_q if q.startswith("c4.")} == {"Yes"}
    assert {by_q[q] for q in by_q if q.startswith("c1.")} == {"Chordata"}  # modal gold of the task
    assert by_q["c2.morphology/synth/0000"] == "(A) red"
    assert by_q["c3.counting/synth/0000"] == "0"  # modal count (ties: smallest string)


def test_model_not_available_offline_is_immediate_and_clear(ds, tmp_path):
    with pytest.raises(ModelNotAvailable, match=r"not in the local Hugging Face cache.*hf download"):
        _run("someowner/not-a-model", ds, tmp_path)
    with pytest.raises(ModelNotAvailable, match="no such model folder"):
        _run(tmp_path / "missing-folder", ds, tmp_path)


def test_registry_lists_the_18_checkpoints_with_wrappers():
    from biovqa.models.registry import MODELS, find_model

    assert len(MODELS) == 18 and len({m.checkpoint for m in MODELS}) == 18
    gemma = {m.name for m in MODELS if m.wrapper == "gemma_system"}
    english = {m.name for m in MODELS if m.wrapper == "internvl_english"}
    assert gemma == {"Gemma-3-12B", "Gemma-4-12B"}
    assert english == {"InternVL3-8B", "InternVL3-38B", "InternVL3.5-38B"}
    assert find_model("qwen/qwen2.5-vl-7b-instruct").name == "Qwen2.5-VL-7B"
    assert find_model("Molmo2-8B").trust_remote_code


def test_wrapper_reaches_the_prompt(models, ds, tmp_path, monkeypatch):
    from biovqa.models import registry

    spec = registry.ModelSpec("tiny", str(models["llava"]), "0", "-", "-", wrapper="gemma_system")
    monkeypatch.setitem(registry._BY_KEY, str(models["llava"]).lower(), spec)
    captured = []
    from biovqa.models import hf

    orig = hf.HFBackend._prompt

    def spy(self, request):
        text = orig(self, request)
        captured.append((request.row["component"], text))
        return text

    monkeypatch.setattr(hf.HFBackend, "_prompt", spy)
    r = _run(models["llava"], ds, tmp_path, batch_size=8, tasks=["c1", "c4"], max_new_tokens=None)
    assert json.loads((r.run_dir / "run.json").read_text())["max_new_tokens"]["c1.phylum"] == 15
    assert all(0 < x["tokens_out"] <= 15 for x in _lines(r) if x["qid"].startswith("c1."))  # §K.1 cap
    assert all(("<|system|>You are a precise taxonomy expert" in t) == (c == "c1") for c, t in captured)


def test_systematic_generation_failure_stops_before_writing(models, ds, tmp_path, monkeypatch):
    from biovqa.models import hf

    def broken(self, requests):
        raise RuntimeError("processor exploded")

    monkeypatch.setattr(hf.HFBackend, "_generate", broken)
    with pytest.raises(
        RuntimeError, match="first batch failed, nothing was written: generation failed.*exploded"
    ):
        _run(models["llava"], ds, tmp_path, batch_size=4)
    assert list(tmp_path.glob("*/predictions/rank-0/shard-*.jsonl")) == []
