"""C4 re-identification scoring: signal detection over yes/no verdicts (§4, §C.7, §H, §K.6, §L.3).

Per item: the parsed verdict, its parse tier and its confusion cell. Per task (one condition):
confusion counts summed over species (pooling, Tab. 85), corrected hit / false-alarm rates, d′ (the
headline, Table 3) and criterion c, accuracy with a 2000-resample percentile interval drawn within each
species stratum, balanced accuracy, MCC, Cohen's κ, and the same per species.

Choices where the paper is silent or unclear (the paper itself had no unparsed reply, §H.1):

* **Unparsed replies** (empty, refusal, echo, ambiguous, no yes/no) are kept out of the signal-detection
  counts: d′, c, MCC and κ use the parsed replies only, because reading an abstention as *No* is the
  error §H.1 guards against. They still count against accuracy and balanced accuracy (item score 0 and
  part of each class's denominator), so refusing cannot raise those; their numbers are reported per
  class (``unparsed_same`` / ``unparsed_different``) beside ``parse_rate``.
* **Pooling** sums raw counts over species before the correction (§C.7, Tab. 85). Note: Table 50 lists
  c = −3.09 for the constant-*Yes* model, which is z(500.5/501), i.e. the correction at one species'
  500 same pairs; pooled counts over five species give −3.54 for that model. We follow the text (pooled
  counts) and also report the per-species means (``dprime_species_mean``, ``criterion_species_mean``,
  the Tab. 52 / Tab. 87 style).
* **Floor**: the image-blind constant-*Yes* rule scored on the same rows (d′ 0.000 on balanced pairs)
  and the majority-class accuracy (.500), Table 3's Floor row.
* The item ``score`` (its contribution to a headline that is not a mean) is correctness, 1/0 (NaN for a
  row without a gold verdict, which is counted in ``n_invalid`` and named in ``errors``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from biovqa.metrics import stats
from biovqa.metrics.common import TaskScore, col, merge_stats
from biovqa.parse.yesno import parse_yes_no

TASKS = ("c4.easy", "c4.random", "c4.hard")
HEADLINE_METRIC = "dprime"
#: confusion cells, in the order used for counts and the bootstrap
CELLS = ("hit", "miss", "false_alarm", "correct_rejection", "unparsed_same", "unparsed_different")
_YES = {"yes", "true", "1", "same"}
_NO = {"no", "false", "0", "different", "not same"}


def gold_verdict(same: Any, answer: Any) -> bool | None:
    """The gold same/different verdict: ``c4.same``, else a Yes/No ``answer``; None when neither is usable."""
    if same is not None:
        return bool(same)
    if isinstance(answer, str):
        a = answer.strip().lower()
        if a in _YES:
            return True
        if a in _NO:
            return False
    return None


def item_columns(table: pa.Table, responses: list[str | None]) -> tuple[dict[str, list], list[str]]:
    """Per-item columns (§K.6) and a list of row errors (rows with no usable gold get cell ``invalid``)."""
    n = table.num_rows
    if len(responses) != n:
        raise ValueError(f"{n} question rows but {len(responses)} responses")
    qids = col(table, "qid")
    same = col(table, "c4.same") if "c4" in table.column_names else [None] * n
    answers = col(table, "answer") if "answer" in table.column_names else [None] * n
    species = _species(table)
    out: dict[str, list] = {k: [] for k in ("parsed", "parse_ok", "parse_status", "parse_tier")}
    out.update({"score": [], "gold": [], "cell": [], "species": species})
    errors: list[str] = []
    for i, response in enumerate(responses):
        p = parse_yes_no(response)
        gold = gold_verdict(same[i], answers[i])
        out["parsed"].append(p.value)
        out["parse_ok"].append(p.ok)
        out["parse_status"].append(p.status if not p.ok else "ok")
        out["parse_tier"].append(p.detail if p.ok else "unparsed")
        out["gold"].append(None if gold is None else ("yes" if gold else "no"))
        if gold is None:
            errors.append(f"row {i} (qid {qids[i]!r}): no gold verdict (c4.same and answer are null/unknown)")
            cell = "invalid"
        elif not p.ok:
            cell = "unparsed_same" if gold else "unparsed_different"
        elif gold:
            cell = "hit" if p.value == "yes" else "miss"
        else:
            cell = "false_alarm" if p.value == "yes" else "correct_rejection"
        out["cell"].append(cell)
        score = float("nan") if cell == "invalid" else float(cell in ("hit", "correct_rejection"))
        out["score"].append(score)
    return out, errors


def _species(table: pa.Table) -> list[str]:
    n = table.num_rows
    if "c4" in table.column_names:
        sp = col(table, "c4.species")
        cat = col(table, "c4.catalog")
    else:
        sp = cat = [None] * n
    src = col(table, "source") if "source" in table.column_names else [None] * n
    return [s or c or r or "unknown" for s, c, r in zip(sp, cat, src, strict=True)]


def item_stats(items: dict[str, list], responses: list[str | None] | None = None) -> dict:
    """Additive statistics of a shard: counts per species × cell, per parse status and tier."""
    counts: dict[str, dict[str, int]] = {}
    for sp, cell in zip(items["species"], items["cell"], strict=True):
        bucket = counts.setdefault(sp, dict.fromkeys((*CELLS, "invalid"), 0))
        bucket[cell] += 1
    statuses: dict[str, int] = {}
    for s in items["parse_status"]:
        statuses[s] = statuses.get(s, 0) + 1
    tiers: dict[str, int] = {}
    for t in items["parse_tier"]:
        tiers[t] = tiers.get(t, 0) + 1
    unanswered = 0 if responses is None else sum(r is None for r in responses)
    return {"counts": counts, "parse_status": statuses, "parse_tier": tiers, "n_unanswered": unanswered}


def _cell_metrics(c: np.ndarray) -> dict:
    """Metrics of one count vector in :data:`CELLS` order."""
    hit, miss, fa, cr, us, ud = (int(x) for x in c)
    n = hit + miss + fa + cr + us + ud
    sdt = stats.signal_detection(hit, miss, fa, cr)
    parsed = stats.binary_table_metrics(hit, miss, fa, cr)
    n_same, n_diff = hit + miss + us, fa + cr + ud
    bal = 0.5 * (stats.rate(hit, n_same) + stats.rate(cr, n_diff))
    return {
        "n": n,
        "hits": hit,
        "misses": miss,
        "false_alarms": fa,
        "correct_rejections": cr,
        "unparsed_same": us,
        "unparsed_different": ud,
        "parse_rate": stats.rate(n - us - ud, n),
        "hit_rate": sdt.hit_rate,
        "false_alarm_rate": sdt.false_alarm_rate,
        "hit_rate_raw": stats.rate(hit, hit + miss),
        "false_alarm_rate_raw": stats.rate(fa, fa + cr),
        "yes_rate": stats.rate(hit + fa, hit + miss + fa + cr),
        "dprime": sdt.dprime,
        "criterion": sdt.criterion,
        "accuracy": stats.rate(hit + cr, n),
        "balanced_accuracy": float(bal),
        "mcc": parsed["mcc"],
        "kappa": parsed["kappa"],
    }


def _vectorized(c: np.ndarray) -> dict[str, np.ndarray]:
    """d′, c, accuracy and balanced accuracy of many count vectors (last axis = CELLS)."""
    hit, miss, fa, cr, us, ud = (c[..., i].astype(float) for i in range(6))
    _, _, d, crit = stats.signal_detection(hit, miss, fa, cr)
    n = c.sum(axis=-1)
    bal = 0.5 * (stats.rate(hit, hit + miss + us) + stats.rate(cr, fa + cr + ud))
    return {"dprime": d, "criterion": crit, "accuracy": stats.rate(hit + cr, n), "balanced_accuracy": bal}


def reduce(task_id: str, st: dict, n_boot: int = stats.B_C4, seed: int = stats.SEED) -> dict:
    """Task metrics from additive statistics (pooled counts, per species, stratified bootstrap)."""
    species = sorted(st["counts"])
    matrix = np.array([[st["counts"][sp][cell] for cell in CELLS] for sp in species], dtype=np.int64)
    matrix = matrix.reshape(len(species), len(CELLS))
    invalid = sum(st["counts"][sp]["invalid"] for sp in species)
    pooled = matrix.sum(axis=0)
    m = _cell_metrics(pooled)

    boot = stats.bootstrap_category_counts(matrix, n_boot=n_boot, seed=seed)
    pooled_boot = _vectorized(boot.sum(axis=1))
    species_boot = _vectorized(boot)
    for key in ("accuracy", "dprime", "criterion", "balanced_accuracy"):
        m[f"{key}_ci"] = list(stats.percentile_interval(pooled_boot[key]))

    per_species = {}
    for s, sp in enumerate(species):
        sm = _cell_metrics(matrix[s])
        for key in ("accuracy", "dprime"):
            sm[f"{key}_ci"] = list(stats.percentile_interval(species_boot[key][:, s]))
        per_species[sp] = sm

    n_same = int(pooled[[0, 1, 4]].sum())
    n_diff = int(pooled[[2, 3, 5]].sum())
    always_yes = stats.signal_detection(n_same, 0, n_diff, 0)
    m.update(
        {
            "headline": m["dprime"],
            "headline_metric": HEADLINE_METRIC,
            "criterion_c": m["criterion"],  # the registry's extra_headlines name
            "task": task_id,
            "n": int(pooled.sum()) + invalid,
            "n_invalid": invalid,
            "n_unanswered": int(st.get("n_unanswered", 0)),
            "parse_status": dict(sorted(st["parse_status"].items())),
            "parse_tier": dict(sorted(st["parse_tier"].items())),
            "dprime_species_mean": _nanmean([per_species[sp]["dprime"] for sp in species]),
            "criterion_species_mean": _nanmean([per_species[sp]["criterion"] for sp in species]),
            "accuracy_species_mean": _nanmean([per_species[sp]["accuracy"] for sp in species]),
            "floor": always_yes.dprime,
            "floor_accuracy": stats.rate(max(n_same, n_diff), n_same + n_diff),
            "floor_rule": "constant 'Yes' (d′); majority class (accuracy)",
            "bootstrap": {"n_boot": n_boot, "seed": seed, "unit": "item within species"},
            "per_species": per_species,
        }
    )
    return m


def _nanmean(values: list[float]) -> float:
    arr = np.asarray(values, dtype=float)
    arr = arr[~np.isnan(arr)]
    return float(arr.mean()) if arr.size else float("nan")


def score_task(
    task_id: str, table: pa.Table, responses: list[str | None], resources: Any = None
) -> TaskScore:
    """Score one C4 condition (Contract 4): per-item cells and tiers, pooled and per-species metrics."""
    items, errors = item_columns(table, responses)
    metrics = reduce(task_id, item_stats(items, responses))
    if errors:
        metrics["errors"] = errors[:50]
        metrics["n_errors"] = len(errors)
    return TaskScore(items=items, metrics=metrics)


def score_shards(task_id: str, shard_stats: list[dict]) -> dict:
    """Metrics of a task scored in shards: merge each shard's :func:`item_stats`, then reduce."""
    merged: dict = {}
    for st in shard_stats:
        merged = merge_stats(merged, st)
    return reduce(task_id, merged)


def score_similarity(table: pa.Table, scores: list[float] | None = None) -> dict:
    """Score-valued verdicts (a specialist's similarity, §B.4, or the pairs' own ``c4.similarity``, §H.7).

    Returns the ROC AUC of the scores against same/different, pooled and per species, each with
    d′ = √2 · z(AUC). Rows without a gold verdict or a finite score are left out and counted.
    """
    n = table.num_rows
    same = col(table, "c4.same") if "c4" in table.column_names else [None] * n
    answers = col(table, "answer") if "answer" in table.column_names else [None] * n
    values = col(table, "c4.similarity") if scores is None else list(scores)
    if len(values) != n:
        raise ValueError(f"{n} question rows but {len(values)} scores")
    species = _species(table)
    keep = [
        i
        for i in range(n)
        if gold_verdict(same[i], answers[i]) is not None and values[i] is not None and np.isfinite(values[i])
    ]
    gold = np.array([gold_verdict(same[i], answers[i]) for i in keep], dtype=bool)
    val = np.array([values[i] for i in keep], dtype=float)
    sp = np.array([species[i] for i in keep], dtype=object)

    def block(mask: np.ndarray) -> dict:
        auc = stats.roc_auc(val[mask], gold[mask])
        return {"n": int(mask.sum()), "auc": auc, "dprime": float(stats.auc_to_dprime(auc))}

    out = block(np.ones(len(keep), dtype=bool))
    out["n_excluded"] = n - len(keep)
    out["per_species"] = {s: block(sp == s) for s in sorted(set(sp.tolist()))}
    return out
