"""Kill -9 mid-run, resume, and get exactly the uninterrupted run's predictions; two ranks under torchrun."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from biovqa.run.runner import EvalSettings, run_eval
from biovqa.run.store import PredictionStore
from builder import tiny_vlms

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume")
    folder, sources = tiny_vlms.make_question_folder(root, per_task=10)
    model = tiny_vlms.build_llava(root / "llava")
    return folder, sources, model


def _env():
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
    return env


def _cli(folder, sources, model, out, batch_size):
    return [
        "-m",
        "biovqa.cli_eval",
        "eval",
        "--model",
        str(model),
        "--dataset",
        str(folder),
        "--out",
        str(out),
        "--sources",
        str(sources),
        "--batch-size",
        str(batch_size),
        "--max-new-tokens",
        "6",
        "--no-progress",
        "--no-score",
    ]


def _settings(folder, sources, model, out, batch_size):
    return EvalSettings(
        model=str(model),
        dataset=str(folder),
        out=str(out),
        sources=str(sources),
        batch_size=batch_size,
        max_new_tokens=6,
        progress=False,
        score=False,
    )


def test_sigkill_then_resume_equals_uninterrupted_run(setup, tmp_path):
    folder, sources, model = setup
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, *_cli(folder, sources, model, out, 2)],
        env=_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if len(list(out.glob("*/predictions/rank-0/shard-*.jsonl"))) >= 3:
            break
        time.sleep(0.01)
    assert proc.poll() is None, f"run ended before it could be killed: {proc.stderr.read().decode()[-2000:]}"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (run_dir,) = out.iterdir()
    # a write torn by a kill leaves only a dot-tmp file: plant one, it must be ignored
    (run_dir / "predictions" / "rank-0" / ".shard-009999.jsonl.tmp").write_text(
        '{"qid": "c1.phylum/synth/0000", "re'
    )
    partial = PredictionStore(run_dir).read()
    assert 0 < len(partial) < 43

    with torch_one_thread():
        resumed = run_eval(_settings(folder, sources, model, out, 2))
        fresh = run_eval(_settings(folder, sources, model, tmp_path / "fresh", 2))
    assert resumed.run_dir == run_dir and resumed.n_resumed == len(partial)
    assert resumed.n_answered_now == 43 - len(partial)
    assert resumed.predictions_path.read_bytes() == fresh.predictions_path.read_bytes()
    store = PredictionStore(run_dir)
    assert len(store.read()) == 43 and store.warnings == []  # nothing duplicated, nothing torn


def test_torchrun_two_cpu_processes_answer_each_item_once(setup, tmp_path):
    folder, sources, model = setup
    out = tmp_path / "ddp"
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
        *_cli(folder, sources, model, out, 4),
    ]
    proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        # One retry from scratch: on a heavily loaded 2-core machine a gloo worker was once seen to
        # abort during start-up (rendezvous timeout), unrelated to the runner; a real bug fails twice.
        shutil.rmtree(out, ignore_errors=True)
        proc = subprocess.run(cmd, env=_env(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (run_dir,) = out.iterdir()
    per_rank = {}
    for rank in (0, 1):
        lines = [
            json.loads(x)
            for f in sorted((run_dir / "predictions" / f"rank-{rank}").glob("shard-*.jsonl"))
            for x in f.read_text().splitlines()
        ]
        per_rank[rank] = [x["qid"] for x in lines]
    assert per_rank[0] and per_rank[1]
    both = per_rank[0] + per_rank[1]
    assert len(both) == len(set(both)) == 43
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["world_size"] == 2 and meta["status"] == "complete" and meta["n_items"] == 43
    merged = [json.loads(x)["qid"] for x in (run_dir / "predictions.jsonl").read_text().splitlines()]
    assert merged == sorted(both)


class torch_one_thread:
    def __enter__(self):
        import torch

        self.n = torch.get_num_threads()
        torch.set_num_threads(1)

    def __exit__(self, *exc):
        import torch

        torch.set_num_threads(self.n)
