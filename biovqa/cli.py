"""The ``biovqa`` command line: eval | score | report | tasks | models.

Each command imports its heavy machinery lazily, so ``biovqa tasks`` answers instantly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from biovqa.cli_eval import eval_command, models_command
from biovqa.cli_score import score_command

app = typer.Typer(
    name="biovqa",
    help="Bio-VQA: evaluate vision-language models on biological VQA and score their answers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    """Bio-VQA: evaluate vision-language models on biological VQA and score their answers."""


@app.command("tasks")
def tasks_cmd(
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
    component: Annotated[str | None, typer.Option(help="Only this component (c1 … c4).")] = None,
) -> None:
    """List the 24 tasks: component, answer form, headline metric, floor rule, prompt hash."""
    from biovqa.tasks import TASKS

    tasks = [t for t in TASKS.values() if component is None or t.component == component]
    if as_json:
        typer.echo(json.dumps([t.to_dict() for t in tasks], indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Bio-VQA tasks ({len(tasks)})")
    for col in ("task", "answer form", "headline", "max tokens", "floor rule", "prompt hash"):
        table.add_column(col)
    for t in tasks:
        table.add_row(
            t.id,
            ", ".join(t.answer_forms),
            t.headline_metric,
            str(t.max_new_tokens),
            t.floor_rule,
            t.prompt_hash,
        )
    Console().print(table)


app.command("score")(score_command)
app.command("eval")(eval_command)
app.command("models")(models_command)


@app.command("report")
def report_cmd(
    runs: Annotated[list[Path], typer.Argument(help="Run folders (RUNDIR/scores/) or score folders.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for report.md, report.html and PNGs.")],
) -> None:
    """Markdown + self-contained HTML report with plots from one or more scored runs."""
    from biovqa.cli_report import report_command

    written = report_command(runs, out)
    typer.echo(f"report: {written['html']}")


def main() -> None:  # pragma: no cover - console entry point
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
