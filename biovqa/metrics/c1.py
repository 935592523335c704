"""C1 (taxonomy) scoring: EM, EM-soft, Wu–Palmer, Lin, mistake severity, image-blind floor and lift (§C.1–C.3).

Per item (§K.6) :func:`score_task` returns ``parsed`` (the normalized answer; for the MCQ the chosen option
text), ``parse_ok``, ``parse_status``, ``score`` (= EM), ``gold`` (normalized), ``em`` (hard match),
``em_soft`` (soft match; None without a synonym map), ``resolution`` (how the answer was placed in the tree:
``exact``, ``synonym``, ``name``, ``synonym_name``, ``name_other_rank``, ``synonym_other_rank``,
``congener``, ``vernacular``, ``unresolved``, ``parse_failed``; ``no_tree`` without resources,
``gold_unresolved`` / ``no_gold`` when the gold cannot be placed / is missing), ``lca_height``
(d(y) − d(LCA)), ``wup`` and ``lin``. Items add up to additive statistics (:func:`item_stats`), which
:func:`reduce` turns into the task's metrics, so shards scored in different processes merge with
:func:`biovqa.metrics.common.merge_stats`.

Choices where the paper is silent or ambiguous (documented here and in the report):

* Severity (eq. 8) is the mean LCA height over items that are wrong under EM (ŷ ≠ y, as the equation
  says) *and* whose answer resolves to a node; a synonym answer therefore adds a height of 0, as in the
  treefrog table. ``severity_soft_wrong`` conditions on EM-soft being wrong instead. Answers that
  resolve to no node are "unresolved" and reported as ``unresolved_share`` (of the EM-wrong items).
* Wu–Palmer and Lin are averaged over every item whose gold resolves in the tree; an unresolved or
  unparsed answer scores 0 there (like EM), so the means stay comparable across models.
* A prediction is placed in the tree by: EM (the gold node) → EM-soft (the gold node: a synonym names the
  same taxon) → its name at the asked rank → its synonym targets → its name at any rank (a family named
  for an order) → unresolved. Among several candidates (homonyms, pro-parte targets) the one closest to
  the gold is taken (deepest LCA; ties by node id). The species epithet resolves only inside the gold
  genus (a bare epithet names no taxon elsewhere); common names and MCQ options resolve through the
  vernacular index (§E.7) when the resources carry one, else their tree metrics are null, not 0.
* Floor (Table 3): the most frequent normalized gold answer over the scored rows (ties: the
  alphabetically first), scored by EM. For the 4-way MCQ, whose options change per item, the image-blind
  floor is the uniform guess (mean 1/k); the modal-answer rate is reported as ``floor_modal``.
  lift = (EM − floor) / (1 − floor).
* Without resources only EM, parse rate and the floor are computed; EM-soft and the tree metrics are
  None with the reason in ``synonyms`` / ``tree_metrics``. With resources, EM-soft is required: a
  missing synonym map raises (``require_synonyms=False`` opts out explicitly).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from operator import itemgetter

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from biovqa.metrics.common import TaskScore, col, gc_paused
from biovqa.parse.result import Parsed
from biovqa.parse.text import choose_option, normalize_name, parse_answer
from biovqa.taxonomy import (
    RANKS,
    MissingSynonymMapError,
    Resources,
    SynonymMap,
    Taxonomy,
)

#: task id -> asked rank (``common_name_mcq`` is the 4-way bare-option MCQ)
TASK_RANKS = {
    "c1.phylum": "phylum",
    "c1.class": "class",
    "c1.order": "order",
    "c1.family": "family",
    "c1.genus": "genus",
    "c1.species": "species",
    "c1.scientific_name": "scientific_name",
    "c1.common_name": "common_name",
    "c1.common_name_mcq": "common_name_mcq",
}
#: the tree rank an answer of each kind names
TREE_RANK = {r: r for r in RANKS} | {"scientific_name": "species"}
_VERNACULAR_KINDS = ("common_name", "common_name_mcq")

__all__ = [
    "TASK_RANKS",
    "em_soft",
    "exact_match",
    "floor_prediction",
    "item_stats",
    "lin",
    "reduce",
    "score_task",
    "severity",
    "wu_palmer",
]


# ------------------------------------------------------------------------------------------ single items


def exact_match(pred: str | None, gold: str | None) -> int:
    """Eq. 5: 1 when the normalized prediction equals the normalized gold."""
    if pred is None or gold is None:
        return 0
    p, g = normalize_name(pred), normalize_name(gold)
    return int(bool(g) and p == g)


def em_soft(pred: str | None, gold: str | None, synonyms: SynonymMap | None) -> int:
    """Eq. 6: 1 when ŷ = y or y ∈ S(ŷ) (one way); raises when there is no synonym map."""
    if synonyms is None:
        raise MissingSynonymMapError("EM-soft needs a synonym map (resources/synonyms.parquet)")
    if pred is None or gold is None:
        return 0
    p, g = normalize_name(pred), normalize_name(gold)
    return int(bool(g) and synonyms.credits(p, g))


def _node(taxonomy: Taxonomy, node: str | int) -> int:
    if isinstance(node, int):
        return node
    i = taxonomy.index(node)
    if i is None:
        raise KeyError(f"node {node!r} is not in the taxonomy")
    return i


def wu_palmer(taxonomy: Taxonomy, pred: str | int, gold: str | int) -> float:
    """Eq. 9 for one item (node ids or indices)."""
    return taxonomy.wu_palmer(_node(taxonomy, pred), _node(taxonomy, gold))


def lin(taxonomy: Taxonomy, pred: str | int, gold: str | int) -> float:
    """Eq. 10 for one item (node ids or indices)."""
    return taxonomy.lin(_node(taxonomy, pred), _node(taxonomy, gold))


def severity(taxonomy: Taxonomy, pred: str | int, gold: str | int) -> int:
    """Eq. 8 summand for one item: d(y) − d(LCA(ŷ, y)), the ranks climbed from the truth."""
    return taxonomy.height(_node(taxonomy, pred), _node(taxonomy, gold))


# ------------------------------------------------------------------------------------------ scoring


def _empty_stats() -> dict:
    return {
        "n": 0,
        "n_parsed": 0,
        "em": 0,
        "soft": 0,
        "n_soft": 0,  # items scored for EM-soft (0 when no synonym map was used)
        "tree_n": 0,  # items with tree metrics (gold resolved in the tree)
        "wup_sum": 0.0,
        "lin_sum": 0.0,
        "resolved": 0,
        "wrong": 0,  # EM-wrong items within tree_n
        "wrong_resolved": 0,
        "height_sum": 0,
        "soft_wrong_resolved": 0,
        "soft_height_sum": 0,
        "gold_unresolved": 0,
        "gold_missing": 0,
        "chance_sum": 0.0,
        "status": {},
        "resolution": {},
        "gold_counts": {},
        "notes": {},
    }


class _TreeContext:
    """Per-call caches: gold nodes by lineage, prediction placement by (answer, gold node)."""

    def __init__(self, kind: str, resources: Resources, synonyms: SynonymMap | None) -> None:
        self.kind = kind
        self.tax = resources.taxonomy
        self.synonyms = synonyms
        self.vernacular = None
        if resources.vernacular is not None:
            self.vernacular = {k: self.tax.index(v) for k, v in resources.vernacular.items()}
        self.tree_rank = TREE_RANK.get(kind)
        self.gold_cache: dict = {}
        self.pred_cache: dict = {}
        self.cand_cache: dict = {}

    def gold_index(self, lineage_idx: int | None, gold_norm: str) -> int | None:
        """The gold node: the vernacular index for common names, else the row's lineage at the rank."""
        if self.kind in _VERNACULAR_KINDS:
            hit = self.vernacular.get(gold_norm) if self.vernacular else None
            return hit if hit is not None else lineage_idx
        if lineage_idx is None and self.kind != "species":
            found = self.tax.find(gold_norm, self.tree_rank)
            return found[0] if len(found) == 1 else None
        return lineage_idx

    def _candidates(self, pred: str, gold: int) -> tuple[str, tuple[int, ...]]:
        tax, rank = self.tax, self.tree_rank
        if self.kind == "species":
            genus = tax.parent_index[gold]
            if genus != tax.root and tax.ranks[genus] == "genus":
                binomial = f"{tax.name_norms[genus]} {pred}"
                found = tuple(i for i in tax.find(binomial, "species") if tax.parent_index[i] == genus)
                if found:
                    return "congener", found
            return "unresolved", ()
        if self.kind in _VERNACULAR_KINDS:
            i = self.vernacular.get(pred) if self.vernacular else None
            if i is not None:
                return "vernacular", (i,)
            found = tax.find(pred)
            return ("name_other_rank", found) if found else ("unresolved", ())
        found = tax.find(pred, rank)
        if found:
            return "name", found
        targets = self.synonyms.resolve(pred) if self.synonyms is not None else ()
        via = tuple(i for t in sorted(targets) if t != pred for i in tax.find(t, rank))
        if via:
            return "synonym_name", via
        found = tax.find(pred)
        if found:
            return "name_other_rank", found
        via = tuple(i for t in sorted(targets) if t != pred for i in tax.find(t))
        if via:
            return "synonym_other_rank", via
        return "unresolved", ()

    def place(self, pred: str, gold: int) -> tuple[str, int | None, float, float]:
        """(mechanism, LCA height or None, wup, lin) of a wrong answer (cached)."""
        key = (pred, gold)
        hit = self.pred_cache.get(key)
        if hit is not None:
            return hit
        if self.kind == "species":  # the epithet resolves inside the gold genus
            how, cands = self._candidates(pred, gold)
        else:  # other kinds place the answer without looking at the gold: once per answer
            found = self.cand_cache.get(pred)
            if found is None:
                found = self.cand_cache[pred] = self._candidates(pred, gold)
            how, cands = found
        if not cands:
            out = (how, None, 0.0, 0.0)
        else:
            tax = self.tax
            c = cands[0] if len(cands) == 1 else tax.closest(cands, gold)
            if c == gold:
                out = (how, 0, 1.0, 1.0)
            else:
                d, ic = tax.depths, tax.ic
                lca = tax.lca(c, gold)
                wup_den, lin_den = d[c] + d[gold], ic[c] + ic[gold]
                out = (
                    how,
                    d[gold] - d[lca],
                    2.0 * d[lca] / wup_den if wup_den else 0.0,
                    2.0 * ic[lca] / lin_den if lin_den > 0 else 0.0,
                )
        self.pred_cache[key] = out
        return out


def _lineage_indices(table: pa.Table, tax: Taxonomy, rank: str) -> list[int | None]:
    """Per row, the tree index of the row's lineage at ``rank`` (None when absent).

    Vectorized: the node id is the non-null lineage names joined with ``|`` (the id convention of
    :mod:`biovqa.taxonomy`); rows whose id misses (odd whitespace, a binomial in ``species``) go through
    :meth:`Taxonomy.lineage_index` one by one.
    """
    n = table.num_rows
    if "c1" not in table.column_names:
        return [None] * n
    c1 = table.column("c1").combine_chunks()
    present = {c1.type.field(i).name for i in range(c1.type.num_fields)}
    ranks = [r for r in RANKS[: RANKS.index(rank) + 1] if r in present]
    if rank not in present:
        return [None] * n
    parts = [pc.struct_field(c1, r) for r in ranks]
    # join with "|" and collapse the empty segments of missing ranks (skip edges); pyarrow's
    # null_handling="skip" drops whole rows when a struct row is null, so nulls become "" first.
    joined = pc.binary_join_element_wise(*[pc.fill_null(p, "") for p in parts], "|")
    joined = pc.utf8_trim(pc.replace_substring_regex(joined, r"\|\|+", "|"), "|")
    last = parts[-1]
    missing = pc.or_kleene(pc.is_null(last), pc.equal(last, ""))
    ids = pc.if_else(missing, pa.scalar(None, pa.string()), joined)
    # look each distinct id up once (rows share lineages), then spread by dictionary code
    enc = (ids.combine_chunks() if isinstance(ids, pa.ChunkedArray) else ids).dictionary_encode()
    get = tax._index.get
    distinct = enc.dictionary.to_pylist()
    index_of = [get(x) if x else None for x in distinct]
    codes = pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False).tolist()
    out = [index_of[c] if c >= 0 else None for c in codes]
    unknown = {c for c, x in enumerate(distinct) if x and index_of[c] is None}
    misses = [i for i, c in enumerate(codes) if c in unknown] if unknown else []
    if misses:
        cols = {r: pc.struct_field(c1, r).to_pylist() for r in ranks}
        for i in misses:
            out[i] = tax.lineage_index({r: cols[r][i] for r in ranks}, rank)
    return out


def _resolve_synonyms(resources: Resources | None, require: bool | None) -> tuple[SynonymMap | None, str]:
    if require is None:
        require = resources is not None
    if resources is None:
        if require:
            raise MissingSynonymMapError(
                "EM-soft was requested but no C1 resources were given (load them with "
                "biovqa.taxonomy.load_resources(dataset_dir)); refusing to fall back to strict matching"
            )
        return None, "unavailable: no resources/ folder"
    if resources.synonyms is None:
        if require:
            resources.require_synonyms()  # raises with the path
        return None, resources.notes.get("synonyms", "unavailable: no synonym map")
    return resources.synonyms, "ok"


def item_stats(
    task_id: str,
    table: pa.Table,
    responses: Sequence[str | None],
    resources: Resources | None = None,
    require_synonyms: bool | None = None,
) -> tuple[dict[str, list], dict]:
    """Per-item columns (§K.6) and additive statistics for one C1 task."""
    with gc_paused():
        return _item_stats(task_id, table, responses, resources, require_synonyms)


def _item_stats(
    task_id: str,
    table: pa.Table,
    responses: Sequence[str | None],
    resources: Resources | None,
    require_synonyms: bool | None,
) -> tuple[dict[str, list], dict]:
    kind = TASK_RANKS.get(task_id)
    if kind is None:
        raise ValueError(f"{task_id!r} is not a C1 task; expected one of {sorted(TASK_RANKS)}")
    n = table.num_rows
    if len(responses) != n:
        raise ValueError(f"{task_id}: {len(responses)} responses for {n} rows")
    synonyms, syn_note = _resolve_synonyms(resources, require_synonyms)

    tree: _TreeContext | None = None
    tree_note = "ok"
    if resources is None:
        tree_note = "unavailable: no resources/ folder"
    elif kind in _VERNACULAR_KINDS and resources.vernacular is None:
        tree_note = resources.notes.get("vernacular", "unavailable: no vernacular index in the resources")
    else:
        tree = _TreeContext(kind, resources, synonyms)

    golds = col(table, "answer")
    questions = col(table, "question") if "question" in table.column_names else [None] * n
    is_mcq = kind == "common_name_mcq"
    options_col = col(table, "options") if is_mcq else None
    if tree is not None:
        lineage_rank = "species" if kind in _VERNACULAR_KINDS else tree.tree_rank
        lineage_idx = _lineage_indices(table, tree.tax, lineage_rank)
    else:
        lineage_idx = [None] * n
    parse_rank = "species" if kind == "species" else None

    # Each distinct (reply, gold, gold node[, options]) is scored once; items hold the outcome's number.
    # Sub-caches keep the misses cheap: parses by reply, normalized golds, placements in the tree.
    outcomes: list[tuple] = []
    cache: dict = {}
    parse_cache: dict = {}
    gold_cache: dict = {}
    ids: list[int] = []
    append = ids.append
    for i in range(n):
        response = responses[i]
        # The question only matters for echo detection, which needs a reply of four words or more.
        if response is None:
            rkey = None
        elif not isinstance(response, str):
            rkey = ("<not text>", type(response).__name__)  # parses to the same "not_text" failure
        elif response.count(" ") < 3:
            rkey = response
        else:
            rkey = (response, questions[i])
        gold_raw = golds[i]
        if is_mcq:
            # The outcome depends on the options only through the chosen one and their number.
            parsed = parse_cache.get(rkey)
            if parsed is None:
                parsed = parse_cache[rkey] = _parse(response, questions[i], parse_rank)
            options = tuple(options_col[i] or ())
            chance = 1.0 / len(options) if options else 0.0
            if parsed.ok:
                norms = []
                for o in options:
                    v = gold_cache.get(o)
                    if v is None:
                        v = gold_cache[o] = normalize_name(o) if isinstance(o, str) else ""
                    norms.append(v)
                idx, how = choose_option(parsed.value, norms)
                chosen = (None, False, how, None) if idx < 0 else (options[idx], True, "ok", norms[idx])
            else:
                chosen = (parsed.value, False, parsed.status, None)
            key = (chosen, gold_raw, lineage_idx[i], chance)
            j = cache.get(key)
            if j is None:
                j = cache[key] = len(outcomes)
                gold = gold_cache.get(gold_raw)
                if gold is None:
                    gold = gold_cache[gold_raw] = (
                        normalize_name(gold_raw) if isinstance(gold_raw, str) else ""
                    )
                outcomes.append(_scored(*chosen, gold, lineage_idx[i], chance, synonyms, tree))
            append(j)
            continue
        key = (rkey, gold_raw, lineage_idx[i])
        j = cache.get(key)
        if j is None:
            j = cache[key] = len(outcomes)
            parsed = parse_cache.get(rkey)
            if parsed is None:
                parsed = parse_cache[rkey] = _parse(response, questions[i], parse_rank)
            gold = gold_cache.get(gold_raw)
            if gold is None:
                gold = gold_cache[gold_raw] = normalize_name(gold_raw) if isinstance(gold_raw, str) else ""
            outcomes.append(_outcome(parsed, gold, lineage_idx[i], None, None, synonyms, tree))
        append(j)

    stats = _aggregate(outcomes, ids)
    stats.update(
        n=n,
        n_soft=n if synonyms is not None else 0,
        mcq=n if is_mcq else 0,
        notes={f"synonyms: {syn_note}": n, f"tree_metrics: {tree_note}": n},
    )
    names = (
        "parsed",
        "parse_ok",
        "parse_status",
        "em",
        "em_soft",
        "gold",
        "resolution",
        "lca_height",
        "wup",
        "lin",
    )
    # transpose the few distinct outcomes, then gather each column by outcome number (C speed)
    distinct = list(zip(*outcomes, strict=True)) if outcomes else [()] * 12
    columns = [_gather(list(values), ids) for values in distinct[: len(names)]]
    items = {name: list(columns[k]) for k, name in enumerate(names)}
    items["score"] = [float(x) for x in items["em"]]
    order = ("parsed", "parse_ok", "parse_status", "score", "gold", "em", "em_soft", "resolution")
    items = {k: items[k] for k in (*order, "lca_height", "wup", "lin")}
    return items, stats


def _gather(values: list, ids: list[int]) -> list:
    """``[values[j] for j in ids]``, done by :func:`operator.itemgetter`."""
    if len(ids) < 2:
        return [values[j] for j in ids]
    return list(itemgetter(*ids)(values))


def _aggregate(outcomes: list[tuple], ids: list[int]) -> dict:
    """Additive statistics from the distinct outcomes weighted by how many items hold each."""
    stats = _empty_stats()
    if not outcomes:
        return stats
    weights = np.bincount(np.asarray(ids, dtype=np.int64), minlength=len(outcomes))
    _, ok, status, em, soft, gold, res, height, wup, lin_v, in_tree, chance = (
        list(c) for c in zip(*outcomes, strict=True)
    )
    w_list = weights.tolist()
    for key, values in (("status", status), ("resolution", res), ("gold_counts", gold)):
        counter = stats[key]
        for v, c in zip(values, w_list, strict=True):
            if v:
                counter[v] = counter.get(v, 0) + c
    ok_a = np.asarray(ok, dtype=bool)
    em_a = np.asarray(em, dtype=bool)
    soft_a = np.asarray([s == 1 for s in soft], dtype=bool)
    soft_wrong_a = np.asarray([s == 0 for s in soft], dtype=bool)
    tree_a = np.asarray(in_tree, dtype=bool)
    resolved_a = np.asarray([h is not None for h in height], dtype=bool)
    height_a = np.asarray([h or 0 for h in height], dtype=np.int64)
    wrong_a = tree_a & ~em_a

    def total(mask) -> int:
        return int(weights[mask].sum())

    stats["n_parsed"] = total(ok_a)
    stats["em"] = total(em_a)
    stats["soft"] = total(soft_a)
    stats["gold_missing"] = sum(c for g, c in zip(gold, w_list, strict=True) if not g)
    stats["gold_unresolved"] = sum(c for r, c in zip(res, w_list, strict=True) if r == "gold_unresolved")
    stats["chance_sum"] = math.fsum(x * c for x, c in zip(chance, w_list, strict=True) if x)
    stats["tree_n"] = total(tree_a)
    stats["wup_sum"] = math.fsum(x * c for x, c, t in zip(wup, w_list, in_tree, strict=True) if t)
    stats["lin_sum"] = math.fsum(x * c for x, c, t in zip(lin_v, w_list, in_tree, strict=True) if t)
    stats["resolved"] = total(tree_a & resolved_a)
    stats["wrong"] = total(wrong_a)
    mask = wrong_a & resolved_a
    stats["wrong_resolved"] = total(mask)
    stats["height_sum"] = int(weights[mask] @ height_a[mask])
    mask = tree_a & soft_wrong_a & resolved_a
    stats["soft_wrong_resolved"] = total(mask)
    stats["soft_height_sum"] = int(weights[mask] @ height_a[mask])
    return stats


def _parse(response, question: str | None, parse_rank: str | None) -> Parsed:
    if isinstance(response, str) or response is None:
        return parse_answer(response, parse_rank, question)
    return Parsed.fail("not_text", f"reply of type {type(response).__name__}")


def _outcome(
    parsed: Parsed,
    gold: str,
    lineage_idx: int | None,
    options: tuple | None,
    option_norms: list[str] | None,
    synonyms: SynonymMap | None,
    tree: _TreeContext | None,
) -> tuple:
    """One distinct item: (value, ok, status, em, soft, gold, resolution, height, wup, lin, in_tree, chance)."""
    pred = parsed.value if parsed.ok else None
    chance = 0.0
    if options is not None:
        chance = 1.0 / len(options) if options else 0.0
        if pred is not None:
            idx, how = choose_option(pred, option_norms)
            if idx < 0:
                parsed, pred = Parsed.fail(how, "the reply names no single option"), None
            else:
                parsed, pred = Parsed(options[idx], True, "ok", how), option_norms[idx]
    return _scored(parsed.value, parsed.ok, parsed.status, pred, gold, lineage_idx, chance, synonyms, tree)


def _scored(
    value,
    parse_ok: bool,
    status: str,
    pred: str | None,
    gold: str,
    lineage_idx: int | None,
    chance: float,
    synonyms: SynonymMap | None,
    tree: _TreeContext | None,
) -> tuple:
    """The outcome tuple of :func:`_outcome` once the answer (``pred``, None when unparsed) is known."""
    ok = pred is not None
    em = 1 if ok and gold and pred == gold else 0
    soft = None
    if synonyms is not None:
        soft = 1 if em or (ok and gold and synonyms.credits(pred, gold)) else 0
    res = "exact" if em else ("synonym" if soft else "")
    height = wup = lin_v = None
    in_tree = False
    if not gold:
        res = "no_gold"
    elif tree is not None:
        g = tree.gold_index(lineage_idx, gold)
        if g is None:
            res = res or "gold_unresolved"
        else:
            in_tree = True
            if em or soft:
                height, wup, lin_v = 0, 1.0, 1.0
            elif ok:
                res, height, wup, lin_v = tree.place(pred, g)
            else:
                res, wup, lin_v = "parse_failed", 0.0, 0.0
    elif not ok:
        res = "parse_failed"
    elif not res:
        res = "no_tree"
    return (value, parse_ok, status, em, soft, gold, res, height, wup, lin_v, in_tree, chance)


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def _note(notes: dict, prefix: str) -> str:
    """The reason recorded for most items (``ok`` when every shard had the part)."""
    found = {k[len(prefix) :]: v for k, v in notes.items() if k.startswith(prefix)}
    if not found:
        return "unavailable"
    if len(found) == 1:
        return next(iter(found))
    return "partial: " + "; ".join(f"{k} ({v} items)" for k, v in sorted(found.items()))


def reduce(task_id: str, stats: dict) -> dict:
    """Metrics of one C1 task from (merged) additive statistics."""
    n = stats.get("n", 0)
    em = _ratio(stats["em"], n)
    soft_ok = stats.get("n_soft", 0) == n and n > 0
    em_soft_v = _ratio(stats["soft"], n) if soft_ok else None
    tree_n = stats.get("tree_n", 0)
    gold_counts = stats.get("gold_counts", {})
    floor_answer, floor_count = None, 0
    if gold_counts:
        floor_answer, floor_count = min(gold_counts.items(), key=lambda kv: (-kv[1], kv[0]))
    floor_modal = _ratio(floor_count, n)
    is_mcq = stats.get("mcq", 0) > 0
    floor = _ratio(stats.get("chance_sum", 0.0), n) if is_mcq else floor_modal
    lift = None
    if em is not None and floor is not None and floor < 1:
        lift = (em - floor) / (1 - floor)
    tree_note = _note(stats.get("notes", {}), "tree_metrics: ")
    return {
        "headline": em,
        "headline_metric": "em",
        "em": em,
        "em_soft": em_soft_v,
        "em_soft_gap": em_soft_v - em if em_soft_v is not None and em is not None else None,
        "wup": _ratio(stats["wup_sum"], tree_n),
        "lin": _ratio(stats["lin_sum"], tree_n),
        "severity": _ratio(stats["height_sum"], stats["wrong_resolved"]),
        "severity_soft_wrong": _ratio(stats["soft_height_sum"], stats["soft_wrong_resolved"]),
        "unresolved_share": _ratio(stats["wrong"] - stats["wrong_resolved"], stats["wrong"]),
        "parse_rate": _ratio(stats["n_parsed"], n),
        "n": n,
        "n_parsed": stats["n_parsed"],
        "n_tree": tree_n,
        "floor": floor,
        "floor_rule": "uniform guess over the options" if is_mcq else "most frequent gold answer",
        "floor_answer": floor_answer,
        "floor_modal": floor_modal,
        "lift": lift,
        "synonyms": _note(stats.get("notes", {}), "synonyms: "),
        "tree_metrics": tree_note,
        "gold_unresolved": stats.get("gold_unresolved", 0),
        "gold_missing": stats.get("gold_missing", 0),
        "parse_status": dict(sorted(stats.get("status", {}).items())),
        "resolution": dict(sorted(stats.get("resolution", {}).items())),
    }


def floor_prediction(task_id: str, table: pa.Table) -> list[str | None]:
    """The image-blind floor's reply for each row, so that scoring it reproduces the reported floor.

    Open tasks: the most frequent normalized gold answer (ties: alphabetically first), written as the
    first row's gold text with that normalization; its EM is exactly ``floor``. MCQ: the first listed
    option (options are shuffled per item, so a fixed position is an image-blind uniform guess whose EM
    approximates the ``floor`` of 1/k).
    """
    if task_id not in TASK_RANKS:
        raise ValueError(f"{task_id!r} is not a C1 task; expected one of {sorted(TASK_RANKS)}")
    if TASK_RANKS[task_id] == "common_name_mcq":
        return [opts[0] if opts else None for opts in col(table, "options")]
    golds = col(table, "answer")
    counts: dict[str, int] = {}
    first_text: dict[str, str] = {}
    for g in golds:
        key = normalize_name(g) if isinstance(g, str) else ""
        if key:
            counts[key] = counts.get(key, 0) + 1
            first_text.setdefault(key, g)
    if not counts:
        return [None] * len(golds)
    modal = min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return [first_text[modal]] * len(golds)


def score_task(
    task_id: str,
    table: pa.Table,
    responses: Sequence[str | None],
    resources: Resources | None = None,
    require_synonyms: bool | None = None,
) -> TaskScore:
    """Contract 4: score one C1 task (per-item §K.6 columns + metrics; headline = EM, Table 3).

    ``resources`` from :func:`biovqa.taxonomy.load_resources`. EM-soft is required whenever resources
    are given (a missing synonym map raises :class:`~biovqa.taxonomy.MissingSynonymMapError`); pass
    ``require_synonyms=False`` to opt out, ``True`` to demand it even without resources.
    """
    items, stats = item_stats(task_id, table, responses, resources, require_synonyms)
    return TaskScore(items=items, metrics=reduce(task_id, stats))
