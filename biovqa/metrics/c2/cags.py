"""Chance-adjusted graded score (§C.4, eqs. 11-12) and C2 mistake severity (§C.5, eq. 22)."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence

import numpy as np

#: Size of the chance pool of an open-ended item (§C.4) and the seed of its fallback draw.
CHANCE_POOL_SIZE = 40
SEED = 42


def chance_baseline(gold: str, others: Sequence[str], sim: Callable[[str, str], float]) -> float:
    """Eq. 11: mean kernel similarity of the distractors (or chance-pool answers) to the gold."""
    if not others:
        return 0.0
    total = 0.0
    for d in others:
        total += sim(d, gold)
    return total / len(others)


def cags(s: float, b: float) -> float:
    """Eq. 12: ``(s - b) / (1 - b)``, negative values kept.

    When every distractor is as good as the gold (``b = 1``) the item cannot tell a guess from an
    answer; it then scores 1 for the gold's own similarity and 0 otherwise (our convention).
    """
    if b >= 1.0 - 1e-12:
        return 1.0 if s >= 1.0 else 0.0
    return (s - b) / (1.0 - b)


def severity(cags_values: np.ndarray, em: np.ndarray) -> float:
    """Eq. 22: mean of ``1 - cags`` over wrong items (EM = 0); NaN when nothing is wrong."""
    wrong = ~np.asarray(em, dtype=bool)
    if not wrong.any():
        return float("nan")
    return float(np.mean(1.0 - np.asarray(cags_values, dtype=float)[wrong]))


def sample_chance_pool(
    gold: str, family_golds: Sequence[str], k: int = CHANCE_POOL_SIZE, seed: int = SEED
) -> list[str]:
    """A fixed-seed sample of ``k`` other golds of the family, for open items without ``c2.chance_pool``.

    Draws without replacement from the sorted distinct golds other than ``gold``, with a generator
    seeded by ``(seed, crc32(gold))``: the same gold gets the same pool whatever the row order.
    """
    others = sorted(set(family_golds) - {gold})
    if len(others) <= k:
        return others
    rng = np.random.default_rng([seed, zlib.crc32(gold.encode("utf-8"))])
    picks = rng.choice(len(others), size=k, replace=False)
    return [others[i] for i in sorted(picks)]


#: Above this many items the bootstrap runs on values rounded to :data:`BOOTSTRAP_GRID` (see below).
EXACT_BOOTSTRAP_MAX_N = 20_000
BOOTSTRAP_GRID = 1e-3


def bootstrap_ci(
    values: np.ndarray, n_boot: int = 1000, seed: int = SEED, alpha: float = 0.05
) -> tuple[float, float]:
    """Percentile CI of the mean cags over a fixed-seed item bootstrap with ``n_boot`` resamples.

    Up to :data:`EXACT_BOOTSTRAP_MAX_N` items this is the plain item bootstrap of
    :func:`biovqa.metrics.stats.bootstrap_mean_ci`. Beyond that, drawing n × 1000 indices costs seconds
    at C2 scale (824K items), so the values are rounded to a 0.001 grid, the resample is drawn as one
    multinomial over the occupied grid levels (the same distribution as drawing items), and every
    resampled mean is shifted by the exact rounding offset ``mean(x) - mean(rounded x)``. What remains
    differs from the exact item bootstrap by the resampled mean of the rounding residuals, whose
    standard deviation is at most 0.0005 / √n (< 2e-6 above 20,000 items).
    """
    from biovqa.metrics.stats import bootstrap_mean_ci, percentile_interval

    v = np.asarray(values, dtype=float)
    n = v.size
    if n == 0:
        return float("nan"), float("nan")
    if n <= EXACT_BOOTSTRAP_MAX_N:
        lo, hi = bootstrap_mean_ci(v, n_boot=n_boot, seed=seed, alpha=alpha)
        return float(lo), float(hi)
    q = np.round(v / BOOTSTRAP_GRID).astype(np.int64)
    levels, counts = np.unique(q, return_counts=True)
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, counts / n, size=n_boot)
    means = (draws @ (levels * BOOTSTRAP_GRID)) / n + (v.mean() - (q * BOOTSTRAP_GRID).mean())
    lo, hi = percentile_interval(means, alpha)
    return float(lo), float(hi)
