"""The Lite split: 500 questions per task (12,000 in all), stratified, deterministic.

The rule (also written to ``lite/RULE.md``):

1. For each task, group its items by the task's strata (``Task.lite_strata``: difficulty tier, source
   dataset, C4 catalog and same/different, …; a dotted name reads a component-struct field).
2. Allocate the task's 500 slots to strata in proportion to their sizes by the largest-remainder
   method (ties broken by stratum key), capping each stratum at its size and handing leftovers to
   the strata with the most remaining items.
3. Inside a stratum, take the items with the smallest ``sha256(f"{seed}:{qid}")``.
4. A task with fewer than 500 items contributes all of them (the synthetic miniature); the selection
   report says so.

The selected qids, sorted, are the frozen list; the build writes them to ``<hub>/lite/qids.txt`` and a
checkout pins the list it published in ``lite/`` (see ``lite/README.md``).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable

from biovqa.tasks import get_task

PER_TASK = 500
SEED = 42


def _field(rec: dict, name: str) -> str:
    if "." in name:
        top, sub = name.split(".", 1)
        value = (rec.get(top) or {}).get(sub)
    else:
        value = rec.get(name)
    return "" if value is None else str(value)


def stratum_of(rec: dict) -> tuple[str, ...]:
    """The stratum key of a record under its task's Lite strata."""
    return tuple(_field(rec, s) for s in get_task(rec["task"]).lite_strata)


def _allocate(sizes: dict[tuple, int], total: int) -> dict[tuple, int]:
    n = sum(sizes.values())
    if n <= total:
        return dict(sizes)
    quotas = {k: total * v / n for k, v in sizes.items()}
    alloc = {k: min(sizes[k], int(q)) for k, q in quotas.items()}
    left = total - sum(alloc.values())
    order = sorted(sizes, key=lambda k: (-(quotas[k] - int(quotas[k])), k))
    while left > 0:
        progressed = False
        for k in order:
            if left == 0:
                break
            if alloc[k] < sizes[k]:
                alloc[k] += 1
                left -= 1
                progressed = True
        if not progressed:
            break
        order = sorted(sizes, key=lambda k: (-(sizes[k] - alloc[k]), k))
    return alloc


def _rank(qid: str, seed: int) -> str:
    return hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest()


def select_lite(
    items: Iterable[tuple[str, str, tuple[str, ...]]], per_task: int = PER_TASK, seed: int = SEED
) -> tuple[list[str], dict]:
    """Select Lite qids from ``(qid, task, stratum)`` triples; returns (sorted qids, report per task)."""
    by_task: dict[str, dict[tuple, list[str]]] = defaultdict(lambda: defaultdict(list))
    for qid, task, stratum in items:
        by_task[task][stratum].append(qid)
    chosen: list[str] = []
    report: dict[str, dict] = {}
    for task in sorted(by_task):
        strata = by_task[task]
        sizes = {k: len(v) for k, v in strata.items()}
        alloc = _allocate(sizes, per_task)
        picked = 0
        for key in sorted(strata):
            ranked = sorted(strata[key], key=lambda q: _rank(q, seed))
            take = ranked[: alloc[key]]
            chosen.extend(take)
            picked += len(take)
        available = sum(sizes.values())
        report[task] = {
            "available": available,
            "selected": picked,
            "strata": len(sizes),
            "note": "all items (fewer than the per-task quota)" if available < per_task else "",
        }
    return sorted(chosen), report
