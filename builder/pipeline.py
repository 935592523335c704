"""The build pipeline: sources -> manifests -> questions (+ renders) -> Hub folder -> Lite -> card.

Each component module in :mod:`builder.components` exposes ``SOURCES``, ``synth``, ``manifests`` and
``questions`` (see CONTRIBUTING.md). This module only orchestrates them.
"""

from __future__ import annotations

import importlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from biovqa.schema import COMPONENTS, CONFIGS
from builder.hub.card import render_card
from builder.hub.lite import PER_TASK, SEED, select_lite, stratum_of
from builder.hub.writer import DEFAULT_SHARD_BYTES, ConfigWriter, iter_config

COMPONENT_MODULES = ("c1", "c2", "c3", "c4")

LITE_RULE = (
    f"{PER_TASK} questions per task, stratified by the task's strata (difficulty tier, source dataset, "
    "condition) with largest-remainder allocation, items ranked by sha256(seed:qid) inside a stratum; "
    "tasks with fewer items contribute all of them"
)


def component_modules(log: Callable[[str], None] = print) -> list[tuple[str, ModuleType]]:
    """The importable component modules, in order; a missing one is reported, not fatal."""
    found = []
    for name in COMPONENT_MODULES:
        try:
            found.append((name, importlib.import_module(f"builder.components.{name}")))
        except ModuleNotFoundError as exc:
            if exc.name != f"builder.components.{name}":
                raise
            log(f"[builder] component {name}: not available in this checkout ({exc.name})")
    return found


def write_sources_toml(out_root: Path, roots: dict[str, str]) -> Path:
    """Write SOURCES.toml naming each source folder relative to ``out_root``."""
    lines = ["# Source roots of this folder (relative paths resolve against this file).", "[sources]"]
    lines += [f'{key} = "{value}"' for key, value in sorted(roots.items())]
    path = out_root / "SOURCES.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def sample(out_root: Path, seed: int = SEED, log: Callable[[str], None] = print) -> Path:
    """Write the synthetic miniature of every source and its SOURCES.toml; returns the TOML path."""
    out_root.mkdir(parents=True, exist_ok=True)
    roots: dict[str, str] = {}
    for name, module in component_modules(log):
        written = module.synth(out_root, seed=seed)
        roots.update(written)
        log(f"[builder] sample {name}: {', '.join(sorted(written)) or 'nothing'}")
    return write_sources_toml(out_root, roots)


def _present(module: ModuleType, roots: dict[str, Path]) -> dict[str, Path]:
    return {k: roots[k] for k in module.SOURCES if k in roots}


def manifests(
    roots: dict[str, Path],
    out_dir: Path,
    *,
    strict: bool = False,
    scale: str = "full",
    log: Callable[[str], None] = print,
) -> dict:
    """Run every component's manifests stage on the sources it finds; returns the summaries."""
    summaries: dict[str, dict] = {}
    for name, module in component_modules(log):
        present = _present(module, roots)
        if not present:
            log(
                f"[builder] manifests {name}: none of its sources ({', '.join(module.SOURCES)}) named; skipped"
            )
            continue
        summaries[name] = module.manifests(present, out_dir / name, strict=strict, scale=scale)
        log(f"[builder] manifests {name}: {json.dumps(_short(summaries[name]), default=str)}")
    (out_dir).mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summaries, indent=2, sort_keys=True, default=str) + "\n")
    return summaries


def _short(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if not isinstance(v, list | dict)} or summary


def build(
    roots: dict[str, Path],
    hub_dir: Path,
    *,
    work_dir: Path | None = None,
    scale: str = "full",
    seed: int = SEED,
    strict: bool = False,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    log: Callable[[str], None] = print,
) -> dict:
    """Build the Hub folder: all configs, ``resources/``, ``lite/`` and the README card."""
    hub_dir.mkdir(parents=True, exist_ok=True)
    work_dir = work_dir or hub_dir.parent / f"{hub_dir.name}.work"
    summaries = manifests(roots, work_dir / "manifests", strict=strict, scale=scale, log=log)

    writers = {cfg: ConfigWriter(hub_dir, cfg, shard_bytes=shard_bytes) for cfg in COMPONENTS}
    strata: list[tuple[str, str, tuple[str, ...]]] = []
    embedders: set[str] = set()
    for name, module in component_modules(lambda _m: None):
        if name not in summaries:
            continue
        n_before = sum(w.n_rows for w in writers.values())
        for rec in module.questions(
            work_dir / "manifests" / name, _present(module, roots), hub_dir, seed=seed
        ):
            writers[rec["component"]].add(rec)
            strata.append((rec["qid"], rec["task"], stratum_of(rec)))
            if rec.get("c4") and rec["c4"].get("embedder"):
                embedders.add(rec["c4"]["embedder"])
        log(f"[builder] questions {name}: {sum(w.n_rows for w in writers.values()) - n_before} records")
    for writer in writers.values():
        writer.close()

    lite_qids, lite_report = select_lite(strata)
    lite_set = set(lite_qids)
    lite_writer = ConfigWriter(hub_dir, "lite", shard_bytes=shard_bytes)
    for cfg in COMPONENTS:
        for rec in iter_config(hub_dir, cfg):
            if rec["qid"] in lite_set:
                lite_writer.add(rec)
    lite_writer.close()
    (hub_dir / "lite").mkdir(exist_ok=True)
    (hub_dir / "lite" / "qids.txt").write_text("".join(q + "\n" for q in lite_qids))
    (hub_dir / "lite" / "report.json").write_text(json.dumps(lite_report, indent=2, sort_keys=True) + "\n")

    counts = {cfg: w.n_rows for cfg, w in writers.items()} | {"lite": lite_writer.n_rows}
    nbytes = {
        cfg: sum(p.stat().st_size for p in (hub_dir / "data" / cfg).glob("*.parquet")) for cfg in CONFIGS
    }
    task_counts: dict[str, int] = {}
    for w in writers.values():
        task_counts.update(w.tasks)
    short = [t for t, r in lite_report.items() if r["available"] < PER_TASK]
    info = {
        "seed": seed,
        "scale": scale,
        "sources_used": sorted(roots),
        "embedder": ", ".join(sorted(embedders)) or "no C4 pairs in this build",
        "lite_rule": LITE_RULE
        + (f". Tasks with fewer than {PER_TASK} items here: {', '.join(short)}" if short else ""),
    }
    for summary in summaries.values():
        for key in ("c2_certainty", "vernacular", "embedder"):
            if key in summary and isinstance(summary[key], str):
                info[key] = summary[key]
    card = render_card(
        counts=counts, nbytes=nbytes, task_counts=task_counts, lite_counts=lite_writer.tasks, info=info
    )
    (hub_dir / "README.md").write_text(card, encoding="utf-8")
    build_info = {"counts": counts, "tasks": task_counts, "lite": lite_report, "info": info}
    (hub_dir / "build_info.json").write_text(
        json.dumps(build_info, indent=2, sort_keys=True, default=str) + "\n"
    )
    log(f"[builder] built {hub_dir}: " + ", ".join(f"{c}={n}" for c, n in counts.items()))
    return build_info


def clean(path: Path) -> None:
    """Remove a previous build folder (used by `build --clean`)."""
    if path.exists():
        shutil.rmtree(path)
