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
    return float(sum(sim(d, gold) for d in others) / len(others))


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


def sample_chance_pool(gold: str, family_golds: Sequence[str], k: int = CHANCE_POOL_SIZE, seed: int = SEED) -> list[str]:
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
