"""``biovqa score``: score a prediction file against a config (wired into :mod:`biovqa.cli`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer


def score_command(
    predictions: Annotated[
        Path,
        typer.Argument(help="Run directory (run.json + predictions/rank-*/shard-*.jsonl) or a JSONL file."),
    ],
    dataset: Annotated[str, typer.Option("--dataset", help="Local Hub-shaped folder or Hub dataset id.")],
    config: Annotated[str, typer.Option("--config", help="Config to score: c1 … c4 or lite.")],
    out: Annotated[
        Path, typer.Option("--out", help="Output folder (items/, scorecard.json/.md, summary.json).")
    ],
    task: Annotated[
        list[str] | None, typer.Option("--task", help="Only these tasks or components (repeatable).")
    ] = None,
    model: Annotated[str | None, typer.Option("--model-name", help="Row label in scorecard.md.")] = None,
    split: Annotated[str, typer.Option(help="Split of the config.")] = "test",
    quiet: Annotated[bool, typer.Option("--quiet", help="Print only the output folder.")] = False,
) -> None:
    """Score predictions: per-item parquet, scorecard.json and a Table 3 scorecard.md."""
    from biovqa.scoring import score

    t0 = time.perf_counter()
    try:
        result = score(dataset, config, predictions, out, tasks=task, model=model, split=split)
    except (FileNotFoundError, ValueError, NotADirectoryError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2) from None
    wall = time.perf_counter() - t0
    if quiet:
        typer.echo(str(out))
        return
    s = result.summary
    typer.echo(
        f"scored {s['n_questions']} questions in {len(result.scorecard)} task(s) in {wall:.1f} s -> {out}\n"
        f"  unanswered {s['n_unanswered']}, null responses {s['n_null_responses']}, "
        f"unknown-qid predictions {s['n_unknown_predictions']}, bad prediction lines {s['n_bad_prediction_lines']}"
    )
    for line in s["bad_prediction_lines"][:5]:
        typer.echo(f"  bad line: {line}", err=True)
    for task_id, m in result.scorecard.items():
        head = m.get("headline")
        head_txt = "—" if head is None else f"{head:.4f}"
        pr = m.get("parse_rate")
        pr_txt = "—" if pr is None else f"{pr:.3f}"
        extra = f"  ERROR {m['error']}" if "error" in m else ""
        typer.echo(
            f"  {task_id:28s} {m.get('headline_metric') or '?':18s} {head_txt:>9s}  parse {pr_txt}  "
            f"n {m.get('n')}  [{result.timings.get(task_id, 0.0):.2f} s]{extra}"
        )
    typer.echo("  phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in result.phases.items()))
    if s["failed_tasks"]:
        raise typer.Exit(code=1)
