"""``biovqa eval`` and ``biovqa models`` (typer-annotated; wired into :mod:`biovqa.cli`).

Also runnable on its own, which is what multi-process launches use::

    torchrun --nproc_per_node 2 -m biovqa.cli_eval eval --model M --dataset D --out RUNS
    accelerate launch --multi_gpu --num_processes 8 -m biovqa.cli_eval eval --model M --dataset D --out RUNS
"""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer


def eval_command(
    model: Annotated[
        str, typer.Option(help="Registry name (biovqa models), Hub id, local folder, or 'floor'.")
    ],
    out: Annotated[str, typer.Option(help="Output folder; the run goes to OUT/<cache key>/.")],
    dataset: Annotated[
        str, typer.Option(help="Local Hub-shaped folder or Hub dataset id.")
    ] = "imageomics/Bio-VQA",
    config: Annotated[str, typer.Option(help="Dataset config: c1 … c4 or lite.")] = "lite",
    tasks: Annotated[
        list[str] | None, typer.Option(help="Task ids or components (repeat or comma-separate).")
    ] = None,
    limit: Annotated[int | None, typer.Option(help="First N questions per task (qid order).")] = None,
    batch_size: Annotated[int, typer.Option(help="Items per generate() call.")] = 8,
    backend: Annotated[str, typer.Option(help="hf or vllm.")] = "hf",
    blind: Annotated[bool, typer.Option(help="Withhold the image (text-only baseline).")] = False,
    sources: Annotated[str | None, typer.Option(help="SOURCES.toml for image_ref rows.")] = None,
    skip_missing: Annotated[
        bool, typer.Option(help="Exclude (and count) items whose source image is missing.")
    ] = False,
    verify_sha256: Annotated[bool, typer.Option(help="Check source images against their sha256.")] = False,
    trust_remote_code: Annotated[bool, typer.Option(help="Allow checkpoints that ship custom code.")] = False,
    revision: Annotated[str | None, typer.Option(help="Model revision (Hub commit/tag).")] = None,
    dtype: Annotated[
        str | None, typer.Option(help="bfloat16|float16|float32 (default: bf16 GPU, fp32 CPU).")
    ] = None,
    max_image_side: Annotated[
        int | None, typer.Option(help="Downscale images whose long side exceeds this.")
    ] = None,
    tensor_parallel_size: Annotated[int, typer.Option(help="vLLM tensor parallel size.")] = 1,
    max_new_tokens: Annotated[
        int | None, typer.Option(help="Cap every task's max_new_tokens (smoke runs; changes the cache key).")
    ] = None,
    score: Annotated[bool, typer.Option(help="Score the run at the end.")] = True,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    label: Annotated[str | None, typer.Option(help="Display name in scorecards and reports.")] = None,
) -> None:
    """Evaluate a model on a Bio-VQA config: resumable, data-parallel under accelerate/torchrun."""
    from biovqa.models.base import ModelNotAvailable
    from biovqa.run.runner import EvalSettings, run_eval

    task_list = [t for item in (tasks or []) for t in item.split(",") if t.strip()] or None
    settings = EvalSettings(
        model=model,
        dataset=dataset,
        out=out,
        config=config,
        tasks=task_list,
        limit=limit,
        batch_size=batch_size,
        backend=backend,
        blind=blind,
        sources=sources,
        skip_missing=skip_missing,
        verify_sha256=verify_sha256,
        trust_remote_code=trust_remote_code,
        revision=revision,
        dtype=dtype,
        max_image_side=max_image_side,
        tensor_parallel_size=tensor_parallel_size,
        max_new_tokens=max_new_tokens,
        score=score,
        progress=progress,
        label=label,
    )
    try:
        result = run_eval(settings)
    except (
        ModelNotAvailable,
        FileNotFoundError,
        NotADirectoryError,
        ValueError,
        KeyError,
        RuntimeError,
    ) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        typer.echo(f"error: {msg}", err=True)
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        typer.echo("interrupted: finished batches are saved; rerun the same command to resume", err=True)
        raise typer.Exit(130) from None
    if result.predictions_path is None:
        return  # not the main process
    m = result.meta
    typer.echo(f"run: {result.run_dir}")
    typer.echo(
        f"items: {m['n_items']} (answered now {m['n_answered_this_session']}, resumed {m['n_resumed']}, "
        f"errors {m['n_errors']}, excluded {m['n_excluded']}); generation {m['generation_s']} s"
        + (f", {m['items_per_s']} items/s" if m.get("items_per_s") else "")
    )
    typer.echo(f"predictions: {result.predictions_path}")
    if result.score_message:
        typer.echo(result.score_message)


def models_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """List the paper's 18 checkpoints (Table 13) with their prompt wrappers and load notes."""
    from biovqa.models.registry import MODELS, list_models

    if as_json:
        typer.echo(json.dumps(list_models(), indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Bio-VQA models ({len(MODELS)}, Table 13)")
    for col in ("name", "checkpoint", "params", "wrapper", "remote code", "notes"):
        table.add_column(col, overflow="fold")
    for m in MODELS:
        table.add_row(
            m.name, m.checkpoint, m.params, m.wrapper or "-", "yes" if m.trust_remote_code else "", m.notes
        )
    Console().print(table)


app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, no_args_is_help=True)
app.command("eval")(eval_command)
app.command("models")(models_command)

if __name__ == "__main__":
    app(sys.argv[1:])
