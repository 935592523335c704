"""The optimised C2 scoring path gives exactly the per-item values of a straightforward per-row path.

The reference below scores every row on its own with the public building blocks (a fresh
``OptionIndex``, ``gold_index``, ``resolve``, ``chance_baseline`` over ``KernelSet.similarity``,
``open_answer``), no shared caches; :func:`score_items` must agree value for value (floats exactly)
on a few thousand varied rows with hostile replies and bad rows.
"""

from __future__ import annotations

import math
import random
from functools import partial

from c2_rows import mcq_row, open_row, table

from biovqa.metrics.c2 import build_kernels, open_answer, score_items
from biovqa.metrics.c2.cags import cags, chance_baseline, sample_chance_pool
from biovqa.metrics.c2.kernels import kernel_for
from biovqa.metrics.c2.score import CATEGORY_OF_FAMILY, ITEM_COLUMNS, OPEN_FAMILIES, _kind_of_full
from biovqa.parse.mcq import (
    OptionIndex,
    ReplyResolver,
    gold_index,
    normalize,
    options_from_question,
    resolve,
    resolve_norm,
)

LETTERS = "ABCDEFGH"
COLOURS = (
    "blue brown iridescent purple rufous grey yellow olive green pink orange black white red buff".split()
)
PARTS = [
    "back",
    "beak",
    "belly",
    "breast",
    "crown",
    "nape",
    "tail",
    "throat",
    "left wing",
    "right wing",
    "left leg",
]
REGIONS = ["wing", "upperparts", "underparts", "back", "breast", "throat", "eye", "bill", "crown"]
BIRDS = [
    ("California Gull", "Larus", "Larus californicus", "gull"),
    ("Western Gull", "Larus", "Larus occidentalis", "gull"),
    ("Song Sparrow", "Melospiza", "Melospiza melodia", "sparrow"),
    ("Fox Sparrow", "Passerella", "Passerella iliaca", "sparrow"),
    ("Fish Crow", "Corvus", "Corvus ossifragus", "crow"),
    ("American Crow", "Corvus", "Corvus brachyrhynchos", "crow"),
]
STEMS = {
    "attr_bare_value": "What is the wing color of this bird?",
    "attr_group_value": "Which of the following is the most prominently visible physical trait of the bird "
    "in this image?",
    "marker_localization": "What is the body part of this bird marked with the yellow dot?",
    "visibility_partset": "Which of the following parts of the bird are visible in this image?",
    "visibility_side": "Which of the eyes of the bird are visible in this image?",
    "category_mcq": "What type of bird is this in the image?",
}
TASK_OF = {
    "attr_bare_value": "c2.morphology",
    "attr_group_value": "c2.salience",
    "marker_localization": "c2.localization",
    "visibility_partset": "c2.localization",
    "visibility_side": "c2.localization",
}


def _options(rng: random.Random, fam: str) -> list[str]:
    k = rng.choice([3, 4, 5, 5, 6])
    if fam == "attr_bare_value":
        opts = rng.sample(COLOURS[:6], k) if rng.random() < 0.5 else rng.sample(COLOURS, k)
    elif fam == "attr_group_value":
        opts = [f"{r} color: {rng.choice(COLOURS[:5])}" for r in rng.sample(REGIONS, k)]
    elif fam == "marker_localization":
        opts = rng.sample(PARTS, k)
    elif fam == "visibility_partset":
        opts = [*rng.sample(PARTS, 3), "None", "All three"]
        rng.shuffle(opts)
    elif fam == "visibility_side":
        opts = ["Left", "Right", "Both", "None"]
    else:
        opts = rng.sample(["Gull", "Sparrow", "Crow", "Grebe", "Bunting"], 4)
    if rng.random() < 0.05:  # a duplicated option text (a sloppy builder)
        opts[-1] = opts[0].upper()
    return opts


def _mcq_reply(rng: random.Random, opts: list[str]) -> object:
    k = rng.randrange(len(opts))
    j = rng.randrange(len(opts))
    letter, text = LETTERS[k], opts[k]
    return rng.choice(
        [
            f"({letter}) {text}",
            f"({letter}) {text}",
            letter,
            letter.lower(),
            text,
            text.upper() + ".",
            f"The answer is ({letter}) {text}.",
            f"Answer: {letter}",
            f"({letter}) {opts[j]}",  # letter/text mismatch when j != k
            f"{letter}. {text}",
            text[:-1] + "x" if len(text) > 6 else text,  # a typo: fuzzy fallback
            f"Sure! Here is the answer:\n({letter}) {text}",
            f"<think>hmm (A) or (B)</think>\n{text}",
            "Options: " + ", ".join(f"({LETTERS[i]}) {o}" for i, o in enumerate(opts)),  # echo
            "(A) or (B)",
            "I cannot tell from this image.",
            "",
            None,
            42,
            "\U0001f426 " * 50,
            "x" * 100_000,
            f"({LETTERS[len(opts)]}) nothing",  # a letter past the options
            f"{opts[0]} and {opts[-1]}",  # two option texts
            "wing",
            "left",
        ]
    )


def _open_reply(rng: random.Random, fam: str, bird: tuple) -> object:
    other = rng.choice(BIRDS)
    pick = bird if rng.random() < 0.4 else other
    base = {
        "open_common_name": pick[0],
        "open_scientific_name": pick[2],
        "open_genus": pick[1],
        "open_kind_of": pick[0].split()[0],
    }[fam]
    return rng.choice(
        [
            base,
            base.lower(),
            f"The bird is a {base}.",
            f"Sure!\n{base}",
            f"{base} ({pick[2]})",
            "",
            None,
            "I don't know",
        ]
    )


def _rows(n: int, seed: int = 7) -> tuple[list[dict], list]:
    rng = random.Random(seed)
    rows, replies = [], []
    fams = list(CATEGORY_OF_FAMILY)
    for i in range(n):
        fam = rng.choice(fams)
        bird = rng.choice(BIRDS)
        if fam in OPEN_FAMILIES:
            gold = {
                "open_common_name": bird[0],
                "open_scientific_name": bird[2],
                "open_genus": bird[1],
                "open_kind_of": bird[0].split()[0],
            }[fam]
            pool = [b[0] for b in BIRDS if b != bird] if rng.random() < 0.3 else None
            row = open_row(
                f"c2.naming/cub/{i:05d}",
                fam,
                f"What kind of {bird[3]} is this bird in this image?"
                if fam == "open_kind_of"
                else "What is it?",
                gold,
                genus=bird[1],
                common_name=bird[0] if rng.random() < 0.7 else None,
                category=bird[3],
                chance_pool=pool,
            )
            rows.append(row)
            replies.append(_open_reply(rng, fam, bird))
            continue
        opts = _options(rng, fam)
        gold = rng.choice(opts)
        extra = {"part": "wing", "property": "color"} if fam == "attr_bare_value" else {}
        if fam == "attr_bare_value" and rng.random() < 0.3:
            extra = {"part": None, "property": "size"}
            opts = rng.sample(["very small", "small", "medium", "large", "very large"], 4)
            gold = opts[0]
        row = mcq_row(
            f"{TASK_OF.get(fam, 'c2.naming')}/cub/{i:05d}",
            TASK_OF.get(fam, "c2.naming"),
            fam,
            STEMS[fam],
            opts,
            gold,
            genus=bird[1],
            **extra,
        )
        u = rng.random()
        if u < 0.05:
            row["answer_index"] = -1  # gold from the "(X) text" answer
        elif u < 0.08:
            row["answer_index"] = -1
            row["answer"] = gold  # bare gold text
        elif u < 0.09:
            row["options"] = []  # options only in the question text
        elif u < 0.095:
            row["answer_index"] = -1
            row["answer"] = "magenta"  # gold not among the options: invalid row
        elif u < 0.10:
            row["family"] = "made_up_family"
        elif u < 0.105:
            row["c2"]["kernel"] = "telepathy"
        elif u < 0.11:
            row["options"][-1] = None  # a null option text: invalid row, named reason
        rows.append(row)
        replies.append(_mcq_reply(rng, opts))
    return rows, replies


def _similarity(kernels, kernel: str, ctx: dict, pred: str, gold: str) -> float:
    return kernels.similarity(kernel, pred, gold, **ctx)


def _reference(rows: list[dict], replies: list, kernels) -> dict[str, list]:
    """Per-item columns scored row by row with no caches shared between rows."""
    golds: dict[str, set[str]] = {}
    for r in rows:
        if r["family"] in OPEN_FAMILIES and r["answer"]:
            golds.setdefault(r["family"], set()).add(normalize(r["answer"]))
    cols: dict[str, list] = {k: [] for k in ITEM_COLUMNS}
    for row, reply in zip(rows, replies, strict=True):
        fam, c2 = row["family"], row["c2"]
        out = dict.fromkeys(ITEM_COLUMNS)
        out.update(family=fam, parse_ok=False)
        try:
            if fam not in CATEGORY_OF_FAMILY:
                raise ValueError(f"unknown C2 family {fam!r}")
            kernel = kernel_for(fam, c2["part"], c2["property"], c2["kernel"])
            opts = list(row["options"]) or options_from_question(row["question"])
            sim = partial(_similarity, kernels, kernel)

            if opts:
                if len(opts) == 4:  # the routing step reads the option texts first (visibility split)
                    {o.strip().lower() for o in opts}
                ox = OptionIndex(opts)
                gi = gold_index(row, ox)
                ctx = dict(
                    family=fam, part=c2["part"], prop=c2["property"], options=ox.norm, gold_genus=c2["genus"]
                )
                gold = ox.norm[gi]
                others = [t for k, t in enumerate(ox.norm) if k != gi]
                b = chance_baseline(gold, others, partial(sim, ctx))
                parsed = resolve(reply, ox)
                out.update(gold=ox.texts[gi], b=b, mismatch=False)
                if parsed.ok:
                    c = parsed.value
                    s = sim(ctx, ox.norm[c.index], gold)
                    out.update(parsed=ox.texts[c.index], resolution=c.via, letter=c.letter)
                    out.update(mismatch=c.mismatch, em=c.index == gi, s=s)
            else:
                gold = normalize(row["answer"])
                cat = c2["category"] or ""
                kind_of = fam == "open_kind_of"
                target = gold
                if kind_of:
                    target = normalize(c2["common_name"]) if c2["common_name"] else _kind_of_full(gold, cat)
                raw = c2["chance_pool"]
                pool = [normalize(p) for p in raw] if raw else sample_chance_pool(gold, sorted(golds[fam]))
                names = [_kind_of_full(p, cat) for p in pool] if kind_of else pool
                ctx = dict(family=fam, gold_genus=c2["genus"])
                b = chance_baseline(target, names, partial(sim, ctx))
                pred, status = open_answer(reply)
                parsed = None
                out.update(gold=row["answer"], b=b, mismatch=False)
                if status == "ok":
                    s = sim(ctx, _kind_of_full(pred, cat) if kind_of else pred, target)
                    out.update(parsed=pred, resolution="open", em=pred == gold, s=s)
                else:
                    out["status_override"] = status
        except Exception as exc:
            reason = f"{type(exc).__name__}: {exc}"
            out.update(parse_status="invalid_row", resolution=reason[:200])
            for k in ITEM_COLUMNS:
                cols[k].append(out[k])
            continue
        status = out.pop("status_override", None) or ("ok" if parsed is None or parsed.ok else parsed.status)
        ok = status == "ok"
        if not ok:
            out.update(parsed=None, resolution=status, letter=None, em=False, s=0.0)
        c = cags(out["s"], out["b"]) if ok else 0.0
        out.update(category=CATEGORY_OF_FAMILY[fam], kernel=kernel, parse_ok=ok, parse_status=status)
        out.update(cags=c, score=c, severity=None if out["em"] else 1.0 - c)
        for k in ITEM_COLUMNS:
            cols[k].append(out[k])
    return cols


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def test_optimised_scoring_matches_straightforward_path():
    rows, replies = _rows(3000)
    tab = table(rows)
    kernels = build_kernels(tab)
    got, stats = score_items("c2", tab, replies, kernels)
    want = _reference(rows, replies, build_kernels(tab))
    statuses = set(got["parse_status"])
    # the sample exercises what it should: every family, failures, bad rows, every resolution path
    assert {"invalid_row", "ok", "echo", "ambiguous", "refusal", "empty", "no_option"} <= statuses
    assert {"letter", "text", "letter_text", "mismatch", "fuzzy", "open"} <= set(got["resolution"])
    assert set(got["family"]) >= set(CATEGORY_OF_FAMILY)
    for k in ITEM_COLUMNS:
        bad = [i for i, (x, y) in enumerate(zip(got[k], want[k], strict=True)) if not _same(x, y)]
        assert not bad, f"{k}: row {bad[0]} optimised {got[k][bad[0]]!r} != reference {want[k][bad[0]]!r}"
    assert stats["n_invalid"] == got["parse_status"].count("invalid_row")


def test_scoring_twice_and_in_shards_gives_identical_items():
    rows, replies = _rows(1500, seed=11)
    tab = table(rows)
    kernels = build_kernels(tab)
    whole, _ = score_items("c2", tab, replies, kernels)
    again, _ = score_items("c2", tab, replies, build_kernels(tab))
    assert whole == again
    # shards see other option sets and replies first: cache order must not change any value
    half = 700
    a, _ = score_items("c2", tab.slice(half), replies[half:], kernels)
    for k in ITEM_COLUMNS:
        assert all(_same(x, y) for x, y in zip(whole[k][half:], a[k], strict=True)), k


def test_reply_resolver_matches_resolve_norm_across_option_sets():
    rng = random.Random(3)
    resolver = ReplyResolver(max_entries=50)  # small: the cache is emptied many times
    fams = list(STEMS)
    for _ in range(4000):
        opts = _options(rng, rng.choice(fams))
        norm = tuple(normalize(o) for o in opts)
        reply = (
            _mcq_reply(rng, opts) if rng.random() < 0.7 else _mcq_reply(rng, _options(rng, rng.choice(fams)))
        )
        choice, status, _ = resolve_norm(reply, norm)
        assert resolver(reply, norm) == (choice, status), (reply, norm)


# ------------------------------------------------------------------------------------------ C1


def _c1_world(n_species: int = 240):
    from biovqa.taxonomy import Resources, SynonymMap, Taxonomy, build_vernacular_index, lineage_node_id

    species = []
    for s in range(n_species):
        g, f = s // 3, s // 12
        lin = {
            "kingdom": "Animalia",
            "phylum": f"Phylum{f // 10}",
            "class": f"Class{f // 5}",
            "order": None if f % 7 == 3 else f"Order{f // 2}",
            "family": f"Family{f}",
            "genus": f"Genus{g}",
            "species": f"epithet{s}",
        }
        lin["scientific_name"] = f"{lin['genus']} {lin['species']}"
        lin["common_name"] = f"Common {s % 200}"
        species.append(lin)
    tax = Taxonomy.from_lineages(species)
    syn = SynonymMap(
        [(f"oldgenus{s} epithet{s}", f"genus{s // 3} epithet{s}") for s in range(0, n_species, 5)]
    )
    vern = build_vernacular_index([(lin["common_name"], lineage_node_id(lin)) for lin in species], tax)
    return species, Resources(tax, syn, vern)


def _c1_reply(rng: random.Random, answer: str, other: dict, kind: str) -> object:
    return rng.choice(
        [
            answer,
            answer.upper(),
            f"The {kind.replace('_', ' ')} is {answer}.",
            f"**Answer:**\n{answer}",
            other.get(kind) or other["family"],
            other["genus"],
            other["scientific_name"],
            f"{other['genus']} {other['species']}",
            "I am not sure",
            "not sure, maybe " + answer,
            f"What is the {kind} of the animal shown in this image? {answer}",
            f"What is the {kind} of the animal",
            f"free text {rng.random():.6f}",
            "",
            None,
            7,
            "\U0001f438 " * 30,
            "y" * 50_000,
            f"oldgenus{rng.randrange(240)} epithet{rng.randrange(240)}",
            f"{answer} ({other['common_name']})",
        ]
    )


def test_c1_items_match_row_by_row_reference():
    import pyarrow as pa

    import biovqa.metrics.c1 as c1
    from biovqa.taxonomy import RANKS

    species, res = _c1_world()
    rng = random.Random(5)
    lineage_type = pa.struct([(r, pa.string()) for r in (*RANKS, "scientific_name", "common_name")])
    for task in ("c1.family", "c1.species", "c1.scientific_name", "c1.common_name", "c1.common_name_mcq"):
        kind = c1.TASK_RANKS[task]
        field = "common_name" if kind.startswith("common_name") else kind
        rows = [rng.choice(species) for _ in range(700)]
        answers = [r[field] or r["family"] for r in rows]
        options = None
        if kind == "common_name_mcq":
            options = []
            for r in rows:
                opts = [r["common_name"], *(rng.choice(species)["common_name"] for _ in range(3))]
                rng.shuffle(opts)
                options.append(opts)
        replies = [_c1_reply(rng, a, rng.choice(species), field) for a in answers]
        question = f"What is the {kind} of the animal shown in this image?"
        tab = pa.table(
            {
                "qid": [f"{task}/syn/{i}" for i in range(len(rows))],
                "question": [question] * len(rows),
                "answer": answers,
                "options": options if options is not None else [[] for _ in rows],
                "c1": pa.array(rows, type=lineage_type),
            }
        )
        items, _ = c1.item_stats(task, tab, replies, res)
        # reference: every row on its own, a fresh tree context per row
        synonyms = res.synonyms
        rank = "species" if kind == "species" else None
        lineage_rank = "species" if kind.startswith("common_name") else c1.TREE_RANK[kind]
        lineage_idx = c1._lineage_indices(tab, res.taxonomy, lineage_rank)
        want = []
        for i, reply in enumerate(replies):
            tree = c1._TreeContext(kind, res, synonyms)
            parsed = c1._parse(reply, question, rank)
            opts = tuple(options[i]) if options is not None else None
            norms = [c1.normalize_name(o) for o in opts] if opts is not None else None
            gold = c1.normalize_name(answers[i])
            want.append(c1._outcome(parsed, gold, lineage_idx[i], opts, norms, synonyms, tree))
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
        for k, name in enumerate(names):
            assert all(_same(w[k], g) for w, g in zip(want, items[name], strict=True)), (task, name)
        assert items["score"] == [float(w[3]) for w in want]
        expected = {"ok", "refusal", "empty"} | ({"no_option", "ambiguous"} if options else {"echo"})
        assert expected <= set(items["parse_status"]), task


def _choose_option_reference(answer: str, option_norms: list[str]) -> tuple[int, str]:
    """choose_option as first written (one _contains_words call per option), the equivalence reference."""
    from rapidfuzz import fuzz

    def contains(haystack: str, needle: str) -> bool:
        return bool(needle) and f" {needle} " in f" {haystack} "

    if not answer:
        return -1, "empty"
    exact = [i for i, o in enumerate(option_norms) if o and o == answer]
    if exact:
        return exact[0], "exact"
    inside = [i for i, o in enumerate(option_norms) if contains(answer, o)]
    if len(inside) > 1:
        longest = max(inside, key=lambda i: len(option_norms[i]))
        if all(contains(option_norms[longest], option_norms[i]) for i in inside):
            inside = [longest]
    if len(inside) == 1:
        return inside[0], "contains"
    if len(inside) > 1:
        return -1, "ambiguous"
    if len(answer) >= 3:
        within = [i for i, o in enumerate(option_norms) if contains(o, answer)]
        if len(within) == 1:
            return within[0], "contained"
        if len(within) > 1:
            return -1, "ambiguous"
    scores = [fuzz.ratio(answer, o) / 100.0 if o else 0.0 for o in option_norms]
    best = max(scores, default=0.0)
    if best >= 0.86:
        winners = [i for i, s in enumerate(scores) if s == best]
        return (winners[0], "fuzzy") if len(winners) == 1 else (-1, "ambiguous")
    return -1, "no_option"


def test_choose_option_matches_reference():
    from biovqa.parse.text import choose_option

    rng = random.Random(9)
    words = ["green", "treefrog", "american", "tree", "frog", "toad", "common", "gray", "grey", "x", ""]
    for _ in range(5000):
        opts = [" ".join(rng.sample(words, rng.randint(0, 3))).strip() for _ in range(rng.randint(0, 5))]
        pool = [*opts, " ".join(rng.sample(words, rng.randint(0, 4))).strip(), "american green treefrogg"]
        answer = rng.choice(pool)
        assert choose_option(answer, opts) == _choose_option_reference(answer, opts), (answer, opts)
