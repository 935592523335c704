"""Read scored runs (Contract 8) into one table of task metrics per model."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class ScoredRun:
    """One model's scorecard: ``metrics[task_id]`` is that task's metric dict."""

    model: str
    path: Path  # the scorecard.json the numbers come from
    sha256: str
    metrics: dict[str, dict] = field(default_factory=dict)
    run_info: dict = field(default_factory=dict)

    def value(self, task_id: str, key: str = "headline") -> float | None:
        """A metric as a float, or None when the task or the metric is absent / not a number."""
        value = self.metrics.get(task_id, {}).get(key)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value)


def _scorecard_path(folder: Path) -> Path:
    for candidate in (folder / "scores" / "scorecard.json", folder / "scorecard.json"):
        if candidate.is_file():
            return candidate
    # `biovqa eval --out OUT` writes OUT/<cache key>/: take the most recently scored run inside
    scored = sorted(folder.glob("*/scores/scorecard.json"), key=lambda p: (p.stat().st_mtime, str(p)))
    if scored:
        return scored[-1]
    raise FileNotFoundError(
        f"{folder}: no scores/scorecard.json or scorecard.json (score the run first: biovqa score … --out {folder}/scores)"
    )


def load_run(folder: str | Path) -> ScoredRun:
    """Load a run folder (``RUNDIR/scores/scorecard.json``) or a score folder (``scorecard.json``)."""
    folder = Path(folder)
    path = _scorecard_path(folder)
    raw = path.read_bytes()
    try:
        metrics = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON: {exc}") from None
    if not isinstance(metrics, dict):
        raise ValueError(f"{path}: expected an object {{task_id: metrics}}")
    run_info: dict = {}
    run_dir = path.parent.parent if path.parent.name == "scores" else path.parent
    for info in (run_dir / "run.json", folder / "run.json"):
        if info.is_file():
            try:
                run_info = json.loads(info.read_text())
            except json.JSONDecodeError:
                run_info = {}
            break
    model = str(run_info.get("model_label") or run_info.get("model") or folder.name)
    if run_info.get("blind") and "blind" not in model:
        model = f"{model} (blind)"
    tasks = {k: v for k, v in metrics.items() if isinstance(v, dict)}
    return ScoredRun(
        model=model, path=path, sha256=hashlib.sha256(raw).hexdigest(), metrics=tasks, run_info=run_info
    )


def load_runs(folders: list[str | Path]) -> list[ScoredRun]:
    """Load several runs; duplicate model names get a numeric suffix so columns stay distinct."""
    runs = [load_run(f) for f in folders]
    seen: dict[str, int] = {}
    for run in runs:
        n = seen.get(run.model, 0)
        seen[run.model] = n + 1
        if n:
            run.model = f"{run.model} #{n + 1}"
    return runs
