"""Pure scoring functions: one module per component plus shared statistics (Contract 4).

:func:`score_task` dispatches a task to its component's scorer (``biovqa.metrics.c1``, ``.c2``,
``.c3``, ``.c4``), each exposing ``score_task(task_id, table, responses, resources=None) -> TaskScore``.
Scorer modules are imported lazily: a component whose scorer is missing fails with a clear error and
does not stop the other components.
"""

from __future__ import annotations

import importlib
from typing import Any

import pyarrow as pa

from biovqa.metrics.common import TaskScore

__all__ = ["TaskScore", "component_of", "get_scorer", "score_task"]

REQUIRED_ITEM_COLUMNS = ("parsed", "parse_ok", "parse_status", "score")
REQUIRED_METRICS = ("headline", "headline_metric", "parse_rate", "n")


def component_of(task_id: str) -> str:
    """The component of a task: from the task registry, else the id's prefix (``c4.random`` -> ``c4``)."""
    try:
        from biovqa.tasks import get_task
    except ImportError:
        get_task = None
    if get_task is not None:
        try:
            return get_task(task_id).component
        except KeyError:
            pass
    prefix = task_id.split(".", 1)[0]
    if prefix not in ("c1", "c2", "c3", "c4"):
        raise KeyError(f"cannot tell the component of task {task_id!r}")
    return prefix


def get_scorer(task_id: str):
    """The ``score_task`` function of the task's component module."""
    component = component_of(task_id)
    module_name = f"biovqa.metrics.{component}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"no scorer for task {task_id!r}: {module_name} cannot be imported ({exc})"
        ) from exc
    fn = getattr(module, "score_task", None)
    if fn is None:
        raise ImportError(f"{module_name} has no score_task() (Contract 4)")
    return fn


def score_task(
    task_id: str, table: pa.Table, responses: list[str | None], resources: Any = None
) -> TaskScore:
    """Score one task's rows and replies with its component's scorer; checks the Contract-4 result."""
    result = get_scorer(task_id)(task_id, table, responses, resources)
    missing_items = [c for c in REQUIRED_ITEM_COLUMNS if c not in result.items]
    missing_metrics = [m for m in REQUIRED_METRICS if m not in result.metrics]
    if missing_items or missing_metrics:
        raise ValueError(
            f"scorer for {task_id!r} broke Contract 4: missing item columns {missing_items}, "
            f"missing metrics {missing_metrics}"
        )
    bad = [k for k, v in result.items.items() if len(v) != table.num_rows]
    if bad:
        raise ValueError(f"scorer for {task_id!r}: item columns {bad} do not have {table.num_rows} rows")
    return result
