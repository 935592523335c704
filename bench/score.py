"""Time ``biovqa score`` on a full-scale synthetic question table + prediction file (all 24 tasks).

Builds, in a temporary folder, a Hub-shaped dataset (``data/all/test-*.parquet``, QUESTION_SCHEMA with a
null ``image`` column, plus ``resources/`` for C1) holding the paper's task mix — C1 890,000 (8 ranks ×
100,000 with order 90,000, + the common-name MCQ), C2 824,104 (Table 7 families, from bench/c2_score.py),
C3 132,504 (§A.3 per-task counts), C4 15,000 — 1,861,608 questions, and a JSONL of replies that mix
correct, near-miss, verbose and unparseable answers. Then runs ``biovqa score`` in a fresh process
(so generation does not count) and prints wall seconds, peak RSS of that process and per-task seconds.

Usage: ``python bench/score.py [--scale 1.0] [--keep DIR]``  (targets: ≤ 30 s wall, ≤ 3 GB RSS)
"""

# ruff: noqa: E402  (bench/ must leave sys.path before pyarrow/subprocess import `select`)
from __future__ import annotations

import os
import sys

# keep bench/ itself off the import path (the repo root is added below where needed)
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]

import argparse
import importlib.util
import json
import random
import resource
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from biovqa.schema import QUESTION_SCHEMA

HERE = Path(__file__).resolve().parent
C1_PER_RANK = 100_000
C1_ORDER = 90_000  # reptiles have no order (§A.1): 9 groups × 10,000
C3_COUNTS = {  # §A.3 table
    "c3.counting": 53_498,
    "c3.viewpoint": 13_000,
    "c3.absolute_distance": 14_108,
    "c3.relative_distance": 3_976,
    "c3.relative_counting": 42_412,
    "c3.localization": 3_988,
    "c3.relative_position": 1_000,
    "c3.ocr": 522,
}
C4_PER_CONDITION = 5_000
C4_SPECIES = ("whale shark", "beluga whale", "spotted hyena", "leopard", "grevy's zebra")
C3_CORPORA = (
    "waid",
    "bob",
    "neon_beetles",
    "depondfi",
    "gzcd",
    "whaleshark",
    "hyena",
    "leopard",
    "bees",
    "fish",
)
VIEWS = ("front", "back", "left", "right", "frontleft", "frontright", "backleft", "backright", "up", "down")
DIRS = ("Top", "Bottom", "Left", "Right", "Top-left", "Top-right", "Bottom-left", "Bottom-right")
LET = "ABCD"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


# ----------------------------------------------------------------------------------------------- C1
def c1_rows(scale: float, folder: Path, rng: random.Random):
    from biovqa.taxonomy import SynonymMap, Taxonomy, build_vernacular_index, lineage_node_id, save_resources

    species = _load("c1_score").synthetic_lineages(rng, 12_000)
    tax = Taxonomy.from_lineages(species)
    syn = SynonymMap([(f"oldgenus{s} epithet{s}", f"genus{s // 3} epithet{s}") for s in range(0, 12_000, 5)])
    vern = build_vernacular_index([(lin["common_name"], lineage_node_id(lin)) for lin in species], tax)
    save_resources(folder, tax, syn, vern)
    ranks = ("phylum", "class", "order", "family", "genus", "species", "scientific_name", "common_name")
    rows, replies = [], []
    for kind in (*ranks, "common_name_mcq"):
        n = round((C1_ORDER if kind == "order" else C1_PER_RANK) * scale)
        field = "common_name" if kind.startswith("common_name") else kind
        for i in range(n):
            lin = species[rng.randrange(len(species))]
            if kind == "order" and lin["order"] is None:
                lin = next(s for s in species if s["order"])
            answer = lin[field]
            options: list[str] = []
            if kind == "common_name_mcq":
                options = [answer] + [species[rng.randrange(len(species))]["common_name"] for _ in range(3)]
                rng.shuffle(options)
            u = rng.random()
            if u < 0.40:
                reply = answer
            elif u < 0.48:
                reply = f"The {kind.replace('_', ' ')} of this organism is {answer}."
            elif u < 0.78:
                other = species[rng.randrange(len(species))]
                reply = other[field] or other["family"]
            elif u < 0.81:
                reply = "I am not sure what this is."
            elif u < 0.90:
                reply = f"Some free text {rng.random():.10f}"
            else:
                reply = lin["genus"]
            rows.append(
                {
                    "qid": f"c1.{kind}/treeoflife/{i:07d}",
                    "component": "c1",
                    "task": f"c1.{kind}",
                    "family": kind,
                    "source": "treeoflife",
                    "question": f"What is the {kind.replace('_', ' ')} of the organism in this image?",
                    "instruction": "Answer with the name only.",
                    "options": options,
                    "answer": answer,
                    "answer_index": options.index(answer) if options else -1,
                    "answer_form": "mcq_bare" if options else "open_text",
                    "c1": {**{k: lin[k] for k in ("kingdom", *ranks)}, "rank": kind},
                }
            )
            replies.append(reply)
    return rows, replies


# ----------------------------------------------------------------------------------------------- C3
def _mcq(rng, n_opt, prefix):
    gi = rng.randrange(n_opt)
    pick = gi if rng.random() < 0.45 else rng.randrange(n_opt)
    u = rng.random()
    reply = (
        f"{prefix} {LET[pick]}"
        if u < 0.7
        else (LET[pick] if u < 0.85 else f"I think it is {prefix} {LET[pick]}.")
    )
    if u > 0.98:
        reply = "They all look similar."
    return gi, reply


def c3_rows(scale: float, rng: random.Random):
    rows, replies = [], []
    for task, count in C3_COUNTS.items():
        for i in range(max(1, round(count * scale))):
            corpus = C3_CORPORA[i % len(C3_CORPORA)]
            plate = f"{corpus}-plate{i // 6:05d}"
            c3 = {"corpus": corpus, "plate_id": plate, "object_type": "beetle", "target_panel": -1}
            rec = {"answer_index": -1, "options": []}
            if task == "c3.counting":
                k = rng.randrange(1, 40)
                c3.update(
                    tier=("single", "cross", "same")[i % 3], counts=[k], target_panel=0, gold_value=float(k)
                )
                guess = max(0, k + rng.choice((0, 0, 0, 1, -1, 2, -3, 5)))
                u = rng.random()
                reply = (
                    str(guess)
                    if u < 0.7
                    else (f"There are {guess} animals in the image." if u < 0.95 else "many")
                )
                rec.update(answer=str(k), answer_form="integer")
            elif task in ("c3.relative_counting", "c3.relative_distance"):
                prefix = "Image" if task == "c3.relative_counting" else "Beetle"
                gi, reply = _mcq(rng, 4, prefix)
                opts = [f"{prefix} {x}" for x in LET]
                c3.update(
                    counts=[rng.randrange(1, 30) for _ in range(4)], measurement=("most", "least")[i % 2]
                )
                rec.update(answer=opts[gi], answer_index=gi, options=opts, answer_form="choice_abcd")
            elif task == "c3.absolute_distance":
                g = round(rng.uniform(0.3, 1.6), 3)
                c3.update(gold_value=g, measurement=("length", "width")[i % 2], scale_px_per_cm=120.0)
                u = rng.random()
                pred = g * rng.choice((1.0, 1.1, 0.85, 1.5, 0.5, 2.0))
                reply = (
                    f"{pred:.2f} cm"
                    if u < 0.8
                    else (f"The elytra measure about {pred:.1f} cm." if u < 0.97 else "n/a")
                )
                rec.update(answer=f"{g}", answer_form="number_cm")
            elif task == "c3.localization":
                w, h = 1600, 1200
                x, y = rng.randrange(0, 800), rng.randrange(0, 600)
                bw, bh = rng.randrange(100, 700), rng.randrange(100, 500)
                c3.update(gold_box=[float(x), float(y), float(bw), float(bh)], image_width=w, image_height=h)
                dx = rng.randrange(-80, 80)
                u = rng.random()
                reply = (
                    f"[{x + dx}, {y}, {x + bw + dx}, {y + bh}]"
                    if u < 0.5
                    else ("The zebra is in the center." if u < 0.9 else f"({x}, {y}), ({x + bw}, {y + bh})")
                )
                rec.update(answer=f"[{x}, {y}, {x + bw}, {y + bh}]", answer_form="box")
            elif task == "c3.relative_position":
                offered = rng.sample(DIRS, 4)
                gold = offered[0]
                rng.shuffle(offered)
                c3.update(direction=gold.lower())
                reply = rng.choice(offered) if rng.random() < 0.9 else "It is nearby."
                rec.update(answer=gold, options=offered, answer_form="direction")
            elif task == "c3.viewpoint":
                gold = VIEWS[rng.randrange(8)]
                c3.update(viewpoint=gold, tier=("one", "three")[i % 2], species=corpus)
                reply = gold if rng.random() < 0.4 else rng.choice(VIEWS)
                rec.update(answer=gold, answer_form="viewpoint")
            else:  # ocr
                code = f"A{rng.randrange(10**11):011d}"
                c3.update(code=code)
                reply = code if rng.random() < 0.8 else code[:-2] + "00"
                rec.update(answer=code, answer_form="code")
            rows.append(
                {
                    "qid": f"{task}/{corpus}/{i:07d}",
                    "component": "c3",
                    "task": task,
                    "family": task.split(".")[1],
                    "source": corpus,
                    "question": f"Synthetic {task} question.",
                    "instruction": "",
                    "c3": c3,
                    **rec,
                }
            )
            replies.append(reply)
    return rows, replies


# ----------------------------------------------------------------------------------------------- C4
def c4_rows(scale: float, rng: random.Random):
    rows, replies = [], []
    per_species = max(2, round(C4_PER_CONDITION * scale) // len(C4_SPECIES))
    for cond in ("easy", "random", "hard"):
        for sp in C4_SPECIES:
            for i in range(per_species):
                same = i < per_species // 2
                p_yes = {"easy": (0.9, 0.3), "random": (0.75, 0.55), "hard": (0.7, 0.8)}[cond][
                    0 if same else 1
                ]
                word = "Yes" if rng.random() < p_yes else "No"
                u = rng.random()
                reply = word if u < 0.97 else (f"{word}, they look alike." if u < 0.995 else "I am not sure.")
                rows.append(
                    {
                        "qid": f"c4.{cond}/{sp.replace(' ', '_')}/{i:06d}",
                        "component": "c4",
                        "task": f"c4.{cond}",
                        "family": cond,
                        "source": sp,
                        "question": "Is the main subject in the left image the very same individual animal …",
                        "instruction": "Answer with one word: Yes or No. Do not explain.",
                        "answer": "Yes" if same else "No",
                        "answer_form": "yes_no",
                        "options": [],
                        "answer_index": -1,
                        "c4": {"catalog": sp, "species": sp, "condition": cond, "same": same},
                    }
                )
                replies.append(reply)
    return rows, replies


# -------------------------------------------------------------------------------------------- build
def build(root: Path, scale: float) -> tuple[Path, Path, int]:
    rng = random.Random(42)
    folder = root / "hub"
    (folder / "data" / "all").mkdir(parents=True)
    preds = root / "predictions.jsonl"
    total = 0
    with open(preds, "w", encoding="utf-8") as out:
        parts = [
            ("c1", lambda: c1_rows(scale, folder, rng)),
            ("c2", lambda: _load("c2_score").make(round(824_104 * scale), 42)),
            ("c3", lambda: c3_rows(scale, rng)),
            ("c4", lambda: c4_rows(scale, rng)),
        ]
        for k, (name, make) in enumerate(parts):
            t0 = time.perf_counter()
            rows, replies = make()
            for r in rows:
                r.setdefault("difficulty", "")
                r.setdefault("options", [])
                r.setdefault("answer_index", -1)
                r.setdefault("instruction", "")
            table = pa.Table.from_pylist(rows, schema=QUESTION_SCHEMA)
            pq.write_table(table, folder / "data" / "all" / f"test-{k:05d}-of-00004.parquet")
            order = np.random.default_rng(k).permutation(len(rows))  # predictions arrive in another order
            for i in order:
                out.write(json.dumps({"qid": rows[i]["qid"], "response": replies[i]}) + "\n")
            total += len(rows)
            print(f"  built {name}: {len(rows):>9,} rows in {time.perf_counter() - t0:5.1f} s", flush=True)
            del rows, replies, table
    return folder, preds, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--scale", type=float, default=1.0, help="fraction of the full task mix (1.0 = 1,861,608)"
    )
    ap.add_argument(
        "--keep", type=Path, default=None, help="build here and keep the files (reused if present)"
    )
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="biovqa-bench-score-"))
    root.mkdir(parents=True, exist_ok=True)
    if args.keep and (root / "predictions.jsonl").is_file() and (root / "hub" / "data" / "all").is_dir():
        folder, preds = root / "hub", root / "predictions.jsonl"
        total = sum(pq.ParquetFile(f).metadata.num_rows for f in (folder / "data" / "all").glob("*.parquet"))
        print(f"reusing the synthetic dataset + predictions under {root}")
    else:
        print(f"building synthetic dataset + predictions under {root}")
        folder, preds, total = build(root, args.scale)
    print(f"  {total:,} questions; predictions {preds.stat().st_size / 1e6:.0f} MB")

    cmd = [
        sys.executable,
        "-m",
        "biovqa.cli",
        "score",
        str(preds),
        "--dataset",
        str(folder),
        "--config",
        "all",
    ]
    cmd += ["--out", str(root / "out"), "--model-name", "synthetic"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    rss_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(proc.stdout)
    if proc.returncode not in (0, 1):
        print(proc.stderr[-4000:])
        raise SystemExit(f"biovqa score failed with exit code {proc.returncode}")
    note = "" if rss_kb > before else " (may include the build step's children)"
    print(f"biovqa score: {total:,} items, wall {wall:.1f} s, peak RSS {rss_kb / 1024**2:.2f} GB{note}")
    print("targets: <= 30 s wall, <= 3 GB peak RSS (DESIGN.md §7)")


if __name__ == "__main__":
    main()
