"""Evaluation runner: data-parallel generation, atomic resumable prediction shards, scoring at the end."""

from biovqa.run.runner import EvalSettings, RunResult, run_eval
from biovqa.run.store import PredictionStore, resolve_run_dir

__all__ = ["EvalSettings", "PredictionStore", "RunResult", "resolve_run_dir", "run_eval"]
