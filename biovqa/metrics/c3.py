"""C3 spatial scoring: the eight tasks' metrics, image-blind floors and lift (§4, §C.6, §G, Table 3).

Flow (Contract 4): parse each reply → per-item columns + additive statistics (numbers sum, arrays of the
parsed rows concatenate, so shards add up) → :func:`reduce`. Headlines follow Table 3's caption:

==========================  ===========================================================================
task                        headline (extra metrics)
==========================  ===========================================================================
c3.counting                 ``cas`` macro-averaged over corpora (micro cas, EM, Spearman ρ per corpus,
                            cas per tier, plate-cluster bootstrap CI)
c3.relative_counting        ``balanced_accuracy`` (accuracy, answer shares, accuracy per most/least)
c3.absolute_distance        ``acc20`` (ρ within type, ρ within plate, compression κ, bias-calibrated
                            acc@20, mean relative error, plate-cluster bootstrap CI)
c3.relative_distance        ``balanced_accuracy`` (as relative counting)
c3.localization             ``mean_iou`` with unparsed replies charged as zero (mean IoU of parsed,
                            acc@.25/.50/.75/.90, detected convention, IoU under all eight)
c3.relative_position        ``balanced_accuracy`` (accuracy, angular error, within45)
c3.viewpoint                ``macro_vas`` (VAS, EM, κVAS, angular error, over/under class shares)
c3.ocr                      ``exact_match`` (whole-code and suffix character accuracy, inflation)
==========================  ===========================================================================

Every task carries ``floor`` (eq. 24: the best image-blind rule, fitted and scored on the rows the
model parsed) and ``lift = (S − ϕ)/(1 − ϕ)``; ``lift_raw = S − ϕ`` is what Tables 44–45 print in their
"lift" column. :func:`floor_prediction` returns the floor rule's replies, so a floor "model" scored here
reproduces ``floor`` exactly.

Per-item columns (§K.6): ``parsed`` (the parsed value as text), ``parse_ok``, ``parse_status``,
``parse_detail``, ``gold``, ``score`` (the item's contribution to the headline: cas, 1/0, IoU, viewpoint
credit; NaN where the headline leaves the item out, i.e. unparsed or invalid rows, except localization,
which charges an unparsed reply 0) and task extras (``em``, ``rel_error``, ``iou``, ``convention``,
``angle_error``, ``outcome``, ``char_acc``, ``suffix_char_acc``). A row without a usable gold answer is
``parse_status="invalid_row"``, named with its qid and reason in ``metrics["errors"]`` (and the log),
counted in ``n_invalid`` and kept out of every metric. A missing reply (None) is an ``empty`` failure.

Choices where the paper is ambiguous or silent (each also noted where it is implemented):

* Metrics are over parsed rows, except localization's headline, which the paper charges (unparsed = 0).
  Table 3's caption is followed where §G names another headline (Table 38: ρ_within for absolute
  distance, accuracy for relative position, κVAS for viewpoint, suffix character accuracy for OCR);
  those are all reported too.
* Viewpoint headline: Table 3's "agreement over gold labels" with floor .170 is macroVAS (§G.3 gives
  .170 as macroVAS of constant *right*); Table 38 names κVAS, reported as ``kappa_vas``. The step
  credits (§G.3 gives only their order: full, partial, less, none at the opposite) are
  :data:`VIEWPOINT_CREDIT` = 1, .25, .10, 0, 0; with all ten labels present they give constant *right*
  macroVAS = 1.7/10 = .170, the paper's figure. up/down earn credit only for an exact match. κVAS is
  chance-corrected against the best constant answer on the same rows (so constant *right* scores 0).
* Absolute distance types are ``(object_type, measurement)``; compression κ = 1 − sd(pred)/sd(gold)
  within a type (1 for a constant answer, 0 for matching spread, §G.4); the calibrated acc@20 removes a
  per-type multiplicative bias (geometric mean of pred/gold), since a scale misreading is a factor; the
  floor constant per type is the one maximizing acc@20 (eq. 24: the best image-blind rule).
  acc@20 counts |pred − gold| ≤ 0.2·gold (inclusive, with 1e-9 slack for float round-off).
* Counting floor: the better (macro-cas) of the per-corpus modal count and the global modal count
  (ties → smaller count); cas with gold 0 is 1 for 0 and 0 otherwise. A constant prediction has ρ = 0.
* Localization floor: the better of the mean gold box (normalized per image, drawn scaled to each image)
  and the whole-image box (§C.6 names both).
* Relative position floor: answer the offered option whose direction is most frequent among the gold
  answers (ties → first offered). Relative counting/distance floor: the majority gold letter.
* OCR: character accuracy is position-wise (see :func:`biovqa.parse.code.char_accuracy`); the suffix
  starts at index 6: Table 47's (charAcc, suffixCharAcc) pairs fit charAcc ≈ (6 + 6·suffix)/12 within
  .013 for all six models listed (a 7-character prefix misses by up to .07), so the shared prefix is six
  characters ("A00000"). The constant-string floor is the per-position modal character.
* ``posBias`` (Table 44) is never defined in the paper; we report answer shares per option instead.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

from biovqa.metrics import stats
from biovqa.metrics.common import TaskScore, col, merge_stats
from biovqa.parse import boxes as box_mod
from biovqa.parse.code import SUFFIX_START, char_accuracy, parse_code
from biovqa.parse.labels import (
    DIRECTION_BEARING,
    LETTERS,
    VIEWPOINTS,
    canonical_direction,
    canonical_viewpoint,
    choice_gold,
    direction_steps,
    offered_directions,
    parse_choice_abcd,
    parse_direction,
    parse_viewpoint,
    viewpoint_outcome,
    viewpoint_steps,
)
from biovqa.parse.numbers import parse_integer, parse_number_cm
from biovqa.parse.result import Parsed

log = logging.getLogger(__name__)

TASKS = (
    "c3.counting",
    "c3.relative_counting",
    "c3.absolute_distance",
    "c3.relative_distance",
    "c3.localization",
    "c3.relative_position",
    "c3.viewpoint",
    "c3.ocr",
)
HEADLINE_METRIC = {
    "c3.counting": "cas",
    "c3.relative_counting": "balanced_accuracy",
    "c3.absolute_distance": "acc20",
    "c3.relative_distance": "balanced_accuracy",
    "c3.localization": "mean_iou",
    "c3.relative_position": "balanced_accuracy",
    "c3.viewpoint": "macro_vas",
    "c3.ocr": "exact_match",
}
#: credit of a viewpoint answer by 45° steps from the gold label (0 … 4); see the module docstring
VIEWPOINT_CREDIT = (1.0, 0.25, 0.10, 0.0, 0.0)
IOU_THRESHOLDS = (0.25, 0.50, 0.75, 0.90)
ACC20_TOLERANCE = 0.20
_EPS = 1e-9
N_BOOT = 1000


# ============================================================================== per-item metric functions
def cas(pred: float, gold: float) -> float:
    """Bounded count agreement max(0, 1 − |n̂ − n|/n) (eq. 23); gold 0 scores 1 only for 0."""
    if gold == 0:
        return 1.0 if pred == 0 else 0.0
    return max(0.0, 1.0 - abs(pred - gold) / gold)


def cas_many(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Vectorized :func:`cas`."""
    pred, gold = np.asarray(pred, float), np.asarray(gold, float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.maximum(0.0, 1.0 - np.abs(pred - gold) / np.where(gold == 0, 1.0, gold))
    return np.where(gold == 0, (pred == 0).astype(float), out)


def within20(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """acc@20 per item: |pred − gold| ≤ 0.2·gold."""
    pred, gold = np.asarray(pred, float), np.asarray(gold, float)
    return (np.abs(pred - gold) <= ACC20_TOLERANCE * gold + _EPS).astype(float)


def viewpoint_credit(gold: str, pred: str) -> float:
    """Graded credit v(y, ŷ) of a viewpoint answer (eq. 25)."""
    steps = viewpoint_steps(gold, pred)
    return 0.0 if steps is None else VIEWPOINT_CREDIT[steps]


def balanced_accuracy(pred, gold) -> float:
    """Mean recall over the gold classes present (NaN when there are no rows)."""
    pred, gold = np.asarray(pred), np.asarray(gold)
    if gold.size == 0:
        return float("nan")
    classes = np.unique(gold)
    return float(np.mean([np.mean(pred[gold == c] == c) for c in classes]))


def spearman(x, y) -> float:
    """Spearman ρ with average ranks; 0 when x is constant (a constant answer, §G.2), NaN when y is."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    return float(grouped_spearman(x, y, np.zeros(x.size, dtype=np.int64))[0][0]) if x.size else float("nan")


def grouped_spearman(x, y, groups) -> tuple[np.ndarray, np.ndarray]:
    """Spearman ρ of x against y within each group (vectorized); returns (ρ per group code, group sizes).

    ``groups`` are integer codes 0…G−1. A group with fewer than two items or constant y gets NaN; constant
    x (with varying y) gets 0, the paper's value for a constant answer.
    """
    x, y = np.asarray(x, float), np.asarray(y, float)
    g = np.asarray(groups, dtype=np.int64)
    n_groups = int(g.max()) + 1 if g.size else 0
    size = np.bincount(g, minlength=n_groups).astype(float)
    rx, ry = _grouped_ranks(x, g), _grouped_ranks(y, g)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = rx - (np.bincount(g, rx, n_groups) / size)[g]
        dy = ry - (np.bincount(g, ry, n_groups) / size)[g]
        sxx = np.bincount(g, dx * dx, n_groups)
        syy = np.bincount(g, dy * dy, n_groups)
        sxy = np.bincount(g, dx * dy, n_groups)
        rho = np.where(sxx > 1e-12, sxy / np.sqrt(sxx * syy), 0.0)
    rho = np.where((size < 2) | (syy <= 1e-12), np.nan, np.clip(rho, -1.0, 1.0))
    return rho, size


def _grouped_ranks(v: np.ndarray, g: np.ndarray) -> np.ndarray:
    """1-based ranks of v within each group, ties sharing their average rank."""
    n = v.size
    if n == 0:
        return v.astype(float)
    order = np.lexsort((v, g))
    vs, gs = v[order], g[order]
    idx = np.arange(n)
    new_group = np.r_[True, gs[1:] != gs[:-1]]
    pos = idx - np.maximum.accumulate(np.where(new_group, idx, 0)) + 1.0
    run = np.cumsum(np.r_[True, (gs[1:] != gs[:-1]) | (vs[1:] != vs[:-1])]) - 1
    avg = np.bincount(run, weights=pos) / np.bincount(run)
    ranks = np.empty(n, dtype=float)
    ranks[order] = avg[run]
    return ranks


def _codes(keys: np.ndarray) -> tuple[list, np.ndarray]:
    uniq, inv = np.unique(keys, return_inverse=True)
    return uniq.tolist(), inv.ravel().astype(np.int64)


def lift(score: float, floor: float) -> float:
    """(S − ϕ)/(1 − ϕ) (eq. 24); NaN when the floor is already perfect."""
    if floor is None or not np.isfinite(floor) or not np.isfinite(score) or floor >= 1.0:
        return float("nan")
    return (score - floor) / (1.0 - floor)


# ===================================================================================== floor rules
def _mode(values: np.ndarray):
    """Most frequent value; ties → the smallest (sort order)."""
    uniq, counts = np.unique(values, return_counts=True)
    return uniq[int(np.argmax(counts))]


def _macro(values: np.ndarray, groups: np.ndarray) -> float:
    if values.size == 0:
        return float("nan")
    _, inv = np.unique(groups, return_inverse=True)
    sums = np.bincount(inv.ravel(), weights=values)
    counts = np.bincount(inv.ravel())
    return float(np.mean(sums / counts))


def floor_counting(gold: np.ndarray, corpus: np.ndarray) -> np.ndarray:
    """Modal count: per corpus or overall, whichever scores the higher macro-cas (ties → per corpus)."""
    gold = np.asarray(gold)
    if gold.size == 0:
        return gold.astype(np.int64)
    per_corpus = np.empty(gold.size, dtype=np.int64)
    for c in np.unique(corpus):
        mask = corpus == c
        per_corpus[mask] = _mode(gold[mask])
    overall = np.full(gold.size, _mode(gold), dtype=np.int64)
    if _macro(cas_many(overall, gold), corpus) > _macro(cas_many(per_corpus, gold), corpus):
        return overall
    return per_corpus


def floor_majority(gold: np.ndarray) -> np.ndarray:
    """The most frequent gold label for every row (ties → first in sort order)."""
    gold = np.asarray(gold)
    if gold.size == 0:
        return gold
    return np.full(gold.size, _mode(gold), dtype=gold.dtype)


def _best_acc20_constant(gold: np.ndarray) -> float:
    # acc@20 of a constant c counts golds with 0.8 g ≤ c ≤ 1.2 g; the best c is a left end 0.8 g.
    lo = np.sort((1 - ACC20_TOLERANCE) * gold)
    hi = np.sort((1 + ACC20_TOLERANCE) * gold)
    cover = np.searchsorted(lo, lo, side="right") - np.searchsorted(hi, lo, side="left")
    return float(lo[int(np.argmax(cover))])  # argmax: the smallest best constant


def floor_distance(gold: np.ndarray, types: np.ndarray) -> np.ndarray:
    """Per-type constant: the one length per measurement type that maximizes acc@20 on these rows."""
    out = np.empty(np.asarray(gold).size, dtype=float)
    for t in np.unique(types):
        mask = types == t
        out[mask] = _best_acc20_constant(gold[mask])
    return out


def floor_boxes(gold: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Absolute xywh boxes of the better of the mean normalized gold box and the whole-image box."""
    gold = np.asarray(gold, float).reshape(-1, 4)
    sizes = np.asarray(sizes, float).reshape(-1, 2)
    if gold.shape[0] == 0:
        return gold
    wh = np.concatenate([sizes, sizes], axis=1)
    mean_box = (gold / wh).mean(axis=0) * wh
    whole = np.concatenate([np.zeros_like(sizes), sizes], axis=1)
    if box_mod.iou_many(whole, gold).mean() > box_mod.iou_many(mean_box, gold).mean():
        return whole
    return mean_box


def floor_position(gold: np.ndarray, offered: list[tuple[str, ...]]) -> np.ndarray:
    """Per row, the offered direction that is most frequent among the gold answers (ties → first offered)."""
    uniq, counts = np.unique(np.asarray(gold), return_counts=True)
    freq = dict(zip(uniq.tolist(), counts.tolist(), strict=True))
    out = []
    for opts in offered:
        best, best_n = opts[0], -1
        for o in opts:
            if freq.get(o, 0) > best_n:
                best, best_n = o, freq.get(o, 0)
        out.append(best)
    return np.asarray(out, dtype=object).astype(str) if out else np.asarray([], dtype=str)


def floor_viewpoint(gold: np.ndarray) -> np.ndarray:
    """The constant label with the best macroVAS on these rows (ties → the more frequent gold label)."""
    gold = np.asarray(gold)
    if gold.size == 0:
        return gold
    uniq, counts = np.unique(gold, return_counts=True)
    freq = dict(zip(uniq.tolist(), counts.tolist(), strict=True))
    best, best_key = VIEWPOINTS[0], (-1.0, -1)
    for label in VIEWPOINTS:
        credit = np.array([viewpoint_credit(g, label) for g in uniq.tolist()])
        key = (round(float(credit.mean()), 12), freq.get(label, 0))
        if key > best_key:
            best, best_key = label, key
    return np.full(gold.size, best, dtype=object).astype(str)


def floor_code(gold: np.ndarray) -> np.ndarray:
    """The constant string of per-position modal characters (ties → smallest character)."""
    gold = [str(g) for g in np.asarray(gold).tolist()]
    if not gold:
        return np.asarray([], dtype=str)
    length = max(len(g) for g in gold)
    chars = []
    for i in range(length):
        at = [g[i] for g in gold if len(g) > i]
        chars.append(str(_mode(np.asarray(at))))
    # a position most codes lack is left out (it would only cost accuracy on the others)
    keep = [c for i, c in enumerate(chars) if sum(len(g) > i for g in gold) * 2 > len(gold)]
    return np.full(len(gold), "".join(keep), dtype=object).astype(str)


# ========================================================================================= row access
def _field(table: pa.Table, name: str, n: int) -> list:
    """A column (or ``struct.field``) as a list; all None when absent, e.g. in a schema inferred from
    dicts where a struct column was entirely null."""
    top, _, sub = name.partition(".")
    if top not in table.column_names:
        return [None] * n
    if sub:
        typ = table.schema.field(top).type
        if not pa.types.is_struct(typ) or typ.get_field_index(sub) < 0:
            return [None] * n
    return col(table, name)


def _first(*values):
    for v in values:
        if v is not None and v != "":
            return v
    return None


class _Rows:
    """The columns of a task's question rows that the scorers read."""

    def __init__(self, table: pa.Table):
        n = self.n = table.num_rows
        f = lambda name: _field(table, name, n)  # noqa: E731
        self.qid = f("qid")
        self.source = f("source")
        self.answer = f("answer")
        self.answer_index = f("answer_index")
        self.options = f("options")
        c3 = {
            k: f(f"c3.{k}")
            for k in (
                "corpus",
                "tier",
                "counts",
                "target_panel",
                "gold_value",
                "measurement",
                "gold_box",
                "image_width",
                "image_height",
                "plate_id",
                "species",
                "viewpoint",
                "direction",
                "code",
                "object_type",
            )
        }
        self.c3 = c3
        self.ref_w = f("image_ref.width")
        self.ref_h = f("image_ref.height")

    def corpus(self, i: int) -> str:
        return str(_first(self.c3["corpus"][i], self.source[i], "unknown"))

    def plate(self, i: int) -> str:
        return str(_first(self.c3["plate_id"][i], self.qid[i], f"row{i}"))

    def context(self, i: int) -> dict:
        return {"options": self.options[i] or []}


def _number(v) -> float | None:
    if v is None:
        return None
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


# Gold extraction: (gold, extras) or raises ValueError(reason).
def _gold_count(r: _Rows, i: int):
    g = _number(r.c3["gold_value"][i])
    if g is None:
        counts, panel = r.c3["counts"][i], r.c3["target_panel"][i]
        if counts and panel is not None and 0 <= panel < len(counts):
            g = _number(counts[panel])
        elif counts and len(counts) == 1:
            g = _number(counts[0])
    if g is None or g < 0 or g != int(g):
        raise ValueError(f"no usable gold count (c3.gold_value={r.c3['gold_value'][i]!r})")
    return int(g)


def _gold_choice(r: _Rows, i: int):
    g = choice_gold(r.answer_index[i], r.answer[i], r.options[i])
    if g is None:
        raise ValueError(f"no gold letter (answer_index={r.answer_index[i]!r}, answer={r.answer[i]!r})")
    return g


def _gold_length(r: _Rows, i: int):
    g = _number(r.c3["gold_value"][i])
    if g is None or g <= 0:
        raise ValueError(f"no positive gold length (c3.gold_value={r.c3['gold_value'][i]!r})")
    return g


def _gold_box(r: _Rows, i: int):
    box = r.c3["gold_box"][i]
    w = _number(_first(r.c3["image_width"][i], r.ref_w[i]))
    h = _number(_first(r.c3["image_height"][i], r.ref_h[i]))
    if not box or len(box) != 4 or any(_number(v) is None for v in box):
        raise ValueError(f"gold_box is not four numbers ({box!r})")
    if box[2] <= 0 or box[3] <= 0:
        raise ValueError(f"gold_box has no area ({box!r})")
    if not w or not h or w <= 0 or h <= 0:
        raise ValueError("image width/height missing (c3.image_width/height and image_ref)")
    return (tuple(float(v) for v in box), (w, h))


def _gold_direction(r: _Rows, i: int):
    raw = _first(r.c3["direction"][i], r.answer[i])
    g = canonical_direction(raw)
    if g is None or g not in DIRECTION_BEARING:
        raise ValueError(f"gold direction {raw!r} is not one of the eight")
    return g


def _gold_viewpoint(r: _Rows, i: int):
    raw = _first(r.c3["viewpoint"][i], r.answer[i])
    g = canonical_viewpoint(raw) if isinstance(raw, str) and len(raw) <= 20 else None
    # the whole gold string must be one label ("front-left", "Left"), not a phrase that mentions one
    if g is None or len(raw.replace("-", " ").replace("_", " ").split()) > 2:
        raise ValueError(f"gold viewpoint {raw!r} is not one of the ten labels")
    return g


def _gold_code(r: _Rows, i: int):
    raw = _first(r.c3["code"][i], r.answer[i])
    if not raw or not str(raw).strip():
        raise ValueError("no gold code (c3.code and answer empty)")
    return str(raw).strip()


_PARSERS: dict[str, Callable[..., Parsed]] = {
    "c3.counting": parse_integer,
    "c3.relative_counting": parse_choice_abcd,
    "c3.absolute_distance": parse_number_cm,
    "c3.relative_distance": parse_choice_abcd,
    "c3.localization": box_mod.parse_box,
    "c3.relative_position": parse_direction,
    "c3.viewpoint": parse_viewpoint,
    "c3.ocr": parse_code,
}
_GOLD = {
    "c3.counting": _gold_count,
    "c3.relative_counting": _gold_choice,
    "c3.absolute_distance": _gold_length,
    "c3.relative_distance": _gold_choice,
    "c3.localization": _gold_box,
    "c3.relative_position": _gold_direction,
    "c3.viewpoint": _gold_viewpoint,
    "c3.ocr": _gold_code,
}


_NEEDS_OPTIONS = frozenset({"c3.relative_counting", "c3.relative_distance", "c3.relative_position"})


def _check_task(task_id: str) -> None:
    if task_id not in _PARSERS:
        raise KeyError(f"unknown C3 task {task_id!r}; expected one of {TASKS}")


def _golds(task_id: str, r: _Rows) -> tuple[list, list[str]]:
    golds, errors = [], []
    fn = _GOLD[task_id]
    for i in range(r.n):
        try:
            golds.append(fn(r, i))
        except ValueError as exc:
            golds.append(None)
            errors.append(f"row {i} (qid {r.qid[i]!r}): {exc}")
    return golds, errors


def _format_value(task_id: str, value) -> str | None:
    if value is None:
        return None
    if task_id == "c3.localization":
        return box_mod.format_box(value)
    if task_id == "c3.absolute_distance":
        return repr(float(value))
    return str(value)


# ============================================================================ items and additive stats
def item_stats(
    task_id: str, table: pa.Table, responses: list[str | None], resources: Any = None
) -> tuple[dict[str, list], dict, list[str]]:
    """Per-item columns, the additive statistics of this shard, and the row errors (invalid gold).

    Localization items use the convention detected on *these* rows (or ``resources["box_convention"]``);
    :func:`reduce` re-detects on the merged statistics, so give a small shard the model's convention.
    """
    _check_task(task_id)
    r = _Rows(table)
    if len(responses) != r.n:
        raise ValueError(f"{task_id}: {r.n} question rows but {len(responses)} responses")
    golds, errors = _golds(task_id, r)
    for e in errors:
        log.warning("%s: %s", task_id, e)
    parser = _PARSERS[task_id]
    parsed: list[Parsed] = []
    for i, resp in enumerate(responses):
        ctx = r.context(i) if task_id in _NEEDS_OPTIONS else None
        try:
            parsed.append(parser(resp, ctx))
        except Exception as exc:  # Contract 3: a parser bug is a recorded failure, never a crash
            parsed.append(Parsed.fail("parser_error", f"{type(exc).__name__}: {exc}"))
    valid = [g is not None for g in golds]
    ok = [p.ok and v for p, v in zip(parsed, valid, strict=True)]
    items: dict[str, list] = {
        "parsed": [_format_value(task_id, p.value) if p.ok else None for p in parsed],
        "parse_ok": ok,
        "parse_status": [
            ("invalid_row" if not v else (p.status if not p.ok else "ok"))
            for p, v in zip(parsed, valid, strict=True)
        ],
        "parse_detail": [p.detail for p in parsed],
    }
    statuses: dict[str, int] = {}
    for s in items["parse_status"]:
        statuses[s] = statuses.get(s, 0) + 1
    idx = [i for i in range(r.n) if ok[i]]
    st: dict[str, Any] = {
        "n": r.n,
        "n_invalid": r.n - sum(valid),
        "n_parsed": len(idx),
        "n_unanswered": sum(resp is None for resp in responses),
        "parse_status": statuses,
    }
    _TASK_ITEMS[task_id](r, golds, parsed, idx, valid, items, st, resources)
    return items, st, errors


def _nan_scores(n: int) -> list[float]:
    return [float("nan")] * n


def _items_counting(r, golds, parsed, idx, valid, items, st, resources):
    pred = np.array([parsed[i].value for i in idx], dtype=np.int64)
    gold = np.array([golds[i] for i in idx], dtype=np.int64)
    per = cas_many(pred, gold)
    score, em = _nan_scores(r.n), [None] * r.n
    for k, i in enumerate(idx):
        score[i] = float(per[k])
        em[i] = bool(pred[k] == gold[k])
    items.update(score=score, gold=[None if g is None else str(g) for g in golds], em=em)
    st.update(
        pred=pred,
        gold=gold,
        corpus=np.array([r.corpus(i) for i in idx], dtype=str),
        tier=np.array([str(r.c3["tier"][i] or "") for i in idx], dtype=str),
        plate=np.array([r.plate(i) for i in idx], dtype=str),
    )


def _items_choice(r, golds, parsed, idx, valid, items, st, resources):
    pred = np.array([parsed[i].value for i in idx], dtype="<U1")
    gold = np.array([golds[i] for i in idx], dtype="<U1")
    score = _nan_scores(r.n)
    for k, i in enumerate(idx):
        score[i] = float(pred[k] == gold[k])
    items.update(score=score, gold=golds)
    st.update(
        pred=pred,
        gold=gold,
        group=np.array([str(r.c3["measurement"][i] or "") for i in idx], dtype=str),
    )


def _type_key(r: _Rows, i: int) -> str:
    parts = [r.c3["object_type"][i], r.c3["measurement"][i]]
    return "/".join(str(p) for p in parts if p) or "all"


def _items_distance(r, golds, parsed, idx, valid, items, st, resources):
    pred = np.array([parsed[i].value for i in idx], dtype=float)
    gold = np.array([golds[i] for i in idx], dtype=float)
    hit = within20(pred, gold)
    score, rel = _nan_scores(r.n), [None] * r.n
    for k, i in enumerate(idx):
        score[i] = float(hit[k])
        rel[i] = float(abs(pred[k] - gold[k]) / gold[k])
    items.update(score=score, gold=[None if g is None else repr(g) for g in golds], rel_error=rel)
    st.update(
        pred=pred,
        gold=gold,
        type=np.array([_type_key(r, i) for i in idx], dtype=str),
        plate=np.array([r.plate(i) for i in idx], dtype=str),
    )


def _items_localization(r, golds, parsed, idx, valid, items, st, resources):
    raw = np.array([parsed[i].value for i in idx], dtype=float).reshape(-1, 4)
    gold = np.array([golds[i][0] for i in idx], dtype=float).reshape(-1, 4)
    sizes = np.array([golds[i][1] for i in idx], dtype=float).reshape(-1, 2)
    convention = _convention(raw, gold, sizes, resources)
    ious = box_mod.iou_many(box_mod.to_abs_xywh_many(raw, convention, sizes), gold)
    score: list[float] = [0.0 if v else float("nan") for v in valid]  # unparsed replies are charged zero
    for k, i in enumerate(idx):
        score[i] = float(ious[k])
    items.update(
        score=score,
        gold=[None if g is None else box_mod.format_box(g[0]) for g in golds],
        iou=[score[i] if ok_i else None for i, ok_i in enumerate(_mask(idx, r.n))],
        convention=[convention] * r.n,
    )
    st.update(
        raw=raw,
        gold=gold,
        size=sizes,
        n_prompt_example=sum(parsed[i].detail == "prompt_example" for i in idx),
    )


def _mask(idx: list[int], n: int) -> list[bool]:
    out = [False] * n
    for i in idx:
        out[i] = True
    return out


def _convention(raw, gold, sizes, resources) -> str:
    forced = (resources or {}).get("box_convention") if isinstance(resources, dict) else None
    if forced:
        if forced not in box_mod.CONVENTIONS:
            raise ValueError(f"resources['box_convention']={forced!r} is not one of {box_mod.CONVENTIONS}")
        return forced
    return box_mod.detect_convention(raw, gold, sizes)


def _items_position(r, golds, parsed, idx, valid, items, st, resources):
    pred = np.array([parsed[i].value for i in idx], dtype=object).astype(str)
    gold = np.array([golds[i] for i in idx], dtype=object).astype(str)
    score, angle = _nan_scores(r.n), [None] * r.n
    for k, i in enumerate(idx):
        score[i] = float(pred[k] == gold[k])
        angle[i] = 45.0 * direction_steps(gold[k], pred[k])
    items.update(score=score, gold=golds, angle_error=angle)
    st.update(
        pred=pred,
        gold=gold,
        offered=np.array(["|".join(offered_directions(r.context(i))) for i in idx], dtype=object).astype(str),
    )


def _items_viewpoint(r, golds, parsed, idx, valid, items, st, resources):
    pred = np.array([parsed[i].value for i in idx], dtype=object).astype(str)
    gold = np.array([golds[i] for i in idx], dtype=object).astype(str)
    score, outcome = _nan_scores(r.n), [None] * r.n
    for k, i in enumerate(idx):
        score[i] = viewpoint_credit(gold[k], pred[k])
        outcome[i] = viewpoint_outcome(gold[k], pred[k])
    items.update(score=score, gold=golds, outcome=outcome)
    st.update(
        pred=pred,
        gold=gold,
        tier=np.array([str(r.c3["tier"][i] or "") for i in idx], dtype=object).astype(str),
    )


def _items_ocr(r, golds, parsed, idx, valid, items, st, resources):
    pred = np.array([parsed[i].value for i in idx], dtype=object).astype(str)
    gold = np.array([golds[i] for i in idx], dtype=object).astype(str)
    score, ca, sa = _nan_scores(r.n), [None] * r.n, [None] * r.n
    for k, i in enumerate(idx):
        score[i] = float(pred[k] == gold[k])
        ca[i] = char_accuracy(pred[k], gold[k])
        sa[i] = char_accuracy(pred[k], gold[k], SUFFIX_START)
    items.update(score=score, gold=golds, char_acc=ca, suffix_char_acc=sa)
    st.update(pred=pred, gold=gold)


_TASK_ITEMS = {
    "c3.counting": _items_counting,
    "c3.relative_counting": _items_choice,
    "c3.absolute_distance": _items_distance,
    "c3.relative_distance": _items_choice,
    "c3.localization": _items_localization,
    "c3.relative_position": _items_position,
    "c3.viewpoint": _items_viewpoint,
    "c3.ocr": _items_ocr,
}


# ================================================================================================ reduce
def _nan() -> float:
    return float("nan")


def _reduce_counting(st: dict, m: dict, n_boot: int) -> None:
    pred, gold, corpus = st["pred"], st["gold"], st["corpus"]
    per = cas_many(pred, gold)
    m["cas"] = _macro(per, corpus)
    m["cas_micro"] = float(per.mean()) if per.size else _nan()
    m["em"] = float(np.mean(pred == gold)) if per.size else _nan()
    m["cas_by_corpus"] = {c: float(per[corpus == c].mean()) for c in np.unique(corpus).tolist()}
    names, codes = _codes(corpus)
    rho, _ = grouped_spearman(pred, gold, codes)
    m["spearman_by_corpus"] = {c: float(r) for c, r in zip(names, rho.tolist(), strict=True)}
    rhos = [v for v in m["spearman_by_corpus"].values() if np.isfinite(v)]
    m["spearman_mean"] = float(np.mean(rhos)) if rhos else _nan()
    m["cas_by_tier"] = {
        t: _macro(per[st["tier"] == t], corpus[st["tier"] == t]) for t in np.unique(st["tier"]).tolist()
    }
    fp = floor_counting(gold, corpus)
    m["floor"] = _macro(cas_many(fp, gold), corpus)
    m["floor_em"] = float(np.mean(fp == gold)) if per.size else _nan()
    m["cas_ci"] = _cluster_macro_ci(per, corpus, st["plate"], n_boot)


def _reduce_choice(st: dict, m: dict, n_boot: int) -> None:
    pred, gold = st["pred"], st["gold"]
    m["balanced_accuracy"] = balanced_accuracy(pred, gold)
    m["accuracy"] = float(np.mean(pred == gold)) if gold.size else _nan()
    m["answer_share"] = {
        letter: float(np.mean(pred == letter)) if pred.size else _nan() for letter in LETTERS
    }
    m["max_answer_share"] = max(m["answer_share"].values()) if pred.size else _nan()
    m["accuracy_by_group"] = {
        g: float(np.mean(pred[st["group"] == g] == gold[st["group"] == g]))
        for g in np.unique(st["group"]).tolist()
    }
    fp = floor_majority(gold)
    m["floor"] = balanced_accuracy(fp, gold)
    m["floor_answer"] = str(fp[0]) if fp.size else None


def _reduce_distance(st: dict, m: dict, n_boot: int) -> None:
    pred, gold, types, plate = st["pred"], st["gold"], st["type"], st["plate"]
    hit = within20(pred, gold)
    m["acc20"] = float(hit.mean()) if hit.size else _nan()
    m["mean_relative_error"] = float(np.mean(np.abs(pred - gold) / gold)) if hit.size else _nan()
    by_type: dict[str, dict] = {}
    calibrated = np.empty_like(pred)
    type_names, type_codes = _codes(types)
    type_rho, _ = grouped_spearman(pred, gold, type_codes)
    for k, t in enumerate(type_names):
        mask = type_codes == k
        p, g = pred[mask], gold[mask]
        sd_g = float(np.std(g))
        bias = float(np.exp(np.mean(np.log(p / g))))
        calibrated[mask] = p / bias
        by_type[t] = {
            "n": int(mask.sum()),
            "acc20": float(within20(p, g).mean()),
            "rho": float(type_rho[k]),
            "compression_kappa": 1.0 - float(np.std(p)) / sd_g if sd_g > 0 else _nan(),
            "scale_bias": bias,
        }
    m["by_type"] = by_type
    m["rho_within"] = _weighted(by_type, "rho")
    m["compression_kappa"] = _weighted(by_type, "compression_kappa")
    m["acc20_calibrated"] = float(within20(calibrated, gold).mean()) if hit.size else _nan()
    # ρ within each (plate, type) group of at least three specimens, item-weighted (Table 38's wording)
    plate_codes = _codes(plate)[1]
    _, group_codes = np.unique(plate_codes * max(1, len(type_names)) + type_codes, return_inverse=True)
    plate_rho, plate_n = grouped_spearman(pred, gold, group_codes.ravel())
    keep = (plate_n >= 3) & np.isfinite(plate_rho)
    m["rho_within_plate"] = (
        float(np.average(plate_rho[keep], weights=plate_n[keep])) if keep.any() else _nan()
    )
    fp = floor_distance(gold, types)
    m["floor"] = float(within20(fp, gold).mean()) if hit.size else _nan()
    m["floor_constants"] = {t: float(fp[types == t][0]) for t in np.unique(types).tolist()}
    m["acc20_ci"] = (
        stats.bootstrap_mean_ci(hit, n_boot=n_boot, seed=stats.SEED, clusters=plate)
        if hit.size
        else (_nan(), _nan())
    )


def _weighted(by_type: dict, key: str) -> float:
    vals = [(v[key], v["n"]) for v in by_type.values() if np.isfinite(v[key])]
    if not vals:
        return _nan()
    return float(np.average([v for v, _ in vals], weights=[w for _, w in vals]))


def _reduce_localization(st: dict, m: dict, n_boot: int, resources: Any = None) -> None:
    raw, gold, sizes = st["raw"].reshape(-1, 4), st["gold"].reshape(-1, 4), st["size"].reshape(-1, 2)
    m["iou_by_convention"] = box_mod.mean_iou_by_convention(raw, gold, sizes)
    convention = _convention(raw, gold, sizes, resources)
    ious = box_mod.iou_many(box_mod.to_abs_xywh_many(raw, convention, sizes), gold)
    n_valid = st["n"] - st["n_invalid"]
    m["convention"] = convention
    m["mean_iou_parsed"] = float(ious.mean()) if ious.size else _nan()
    m["mean_iou"] = float(ious.sum() / n_valid) if n_valid else _nan()  # unparsed replies charged zero
    for t in IOU_THRESHOLDS:
        m[f"acc@{t:.2f}"] = float(np.mean(ious >= t)) if ious.size else _nan()
    m["prompt_example_share"] = st["n_prompt_example"] / len(ious) if ious.size else _nan()
    fb = floor_boxes(gold, sizes)
    m["floor"] = float(box_mod.iou_many(fb, gold).mean()) if ious.size else _nan()


def _reduce_position(st: dict, m: dict, n_boot: int) -> None:
    pred, gold = st["pred"], st["gold"]
    m["balanced_accuracy"] = balanced_accuracy(pred, gold)
    m["accuracy"] = float(np.mean(pred == gold)) if gold.size else _nan()
    steps = np.array([direction_steps(g, p) for g, p in zip(gold.tolist(), pred.tolist(), strict=True)])
    m["angular_error"] = float(45.0 * steps.mean()) if steps.size else _nan()
    m["within45"] = float(np.mean(steps <= 1)) if steps.size else _nan()
    m["answer_share"] = {d: float(np.mean(pred == d)) for d in DIRECTION_BEARING} if pred.size else {}
    offered = [tuple(o.split("|")) for o in st["offered"].tolist()]
    fp = floor_position(gold, offered)
    m["floor"] = balanced_accuracy(fp, gold)
    m["floor_accuracy"] = float(np.mean(fp == gold)) if gold.size else _nan()


def _macro_vas(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float, np.ndarray]:
    credit = np.array([viewpoint_credit(g, p) for g, p in zip(gold.tolist(), pred.tolist(), strict=True)])
    if credit.size == 0:
        return _nan(), _nan(), credit
    return float(credit.mean()), _macro(credit, gold), credit


def _reduce_viewpoint(st: dict, m: dict, n_boot: int) -> None:
    pred, gold = st["pred"], st["gold"]
    vas, macro, credit = _macro_vas(pred, gold)
    m["vas"], m["macro_vas"] = vas, macro
    m["em"] = float(np.mean(pred == gold)) if gold.size else _nan()
    outcomes = [viewpoint_outcome(g, p) for g, p in zip(gold.tolist(), pred.tolist(), strict=True)]
    m["outcome_share"] = {
        k: (outcomes.count(k) / len(outcomes) if outcomes else _nan())
        for k in ("exact", "over", "under", "two_steps", "three_steps", "opposite", "off_ring")
    }
    ring = [viewpoint_steps(g, p) for g, p in zip(gold.tolist(), pred.tolist(), strict=True)]
    ring = [s for s in ring if s is not None]
    m["angular_error"] = 45.0 * float(np.mean(ring)) if ring else _nan()
    m["angular_coverage"] = len(ring) / len(outcomes) if outcomes else _nan()
    m["macro_vas_by_tier"] = {
        t: _macro(credit[st["tier"] == t], gold[st["tier"] == t]) for t in np.unique(st["tier"]).tolist()
    }
    fp = floor_viewpoint(gold)
    f_vas, f_macro, _ = _macro_vas(fp, gold)
    m["floor"] = f_macro
    m["floor_answer"] = str(fp[0]) if fp.size else None
    m["floor_em"] = float(np.mean(fp == gold)) if gold.size else _nan()
    m["floor_vas"] = f_vas
    m["kappa_vas"] = lift(macro, f_macro)


def _reduce_ocr(st: dict, m: dict, n_boot: int) -> None:
    pred, gold = st["pred"].tolist(), st["gold"].tolist()

    def scores(p_list):
        em = float(np.mean([p == g for p, g in zip(p_list, gold, strict=True)])) if gold else _nan()
        ca = (
            float(np.mean([char_accuracy(p, g) for p, g in zip(p_list, gold, strict=True)]))
            if gold
            else _nan()
        )
        sa = [char_accuracy(p, g, SUFFIX_START) for p, g in zip(p_list, gold, strict=True)]
        sa = float(np.nanmean(sa)) if gold and not np.all(np.isnan(sa)) else _nan()
        return em, ca, sa

    m["exact_match"], m["char_acc"], m["suffix_char_acc"] = scores(pred)
    m["inflation"] = m["char_acc"] - m["suffix_char_acc"]
    m["format_share"] = (
        float(np.mean([len(p) == 12 and p.startswith("A") and p[1:].isdigit() for p in pred]))
        if pred
        else _nan()
    )
    fp = floor_code(st["gold"]).tolist()
    m["floor"], m["floor_char_acc"], m["floor_suffix_char_acc"] = scores(fp)
    m["floor_answer"] = fp[0] if fp else None
    m["lift_suffix_char_acc"] = lift(m["suffix_char_acc"], m["floor_suffix_char_acc"])


def _cluster_macro_ci(values, groups, clusters, n_boot: int, seed: int = stats.SEED) -> tuple[float, float]:
    """Percentile CI of a macro mean over groups, resampling whole clusters (plates, §L.3)."""
    if values.size == 0:
        return (_nan(), _nan())
    _, cl = np.unique(clusters, return_inverse=True)
    _, gr = np.unique(groups, return_inverse=True)
    cl, gr = cl.ravel(), gr.ravel()
    n_cl, n_gr = int(cl.max()) + 1, int(gr.max()) + 1
    sums = np.zeros((n_cl, n_gr))
    counts = np.zeros((n_cl, n_gr))
    np.add.at(sums, (cl, gr), values)
    np.add.at(counts, (cl, gr), 1.0)
    rng = np.random.default_rng(seed)
    out = np.empty(n_boot)
    chunk = max(1, 4_000_000 // n_cl)
    for start in range(0, n_boot, chunk):
        b = min(n_boot, start + chunk) - start
        # draw n_cl clusters with replacement per replicate; count each cluster's draws
        drawn = rng.integers(0, n_cl, size=(b, n_cl)) + (np.arange(b) * n_cl)[:, None]
        draws = np.bincount(drawn.ravel(), minlength=b * n_cl).reshape(b, n_cl).astype(float)
        s, c = draws @ sums, draws @ counts
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + b] = np.nanmean(np.where(c > 0, s / np.where(c > 0, c, 1.0), np.nan), axis=1)
    return stats.percentile_interval(out)


_REDUCERS = {
    "c3.counting": _reduce_counting,
    "c3.relative_counting": _reduce_choice,
    "c3.absolute_distance": _reduce_distance,
    "c3.relative_distance": _reduce_choice,
    "c3.relative_position": _reduce_position,
    "c3.viewpoint": _reduce_viewpoint,
    "c3.ocr": _reduce_ocr,
}


def reduce(task_id: str, st: dict, resources: Any = None, n_boot: int = N_BOOT) -> dict:
    """Metrics of a task from its (merged) additive statistics."""
    _check_task(task_id)
    n_valid = st["n"] - st["n_invalid"]
    m: dict[str, Any] = {
        "headline_metric": HEADLINE_METRIC[task_id],
        "n": st["n"],
        "n_valid": n_valid,
        "n_invalid": st["n_invalid"],
        "n_parsed": st["n_parsed"],
        "n_unanswered": st.get("n_unanswered", 0),
        "parse_rate": st["n_parsed"] / n_valid if n_valid else _nan(),
        "parse_status": dict(sorted(st["parse_status"].items())),
    }
    if task_id == "c3.localization":
        _reduce_localization(st, m, n_boot, resources)
    else:
        with np.errstate(invalid="ignore", divide="ignore"):
            _REDUCERS[task_id](st, m, n_boot)
    m["headline"] = m[HEADLINE_METRIC[task_id]]
    m["lift"] = lift(m["headline"], m["floor"])
    m["lift_raw"] = m["headline"] - m["floor"] if np.isfinite(m["floor"]) else _nan()
    return m


def score_task(
    task_id: str, table: pa.Table, responses: list[str | None], resources: Any = None
) -> TaskScore:
    """Score one C3 task (Contract 4): per-item columns and every metric, floor and lift."""
    items, st, errors = item_stats(task_id, table, responses, resources)
    metrics = reduce(task_id, st, resources)
    if errors:
        metrics["errors"] = errors[:50]
        metrics["n_errors"] = len(errors)
    return TaskScore(items=items, metrics=metrics)


def score_shards(task_id: str, shard_stats: list[dict], resources: Any = None) -> dict:
    """Metrics of a task scored in shards: merge each shard's :func:`item_stats` statistics, then reduce."""
    merged: dict = {}
    for st in shard_stats:
        merged = merge_stats(merged, st)
    return reduce(task_id, merged, resources)


# ========================================================================================= floor replies
def floor_prediction(task_id: str, table: pa.Table) -> list[str | None]:
    """The image-blind floor rule's reply for every row (None for rows without a usable gold).

    The rule is fitted on the given rows, so scoring these replies on the same rows gives ``floor``.
    """
    _check_task(task_id)
    r = _Rows(table)
    golds, _ = _golds(task_id, r)
    idx = [i for i, g in enumerate(golds) if g is not None]
    out: list[str | None] = [None] * r.n
    if not idx:
        return out
    if task_id == "c3.counting":
        pred = floor_counting(
            np.array([golds[i] for i in idx]), np.array([r.corpus(i) for i in idx], dtype=str)
        )
        texts = [str(int(v)) for v in pred]
    elif task_id in ("c3.relative_counting", "c3.relative_distance"):
        texts = [str(v) for v in floor_majority(np.array([golds[i] for i in idx], dtype="<U1"))]
    elif task_id == "c3.absolute_distance":
        types = np.array([_type_key(r, i) for i in idx], dtype=str)
        pred = floor_distance(np.array([golds[i] for i in idx], dtype=float), types)
        texts = [f"{v!r} cm" for v in pred.tolist()]
    elif task_id == "c3.localization":
        gold = np.array([golds[i][0] for i in idx], dtype=float)
        sizes = np.array([golds[i][1] for i in idx], dtype=float)
        texts = [box_mod.format_box(b) for b in floor_boxes(gold, sizes)]
    elif task_id == "c3.relative_position":
        offered = [offered_directions(r.context(i)) for i in idx]
        texts = floor_position(np.array([golds[i] for i in idx], dtype=object).astype(str), offered).tolist()
    elif task_id == "c3.viewpoint":
        texts = floor_viewpoint(np.array([golds[i] for i in idx], dtype=object).astype(str)).tolist()
    else:
        texts = floor_code(np.array([golds[i] for i in idx], dtype=object).astype(str)).tolist()
    for i, t in zip(idx, texts, strict=True):
        out[i] = t
    return out
