"""Shared statistics: normal quantiles, signal detection (§C.7), binary-table metrics, bootstrap (§L.3).

Every bootstrap here is a fixed-seed percentile bootstrap (seed 42 unless told), so the same inputs give
the same interval. Three resampling units are supported:

* items (the default), optionally *within strata* (C4 resamples within each species of a condition);
* clusters (C3 counting and distance resample source plates: all items of a drawn plate come along);
* category counts: when every item falls in one of a few categories (C4's confusion cells), drawing a
  multinomial per stratum is exactly the item bootstrap's distribution, at a cost independent of n.

Large strata (choice, for the 30 s budget of scoring 1.86M items): drawing units costs B × k random
indices (824M for C2's 824K items at B = 1000, over a minute here). When a stratum has more than
:data:`MAX_INDEX_DRAWS` / B units and too many distinct unit values for the exact multinomial, its
resampled totals (Σ values, Σ items) are drawn from the bivariate normal with their exact mean and
covariance under resampling (k · mean, k · covariance of the units), i.e. the CLT limit of the same
bootstrap, which at k > 20,000 units differs from the item draw far below the reported precision.

The normal quantile is ``scipy.special.ndtri``, the function ``scipy.stats.norm.ppf`` evaluates (importing
``scipy.stats`` costs ~0.5 s; tests check the two agree).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr, ndtri

SEED = 42
#: resamples per statistic (§L.3)
B_C2 = 1000
B_C4 = 2000
#: above this many resamples × units, index bootstraps run in chunks to bound memory
_CHUNK_ELEMENTS = 4_000_000
#: above this many resamples × units in one stratum, its totals come from the CLT limit (module doc)
MAX_INDEX_DRAWS = 20_000_000
#: at most this many distinct unit values use the exact multinomial over values
_MAX_LEVELS = 256


def norm_ppf(p):
    """Inverse standard normal CDF (z); works on scalars and arrays."""
    return ndtri(p)


def norm_cdf(x):
    """Standard normal CDF (Φ)."""
    return ndtr(x)


def rate(x, n):
    """``x / n`` with NaN where ``n == 0`` (scalar or array)."""
    x = np.asarray(x, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(n > 0, x / np.where(n > 0, n, 1.0), np.nan)
    return out if out.ndim else float(out)


def loglinear_rate(x, n):
    """The log-linear corrected rate ``(x + 0.5) / (n + 1)`` (§C.7), applied unconditionally."""
    x = np.asarray(x, dtype=float)
    n = np.asarray(n, dtype=float)
    out = (x + 0.5) / (n + 1.0)
    return out if out.ndim else float(out)


@dataclass(frozen=True)
class SignalDetection:
    """Corrected hit and false-alarm rates with d′ = z(H) − z(F) and c = −(z(H) + z(F)) / 2."""

    hit_rate: float
    false_alarm_rate: float
    dprime: float
    criterion: float


def signal_detection(hits, misses, false_alarms, correct_rejections):
    """d′ and criterion c from confusion counts (eq. 26) with the log-linear correction.

    Scalars give a :class:`SignalDetection`; arrays give a tuple of arrays ``(H, F, d′, c)``.
    """
    h = loglinear_rate(hits, np.asarray(hits) + np.asarray(misses))
    f = loglinear_rate(false_alarms, np.asarray(false_alarms) + np.asarray(correct_rejections))
    zh, zf = ndtri(h), ndtri(f)
    d, c = zh - zf, -0.5 * (zh + zf) + 0.0  # + 0.0 turns -0.0 into 0.0
    if np.ndim(d) == 0:
        return SignalDetection(float(h), float(f), float(d), float(c))
    return h, f, d, c


def dprime_to_balanced_accuracy(dprime):
    """Balanced accuracy of an unbiased observer with sensitivity d′: Φ(d′/2) (§C.7 table)."""
    return ndtr(np.asarray(dprime, dtype=float) / 2.0)


def auc_to_dprime(auc):
    """d′ = √2 · z(AUC), for score-valued specialists (§B.4)."""
    return np.sqrt(2.0) * ndtri(np.asarray(auc, dtype=float))


def roc_auc(scores: Sequence[float], positives: Sequence[bool]) -> float:
    """Area under the ROC curve (Mann–Whitney, ties count one half); NaN without both classes."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(positives, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(s, kind="mergesort")
    sorted_s = s[order]
    ranks = np.empty(len(s), dtype=float)
    # average ranks over ties
    _, first, counts = np.unique(sorted_s, return_index=True, return_counts=True)
    avg = first + (counts + 1) / 2.0
    ranks[order] = np.repeat(avg, counts)
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def binary_table_metrics(tp, fn, fp, tn) -> dict:
    """Accuracy, balanced accuracy, MCC and Cohen's κ of a 2×2 table (arrays broadcast).

    Degenerate tables (a constant answer) give MCC 0 and κ 0, the scikit-learn convention for MCC.
    """
    tp, fn, fp, tn = (np.asarray(v, dtype=float) for v in (tp, fn, fp, tn))
    n = tp + fn + fp + tn
    acc = rate(tp + tn, n)
    bal = 0.5 * (rate(tp, tp + fn) + rate(tn, tn + fp))
    denom = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    with np.errstate(invalid="ignore", divide="ignore"):
        mcc = np.where(denom > 0, (tp * tn - fp * fn) / np.where(denom > 0, denom, 1.0), 0.0)
        po = acc
        pe = rate((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn), n * n)
        kappa = np.where(np.asarray(1.0 - pe) > 0, (po - pe) / np.where(1.0 - pe > 0, 1.0 - pe, 1.0), 0.0)
    out = {"accuracy": acc, "balanced_accuracy": bal, "mcc": mcc, "kappa": kappa}
    return {k: (float(v) if np.ndim(v) == 0 else v) for k, v in out.items()}


def percentile_interval(samples: np.ndarray, alpha: float = 0.05) -> tuple[float, float]:
    """The (α/2, 1−α/2) percentiles of bootstrap samples, ignoring NaN."""
    samples = np.asarray(samples, dtype=float)
    samples = samples[~np.isnan(samples)]
    if samples.size == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.percentile(samples, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return (float(lo), float(hi))


def bootstrap_category_counts(counts: np.ndarray, n_boot: int = B_C4, seed: int = SEED) -> np.ndarray:
    """Resample items within strata when each item is one of K categories.

    ``counts`` is ``(S, K)`` (strata × categories). Returns ``(n_boot, S, K)`` resampled counts: each
    stratum keeps its size and draws its items with replacement, i.e. a multinomial on its frequencies.
    """
    counts = np.asarray(counts, dtype=np.int64)
    if counts.ndim != 2:
        raise ValueError(f"counts must be (strata, categories), got shape {counts.shape}")
    rng = np.random.default_rng(seed)
    out = np.zeros((n_boot, *counts.shape), dtype=np.int64)
    for s, row in enumerate(counts):
        n = int(row.sum())
        if n > 0:
            out[:, s, :] = rng.multinomial(n, row / n, size=n_boot)
    return out


def bootstrap_mean(
    values: Sequence[float] | np.ndarray,
    n_boot: int = B_C2,
    seed: int = SEED,
    clusters: Sequence | np.ndarray | None = None,
    strata: Sequence | np.ndarray | None = None,
) -> np.ndarray:
    """Bootstrap distribution of the mean of ``values`` (NaN values are not allowed).

    With ``clusters`` the resampling unit is a cluster (its items come along; the statistic is
    Σ values / Σ items over drawn clusters). With ``strata`` units are drawn within each stratum, which
    keeps its number of units. Units with identical (sum, size) are pooled into levels first; when there
    are few levels (binary scores) the draw is a multinomial over levels, exactly the same distribution
    as drawing units, at a cost independent of n. Very large strata with many levels use the CLT limit
    of the same resampling (see the module docstring).
    """
    v = np.asarray(values, dtype=float)
    if v.ndim != 1:
        raise ValueError("values must be one-dimensional")
    if np.isnan(v).any():
        raise ValueError("values contain NaN; score unparsed items explicitly before bootstrapping")
    n_items = v.size
    if n_items == 0:
        return np.full(n_boot, np.nan)
    strata_codes = _codes(strata, n_items, "strata")
    rng = np.random.default_rng(seed)
    total_sum = np.zeros(n_boot)
    total_n = np.zeros(n_boot)
    for s in range(int(strata_codes.max()) + 1):
        mask = strata_codes == s
        unit_sum, unit_n = _units(v[mask], None if clusters is None else np.asarray(clusters)[mask])
        levels, inverse = np.unique(np.stack([unit_sum, unit_n], axis=1), axis=0, return_inverse=True)
        k = unit_sum.size
        if levels.shape[0] <= _MAX_LEVELS:
            freq = np.bincount(inverse.ravel(), minlength=levels.shape[0])
            draws = rng.multinomial(k, freq / k, size=n_boot).astype(float)
            total_sum += draws @ levels[:, 0]
            total_n += draws @ levels[:, 1]
        elif k * n_boot > MAX_INDEX_DRAWS:
            units = np.stack([unit_sum, unit_n])
            mean = k * units.mean(axis=1)
            cov = k * np.cov(units, bias=True).reshape(2, 2)
            if cov[1, 1] == 0.0:  # item units: the size is constant, only the sum varies
                total_sum += mean[0] + np.sqrt(cov[0, 0]) * rng.standard_normal(n_boot)
                total_n += mean[1]
            else:
                drawn = rng.multivariate_normal(mean, cov, size=n_boot, method="cholesky")
                total_sum += drawn[:, 0]
                total_n += drawn[:, 1]
        else:
            chunk = max(1, _CHUNK_ELEMENTS // k)
            for start in range(0, n_boot, chunk):
                stop = min(n_boot, start + chunk)
                idx = rng.integers(0, k, size=(stop - start, k))
                total_sum[start:stop] += unit_sum[idx].sum(axis=1)
                total_n[start:stop] += unit_n[idx].sum(axis=1)
    return total_sum / total_n


def bootstrap_mean_ci(
    values,
    n_boot: int = B_C2,
    seed: int = SEED,
    clusters=None,
    strata=None,
    alpha: float = 0.05,
) -> tuple[float, float]:
    """Percentile interval of the mean (see :func:`bootstrap_mean` for clusters and strata)."""
    return percentile_interval(bootstrap_mean(values, n_boot, seed, clusters, strata), alpha)


def _codes(keys, n: int, what: str) -> np.ndarray:
    if keys is None:
        return np.zeros(n, dtype=np.int64)
    keys = np.asarray(keys)
    if keys.shape != (n,):
        raise ValueError(f"{what} must have one entry per value ({n}), got shape {keys.shape}")
    _, codes = np.unique(keys.astype(str), return_inverse=True)
    return codes.ravel()


def _units(values: np.ndarray, clusters) -> tuple[np.ndarray, np.ndarray]:
    """Per-unit (sum, size): items themselves, or clusters (ordered by cluster key)."""
    if clusters is None:
        return values, np.ones_like(values)
    _, codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)
    codes = codes.ravel()
    return np.bincount(codes, weights=values), np.bincount(codes).astype(float)
