"""Predictions + questions -> per-item scored parquet + scorecard (``biovqa score``).

Pipeline: read a config's question parquet without the ``image`` column (pyarrow, no ``datasets``),
read predictions (a run directory per Contract 7 or a plain JSONL of ``{"qid", "response"}``), join
by qid, score each task with :func:`biovqa.metrics.score_task`, and write

* ``OUT/items/<task>.parquet`` — one row per question: qid, raw response and the scorer's per-item
  columns (§K.6);
* ``OUT/scorecard.json`` — ``{task_id: {"headline", "headline_metric", "parse_rate", "n", …}}``;
* ``OUT/scorecard.md`` — the paper's Table 3 layout (model row + Floor row) and a per-task table;
* ``OUT/summary.json`` — counts of every exclusion: unanswered questions, predictions for unknown
  qids, unreadable prediction lines, tasks whose scorer failed.

Everything written is a pure function of the inputs (fixed bootstrap seeds, sorted tasks), so the same
inputs give byte-identical files. Timings are returned and printed, never written.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from biovqa.metrics.common import TaskScore

#: Table 3 columns: (label, task id, metric key); component groups in the paper's order.
TABLE3_GROUPS: tuple[tuple[str, tuple[tuple[str, str, str], ...]], ...] = (
    (
        "C1 (exact match)",
        tuple(
            (short, f"c1.{rank}", "headline")
            for short, rank in (
                ("phy", "phylum"),
                ("cls", "class"),
                ("ord", "order"),
                ("fam", "family"),
                ("gen", "genus"),
                ("spc", "species"),
                ("sci", "scientific_name"),
                ("com", "common_name"),
            )
        ),
    ),
    (
        "C2 (cags)",
        (
            ("sal", "c2.salience", "headline"),
            ("mrp", "c2.morphology", "headline"),
            ("loc", "c2.localization", "headline"),
            ("nam", "c2.naming", "headline"),
        ),
    ),
    (
        "C3",
        tuple(
            (short, f"c3.{name}", "headline")
            for short, name in (
                ("cnt", "counting"),
                ("rcnt", "relative_counting"),
                ("adst", "absolute_distance"),
                ("rdst", "relative_distance"),
                ("lcl", "localization"),
                ("rpos", "relative_position"),
                ("view", "viewpoint"),
                ("ocr", "ocr"),
            )
        ),
    ),
    ("C4 (random)", (("d′", "c4.random", "headline"), ("acc", "c4.random", "accuracy"))),
)
#: metric key of the Floor row for each Table 3 metric key
_FLOOR_KEY = {"headline": "floor", "accuracy": "floor_accuracy"}

_RANK_SHARD = re.compile(r"rank-(\d+)")
_SHARD = re.compile(r"shard-(\d+)")
_PRED_SCHEMA = pa.schema([("qid", pa.string()), ("response", pa.string())])


# --------------------------------------------------------------------------------------- questions


def resolve_dataset(dataset: str | Path, config: str) -> Path:
    """A local Hub-shaped folder for ``dataset`` (a folder, or a Hub id fetched with snapshot_download)."""
    from biovqa.data import dataset_folder

    return dataset_folder(dataset, config)


def read_questions_by_task(folder: Path, config: str, split: str = "test") -> dict[str, pa.Table]:
    """The question rows of a config without ``image``, split by task (file order kept within a task).

    Each shard is read with the ``image`` column pruned and split by task right away, so no full-table
    copy is ever made; duplicate and null qids raise ``ValueError`` naming the config.
    """
    from biovqa.data import config_files
    from biovqa.schema import QUESTION_SCHEMA

    columns = [c for c in QUESTION_SCHEMA.names if c != "image"]
    pieces: dict[str, list[pa.Table]] = {}
    for path in config_files(folder, config, split):
        try:
            schema_names = pq.read_schema(path).names
        except Exception as exc:
            raise ValueError(f"{path}: not a readable parquet file: {exc}") from None
        missing = [c for c in columns if c not in schema_names]
        if missing:
            raise ValueError(f"{path}: missing question columns {missing}")
        table = pq.read_table(path, columns=columns)
        for name, part in _split_by_task(table, str(path)).items():
            pieces.setdefault(name, []).append(part)
    by_task = {name: pa.concat_tables(parts) for name, parts in sorted(pieces.items())}
    qids = pa.chunked_array([c for t in by_task.values() for c in t.column("qid").chunks], pa.string())
    if qids.null_count:
        raise ValueError(f"{folder}/data/{config}: {qids.null_count} question rows have a null qid")
    if pc.count_distinct(qids).as_py() != len(qids):
        raise ValueError(f"{folder}/data/{config}: duplicate qids, e.g. {_duplicates(qids)[:5]}")
    return by_task


def read_questions(folder: Path, config: str, split: str = "test") -> pa.Table:
    """Every question row of a config without the ``image`` column, grouped by task."""
    by_task = read_questions_by_task(folder, config, split)
    return pa.concat_tables(list(by_task.values()))


def _split_by_task(table: pa.Table, where: str = "questions") -> dict[str, pa.Table]:
    """Rows of each task (order kept): zero-copy slices when tasks are contiguous, else one take."""
    task_col = table.column("task")
    if task_col.null_count:
        raise ValueError(f"{where}: {task_col.null_count} question rows have no task")
    if table.num_rows == 0:
        return {}
    encoded = task_col.combine_chunks().dictionary_encode()
    names = encoded.dictionary.to_pylist()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    if len(starts) == len(names):  # each task one contiguous run (shards written in qid order)
        stops = np.r_[starts[1:], len(codes)]
        return {names[codes[a]]: table.slice(a, b - a) for a, b in zip(starts, stops, strict=True)}
    order = np.argsort(codes, kind="stable")
    grouped = table.take(pa.array(order))
    bounds = np.r_[0, np.cumsum(np.bincount(codes, minlength=len(names)))]
    return {names[k]: grouped.slice(bounds[k], bounds[k + 1] - bounds[k]) for k in range(len(names))}


# ------------------------------------------------------------------------------------- predictions


@dataclass
class Predictions:
    """Parsed prediction lines: qids and raw responses (None = null reply), plus what was rejected."""

    qids: pa.ChunkedArray
    responses: pa.ChunkedArray
    files: list[Path]
    bad_lines: list[str] = field(default_factory=list)
    n_bad_lines: int = 0
    model: str | None = None


def prediction_files(path: Path) -> tuple[list[Path], dict]:
    """The JSONL files of a run directory (Contract 7, ordered by rank then shard) or a single JSONL file."""
    path = Path(path)
    if path.is_file():
        return [path], {}
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: no such predictions file or run directory")
    if not (path / "run.json").is_file():  # an eval --out folder holding one cache-key run folder
        subs = sorted(p.parent for p in path.glob("*/run.json"))
        if len(subs) > 1:
            names = ", ".join(p.name for p in subs)
            raise ValueError(f"{path}: holds several runs (cache keys {names}); name one of them")
        if subs:
            path = subs[0]
    run_json = path / "run.json"
    meta: dict = {}
    if run_json.is_file():
        try:
            meta = json.loads(run_json.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{run_json}: not valid JSON ({exc})") from None
    files = list((path / "predictions").glob("rank-*/shard-*.jsonl"))
    if not files:
        files = list(path.glob("*.jsonl"))
    if not files:
        raise FileNotFoundError(f"{path}: no predictions/rank-*/shard-*.jsonl (Contract 7) and no *.jsonl")

    def order(p: Path) -> tuple[int, int, str]:
        r = _RANK_SHARD.search(p.parent.name)
        s = _SHARD.search(p.name)
        return (int(r.group(1)) if r else -1, int(s.group(1)) if s else -1, p.name)

    return sorted(files, key=order), meta


def _read_jsonl_fast(path: Path) -> pa.Table | None:
    """pyarrow's JSON reader (multi-threaded C++); None when the file needs the line-by-line reader."""
    import pyarrow.json as pj

    if path.stat().st_size == 0:
        return pa.table({"qid": pa.array([], pa.string()), "response": pa.array([], pa.string())})
    try:
        table = pj.read_json(
            path,
            read_options=pj.ReadOptions(block_size=1 << 24),
            parse_options=pj.ParseOptions(explicit_schema=_PRED_SCHEMA, unexpected_field_behavior="ignore"),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    table = table.select(["qid", "response"]) if "qid" in table.column_names else None
    if table is None or "response" not in table.column_names or table.column("qid").null_count:
        return None
    return table


def _read_jsonl_slow(path: Path, errors: list[str]) -> tuple[pa.Table, int]:
    """Line-by-line reader that names every bad line (file:line: reason) and keeps the good ones."""
    qids: list[str] = []
    responses: list[str | None] = []
    n_bad = 0
    with open(path, encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            reason = None
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                obj, reason = None, f"invalid JSON ({exc.msg})"
            if reason is None and not isinstance(obj, dict):
                reason = "not a JSON object"
            elif reason is None and not isinstance(obj.get("qid"), str):
                reason = "missing or non-string 'qid'"
            elif reason is None and "response" not in obj:
                reason = "missing 'response'"
            elif reason is None and not (obj["response"] is None or isinstance(obj["response"], str)):
                reason = f"'response' is {type(obj['response']).__name__}, not a string or null"
            if reason is not None:
                n_bad += 1
                if len(errors) < 100:
                    errors.append(f"{path}:{lineno}: {reason}")
                continue
            qids.append(obj["qid"])
            responses.append(obj["response"])
    return pa.table({"qid": pa.array(qids, pa.string()), "response": pa.array(responses, pa.string())}), n_bad


def read_predictions(path: str | Path) -> Predictions:
    """Read predictions; duplicate qids raise ``ValueError`` naming them, bad lines are counted and listed."""
    files, meta = prediction_files(Path(path))
    tables, errors, n_bad = [], [], 0
    for f in files:
        t = _read_jsonl_fast(f)
        if t is None:
            t, bad = _read_jsonl_slow(f, errors)
            n_bad += bad
        tables.append(t)
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    qids = table.column("qid")
    if table.num_rows and pc.count_distinct(qids).as_py() != table.num_rows:
        dups = _duplicates(qids)
        where = ", ".join(str(f) for f in files[:5]) + (" …" if len(files) > 5 else "")
        raise ValueError(
            f"predictions hold {len(dups)} duplicate qid(s) (in {where}), e.g. {dups[:5]}; "
            "each question must have exactly one prediction"
        )
    model = (meta.get("model_spec") or meta.get("model")) if isinstance(meta, dict) else None
    return Predictions(qids, table.column("response"), files, errors, n_bad, model)


def _duplicates(qids: pa.ChunkedArray | pa.Array) -> list[str]:
    counts = pc.value_counts(qids)
    mask = pc.greater(counts.field("counts"), 1)
    return sorted(counts.field("values").filter(mask).to_pylist())


# ------------------------------------------------------------------------------------------ scoring


@dataclass
class ScoreResult:
    """Per-task scores plus the pipeline's counts; ``timings``/``phases`` (seconds) are never written."""

    scores: dict[str, TaskScore]
    scorecard: dict[str, dict]
    summary: dict[str, Any]
    qids: dict[str, list[str]]
    responses: dict[str, list[str | None]]
    timings: dict[str, float] = field(default_factory=dict)
    phases: dict[str, float] = field(default_factory=dict)


def join_responses(questions: pa.Table | pa.ChunkedArray, preds: Predictions) -> tuple[pa.Array, dict]:
    """Responses aligned with the question rows (null where unanswered) and the join's counts.

    ``questions`` is the question table or just its qid column.
    """
    q_col = questions if isinstance(questions, pa.ChunkedArray | pa.Array) else questions.column("qid")
    q_qids = q_col.combine_chunks() if isinstance(q_col, pa.ChunkedArray) else q_col
    p_qids = preds.qids.combine_chunks() if len(preds.qids) else pa.array([], pa.string())
    idx = pc.index_in(q_qids, value_set=p_qids)
    if len(p_qids):
        responses = pc.take(preds.responses.combine_chunks(), idx)
    else:
        responses = pa.nulls(len(q_qids), pa.string())
    n_missing = idx.null_count
    # qids are unique on both sides, so every matched prediction matches one question
    n_unknown = len(p_qids) - (len(q_qids) - n_missing)
    examples: list[str] = []
    if n_unknown:
        unknown = p_qids.filter(pc.invert(pc.is_in(p_qids, value_set=q_qids)))
        examples = sorted(unknown.to_pylist())[:10]
    counts = {
        "n_questions": len(q_qids),
        "n_predictions": len(p_qids),
        "n_unanswered": int(n_missing),
        "n_null_responses": int(responses.null_count - n_missing),
        "n_unknown_predictions": int(n_unknown),
        "unknown_prediction_examples": examples,
        "n_bad_prediction_lines": preds.n_bad_lines,
        "bad_prediction_lines": preds.bad_lines[:20],
    }
    return responses, counts


def _c1_resources(folder: Path | None) -> tuple[Any, str | None]:
    if folder is None or not (folder / "resources").is_dir():
        return None, None
    try:
        from biovqa.taxonomy import load_resources
    except ImportError as exc:
        return None, f"biovqa.taxonomy.load_resources unavailable: {exc}"
    try:
        return load_resources(folder), None
    except Exception as exc:
        return None, f"{folder / 'resources'}: {type(exc).__name__}: {exc}"


def score_tables(
    questions: pa.Table | dict[str, pa.Table],
    preds: Predictions,
    dataset_folder: Path | None = None,
    tasks: Iterable[str] | None = None,
    items_dir: Path | None = None,
) -> ScoreResult:
    """Score every task present in ``questions`` (or only ``tasks``); a failing scorer is reported, not fatal.

    ``questions`` is a table or, from :func:`read_questions_by_task`, a dict of per-task tables, which is
    emptied as tasks are scored so their memory is released. With ``items_dir`` each task's per-item
    parquet is written as soon as it is scored and its Python columns are dropped.
    """
    from biovqa.metrics import score_task

    by_task = _split_by_task(questions) if isinstance(questions, pa.Table) else questions
    names = sorted(by_task)
    qid_col = pa.chunked_array([c for n in names for c in by_task[n].column("qid").chunks], pa.string())
    responses, summary = join_responses(qid_col, preds)
    del qid_col
    offsets = dict(zip(names, np.r_[0, np.cumsum([by_task[n].num_rows for n in names])], strict=False))
    wanted_set = None if tasks is None else set(tasks)
    wanted = [t for t in names if wanted_set is None or t in wanted_set or t.split(".")[0] in wanted_set]
    resources, resource_error = (None, None)
    if any(t.startswith("c1.") for t in wanted):
        resources, resource_error = _c1_resources(dataset_folder)
    if items_dir is not None:
        Path(items_dir).mkdir(parents=True, exist_ok=True)
    scores: dict[str, TaskScore] = {}
    scorecard: dict[str, dict] = {}
    task_qids: dict[str, list[str]] = {}
    task_resp: dict[str, list[str | None]] = {}
    timings: dict[str, float] = {}
    failures: dict[str, str] = {}
    items_seconds = 0.0
    for task in wanted:
        t0 = time.perf_counter()
        if items_dir is not None:  # never leave a stale file of an earlier run beside this run's outputs
            (Path(items_dir) / f"{task}.parquet").unlink(missing_ok=True)
        sub = by_task.pop(task) if isinstance(questions, dict) else by_task[task]
        resp = responses.slice(int(offsets[task]), sub.num_rows).to_pylist()
        n_unanswered = sum(r is None for r in resp)
        try:
            if task.startswith("c1.") and resource_error:
                # resources/ exists but cannot be loaded: fail the C1 tasks, never score them degraded
                raise RuntimeError(f"C1 resources unusable: {resource_error}")
            result = score_task(task, sub, resp, resources if task.startswith("c1.") else None)
        except Exception as exc:
            msg = f"{type(exc).__name__}: {exc}"
            failures[task] = msg
            scorecard[task] = {
                "headline": None,
                "headline_metric": _headline_metric(task),
                "parse_rate": None,
                "n": sub.num_rows,
                "n_unanswered": n_unanswered,
                "error": msg,
            }
            timings[task] = time.perf_counter() - t0
            continue
        metrics = dict(result.metrics)
        metrics.setdefault("n_unanswered", n_unanswered)
        scorecard[task] = _jsonable(metrics)
        qids = sub.column("qid").to_pylist()
        if items_dir is not None:
            t_items = time.perf_counter()
            table = items_table(task, qids, resp, result)
            pq.write_table(table, Path(items_dir) / f"{task}.parquet", compression="zstd")
            result = TaskScore(items={}, metrics=result.metrics)
            items_seconds += time.perf_counter() - t_items
        else:
            task_qids[task], task_resp[task] = qids, resp
        scores[task] = result
        timings[task] = time.perf_counter() - t0
    summary["tasks"] = wanted
    summary["failed_tasks"] = failures
    if resource_error:
        summary["c1_resources_error"] = resource_error
    out = ScoreResult(scores, scorecard, summary, task_qids, task_resp, timings)
    out.phases["items parquet (within tasks)"] = items_seconds
    return out


def _headline_metric(task: str) -> str | None:
    try:
        from biovqa.tasks import get_task

        return get_task(task).headline_metric
    except (ImportError, KeyError):
        return None


def _jsonable(obj: Any) -> Any:
    """Plain JSON values: numpy scalars/arrays unwrapped, NaN/inf as None, tuples as lists."""
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return [_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, np.generic):
        obj = obj.item()
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if obj is None or isinstance(obj, bool | int | float | str):
        return obj
    return str(obj)


# ------------------------------------------------------------------------------------------ writing


def items_table(task: str, qids: list[str], responses: list[str | None], score: TaskScore) -> pa.Table:
    """The per-item parquet table of one task: qid, task, response, then the scorer's columns."""
    columns: dict[str, pa.Array] = {
        "qid": pa.array(qids, pa.string()),
        "task": pa.array([task] * len(qids), pa.string()),
        "response": pa.array(responses, pa.string()),
    }
    for name, values in score.items.items():
        if name in columns:
            name = f"item_{name}"
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            # mixed per-item types (e.g. a list or a number): keep them, JSON-encoded
            columns[name] = pa.array(
                [None if v is None else json.dumps(_jsonable(v)) for v in values], pa.string()
            )
    return pa.table(columns)


def write_outputs(result: ScoreResult, out: str | Path, model: str = "model") -> Path:
    """Write items/<task>.parquet, scorecard.json, scorecard.md and summary.json under ``out``."""
    out = Path(out)
    (out / "items").mkdir(parents=True, exist_ok=True)
    for task, score in result.scores.items():
        if task not in result.qids:  # already written by score_tables(items_dir=...)
            continue
        table = items_table(task, result.qids[task], result.responses[task], score)
        pq.write_table(table, out / "items" / f"{task}.parquet", compression="zstd")
    (out / "scorecard.json").write_text(
        json.dumps(result.scorecard, indent=2, ensure_ascii=False, allow_nan=False) + "\n", encoding="utf-8"
    )
    (out / "summary.json").write_text(
        json.dumps(_jsonable(result.summary), indent=2, ensure_ascii=False, allow_nan=False) + "\n",
        encoding="utf-8",
    )
    (out / "scorecard.md").write_text(render_scorecard_md(result.scorecard, model), encoding="utf-8")
    return out


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    text = f"{float(value):.3f}"
    if text.startswith("0."):
        return text[1:]
    if text.startswith("-0."):
        return "−" + text[2:]
    return text.replace("-", "−")


def _floor(task: str, metrics: dict, key: str) -> Any:
    value = metrics.get(_FLOOR_KEY.get(key, ""))
    if value is None and key == "headline" and task.startswith("c2."):
        return 0.0  # cags is chance-corrected: the floor is 0 by construction (Table 3)
    return value


def render_scorecard_md(scorecard: dict[str, dict], model: str = "model") -> str:
    """Markdown scorecard: Table 3 layout (model + Floor rows) and one line per scored task."""
    labels = [label for _, cols in TABLE3_GROUPS for label, _, _ in cols]
    group_row = []
    for group, cols in TABLE3_GROUPS:
        group_row += [group] + [""] * (len(cols) - 1)
    model_row, floor_row = [], []
    for _, cols in TABLE3_GROUPS:
        for _, task, key in cols:
            m = scorecard.get(task) or {}
            model_row.append(_fmt(m.get(key)))
            floor_row.append(_fmt(_floor(task, m, key)) if m else "—")
    lines = [
        f"# Bio-VQA scorecard: {model}",
        "",
        "Table 3 layout: C1 exact match, C2 cags, C3 one headline per task, C4 d′ and accuracy under random "
        "pairing. Floor: the image-blind rule on the same items. — : task not scored.",
        "",
        "| Model | " + " | ".join(group_row) + " |",
        "| --- | " + " | ".join("---" for _ in labels) + " |",
        "| | " + " | ".join(labels) + " |",
        f"| {model} | " + " | ".join(model_row) + " |",
        "| Floor | " + " | ".join(floor_row) + " |",
        "",
        "## Every scored task",
        "",
        "| task | headline metric | headline | parse rate | n | unanswered | note |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for task in sorted(scorecard):
        m = scorecard[task]
        note = m.get("error", "")
        lines.append(
            f"| {task} | {m.get('headline_metric') or '—'} | {_fmt(m.get('headline'))} | "
            f"{_fmt(m.get('parse_rate'))} | {m.get('n', '—')} | {m.get('n_unanswered', '—')} | {note} |"
        )
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------------------- entry point


def _timed(fn, *args):
    t0 = time.perf_counter()
    return fn(*args), time.perf_counter() - t0


def score(
    dataset: str | Path,
    config: str,
    predictions: str | Path,
    out: str | Path,
    tasks: Iterable[str] | None = None,
    model: str | None = None,
    split: str = "test",
) -> ScoreResult:
    """The whole pipeline behind ``biovqa score``: read, join, score every task, write ``out``."""
    from concurrent.futures import ThreadPoolExecutor

    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    folder = resolve_dataset(dataset, config)
    # both readers spend their time in pyarrow's C++ (GIL released): overlap them
    with ThreadPoolExecutor(max_workers=2) as pool:
        fut_preds = pool.submit(_timed, read_predictions, predictions)
        fut_questions = pool.submit(_timed, read_questions_by_task, folder, config, split)
        preds, phases["read predictions"] = fut_preds.result()
        by_task, phases["read questions"] = fut_questions.result()
    phases["read (both, overlapped)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = score_tables(by_task, preds, folder, tasks, items_dir=Path(out) / "items")
    phases["join + score + items"] = time.perf_counter() - t0
    phases.update(result.phases)
    t0 = time.perf_counter()
    name = model or preds.model or Path(predictions).stem
    write_outputs(result, out, name)
    phases["write scorecards"] = time.perf_counter() - t0
    result.phases = phases
    return result
