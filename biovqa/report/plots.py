"""Report figures (matplotlib, Agg backend, deterministic metadata-free PNGs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from biovqa.report.load import ScoredRun

C1_RANK_TASKS = [
    "c1.phylum",
    "c1.class",
    "c1.order",
    "c1.family",
    "c1.genus",
    "c1.species",
    "c1.scientific_name",
]
RANK_LABELS = ["phylum", "class", "order", "family", "genus", "species", "sci. name"]


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    _plt().close(fig)
    return path


def rank_collapse(runs: list[ScoredRun], path: Path) -> Path | None:
    """EM by rank for each model, the image-blind floor dashed (the rank collapse, §D.1)."""
    if not any(r.value(t) is not None for r in runs for t in C1_RANK_TASKS):
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4))
    x = np.arange(len(C1_RANK_TASKS))
    for run in runs:
        ys = [run.value(t) for t in C1_RANK_TASKS]
        ax.plot(x, [np.nan if y is None else y for y in ys], marker="o", label=run.model)
    floor = [
        next((r.value(t, "floor") for r in runs if r.value(t, "floor") is not None), None)
        for t in C1_RANK_TASKS
    ]
    if any(f is not None for f in floor):
        ax.plot(x, [np.nan if f is None else f for f in floor], "k--", label="floor (most frequent taxon)")
    ax.set_xticks(x, RANK_LABELS)
    ax.set_ylim(0, 1)
    ax.set_ylabel("exact match")
    ax.set_title("C1: exact match by rank")
    ax.legend(fontsize=7)
    return _save(fig, path)


def recognition_vs_recall(runs: list[ScoredRun], path: Path) -> Path | None:
    """Open common-name EM (recall) against 4-way MCQ EM (recognition), one point per model."""
    pts = [(r.model, r.value("c1.common_name"), r.value("c1.common_name_mcq")) for r in runs]
    pts = [(m, a, b) for m, a, b in pts if a is not None and b is not None]
    if not pts:
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(5, 5))
    for model, recall, recog in pts:
        ax.scatter(recall, recog)
        ax.annotate(model, (recall, recog), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
    ax.axhline(0.25, color="k", ls="--", lw=0.8, label="MCQ chance .25")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("recall: open common name EM")
    ax.set_ylabel("recognition: 4-way MCQ EM")
    ax.set_title("Recognition exceeds recall")
    ax.legend(fontsize=7)
    return _save(fig, path)


def below_floor(runs: list[ScoredRun], tasks: list[str], path: Path) -> Path | None:
    """Headline minus floor per task and model; bars below zero are tasks where a model loses to the floor."""
    rows = []
    for task in tasks:
        for run in runs:
            h, f = run.value(task), run.value(task, "floor")
            if h is not None and f is not None:
                rows.append((task, run.model, h - f))
    if not rows:
        return None
    plt = _plt()
    models = [r.model for r in runs]
    task_list = [t for t in tasks if any(r[0] == t for r in rows)]
    fig, ax = plt.subplots(figsize=(min(14, max(6, 0.25 * len(task_list) * max(1, len(models)))), 4))
    width = 0.8 / max(1, len(models))
    for k, model in enumerate(models):
        vals = [next((d for t, m, d in rows if t == task and m == model), np.nan) for task in task_list]
        ax.bar(np.arange(len(task_list)) + k * width, vals, width, label=model)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(
        np.arange(len(task_list)) + 0.4 - width / 2,
        task_list,
        rotation=45,
        ha="right",
        fontsize=8,
    )
    ax.set_ylabel("headline − floor")
    ax.set_title("Where models fall below the image-blind floor")
    ax.legend(fontsize=7)
    return _save(fig, path)


def c4_conditions(runs: list[ScoredRun], path: Path) -> Path | None:
    """C4 d′ under the easy, random and hard conditions."""
    conds = ["c4.easy", "c4.random", "c4.hard"]
    if not any(r.value(c) is not None for r in runs for c in conds):
        return None
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6, 4))
    width = 0.8 / max(1, len(runs))
    for k, run in enumerate(runs):
        vals = [run.value(c) for c in conds]
        ax.bar(np.arange(3) + k * width, [np.nan if v is None else v for v in vals], width, label=run.model)
    ax.axhline(0, color="k", lw=0.8)
    ax.set_xticks(np.arange(3) + 0.4 - width / 2, ["easy", "random", "hard"])
    ax.set_ylabel("d′")
    ax.set_title("C4: discriminability by condition")
    ax.legend(fontsize=7)
    return _save(fig, path)


def heatmap(matrix: np.ndarray, labels: list[str], title: str, path: Path) -> Path:
    """A labelled correlation heatmap."""
    plt = _plt()
    n = len(labels)
    fig, ax = plt.subplots(figsize=(max(4, 0.35 * n + 2), max(3.5, 0.35 * n + 1.5)))
    im = ax.imshow(matrix, vmin=-1, vmax=1, cmap="RdBu_r")
    ax.set_xticks(range(n), labels, rotation=90, fontsize=7)
    ax.set_yticks(range(n), labels, fontsize=7)
    fig.colorbar(im, ax=ax, shrink=0.8, label="Spearman ρ")
    ax.set_title(title)
    return _save(fig, path)
