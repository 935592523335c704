"""Speed of the C2 scorer on a synthetic full-scale prediction set (824,104 items, Table 7 proportions).

Prints CPU µs/item per task for the per-item scoring (``score_items``: parsing, kernels, cags) and for
``reduce`` (metrics + bootstrap CIs), and their total (= ``score_task``), as the minimum over
``--repeat`` runs (the machine is shared; the minimum is the least disturbed figure).

Modes (report both):

* ``--options shuffled`` (default) draws every item's distractors at random and shuffles the options, as
  the builder does (``builder/questions/c2.py``): ordered option lists are nearly all distinct, so
  nothing keyed by the option list is reused. ``--options canonical`` lists each item's options in one
  fixed order (the best case for caches).
* ``--replies typical`` (default): "(B) blue", "B", bare option text, "The answer is …", refusals.
  ``--replies hostile`` turns 15% of replies into distinct free text, multi-line lead-ins, think blocks,
  echoed option lists and 20 KB strings.

Usage: ``python -P bench/c2_score.py [--n 824104] [--seed 42] [--options shuffled|canonical]
[--replies typical|hostile] [--repeat 1]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from biovqa.metrics.c2 import build_kernels, reduce, score_items
from biovqa.schema import QUESTION_SCHEMA

FAMILY_COUNTS = {  # Table 7
    "attr_bare_value": 280_433,
    "attr_group_value": 321_073,
    "marker_localization": 11_788,
    "visibility_partset": 117_880,
    "visibility_side": 35_364,
    "category_mcq": 11_191,
    "open_common_name": 11_788,
    "open_scientific_name": 11_668,
    "open_genus": 11_728,
    "open_kind_of": 11_191,
}
TASK = {
    "attr_bare_value": "c2.morphology",
    "attr_group_value": "c2.salience",
    "marker_localization": "c2.localization",
    "visibility_partset": "c2.localization",
    "visibility_side": "c2.localization",
}
COLORS = (
    "blue brown iridescent purple rufous grey yellow olive green pink orange black white red buff".split()
)
PARTS = "back beak belly breast crown forehead left_eye left_leg left_wing nape right_eye right_leg right_wing tail throat"
PARTS = [p.replace("_", " ") for p in PARTS.split()]
REGIONS = "wing upperparts underparts back upper_tail under_tail breast throat eye forehead nape belly leg bill crown primary".split()
BIRDS = [
    ("california gull", "larus", "larus californicus", "gull"),
    ("western gull", "larus", "larus occidentalis", "gull"),
    ("song sparrow", "melospiza", "melospiza melodia", "sparrow"),
    ("fox sparrow", "passerella", "passerella iliaca", "sparrow"),
    ("american crow", "corvus", "corvus brachyrhynchos", "crow"),
    ("fish crow", "corvus", "corvus ossifragus", "crow"),
    ("indigo bunting", "passerina", "passerina cyanea", "bunting"),
    ("painted bunting", "passerina", "passerina ciris", "bunting"),
    ("horned grebe", "podiceps", "podiceps auritus", "grebe"),
    ("eared grebe", "podiceps", "podiceps nigricollis", "grebe"),
]
LET = "ABCDE"
SIDES = ("Left", "Right", "Both")


def hostile_reply(rng: np.random.Generator, reply: str, opts: list[str]) -> str:
    """A hostile variant of a reply: distinct free text, lead-ins, think blocks, echoes, huge strings."""
    kind = rng.integers(6)
    if kind == 0:
        return f"I think it could be something like {rng.random():.12f}"
    if kind == 1:
        return f"Sure! Here is my answer:\n{reply}"
    if kind == 2:
        return f"<think>between {opts[0]} and {opts[-1]}</think>\n{reply}"
    if kind == 3:
        return "Options: " + ", ".join(f"({LET[k]}) {o}" for k, o in enumerate(opts))
    if kind == 4:
        return reply + " " + "because " * 2500
    return f"{reply.lower()} {rng.integers(10**9)}"


def make(n_total: int, seed: int, option_mode: str = "shuffled", reply_mode: str = "typical"):
    rng = np.random.default_rng(seed)
    scale = n_total / sum(FAMILY_COUNTS.values())
    rows, replies = [], []
    for fam, cnt in FAMILY_COUNTS.items():
        for i in range(max(1, round(cnt * scale))):
            c2 = {"part": None, "property": None, "genus": None, "common_name": None, "category": None}
            opts: list[str] = []
            if fam == "attr_bare_value":
                opts = list(rng.choice(COLORS, 5, replace=False))
                c2.update(part="wing", property="color")
                q = "What is the wing color of this bird?"
            elif fam == "attr_group_value":
                regs = rng.choice(REGIONS, 5, replace=False)
                opts = [f"{r.replace('_', ' ')} color: {rng.choice(COLORS)}" for r in regs]
                q = "Which of the following is the most prominently visible physical trait of the bird in this image?"
            elif fam == "marker_localization":
                opts = list(rng.choice(PARTS, 5, replace=False))
                q = "What is the body part of this bird marked with the yellow dot?"
            elif fam == "visibility_partset":
                opts = [*rng.choice(PARTS, 3, replace=False), "None", "All three"]
                q = "Which of the following parts of the bird are visible in this image?"
            elif fam == "visibility_side":
                opts = ["Left", "Right", "Both", "None"]
                q = "Which of the eyes of the bird are visible in this image?"
            elif fam == "category_mcq":
                opts = list(dict.fromkeys(b[3].title() for b in BIRDS))
                q = "What type of bird is this in the image?"
            bird = BIRDS[rng.integers(len(BIRDS))]
            if opts and option_mode == "canonical" and fam != "category_mcq":
                order = {t: k for k, t in enumerate((*COLORS, *PARTS, "None", "All three", *SIDES))}
                opts = sorted(opts, key=lambda t: (order.get(t, 99), t))
            if opts:
                gi = int(rng.integers(len(opts)))
                if fam == "category_mcq":
                    gi = opts.index(bird[3].title())
                answer = f"({LET[gi]}) {opts[gi]}"
                q += " Options: " + ", ".join(f"({LET[k]}) {o}" for k, o in enumerate(opts))
                pick = gi if rng.random() < 0.55 else int(rng.integers(len(opts)))
                form = rng.random()
                if form < 0.80:
                    reply = f"({LET[pick]}) {opts[pick]}"
                elif form < 0.90:
                    reply = LET[pick]
                elif form < 0.97:
                    reply = opts[pick]
                elif form < 0.99:
                    reply = f"The answer is ({LET[pick]}) {opts[pick]}."
                else:
                    reply = "I cannot tell from this image."
                if reply_mode == "hostile" and rng.random() < 0.15:
                    reply = hostile_reply(rng, reply, opts)
                form = "mcq_lettered"
                ai = gi
            else:
                common, genus, sci, cat = bird
                c2.update(genus=genus, common_name=common, category=cat)
                answer = {
                    "open_common_name": common,
                    "open_scientific_name": sci,
                    "open_genus": genus,
                    "open_kind_of": common.split()[0],
                }[fam]
                q = {
                    "open_common_name": "What is the common name of the bird?",
                    "open_scientific_name": "What is the scientific name of the bird?",
                    "open_genus": "What is the genus of the bird?",
                    "open_kind_of": f"What kind of {cat} is this bird in this image?",
                }[fam]
                other = BIRDS[rng.integers(len(BIRDS))]
                guess = bird if rng.random() < 0.4 else other
                reply = {
                    "open_common_name": guess[0].title(),
                    "open_scientific_name": guess[2].capitalize(),
                    "open_genus": guess[1].capitalize(),
                    "open_kind_of": guess[0].title(),
                }[fam]
                if reply_mode == "hostile" and rng.random() < 0.15:
                    reply = hostile_reply(rng, reply, [guess[0], bird[0]])
                form, ai = "open_text", -1
            rows.append(
                {
                    "qid": f"{TASK.get(fam, 'c2.naming')}/cub/{fam}-{i:07d}",
                    "component": "c2",
                    "task": TASK.get(fam, "c2.naming"),
                    "family": fam,
                    "source": "cub",
                    "question": q,
                    "instruction": "",
                    "options": opts,
                    "answer": answer,
                    "answer_index": ai,
                    "answer_form": form,
                    "difficulty": "",
                    "c2": c2,
                }
            )
            replies.append(reply)
    return rows, replies


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=824_104)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--options", choices=("shuffled", "canonical"), default="shuffled")
    ap.add_argument("--replies", choices=("typical", "hostile"), default="typical")
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows, replies = make(args.n, args.seed, args.options, args.replies)
    schema = pa.schema([f for f in QUESTION_SCHEMA if f.name not in ("image", "image_ref", "c1", "c3", "c4")])
    table = pa.Table.from_pylist(rows, schema=schema)
    del rows
    print(
        f"built {table.num_rows:,} synthetic C2 rows ({args.options} options, {args.replies} replies) "
        f"in {time.perf_counter() - t0:.1f} s"
    )
    tasks = table.column("task").to_pylist()
    total_items = total_reduce = 0.0
    for task in ("c2.salience", "c2.morphology", "c2.localization", "c2.naming"):
        idx = [i for i, t in enumerate(tasks) if t == task]
        sub = table.take(idx)
        resp = [replies[i] for i in idx]
        best_items = best_reduce = float("inf")
        for _ in range(args.repeat):
            c0 = time.process_time()
            kernels = build_kernels(sub)
            items, stats = score_items(task, sub, resp, kernels)
            c1 = time.process_time()
            m = reduce(task, stats)
            c2 = time.process_time()
            best_items, best_reduce = min(best_items, c1 - c0), min(best_reduce, c2 - c1)
            del items, stats
        total_items += best_items
        total_reduce += best_reduce
        n = max(1, m["n"])
        print(
            f"{task:17s} n={m['n']:>7,} cpu: items {1e6 * best_items / n:5.2f} + reduce "
            f"{1e6 * best_reduce / n:5.2f} = {1e6 * (best_items + best_reduce) / n:5.2f} µs/item  "
            f"cags={m['headline']:.3f} [{m['cags_ci_low']:.3f}, {m['cags_ci_high']:.3f}] em={m['em']:.3f} "
            f"parse={m['parse_rate']:.3f}"
        )
    total = total_items + total_reduce
    print(
        f"all C2: cpu {total:.2f} s (items {total_items:.2f} s, reduce {total_reduce:.2f} s) for "
        f"{table.num_rows:,} items = {1e6 * total / table.num_rows:.2f} µs/item"
    )


if __name__ == "__main__":
    main()
