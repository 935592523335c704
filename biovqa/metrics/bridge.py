"""Score loose per-item records (the ``evaluate`` metric modules' inputs) with the real task scorers.

An ``evaluate`` module receives columns (predictions, references, options, family, a JSON ``item``
with any further question fields). :func:`score_records` turns them into question rows
(:data:`biovqa.schema.QUESTION_SCHEMA`, missing fields null), groups them by task and calls
:func:`biovqa.metrics.score_task` on each group: the very function ``biovqa score`` calls, so both give
the same numbers on the same items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from biovqa.metrics.common import TaskScore

#: metrics that are item means (their item-weighted average over tasks is the pooled mean)
MEAN_METRICS = ("headline", "parse_rate", "cags", "gs_raw", "em", "exact_match", "accuracy")


@dataclass
class RecordsScore:
    """Per-task scores of a batch of records, in task order; ``order`` maps each task's rows to inputs."""

    tasks: dict[str, TaskScore]
    order: dict[str, list[int]]


def task_for_family(component: str, family: str | None) -> str | None:
    """The task of a question family (C2 family, C1 rank, C4 condition) from the task registry."""
    from biovqa.tasks import tasks_of

    for task in tasks_of(component):
        if family in task.families:
            return task.id
    return None


def build_record(component: str, fields: dict[str, Any], index: int) -> dict:
    """A full question record from partial fields (component struct given as a nested dict)."""
    from biovqa.schema import QUESTION_COLUMNS, empty_record

    unknown = [k for k in fields if k not in QUESTION_COLUMNS]
    if unknown:
        raise ValueError(f"item {index}: unknown question fields {unknown}")
    rec = empty_record()
    rec.update({k: v for k, v in fields.items() if v is not None or k in ("c1", "c2", "c3", "c4")})
    rec["component"] = component
    if not rec.get("qid"):
        rec["qid"] = f"{rec.get('task') or component}/item/{index:08d}"
    if rec.get("task") is None:
        rec["task"] = task_for_family(component, rec.get("family"))
    if rec["task"] is None:
        raise ValueError(
            f"item {index}: cannot tell its task (give 'task' or a known 'family' of {component})"
        )
    if rec.get("answer_form") is None:
        from biovqa.tasks import get_task

        rec["answer_form"] = get_task(rec["task"]).answer_form
    rec["image"] = None
    return rec


def parse_item_json(text: str | None, index: int) -> dict:
    """The ``item`` column: a JSON object of further question fields (empty or null -> {})."""
    if text is None or text == "":
        return {}
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"item {index}: 'item' is not valid JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise ValueError(f"item {index}: 'item' must be a JSON object, got {type(obj).__name__}")
    return obj


def score_records(
    component: str, records: list[dict], predictions: list[str | None], resources: Any = None
) -> RecordsScore:
    """Score partial question records of one component, task by task (tasks in sorted order)."""
    from biovqa.metrics import score_task
    from biovqa.schema import QUESTION_SCHEMA

    if len(records) != len(predictions):
        raise ValueError(f"{len(records)} items but {len(predictions)} predictions")
    full = [build_record(component, r, i) for i, r in enumerate(records)]
    order: dict[str, list[int]] = {}
    for i, rec in enumerate(full):
        order.setdefault(rec["task"], []).append(i)
    tasks: dict[str, TaskScore] = {}
    for task in sorted(order):
        rows = [full[i] for i in order[task]]
        try:
            table = pa.Table.from_pylist(rows, schema=QUESTION_SCHEMA).drop_columns(["image"])
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
            raise ValueError(f"task {task}: items do not fit the question schema: {exc}") from None
        tasks[task] = score_task(task, table, [predictions[i] for i in order[task]], resources)
    return RecordsScore(tasks, {t: order[t] for t in sorted(order)})


def pooled(result: RecordsScore, keys: tuple[str, ...]) -> dict[str, float | None]:
    """Item-weighted average of per-task metrics: exact for one task, the pooled item mean for means."""
    out: dict[str, float | None] = {}
    total = sum(int(ts.metrics["n"]) for ts in result.tasks.values())
    for key in keys:
        vals = [(ts.metrics.get(key), int(ts.metrics["n"])) for ts in result.tasks.values()]
        if len(vals) == 1:
            out[key] = vals[0][0]
        elif any(v is None for v, _ in vals) or total == 0 or key not in MEAN_METRICS:
            out[key] = None
        else:
            out[key] = sum(float(v) * n for v, n in vals) / total
    return out
