"""The main job on the embedded default: ``python -m builder demo --out out/demo``.

1. write the synthetic miniature of every source (``sources/`` + SOURCES.toml);
2. build the Hub folder from it (``hub/``: c1…c4, lite, resources, card);
3. evaluate the image-blind floors, a tiny offline VLM in text-only *blind* mode and the same VLM
   with images (``runs/``), each scored at the end;
4. write the report (``report/``) and print the Lite scorecard of each run and where the report is.

Everything runs offline on CPU in a few minutes. The tiny VLM has random weights: its numbers show
the machinery working, not a model's ability.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path


def run_demo(
    out: Path, *, limit: int | None = 40, batch_size: int = 16, log: Callable[[str], None] = print
) -> dict:
    """Run the whole pipeline into ``out``; returns the paths it wrote."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_EVALUATE_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from biovqa.run.runner import EvalSettings, run_eval
    from biovqa.sources import load_sources
    from builder import pipeline, tiny_vlms

    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    log(f"[demo] 1/4 synthetic miniature of every source -> {out / 'sources'}")
    sources_toml = pipeline.sample(out / "sources", log=log)
    log(f"[demo] 2/4 Hub folder (c1 c2 c3 c4 lite) -> {out / 'hub'}")
    pipeline.build(load_sources(sources_toml), out / "hub", work_dir=out / "manifests", scale="mini", log=log)

    model_dir = out / "models" / "tiny-llava"
    if not (model_dir / "config.json").is_file():
        tiny_vlms.build_llava(model_dir)
    runs = {
        "floor": EvalSettings(
            model="floor",
            dataset=str(out / "hub"),
            out=str(out / "runs" / "floor"),
            label="floor",
            progress=False,
        ),
        "tiny-llava (blind)": EvalSettings(
            model=str(model_dir),
            dataset=str(out / "hub"),
            out=str(out / "runs" / "tiny-llava-blind"),
            blind=True,
            label="tiny-llava (blind)",
            limit=limit,
            batch_size=batch_size,
            progress=False,
        ),
        "tiny-llava": EvalSettings(
            model=str(model_dir),
            dataset=str(out / "hub"),
            out=str(out / "runs" / "tiny-llava"),
            sources=str(sources_toml),
            label="tiny-llava",
            limit=limit,
            batch_size=batch_size,
            progress=False,
        ),
    }
    log(f"[demo] 3/4 evaluate: {', '.join(runs)} (Lite; the tiny VLM on the first {limit} items per task)")
    run_dirs: dict[str, Path] = {}
    for name, settings in runs.items():
        started = time.perf_counter()
        result = run_eval(settings)
        run_dirs[name] = result.run_dir
        if result.scorecard is None:
            raise RuntimeError(f"{name}: scoring failed: {result.score_message}")
        log(
            f"[demo]   {name}: {result.n_items} items in {time.perf_counter() - started:.1f} s -> {result.run_dir}"
        )

    log(f"[demo] 4/4 report -> {out / 'report'}")
    from biovqa.report.build import write_report

    written = write_report(
        list(run_dirs.values()),
        out / "report",
        command="biovqa report " + " ".join(str(p) for p in run_dirs.values()) + f" --out {out / 'report'}",
    )
    summary = {
        "hub": str(out / "hub"),
        "runs": {k: str(v) for k, v in run_dirs.items()},
        "report_html": str(written["html"]),
        "report_md": str(written["markdown"]),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    (out / "demo.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def print_summary(summary: dict, echo: Callable[[str], None] = print) -> None:
    """Print each run's Table 3 scorecard and where the report is."""
    for name, run_dir in summary["runs"].items():
        md = Path(run_dir) / "scores" / "scorecard.md"
        echo(f"\n=== {name} ===")
        table = [line for line in md.read_text().splitlines() if line.startswith("|")][:4]
        echo("\n".join(table))
    echo(f"\nReport: {summary['report_html']}  (markdown: {summary['report_md']})")
    echo(f"Done in {summary['seconds']} s.")
