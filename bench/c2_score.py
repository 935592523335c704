"""Speed of the C2 scorer on a synthetic full-scale prediction set (824,104 items, Table 7 proportions).

Prints µs/item for parsing + scoring (``score_task`` over the four C2 tasks) and the bootstrap share.
Usage: ``python bench/c2_score.py [--n 824104] [--seed 42]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from biovqa.metrics.c2 import score_task
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


def make(n_total: int, seed: int):
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
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows, replies = make(args.n, args.seed)
    schema = pa.schema([f for f in QUESTION_SCHEMA if f.name not in ("image", "image_ref", "c1", "c3", "c4")])
    table = pa.Table.from_pylist(rows, schema=schema)
    print(f"built {table.num_rows:,} synthetic C2 rows in {time.perf_counter() - t0:.1f} s")
    tasks = table.column("task").to_pylist()
    total = total_cpu = 0.0
    for task in ("c2.salience", "c2.morphology", "c2.localization", "c2.naming"):
        idx = [i for i, t in enumerate(tasks) if t == task]
        sub = table.take(idx)
        resp = [replies[i] for i in idx]
        t1, c1 = time.perf_counter(), time.process_time()
        res = score_task(task, sub, resp)
        dt, cpu = time.perf_counter() - t1, time.process_time() - c1
        total += dt
        total_cpu += cpu
        m = res.metrics
        print(
            f"{task:17s} n={m['n']:>7,} wall {dt:6.2f} s cpu {cpu:6.2f} s {1e6 * cpu / max(1, m['n']):5.2f} µs/item  "
            f"cags={m['headline']:.3f} [{m['cags_ci_low']:.3f}, {m['cags_ci_high']:.3f}] em={m['em']:.3f} "
            f"parse={m['parse_rate']:.3f}"
        )
    print(
        f"all C2: wall {total:.2f} s, cpu {total_cpu:.2f} s for {table.num_rows:,} items "
        f"= {1e6 * total_cpu / table.num_rows:.2f} µs/item (cpu)"
    )


if __name__ == "__main__":
    main()
