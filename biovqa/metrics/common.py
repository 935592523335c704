"""Shared helpers for scorers: column access, additive statistics, the TaskScore result."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass
class TaskScore:
    """Per-item columns (same order as the input rows) and the task's metrics."""

    items: dict[str, list] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector for a block (its previous state is restored on exit).

    Scoring loops allocate millions of small acyclic tuples that live until the end of the call; every
    allocation burst triggers a generational collection that rescans them, which at full scale (10^5-10^6
    items) costs as much as the scoring itself. Use it only around code that creates no reference cycles.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def col(table: pa.Table, name: str) -> list:
    """A column as a Python list; ``"c3.gold_value"`` reaches into a component struct."""
    if "." in name:
        top, sub = name.split(".", 1)
        arr = table.column(top)
        return pc.struct_field(arr, sub).to_pylist()
    return table.column(name).to_pylist()


def merge_stats(a: dict, b: dict) -> dict:
    """Add two additive statistics dicts: numbers sum, arrays/lists concatenate, dicts recurse."""
    out = dict(a)
    for key, vb in b.items():
        if key not in out:
            out[key] = vb
            continue
        va = out[key]
        if isinstance(va, dict):
            out[key] = merge_stats(va, vb)
        elif isinstance(va, np.ndarray):
            out[key] = np.concatenate([va, np.asarray(vb)])
        elif isinstance(va, list):
            out[key] = va + list(vb)
        else:
            out[key] = va + vb
    return out
