"""Cross-model analysis (paper §J): task × task Spearman over models, within- vs across-component
agreement with a label-permutation p-value, the component matrix with Holm-corrected significance,
and the first principal component of the standardized model × task matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

PERMUTATIONS = 10_000
SEED = 42


@dataclass
class CrossModel:
    tasks: list[str]
    components: list[str]
    task_rho: np.ndarray  # tasks × tasks Spearman over models (nan where undefined)
    within_mean: float
    across_mean: float
    permutation_p: float
    component_names: list[str]
    component_rho: np.ndarray
    component_p_holm: np.ndarray
    pc1_share: float
    pc1_loadings: dict[str, float]


def holm(pvalues: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (same order as given)."""
    m = len(pvalues)
    order = np.argsort(pvalues)
    adjusted = np.empty(m)
    running = 0.0
    for i, idx in enumerate(order):
        running = max(running, min(1.0, (m - i) * pvalues[idx]))
        adjusted[idx] = running
    return adjusted.tolist()


def _spearman_matrix(matrix: np.ndarray) -> np.ndarray:
    """Spearman ρ between columns of a models × tasks matrix (nan for constant columns)."""
    n_tasks = matrix.shape[1]
    ranks = np.column_stack([stats.rankdata(matrix[:, j]) for j in range(n_tasks)])
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.corrcoef(ranks, rowvar=False)
    return np.atleast_2d(rho)


def _within_across(rho: np.ndarray, labels: np.ndarray) -> tuple[float, float]:
    iu = np.triu_indices(len(labels), k=1)
    values = rho[iu]
    same = labels[iu[0]] == labels[iu[1]]
    ok = ~np.isnan(values)
    within = values[same & ok]
    across = values[~same & ok]
    return (
        float(within.mean()) if within.size else float("nan"),
        float(across.mean()) if across.size else float("nan"),
    )


def cross_model(matrix: np.ndarray, tasks: list[str], components: list[str]) -> CrossModel:
    """All of §J on a models × tasks matrix of headline scores (no missing values)."""
    if matrix.shape[0] < 3:
        raise ValueError("the cross-model analysis needs at least three models")
    rho = _spearman_matrix(matrix)
    labels = np.array(components)
    within, across = _within_across(rho, labels)
    rng = np.random.default_rng(SEED)
    observed = within - across
    hits = 0
    for _ in range(PERMUTATIONS):
        w, a = _within_across(rho, rng.permutation(labels))
        if not np.isnan(w - a) and w - a >= observed:
            hits += 1
    p_perm = (hits + 1) / (PERMUTATIONS + 1)

    # component scores: mean of per-task z-scores over the component's tasks
    sd = matrix.std(axis=0)
    z = np.where(sd > 0, (matrix - matrix.mean(axis=0)) / np.where(sd > 0, sd, 1), 0.0)
    comp_names = sorted(set(components))
    comp_scores = np.column_stack([z[:, labels == c].mean(axis=1) for c in comp_names])
    k = len(comp_names)
    comp_rho = np.full((k, k), np.nan)
    raw_p, pairs = [], []
    for i in range(k):
        comp_rho[i, i] = 1.0
        for j in range(i + 1, k):
            r, p = stats.spearmanr(comp_scores[:, i], comp_scores[:, j])
            comp_rho[i, j] = comp_rho[j, i] = r
            raw_p.append(1.0 if np.isnan(p) else float(p))
            pairs.append((i, j))
    comp_p = np.full((k, k), np.nan)
    for (i, j), p in zip(pairs, holm(raw_p) if raw_p else [], strict=True):
        comp_p[i, j] = comp_p[j, i] = p

    # PCA on the standardized matrix (constant tasks carry no variance and get loading 0)
    _, s, vt = np.linalg.svd(z - z.mean(axis=0), full_matrices=False)
    var = s**2
    share = float(var[0] / var.sum()) if var.sum() > 0 else float("nan")
    loadings = vt[0] * (1 if vt[0].sum() >= 0 else -1)
    return CrossModel(
        tasks=tasks,
        components=components,
        task_rho=rho,
        within_mean=within,
        across_mean=across,
        permutation_p=p_perm,
        component_names=comp_names,
        component_rho=comp_rho,
        component_p_holm=comp_p,
        pc1_share=share,
        pc1_loadings={t: float(v) for t, v in zip(tasks, loadings, strict=True)},
    )
