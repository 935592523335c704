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
