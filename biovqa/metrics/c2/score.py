"""C2 scorer (Contract 4): parse every reply (§K.5), score it with its family's kernel, adjust for chance.

Per item (§K.6): family, category, kernel, gold and predicted text, resolution status, EM, raw
similarity ``s``, chance baseline ``b``, cags and severity. Per task: mean cags (headline, Table 3),
GS_raw, EM (all / MCQ / open), severity (eq. 22), parse rate, letter-text mismatch rate, choose-A rate,
a 1000-resample fixed-seed bootstrap CI of cags, and the same figures per family and per category.

Choices where the paper is silent (also in the report):

* A parse failure gets ``s = 0`` (§K.5 "assign a score of zero"), so its cags is ``-b / (1 - b)``;
  it counts as wrong for EM and severity.
* Rows that cannot be scored (unknown family, gold not among the options, no options) are not
  dropped silently: they are listed in ``metrics["invalid_rows"]`` (qid + reason), counted in
  ``n_invalid``, carry ``parse_status = "invalid_row"`` and ``score = None``, and stay out of the means.
* Open items use ``c2.chance_pool`` for ``b`` when the builder filled it; otherwise a fixed-seed
  sample of 40 other distinct golds of the family among the scored rows (:func:`cags.sample_chance_pool`).
* ``open_kind_of`` golds are the modifier ("California" for a California gull). The reply (and each
  chance-pool answer) is completed with the category noun when it lacks it and compared with the full
  common name by the common-name kernel; EM stays strict against the modifier.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from biovqa.metrics.common import TaskScore
from biovqa.parse.mcq import (
    _SCAFFOLD,
    _THINK,
    MAX_REPLY_CHARS,
    OptionIndex,
    gold_index,
    normalize,
    options_from_question,
    resolve,
    route_family,
)

from .anatomy import AnatomyLayout
from .cags import bootstrap_ci, chance_baseline, sample_chance_pool
from .cags import cags as cags_value
from .color import ColorKernel
from .kernels import KernelSet, kernel_for

CATEGORY_OF_FAMILY = {
    "attr_bare_value": "morphology",
    "attr_group_value": "salience",
    "marker_localization": "localization",
    "visibility_partset": "localization",
    "visibility_side": "localization",
    "category_mcq": "naming",
    "open_common_name": "naming",
    "open_scientific_name": "naming",
    "open_genus": "naming",
    "open_kind_of": "naming",
}
FAMILIES = tuple(CATEGORY_OF_FAMILY)
CATEGORIES = ("salience", "morphology", "localization", "naming")
OPEN_FAMILIES = frozenset({"open_common_name", "open_scientific_name", "open_genus", "open_kind_of"})
#: Sums kept per family/category; all additive (Contract 4).
_SUM_KEYS = (
    "n",
    "parse_ok",
    "em",
    "s",
    "cags",
    "wrong",
    "sev",
    "mcq",
    "mcq_parse_ok",
    "mcq_em",
    "mismatch",
    "choose_a",
    "open",
    "open_parse_ok",
    "open_em",
    "route_mismatch",
)
MAX_OPEN_CHARS = 256
#: Resamples of the cags bootstrap CI (Table 30: B = 1000, fixed seed 42).
BOOTSTRAP_RESAMPLES = 1000
_OPEN_LEADIN = re.compile(
    r"^(?:(?:the\s+)?(?:common\s+|scientific\s+)?(?:name|genus|species|bird)(?:\s+of\s+(?:the|this)\s+bird)?"
    r"(?:\s+(?:in|from)\s+(?:the|this)\s+image)?\s+is\s*:?\s*|(?:this|it)\s+(?:bird\s+)?(?:is|looks like)\s+)"
)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+")
_BRACKETED = re.compile(r"\([^()]*\)")


def category_of(family: str) -> str:
    """The C2 category (task suffix) of a family: salience, morphology, localization or naming."""
    return CATEGORY_OF_FAMILY[family]


def open_answer(response: Any) -> tuple[str, str]:
    """(normalised answer, status) of an open naming reply: first line, scaffolding and articles dropped."""
    if not isinstance(response, str):
        return "", "empty"
    text = response[:MAX_REPLY_CHARS]
    if "<think>" in text:
        text = _THINK.sub(" ", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:3]
    if not lines:
        return "", "empty"
    line = lines[0]
    if line.rstrip().endswith(":") and len(lines) > 1:
        line = lines[1]
    ans = normalize(line)
    ans = _SCAFFOLD.sub("", ans, count=1)
    ans = _OPEN_LEADIN.sub("", ans, count=1)
    ans = _ARTICLE.sub("", ans, count=1).strip()
    if "(" in ans:
        # "California Gull (Larus californicus)": keep the name outside the bracketed aside
        outside = " ".join(_BRACKETED.sub(" ", ans).split())
        ans = outside if outside else ans
        ans = ans.replace("(", " ").replace(")", " ")
    ans = ans.strip(" :-")
    ans = " ".join(ans.split())[:MAX_OPEN_CHARS]
    return (ans, "ok") if ans else ("", "empty")


_DEFAULT_COLOR: ColorKernel | None = None


def build_kernels(table: pa.Table | None = None, resources: Any = None) -> KernelSet:
    """A :class:`KernelSet` from ``resources`` (None, a KernelSet, or a dict of overrides).

    Dict keys: ``color_anchors`` (word -> sRGB), ``color_mode`` (``"exp"``/``"linear"``),
    ``anatomy_layout`` (part -> xyz or an AnatomyLayout), ``value_scales``, ``name_to_genus``.
    The common-name -> genus map for the same-genus lift also reads the table's ``c2.common_name`` /
    ``c2.genus`` pairs.
    """
    global _DEFAULT_COLOR
    if isinstance(resources, KernelSet):
        return resources
    res = dict(resources or {})
    genus_of: dict[str, str] = {}
    if table is not None and "c2" in table.column_names and table.num_rows:
        names = pc.struct_field(table.column("c2"), "common_name").to_pylist()
        genera = pc.struct_field(table.column("c2"), "genus").to_pylist()
        for name, genus in zip(names, genera, strict=True):
            if name and genus:
                genus_of.setdefault(normalize(name), normalize(genus))
    for name, genus in (res.get("name_to_genus") or {}).items():
        genus_of[normalize(name)] = normalize(genus)
    if "color_anchors" in res or "color_mode" in res:
        color = ColorKernel(res.get("color_anchors"), mode=res.get("color_mode", "exp"))
    else:
        if _DEFAULT_COLOR is None:
            _DEFAULT_COLOR = ColorKernel()
        color = _DEFAULT_COLOR
    layout = res.get("anatomy_layout")
    if isinstance(layout, dict):
        layout = AnatomyLayout(layout)
    return KernelSet(color=color, layout=layout, scales=res.get("value_scales"), genus_of=genus_of)


def _c2_field(table: pa.Table, name: str, n: int) -> list:
    if "c2" not in table.column_names:
        return [None] * n
    return pc.struct_field(table.column("c2"), name).to_pylist()


def _kind_of_full(name: str, category: str) -> str:
    """Complete a kind-of answer with its category noun ("western" + gull -> "western gull")."""
    cat = normalize(category or "")
    if not name or not cat:
        return name
    cat_head = cat.split()[-1]
    return name if cat_head in name.split() else f"{name} {cat}"


def score_items(task_id: str, table: pa.Table, responses: list, kernels: KernelSet) -> tuple[dict, dict]:
    """Per-item columns and additive statistics of one task (or shard)."""
    n = table.num_rows
    if len(responses) != n:
        raise ValueError(f"{task_id}: {len(responses)} responses for {n} question rows")
    qids = table.column("qid").to_pylist()
    fams = table.column("family").to_pylist()
    questions = table.column("question").to_pylist()
    options = table.column("options").to_pylist()
    answers = table.column("answer").to_pylist()
    answer_idx = table.column("answer_index").to_pylist()
    parts = _c2_field(table, "part", n)
    props = _c2_field(table, "property", n)
    declared = _c2_field(table, "kernel", n)
    genera = _c2_field(table, "genus", n)
    common = _c2_field(table, "common_name", n)
    cats = _c2_field(table, "category", n)
    pools = _c2_field(table, "chance_pool", n)

    family_golds: dict[str, set[str]] = {}
    for fam, ans in zip(fams, answers, strict=True):
        if fam in OPEN_FAMILIES and ans:
            family_golds.setdefault(fam, set()).add(normalize(ans))
    sorted_golds = {fam: sorted(g) for fam, g in family_golds.items()}
    pool_cache: dict[tuple[str, str], tuple[str, ...]] = {}

    cols: dict[str, list] = {
        k: [None] * n
        for k in (
            "family",
            "category",
            "kernel",
            "gold",
            "parsed",
            "parse_ok",
            "parse_status",
            "resolution",
            "letter",
            "mismatch",
            "em",
            "s",
            "b",
            "cags",
            "severity",
            "score",
        )
    }
    fam_code = np.full(n, -1, dtype=np.int64)
    f_parse = np.zeros(n, dtype=bool)
    f_em = np.zeros(n, dtype=bool)
    f_mcq = np.zeros(n, dtype=bool)
    f_mis = np.zeros(n, dtype=bool)
    f_a = np.zeros(n, dtype=bool)
    f_route = np.zeros(n, dtype=bool)
    v_s = np.zeros(n)
    v_c = np.zeros(n)
    invalid: list[str] = []

    index_cache: dict[tuple, OptionIndex] = {}
    base_cache: dict[tuple, float] = {}
    kernel_cache: dict[tuple, str] = {}
    route_cache: dict[tuple, str | None] = {}
    fam_pos = {f: i for i, f in enumerate(FAMILIES)}

    for i in range(n):
        fam = fams[i]
        cols["family"][i] = fam
        cols["parse_ok"][i] = False
        try:
            if fam not in fam_pos:
                raise ValueError(f"unknown C2 family {fam!r}")
            cat = CATEGORY_OF_FAMILY[fam]
            part, prop = parts[i], props[i]
            kkey = (fam, part, prop, declared[i])
            kernel = kernel_cache.get(kkey)
            if kernel is None:
                kernel = kernel_cache[kkey] = kernel_for(fam, part, prop, declared[i])
            q = questions[i] or ""
            opts = tuple(options[i] or ())
            if not opts and "Options:" in q:
                opts = tuple(options_from_question(q))
            cut = q.find("Options:")
            stem = q[: cut if 0 <= cut < 200 else 200]
            rkey = (stem, opts) if "visible" in stem else (stem, bool(opts))
            routed = route_cache.get(rkey, "?")
            if routed == "?":
                routed = route_cache[rkey] = route_family(q, opts)
            f_route[i] = routed is not None and routed != fam
            response = responses[i]
            if opts:
                if fam in OPEN_FAMILIES:
                    raise ValueError(f"open family {fam!r} has options")
                ox = index_cache.get(opts)
                if ox is None:
                    ox = index_cache[opts] = OptionIndex(opts)
                gi = gold_index({"qid": qids[i], "answer_index": answer_idx[i], "answer": answers[i]}, ox)
                gold = ox.norm[gi]
                f = kernels.scorer(
                    kernel, family=fam, part=part, prop=prop, options=ox.norm, gold_genus=genera[i]
                )
                # b depends on the distractor set, not its order: the scorer (which carries the option
                # set where it matters) plus the sorted distractors identify it.
                others = tuple(sorted(t for k, t in enumerate(ox.norm) if k != gi))
                bkey = (f, others, gold)
                b = base_cache.get(bkey)
                if b is None:
                    b = base_cache[bkey] = chance_baseline(gold, others, f)
                parsed = resolve(response, ox)
                f_mcq[i] = True
                if parsed.ok:
                    choice = parsed.value
                    pi = choice.index
                    s = f(ox.norm[pi], gold)
                    em = pi == gi
                    cols["parsed"][i] = ox.texts[pi]
                    cols["letter"][i] = choice.letter
                    cols["resolution"][i] = choice.via
                    f_mis[i] = choice.mismatch
                    f_a[i] = pi == 0
                else:
                    s, em = 0.0, False
                    cols["resolution"][i] = parsed.status
                status = parsed.status
                cols["gold"][i] = ox.texts[gi]
            else:
                if fam not in OPEN_FAMILIES:
                    raise ValueError(f"multiple-choice family {fam!r} has no options")
                gold = normalize(answers[i] or "")
                if not gold:
                    raise ValueError("empty gold answer")
                pred, status = open_answer(response)
                category = cats[i] or ""
                if fam == "open_kind_of":
                    target = normalize(common[i]) if common[i] else _kind_of_full(gold, category)

                    def as_name(x: str, _c: str = category) -> str:
                        return _kind_of_full(x, _c)
                else:
                    target = gold

                    def as_name(x: str) -> str:
                        return x

                pool = tuple(normalize(p) for p in (pools[i] or ()))
                if not pool:
                    pool = pool_cache.get((fam, gold))
                    if pool is None:
                        pool = tuple(sample_chance_pool(gold, sorted_golds.get(fam, ())))
                        pool_cache[(fam, gold)] = pool
                f = kernels.scorer(kernel, family=fam, gold_genus=genera[i])
                bkey = (f, fam, gold, target, category, pool)
                b = base_cache.get(bkey)
                if b is None:
                    b = base_cache[bkey] = chance_baseline(target, [as_name(p) for p in pool], f)
                if status == "ok":
                    s = f(as_name(pred), target)
                    em = pred == gold
                    cols["parsed"][i] = pred
                else:
                    s, em = 0.0, False
                cols["resolution"][i] = "open" if status == "ok" else status
                cols["gold"][i] = answers[i]
            c = cags_value(s, b)
        except Exception as exc:  # a bad row is reported, the rest goes on
            reason = f"{type(exc).__name__}: {exc}"
            invalid.append(f"{qids[i]}: {reason}")
            cols["parse_status"][i] = "invalid_row"
            cols["resolution"][i] = reason[:200]
            continue
        ok = status == "ok"
        fam_code[i] = fam_pos[fam]
        f_parse[i] = ok
        f_em[i] = em
        v_s[i] = s
        v_c[i] = c
        cols["category"][i] = cat
        cols["kernel"][i] = kernel
        cols["parse_ok"][i] = ok
        cols["parse_status"][i] = status
        cols["mismatch"][i] = bool(f_mis[i])
        cols["em"][i] = bool(em)
        cols["s"][i] = s
        cols["b"][i] = b
        cols["cags"][i] = c
        cols["severity"][i] = None if em else 1.0 - c
        cols["score"][i] = c

    stats = _stats(fam_code, f_parse, f_em, f_mcq, f_mis, f_a, f_route, v_s, v_c)
    stats["n_rows"] = n
    stats["n_invalid"] = len(invalid)
    stats["invalid_rows"] = invalid
    return cols, stats


def _stats(fam_code, f_parse, f_em, f_mcq, f_mis, f_a, f_route, v_s, v_c) -> dict:
    """Additive sums per family (categories and totals are derived in :func:`reduce`)."""
    valid = fam_code >= 0
    k = len(FAMILIES)
    code = np.where(valid, fam_code, k)

    def per_family(weights) -> np.ndarray:
        return np.bincount(code, weights=np.asarray(weights, dtype=float), minlength=k + 1)[:k]

    wrong = valid & ~f_em
    is_open = valid & ~f_mcq
    sums = {
        "n": per_family(valid),
        "parse_ok": per_family(valid & f_parse),
        "em": per_family(valid & f_em),
        "s": per_family(np.where(valid, v_s, 0.0)),
        "cags": per_family(np.where(valid, v_c, 0.0)),
        "wrong": per_family(wrong),
        "sev": per_family(np.where(wrong, 1.0 - v_c, 0.0)),
        "mcq": per_family(valid & f_mcq),
        "mcq_parse_ok": per_family(valid & f_mcq & f_parse),
        "mcq_em": per_family(valid & f_mcq & f_em),
        "mismatch": per_family(valid & f_mis),
        "choose_a": per_family(valid & f_a),
        "open": per_family(is_open),
        "open_parse_ok": per_family(is_open & f_parse),
        "open_em": per_family(is_open & f_em),
        "route_mismatch": per_family(valid & f_route),
    }
    family = {}
    for j, fam in enumerate(FAMILIES):
        if sums["n"][j] > 0:
            family[fam] = {key: float(sums[key][j]) for key in _SUM_KEYS}
            family[fam]["cags_values"] = v_c[valid & (fam_code == j)].copy()
    return {"family": family, "cags_values": v_c[valid].copy()}


def _rates(d: dict) -> dict:
    def div(a: str, b: str) -> float:
        return d[a] / d[b] if d.get(b) else float("nan")

    return {
        "n": int(d["n"]),
        "cags": div("cags", "n"),
        "gs_raw": div("s", "n"),
        "em": div("em", "n"),
        "severity": div("sev", "wrong"),
        "parse_rate": div("parse_ok", "n"),
        "mismatch_rate": div("mismatch", "mcq"),
        "choose_a_rate": div("choose_a", "mcq_parse_ok"),
        "em_mcq": div("mcq_em", "mcq"),
        "em_open": div("open_em", "open"),
        "parse_rate_mcq": div("mcq_parse_ok", "mcq"),
        "parse_rate_open": div("open_parse_ok", "open"),
        "n_mcq": int(d["mcq"]),
        "n_open": int(d["open"]),
        "route_mismatch": int(d["route_mismatch"]),
    }


def reduce(task_id: str, stats: dict) -> dict:
    """Metrics of a task from (merged) statistics: headline = mean cags, plus the §F diagnostics."""
    fam_stats = stats.get("family", {})
    total = {key: 0.0 for key in _SUM_KEYS}
    by_cat: dict[str, dict] = {}
    for fam, d in fam_stats.items():
        cat = CATEGORY_OF_FAMILY[fam]
        acc = by_cat.setdefault(cat, {key: 0.0 for key in _SUM_KEYS})
        for key in _SUM_KEYS:
            total[key] += d[key]
            acc[key] += d[key]
    metrics: dict[str, Any] = {"headline": float("nan"), "headline_metric": "cags"}
    metrics.update(_rates(total))
    metrics["headline"] = metrics["cags"]
    values = np.asarray(stats.get("cags_values", np.zeros(0)), dtype=float)
    lo, hi = bootstrap_ci(values, n_boot=BOOTSTRAP_RESAMPLES)
    metrics["cags_ci_low"], metrics["cags_ci_high"] = float(lo), float(hi)
    metrics["n"] = int(stats.get("n_rows", total["n"]))
    metrics["n_scored"] = int(total["n"])
    metrics["n_invalid"] = int(stats.get("n_invalid", 0))
    metrics["invalid_rows"] = list(stats.get("invalid_rows", []))[:100]
    metrics["per_family"] = {f: _rates(fam_stats[f]) for f in FAMILIES if f in fam_stats}
    for fam, row in metrics["per_family"].items():
        if len(fam_stats) == 1:  # the task's only family: same items, same interval
            row["cags_ci_low"], row["cags_ci_high"] = metrics["cags_ci_low"], metrics["cags_ci_high"]
        else:
            vals = np.asarray(fam_stats[fam].get("cags_values", np.zeros(0)), dtype=float)
            row["cags_ci_low"], row["cags_ci_high"] = bootstrap_ci(vals, n_boot=BOOTSTRAP_RESAMPLES)
    metrics["per_category"] = {c: _rates(by_cat[c]) for c in CATEGORIES if c in by_cat}
    for cat, row in metrics["per_category"].items():
        if len(by_cat) == 1:
            row["cags_ci_low"], row["cags_ci_high"] = metrics["cags_ci_low"], metrics["cags_ci_high"]
        else:
            parts = [
                fam_stats[f]["cags_values"]
                for f in FAMILIES
                if f in fam_stats and CATEGORY_OF_FAMILY[f] == cat
            ]
            vals = np.concatenate([np.asarray(p, dtype=float) for p in parts]) if parts else np.zeros(0)
            row["cags_ci_low"], row["cags_ci_high"] = bootstrap_ci(vals, n_boot=BOOTSTRAP_RESAMPLES)
    return metrics


def score_task(
    task_id: str, table: pa.Table, responses: list[str | None], resources: Any = None
) -> TaskScore:
    """Contract 4 scorer for the C2 tasks (``c2.salience``, ``c2.morphology``, ``c2.localization``, ``c2.naming``)."""
    kernels = build_kernels(table, resources)
    items, stats = score_items(task_id, table, list(responses), kernels)
    return TaskScore(items=items, metrics=reduce(task_id, stats))


__all__ = [
    "CATEGORY_OF_FAMILY",
    "build_kernels",
    "category_of",
    "open_answer",
    "reduce",
    "score_items",
    "score_task",
]
