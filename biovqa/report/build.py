"""``biovqa report``: markdown + self-contained HTML + PNGs from scored runs.

Every number printed comes from a ``scorecard.json`` whose path and sha256 the report lists, with
the command that produced the report.
"""

from __future__ import annotations

import base64
import html
import math
import re
from pathlib import Path

import numpy as np

from biovqa.report import plots
from biovqa.report.analysis import cross_model
from biovqa.report.load import ScoredRun, load_runs
from biovqa.tasks import TASKS

TABLE3_TASKS = [t for t in TASKS.values() if t.table3]


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    text = f"{value:.{digits}f}"
    return text.replace("0.", ".", 1) if text.startswith(("0.", "-0.")) and digits == 3 else text


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _table3_columns() -> list[tuple[str, str, str]]:
    """(column label, task id, metric key) in the Table 3 order; C4 random gives d′ and accuracy."""
    cols = []
    for task in TABLE3_TASKS:
        if task.id == "c4.random":
            cols += [("d′", task.id, "headline"), ("acc", task.id, "accuracy")]
        else:
            cols.append((task.name, task.id, "headline"))
    return cols


def scorecard_table(runs: list[ScoredRun]) -> str:
    """Table 3 layout: one row per model, a floor row; best in bold and worst in italics per column."""
    cols = _table3_columns()
    values = [[run.value(t, k) for _, t, k in cols] for run in runs]
    rows = []
    for run, vals in zip(runs, values, strict=True):
        cells = []
        for j, v in enumerate(vals):
            column = [row[j] for row in values if row[j] is not None]
            cell = _fmt(v)
            if v is not None and len(column) > 1 and max(column) != min(column):
                if v == max(column):
                    cell = f"**{cell}**"
                elif v == min(column):
                    cell = f"*{cell}*"
            cells.append(cell)
        rows.append([run.model, *cells])
    floor_row = []
    for _, t, k in cols:
        key = "floor" if k == "headline" else f"floor_{k}"
        value = next((r.value(t, key) for r in runs if r.value(t, key) is not None), None)
        if value is None and k == "headline" and TASKS[t].headline_metric in ("cags", "dprime"):
            value = 0.0  # chance-corrected metrics: Table 3 prints a floor of zero
        floor_row.append(_fmt(value))
    rows.append(["Floor", *floor_row])
    groups = "C1 exact match: phy…com · C2 cags: sal mrp loc nam · C3: cnt rcnt adst rdst lcl rpos view ocr · C4: d′ acc"
    note = (
        "Best per column in bold, worst in italics. The Floor row is the image-blind rule each scorer reports on the "
        "same items; for C2 it is 0, as Table 3 prints for the chance-corrected cags, although under eq. 11–12 "
        "a uniform guess over K options scores 1/K in expectation (b averages the distractors only)."
    )
    return groups + "\n\n" + _table(["model", *[c[0] for c in cols]], rows) + "\n\n" + note


def _pooled(run: ScoredRun, tasks: list[str], key: str) -> float | None:
    num = den = 0.0
    for t in tasks:
        v, n = run.value(t, key), run.value(t, "n")
        if v is not None and n:
            num += v * n
            den += n
    return num / den if den else None


def c1_table(runs: list[ScoredRun]) -> str:
    ranks = [t.id for t in TASKS.values() if t.component == "c1" and t.id != "c1.common_name_mcq"]
    keys = [
        ("EM", "em"),
        ("EM-soft", "em_soft"),
        ("Wu–Palmer", "wup"),
        ("Lin", "lin"),
        ("severity", "severity"),
    ]
    rows = []
    for run in runs:
        vals = []
        for _, key in keys:
            v = _pooled(run, ranks, key)
            if v is None and key == "em":
                v = _pooled(run, ranks, "headline")
            vals.append(_fmt(v))
        rows.append([run.model, *vals, _fmt(run.value("c1.common_name_mcq"))])
    return _table(["model", *[k[0] for k in keys], "MCQ EM"], rows)


def c2_table(runs: list[ScoredRun]) -> str:
    rows = []
    for run in runs:
        for t in (t for t in TASKS.values() if t.component == "c2"):
            if t.id not in run.metrics:
                continue
            lo, hi = run.value(t.id, "cags_ci_low"), run.value(t.id, "cags_ci_high")
            ci = f"{_fmt(lo)}–{_fmt(hi)}" if lo is not None and hi is not None else "—"
            rows.append(
                [
                    run.model,
                    t.id,
                    _fmt(run.value(t.id)),
                    ci,
                    _fmt(run.value(t.id, "em")),
                    _fmt(run.value(t.id, "gs_raw")),
                    _fmt(run.value(t.id, "parse_rate")),
                    _fmt(run.value(t.id, "mismatch_rate"), 4),
                    _fmt(run.value(t.id, "choose_a_rate")),
                ]
            )
    return _table(["model", "task", "cags", "95% CI", "EM", "GS_raw", "parse", "mismatch", "choose-A"], rows)


def c3_table(runs: list[ScoredRun]) -> str:
    rows = []
    for t in (t for t in TASKS.values() if t.component == "c3"):
        for run in runs:
            if t.id not in run.metrics:
                continue
            m = run.metrics[t.id]
            rows.append(
                [
                    t.id,
                    run.model,
                    str(m.get("headline_metric", t.headline_metric)),
                    _fmt(run.value(t.id)),
                    _fmt(run.value(t.id, "floor")),
                    _fmt(run.value(t.id, "lift")),
                    _fmt(run.value(t.id, "parse_rate")),
                    str(m.get("n", "—")),
                ]
            )
    return _table(["task", "model", "metric", "value", "floor", "lift", "parse", "n"], rows)


def c4_table(runs: list[ScoredRun]) -> str:
    rows = []
    for t in ("c4.easy", "c4.random", "c4.hard"):
        for run in runs:
            if t not in run.metrics:
                continue
            rows.append(
                [
                    t.split(".")[1],
                    run.model,
                    "all",
                    _fmt(run.value(t), 3),
                    _fmt(run.value(t, "criterion_c")),
                    _fmt(run.value(t, "accuracy")),
                ]
            )
            per_species = run.metrics[t].get("per_species") or {}
            for species in sorted(per_species):
                m = per_species[species] if isinstance(per_species[species], dict) else {}
                rows.append(
                    [
                        t.split(".")[1],
                        run.model,
                        species,
                        _fmt(m.get("dprime")),
                        _fmt(m.get("criterion_c")),
                        _fmt(m.get("accuracy")),
                    ]
                )
    return _table(["condition", "model", "species", "d′", "c", "accuracy"], rows)


def _complete_matrix(runs: list[ScoredRun]) -> tuple[np.ndarray, list[str], list[str]]:
    tasks = [t for t in TABLE3_TASKS if all(r.value(t.id) is not None for r in runs)]
    matrix = np.array([[r.value(t.id) for t in tasks] for r in runs], dtype=float)
    return matrix, [t.id for t in tasks], [t.component for t in tasks]


def write_report(run_dirs: list[str | Path], out_dir: str | Path, command: str = "") -> dict:
    """Write ``report.md``, ``report.html`` and the PNGs into ``out_dir``; returns what was written."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = load_runs(run_dirs)
    if not runs:
        raise ValueError("no runs given")
    figures: list[tuple[str, Path]] = []

    def add(title: str, path: Path | None) -> None:
        if path is not None:
            figures.append((title, path))

    add("Exact match by rank (rank collapse)", plots.rank_collapse(runs, out_dir / "c1_rank_collapse.png"))
    add("Recognition vs recall", plots.recognition_vs_recall(runs, out_dir / "c1_recognition_recall.png"))
    add(
        "Headline minus floor",
        plots.below_floor(runs, [t.id for t in TABLE3_TASKS], out_dir / "below_floor.png"),
    )
    add("C4 d′ by condition", plots.c4_conditions(runs, out_dir / "c4_conditions.png"))

    sections = [
        "# Bio-VQA report",
        f"Produced by: `{command or 'biovqa report'}`",
        "Every number below comes from these scored files:\n\n"
        + "\n".join(f"- {r.model}: `{r.path}` (sha256 `{r.sha256[:16]}…`)" for r in runs),
        "## Scorecard (Table 3 layout)\n\n" + scorecard_table(runs),
        "## C1 taxonomy (pooled over the eight ranks, item-weighted)\n\n" + c1_table(runs),
        "## C2 attributes\n\n" + c2_table(runs),
        "## C3 spatial: metric beside its image-blind floor\n\n" + c3_table(runs),
        "## C4 re-identification\n\n" + c4_table(runs),
    ]
    below = [
        f"{r.model} on `{t.id}` ({_fmt(r.value(t.id))} < floor {_fmt(r.value(t.id, 'floor'))})"
        for t in TABLE3_TASKS
        for r in runs
        if r.value(t.id) is not None
        and r.value(t.id, "floor") is not None
        and r.value(t.id) < r.value(t.id, "floor")
    ]
    sections.append(
        "## Below the floor\n\n" + ("\n".join(f"- {b}" for b in below) or "No model falls below a floor.")
    )

    cross = None
    matrix, task_ids, comps = _complete_matrix(runs)
    if len(runs) >= 3 and len(task_ids) >= 2:
        cross = cross_model(matrix, task_ids, comps)
        add(
            "Task × task Spearman over models",
            plots.heatmap(
                cross.task_rho, task_ids, "Task agreement over models", out_dir / "task_spearman.png"
            ),
        )
        comp_rows = []
        for i, a in enumerate(cross.component_names):
            cells = []
            for j, _ in enumerate(cross.component_names):
                if i == j:
                    cells.append("—")
                else:
                    p = cross.component_p_holm[i, j]
                    cells.append(f"{_fmt(cross.component_rho[i, j])}{'' if p < 0.05 else '†'}")
            comp_rows.append([a, *cells])
        loadings = sorted(cross.pc1_loadings.items(), key=lambda kv: kv[1])
        sections.append(
            "## Cross-component analysis (§J)\n\n"
            f"{len(runs)} models × {len(task_ids)} tasks (tasks with a score for every model). "
            f"Within-component mean ρ = {_fmt(cross.within_mean)}, across = {_fmt(cross.across_mean)}, "
            f"label-permutation p = {cross.permutation_p:.4f} (10,000 permutations, seed 42).\n\n"
            + _table(["Spearman ρ", *cross.component_names], comp_rows)
            + "\n\n† not significant after Holm correction (α = .05).\n\n"
            f"First principal component: {100 * cross.pc1_share:.1f}% of the variance. Loadings (lowest first):\n\n"
            + _table(["task", "PC1 loading"], [[t, _fmt(v)] for t, v in loadings])
        )
    else:
        sections.append(
            "## Cross-component analysis (§J)\n\nNeeds three or more models with complete scorecards."
        )

    for title, path in figures:
        sections.append(f"### {title}\n\n![{title}]({path.name})")
    markdown = "\n\n".join(sections) + "\n"
    (out_dir / "report.md").write_text(markdown, encoding="utf-8")
    (out_dir / "report.html").write_text(_html(markdown, out_dir), encoding="utf-8")
    return {
        "markdown": out_dir / "report.md",
        "html": out_dir / "report.html",
        "figures": [p for _, p in figures],
        "cross": cross,
    }


def _inline(text: str) -> str:
    text = html.escape(text)
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)\*(?![\w*])", r"<i>\1</i>", text)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", text)


def _html(markdown: str, out_dir: Path) -> str:
    """A small markdown subset to self-contained HTML (tables, headings, lists, embedded PNGs)."""
    body: list[str] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("|"):
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            head, rows = block[0], block[2:]
            body.append("<table><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr>")
            body += ["<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in rows]
            body.append("</table>")
            continue
        if m := re.match(r"!\[(.*)\]\((.*)\)", line):
            data = base64.b64encode((out_dir / m.group(2)).read_bytes()).decode()
            body.append(f'<img alt="{html.escape(m.group(1))}" src="data:image/png;base64,{data}">')
        elif m := re.match(r"(#+) (.*)", line):
            level = len(m.group(1))
            body.append(f"<h{level}>{_inline(m.group(2))}</h{level}>")
        elif line.startswith("- "):
            body.append(f"<li>{_inline(line[2:])}</li>")
        elif line.strip():
            body.append(f"<p>{_inline(line)}</p>")
        i += 1
    style = (
        "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em}"
        "table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 6px}"
        "th{background:#f3f3f3}img{max-width:100%}code{background:#f6f6f6}"
    )
    return f"<!doctype html><html><head><meta charset='utf-8'><title>Bio-VQA report</title><style>{style}</style></head><body>{''.join(body)}</body></html>\n"
