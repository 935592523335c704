"""C2 scorer (Contract 4): parse every reply (§K.5), score it with its family's kernel, adjust for chance.

Speed (824K items): option lists become integer codes in Arrow (each distinct option text is normalised
once), per-row kernel contexts are shared, kernel similarities are cached per (scorer, gold), replies are
resolved through :class:`biovqa.parse.mcq.ReplyResolver`, and the cyclic GC is paused during the loop.
``tests/test_perf_equivalence.py`` checks the result against a plain row-by-row path, value for value.

Per item (§K.6): family, category, kernel, gold and predicted text, resolution status, EM, raw
similarity ``s``, chance baseline ``b``, cags and severity. Per task: mean cags (headline, Table 3),
GS_raw, EM (all / MCQ / open), severity (eq. 22), parse rate, letter-text mismatch rate, choose-A rate,
a 1000-resample fixed-seed bootstrap CI of cags, and the same figures per family and per category.

Choices where the paper is silent (also in the report):

* A parse failure is "assigned a score of zero" (§K.5): ``s = 0``, EM = 0 and cags = 0 (its
  contribution to the headline is zero, the level of a blind guess; a negative cags is kept for
  answers that are *confidently wrong*, which a non-answer is not). It counts as wrong for severity
  (contributing 1 - 0 = 1).
* Rows that cannot be scored (unknown family, gold not among the options, no options) are not
  dropped silently: they are listed in ``metrics["invalid_rows"]`` (qid + reason), counted in
  ``n_invalid``, carry ``parse_status = "invalid_row"`` and ``score = None``, and stay out of the means.
* Open items use ``c2.chance_pool`` for ``b`` when the builder filled it; otherwise a fixed-seed
  sample of 40 other distinct golds of the family among the scored rows (:func:`cags.sample_chance_pool`).
* ``b`` (eq. 11) sums the distractor similarities in option order, for every item exactly as
  :func:`cags.chance_baseline` does; nothing is keyed by the unordered option set (whose first-seen
  permutation would otherwise decide the last bit of ``b``).
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

from biovqa.metrics.common import TaskScore, gc_paused
from biovqa.parse.mcq import (
    MAX_REPLY_CHARS,
    SCAFFOLD,
    SIDE_LABELS,
    THINK_BLOCK,
    OptionIndex,
    ReplyResolver,
    _normalize_option,
    gold_index,
    normalize,
    options_from_question,
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
#: Per-item output columns (§K.6 plus the Contract-4 columns).
ITEM_COLUMNS = (
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
MAX_OPEN_CHARS = 256
#: Resamples of the cags bootstrap CI (Table 30: B = 1000, fixed seed 42).
BOOTSTRAP_RESAMPLES = 1000
_OPEN_LEADIN = re.compile(
    r"^(?:(?:the\s+)?(?:common\s+|scientific\s+)?(?:name|genus|species|bird)(?:\s+of\s+(?:the|this)\s+bird)?"
    r"(?:\s+(?:in|from)\s+(?:the|this)\s+image)?\s+is\s*:?\s*|(?:this|it)\s+(?:bird\s+)?(?:is|looks like)\s+)"
)
_ARTICLE = re.compile(r"^(?:a|an|the)\s+")
_BRACKETED = re.compile(r"\([^()]*\)")
_INTERJECTIONS = frozenset({"sure", "okay", "ok", "certainly", "of course", "yes", "well", "hello", "hi"})


def category_of(family: str) -> str:
    """The C2 category (task suffix) of a family: salience, morphology, localization or naming."""
    return CATEGORY_OF_FAMILY[family]


def open_answer(response: Any) -> tuple[str, str]:
    """(normalised answer, status) of an open naming reply: first line, scaffolding and articles dropped."""
    if not isinstance(response, str):
        return "", "empty"
    text = response[:MAX_REPLY_CHARS]
    if "<think>" in text:
        text = THINK_BLOCK.sub(" ", text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()][:3]
    if not lines:
        return "", "empty"
    for k, line in enumerate(lines):
        ans = normalize(line)
        ans = SCAFFOLD.sub("", ans, count=1)
        ans = _OPEN_LEADIN.sub("", ans, count=1)
        ans = _ARTICLE.sub("", ans, count=1).strip()
        # a lead-in line ("Sure!", "Here is the answer:") hands over to the next line
        lead_in = line.rstrip().endswith(":") or ans in _INTERJECTIONS or not ans
        if not (lead_in and k + 1 < len(lines)):
            break
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


#: Distinct-value caches of one call are emptied past this many entries (bounds memory on unique inputs).
_CACHE_MAX = 200_000


def _cache_put(cache: dict, key: Any, value: Any) -> Any:
    if len(cache) >= _CACHE_MAX:
        cache.clear()
    cache[key] = value
    return value


def _option_codes(table: pa.Table) -> tuple[list[int], list[int], list[int], list, list]:
    """The ``options`` column as integer codes: (starts, ends, codes, text of a code, normalised text of a code).

    Row ``i`` lists ``codes[starts[i]:ends[i]]`` (a null list is empty); a null option text gets code -1
    (text and normalised text None). Done in Arrow so each distinct option text becomes one Python string.
    """
    arr = table.column("options").combine_chunks()
    if not (pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type)):
        raise TypeError(f"options column has type {arr.type}, expected a list of strings")
    offsets = arr.offsets.to_numpy().tolist()
    starts, ends = offsets[:-1], offsets[1:]
    if arr.null_count:
        for i in np.flatnonzero(arr.is_null().to_numpy(zero_copy_only=False)).tolist():
            ends[i] = starts[i]
    enc = arr.values.dictionary_encode()
    codes = pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False).tolist()
    texts = enc.dictionary.to_pylist()
    norms = [_normalize_option(t) for t in texts]
    return starts, ends, codes, [*texts, None], [*norms, None]


class _RowError(Exception):
    """A row error whose message is already the reported reason."""


class _Scorer:
    """Scores distinct items once: option-set, chance-baseline, reply-resolution and item caches per call."""

    def __init__(self, kernels: KernelSet, family_golds: dict[str, set[str]]):
        self.kernels = kernels
        self.sorted_golds = {fam: sorted(g) for fam, g in family_golds.items()}
        self.sim_rows: dict[tuple, dict[str, float]] = {}
        #: whether some option text is null (set by the caller; skips a per-item scan when not)
        self.null_options = True
        self.route_cache: dict[tuple, str | None] = {}
        self.side_cache: dict[tuple, bool] = {}
        self.base_cache: dict[tuple, float] = {}
        self.fn_cache: dict[tuple, Any] = {}
        self.resolver = ReplyResolver(_CACHE_MAX)
        self.pool_cache: dict[tuple, tuple[str, ...]] = {}
        self.open_cache: dict[tuple, tuple] = {}
        self.answer_cache: dict[Any, tuple[str, str]] = {}

    def context(self, fam, part, prop, declared, genus, allowed: frozenset[str], task_id: str) -> tuple:
        """(family, kernel, category, scorer or None, error or None) shared by the rows of one item kind.

        The scorer is None for the set kernel, whose scorer depends on the item's option set.
        """
        try:
            if fam not in allowed:
                if fam not in CATEGORY_OF_FAMILY:
                    raise ValueError(f"unknown C2 family {fam!r}")
                raise ValueError(f"family {fam!r} is not part of task {task_id!r}")
            kernel = kernel_for(fam, part, prop, declared)
            f = None
            if kernel != "set":
                f = self.kernels.scorer(kernel, family=fam, part=part, prop=prop, gold_genus=genus)
        except Exception as exc:  # reported per row by the caller
            return fam, None, None, None, f"{type(exc).__name__}: {exc}"
        return fam, kernel, CATEGORY_OF_FAMILY[fam], f, None

    def route(self, stem: str, stem_id: int, marker: bool, opts: list[str]) -> str | None:
        """§K.5 step 5 on the template stem (cached; options matter only for the visibility split)."""
        side = False
        if len(opts) == 4:
            okey = tuple(opts)
            side = self.side_cache.get(okey)
            if side is None:
                side = _cache_put(self.side_cache, okey, {o.strip().lower() for o in opts} == SIDE_LABELS)
        key = (stem_id, bool(opts) or marker, side)
        routed = self.route_cache.get(key, "?")
        if routed == "?":
            routed = self.route_cache[key] = route_family(stem + (" Options:" if marker else ""), opts)
        return routed

    def mcq(self, ctx: tuple, norm: tuple, texts: list, qid, answer, ai, response) -> tuple:
        """Per-item columns (ITEM_COLUMNS order) + (mcq, choose_a) of a lettered multiple-choice item."""
        fam, kernel, category, f, _ = ctx
        if self.null_options and None in norm:
            OptionIndex(texts)  # raises the error a null option text gives
        n = len(norm)
        if ai is not None and 0 <= ai < n:
            gi = int(ai)
        else:
            gi = gold_index({"qid": qid, "answer": answer, "answer_index": ai}, OptionIndex(texts))
        gold = norm[gi]
        if f is None:  # the set kernel reads the option set
            fkey = (fam, norm)
            f = self.fn_cache.get(fkey)
            if f is None:
                f = _cache_put(self.fn_cache, fkey, self.kernels.scorer(kernel, family=fam, options=norm))
        # similarities to one gold under one scorer; b (eq. 11) sums the distractors in option order,
        # exactly as chance_baseline does
        rkey = (f, gold)
        sims = self.sim_rows.get(rkey)
        if sims is None:
            sims = _cache_put(self.sim_rows, rkey, {})
        total = 0.0
        for k in range(n):
            if k != gi:
                d = norm[k]
                v = sims.get(d)
                if v is None:
                    v = sims[d] = f(d, gold)
                total += v
        b = total / (n - 1) if n > 1 else 0.0
        choice, status = self.resolver(response, norm)
        if choice is None:
            # §K.5: a parse failure is recorded and scored zero (s = 0 and cags = 0, not -b / (1 - b)).
            return (fam, category, kernel, texts[gi], None, False, status, status, None, False, False,
                    0.0, b, 0.0, 1.0, 0.0, True, False)  # fmt: skip
        k = choice.index
        pred = norm[k]
        s = sims.get(pred)
        if s is None:
            s = sims[pred] = f(pred, gold)
        c = cags_value(s, b)
        em = k == gi
        return (fam, category, kernel, texts[gi], texts[k], True, "ok", choice.via, choice.letter,
                choice.via == "mismatch", em, s, b, c, None if em else 1.0 - c, c, True, k == 0)  # fmt: skip

    def open(self, fam, kernel, answer, common_name, category, raw_pool, genus, response) -> tuple:
        """Per-item columns (ITEM_COLUMNS order) + (mcq, choose_a) of an open naming item."""
        ckey = (fam, kernel, answer, common_name, category, raw_pool, genus)
        ctx = self.open_cache.get(ckey)
        if ctx is None:
            ctx = _cache_put(self.open_cache, ckey, self._open_context(*ckey))
        f, target, gold, b, cat, kind_of = ctx
        if type(response) is str:
            hit = self.answer_cache.get(response)
            if hit is None:
                hit = _cache_put(self.answer_cache, response, open_answer(response))
            pred, status = hit
        else:
            pred, status = open_answer(response)
        if status != "ok":
            return (fam, CATEGORY_OF_FAMILY[fam], kernel, answer, None, False, status, status, None, False,
                    False, 0.0, b, 0.0, 1.0, 0.0, False, False)  # fmt: skip
        s = f(_kind_of_full(pred, cat) if kind_of else pred, target)
        c = cags_value(s, b)
        em = pred == gold
        return (fam, CATEGORY_OF_FAMILY[fam], kernel, answer, pred, True, "ok", "open", None, False,
                em, s, b, c, None if em else 1.0 - c, c, False, False)  # fmt: skip

    def _open_context(self, fam, kernel, answer, common_name, category, raw_pool, genus) -> tuple:
        """(scorer, target, normalised gold, b, category, kind_of?) of an open item; b over the chance pool."""
        gold = normalize(answer or "")
        if not gold:
            raise ValueError("empty gold answer")
        category = category or ""
        kind_of = fam == "open_kind_of"
        if kind_of:
            target = normalize(common_name) if common_name else _kind_of_full(gold, category)
        else:
            target = gold
        pkey = (fam, gold, raw_pool)
        pool = self.pool_cache.get(pkey)
        if pool is None:
            if raw_pool:
                pool = tuple(normalize(p) for p in raw_pool)
            else:
                pool = tuple(sample_chance_pool(gold, self.sorted_golds.get(fam, ())))
            self.pool_cache[pkey] = pool
        f = self.kernels.scorer(kernel, family=fam, gold_genus=genus)
        bkey = (f, fam, target, category, pool)
        b = self.base_cache.get(bkey)
        if b is None:
            names = [_kind_of_full(p, category) for p in pool] if kind_of else list(pool)
            b = _cache_put(self.base_cache, bkey, chance_baseline(target, names, f))
        return f, target, gold, b, category, kind_of


_C2_FIELDS = ("part", "property", "kernel", "genus", "common_name", "category", "chance_pool")


def _question_stems(questions: pa.ChunkedArray) -> tuple[list[int], list[str], list[bool]]:
    """Per row: id of its template stem (text before ``Options:``, ≤ 200 chars), the stems, and
    whether ``Options:`` occurs. Done in Arrow so the long question strings never become Python objects."""
    q = pc.fill_null(questions, "")
    first = pc.list_element(pc.split_pattern(q, "Options:", max_splits=1), 0)
    enc = pc.utf8_slice_codeunits(first, 0, 200).combine_chunks().dictionary_encode()
    markers = pc.match_substring(q, "Options:").to_pylist()
    return enc.indices.to_pylist(), enc.dictionary.to_pylist(), markers


def _task_families(task_id: str) -> frozenset[str] | None:
    """The families a task declares (None when the registry does not know the id, e.g. ``"c2"``)."""
    try:
        from biovqa.tasks import get_task

        return frozenset(get_task(task_id).families)
    except Exception:
        return None


def score_items(task_id: str, table: pa.Table, responses: list, kernels: KernelSet) -> tuple[dict, dict]:
    """Per-item columns and additive statistics of one task (or shard)."""
    with gc_paused():
        return _score_items(task_id, table, responses, kernels)


def _score_items(task_id: str, table: pa.Table, responses: list, kernels: KernelSet) -> tuple[dict, dict]:
    n = table.num_rows
    if len(responses) != n:
        raise ValueError(f"{task_id}: {len(responses)} responses for {n} question rows")
    qids = table.column("qid").to_pylist()
    families = table.column("family").to_pylist()
    answers = table.column("answer").to_pylist()
    answer_idx = table.column("answer_index").to_pylist()
    parts, props, declared, genera, commons, cats, pools = (_c2_field(table, k, n) for k in _C2_FIELDS)
    starts, ends, codes, code_text, code_norm = _option_codes(table)
    stem_ids, stems, markers = _question_stems(table.column("question"))
    task_families = _task_families(task_id)

    family_golds: dict[str, set[str]] = {}
    for fam, ans in zip(families, answers, strict=True):
        if fam in OPEN_FAMILIES and ans:
            family_golds.setdefault(fam, set()).add(normalize(ans))
    scorer = _Scorer(kernels, family_golds)
    scorer.null_options = -1 in codes
    allowed = frozenset(FAMILIES) if task_families is None else frozenset(FAMILIES) & task_families
    flat_text = [code_text[c] for c in codes]
    flat_norm = [code_norm[c] for c in codes]
    contexts: dict[tuple, tuple] = {}
    question_col = table.column("question")

    rows: list[tuple] = [()] * n
    routed_off = [False] * n
    invalid: list[str] = []
    for i in range(n):
        fam, part, prop, genus = families[i], parts[i], props[i], genera[i]
        ckey = (fam, part, prop, declared[i], genus)
        ctx = contexts.get(ckey)
        if ctx is None:
            ctx = contexts[ckey] = scorer.context(*ckey, allowed, task_id)
        try:
            if ctx[4] is not None:
                raise _RowError(ctx[4])
            a, e = starts[i], ends[i]
            if a != e:
                texts = flat_text[a:e]
                norm = tuple(flat_norm[a:e])
            elif markers[i]:
                texts = options_from_question(question_col[i].as_py())
                norm = tuple(_normalize_option(t) for t in texts)
            else:
                texts, norm = [], ()
            routed = scorer.route(stems[stem_ids[i]], stem_ids[i], markers[i], texts)
            if texts:
                if fam in OPEN_FAMILIES:
                    raise ValueError(f"open family {fam!r} has options")
                row = scorer.mcq(ctx, norm, texts, qids[i], answers[i], answer_idx[i], responses[i])
            else:
                if fam not in OPEN_FAMILIES:
                    raise ValueError(f"multiple-choice family {fam!r} has no options")
                pool = pools[i]
                row = scorer.open(
                    fam, ctx[1], answers[i], commons[i], cats[i], tuple(pool) if pool else (), genus,
                    responses[i],
                )  # fmt: skip
        except Exception as exc:  # a bad row is reported, the rest goes on
            reason = str(exc) if isinstance(exc, _RowError) else f"{type(exc).__name__}: {exc}"
            invalid.append(f"{qids[i]}: {reason}")
            rows[i] = (fam, None, None, None, None, False, "invalid_row", reason[:200], None, None, None,
                       None, None, None, None, None, False, False)  # fmt: skip
            continue
        rows[i] = row
        routed_off[i] = routed is not None and routed != fam

    columns = list(zip(*rows, strict=True)) if n else [()] * (len(ITEM_COLUMNS) + 2)
    cols = {k: list(columns[j]) for j, k in enumerate(ITEM_COLUMNS)}
    fam_pos = {f: j for j, f in enumerate(FAMILIES)}
    fam_code = [
        -1 if cat is None else fam_pos[fam] for fam, cat in zip(families, cols["category"], strict=True)
    ]
    flags = {
        "parse": np.asarray(cols["parse_ok"], dtype=bool),
        "em": np.asarray(columns[ITEM_COLUMNS.index("em")], dtype=bool),
        "mcq": np.asarray(columns[len(ITEM_COLUMNS)], dtype=bool),
        "mismatch": np.asarray(columns[ITEM_COLUMNS.index("mismatch")], dtype=bool),
        "choose_a": np.asarray(columns[len(ITEM_COLUMNS) + 1], dtype=bool),
        "route": np.asarray(routed_off, dtype=bool),
    }
    code_arr = np.asarray(fam_code, dtype=np.int64)
    valid = code_arr >= 0
    v_s = np.where(valid, np.asarray(columns[ITEM_COLUMNS.index("s")], dtype=float), 0.0)
    v_c = np.where(valid, np.asarray(columns[ITEM_COLUMNS.index("cags")], dtype=float), 0.0)
    stats = _stats(code_arr, flags, v_s, v_c)
    stats["n_rows"] = n
    stats["n_invalid"] = len(invalid)
    stats["invalid_rows"] = invalid
    return cols, stats


def _stats(fam_code: np.ndarray, flags: dict[str, np.ndarray], v_s: np.ndarray, v_c: np.ndarray) -> dict:
    """Additive sums per family (categories and totals are derived in :func:`reduce`)."""
    f_parse, f_em, f_mcq = flags["parse"], flags["em"], flags["mcq"]
    f_mis, f_a, f_route = flags["mismatch"], flags["choose_a"], flags["route"]
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
