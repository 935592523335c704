"""``python -m builder``: sample | manifests | build | publish."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from biovqa.sources import load_sources

app = typer.Typer(
    name="builder",
    help="Build the Bio-VQA Hub dataset from the original sources (or from the synthetic miniature).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _echo(msg: str) -> None:
    typer.echo(msg, err=True)


@app.command("sample")
def sample_cmd(
    out: Annotated[Path, typer.Option("--out", help="Folder for the miniature sources (+ SOURCES.toml).")],
    seed: Annotated[int, typer.Option(help="Seed of the miniature.")] = 42,
) -> None:
    """Write a deterministic synthetic miniature of every source in its real on-disk format."""
    from builder.pipeline import sample

    path = sample(out, seed=seed, log=_echo)
    typer.echo(str(path))


@app.command("manifests")
def manifests_cmd(
    sources: Annotated[Path, typer.Option("--sources", help="SOURCES.toml naming the source roots.")],
    out: Annotated[Path, typer.Option("--out", help="Folder for the parquet manifests.")],
    scale: Annotated[str, typer.Option(help="'full' (paper budgets) or 'mini' (small budgets).")] = "full",
    strict: Annotated[bool, typer.Option(help="Stop at the first bad row instead of counting it.")] = False,
) -> None:
    """Read the named sources and write pinned, audited manifests."""
    from builder.pipeline import manifests

    summaries = manifests(load_sources(sources), out, strict=strict, scale=scale, log=_echo)
    typer.echo(json.dumps(summaries, indent=2, default=str))


@app.command("build")
def build_cmd(
    sources: Annotated[Path, typer.Option("--sources", help="SOURCES.toml naming the source roots.")],
    out: Annotated[Path, typer.Option("--out", help="The Hub folder to write.")],
    work: Annotated[Path | None, typer.Option(help="Folder for manifests (default: <out>.work).")] = None,
    scale: Annotated[str, typer.Option(help="'full' (paper budgets) or 'mini'.")] = "full",
    seed: Annotated[int, typer.Option(help="Question generation seed.")] = 42,
    shard_mb: Annotated[int, typer.Option(help="Upper bound of one parquet shard, in MB.")] = 256,
    strict: Annotated[bool, typer.Option(help="Stop at the first bad source row.")] = False,
) -> None:
    """manifests -> questions -> renders -> parquet shards, resources, Lite and the dataset card."""
    from builder.pipeline import build

    info = build(
        load_sources(sources),
        out,
        work_dir=work,
        scale=scale,
        seed=seed,
        strict=strict,
        shard_bytes=shard_mb * 1024 * 1024,
        log=_echo,
    )
    typer.echo(json.dumps(info["counts"]))


@app.command("demo")
def demo_cmd(
    out: Annotated[Path, typer.Option("--out", help="Folder for sources, hub, runs and report.")] = Path(
        "out/demo"
    ),
    limit: Annotated[int, typer.Option(help="Items per task for the tiny VLM runs (0 = all).")] = 40,
    batch_size: Annotated[int, typer.Option(help="Batch size of the tiny VLM runs.")] = 16,
) -> None:
    """The main job on the embedded default: miniature -> Hub folder -> evaluate -> score -> report."""
    from builder.demo import print_summary, run_demo

    summary = run_demo(out, limit=limit or None, batch_size=batch_size, log=_echo)
    print_summary(summary, echo=typer.echo)


@app.command("publish")
def publish_cmd(
    hub_dir: Annotated[Path, typer.Argument(help="A folder written by `build`.")],
    repo: Annotated[str | None, typer.Option("--repo", help="OWNER/NAME of the Hub dataset repo.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate and list; upload nothing.")] = False,
    private: Annotated[bool, typer.Option(help="Create the repo as private.")] = False,
) -> None:
    """Dry run: parse the card, load every config, list files. Real run: create_repo + upload_folder."""
    from builder.hub.publish import PublishError, upload
    from builder.hub.publish import dry_run as do_dry_run

    try:
        if dry_run:
            report = do_dry_run(hub_dir)
            typer.echo(f"configs load: {json.dumps(report['configs'])}")
            typer.echo(f"would upload {len(report['files'])} files, {report['bytes']:,} bytes:")
            for f in report["files"]:
                typer.echo(f"  {f}")
            return
        if not repo:
            raise PublishError("an explicit --repo OWNER/NAME is required for a real upload")
        typer.echo(upload(hub_dir, repo, private=private))
    except PublishError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
