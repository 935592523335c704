"""Time C3 scoring at full scale: Table 9's 132,504 items with synthetic replies; prints µs/item per task.

    python -P bench/bench_c3.py [--scale 1.0]

(``-P`` keeps ``bench/`` off ``sys.path``; it is optional.)

Replies mix the bare formats the prompts ask for with verbose and unparseable ones, so every parser
branch is exercised. Building the question tables is not timed; ``score_task`` (parse + items + stats +
reduce, including the plate-cluster bootstrap) is.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyarrow as pa

from biovqa.metrics import c3
from biovqa.schema import QUESTION_SCHEMA

TABLE9 = {
    "c3.counting": 53_498,
    "c3.relative_counting": 42_412,
    "c3.absolute_distance": 14_108,
    "c3.relative_distance": 3_976,
    "c3.localization": 3_988,
    "c3.relative_position": 1_000,
    "c3.viewpoint": 13_000,
    "c3.ocr": 522,
}
DIRS = ["top", "bottom", "left", "right", "top-left", "top-right", "bottom-left", "bottom-right"]
VPS = ["front", "back", "left", "right", "frontleft", "frontright", "backleft", "backright", "up", "down"]


def _table(task: str, n: int, c3_rows: list[dict], extra: dict[str, list] | None = None) -> pa.Table:
    cols = {name: pa.nulls(n, QUESTION_SCHEMA.field(name).type) for name in QUESTION_SCHEMA.names}
    cols["qid"] = pa.array([f"{task}/bench/{i:06d}" for i in range(n)])
    cols["task"] = pa.array([task] * n)
    cols["c3"] = pa.array(c3_rows, type=QUESTION_SCHEMA.field("c3").type)
    for k, v in (extra or {}).items():
        cols[k] = pa.array(v, type=QUESTION_SCHEMA.field(k).type)
    return pa.table(cols, schema=QUESTION_SCHEMA)


def build(task: str, n: int, rng: np.random.Generator) -> tuple[pa.Table, list[str | None]]:
    """A question table of ``n`` rows for ``task`` and one synthetic reply per row."""
    noise = rng.random(n)
    if task == "c3.counting":
        gold = rng.integers(1, 200, n)
        rows = [
            {"corpus": f"c{i % 10}", "gold_value": float(g), "plate_id": f"p{i // 3}", "tier": "easy"}
            for i, g in enumerate(gold)
        ]
        replies = [
            str(int(g * rng.uniform(0.6, 1.4)))
            if u > 0.1
            else f"There are {g} animals."
            if u > 0.02
            else "many"
            for g, u in zip(gold, noise, strict=True)
        ]
        return _table(task, n, rows), replies
    if task in ("c3.relative_counting", "c3.relative_distance"):
        gold = rng.integers(0, 4, n)
        rows = [{"measurement": "most"} for _ in range(n)]
        letters = "ABCD"
        replies = [
            letters[int(rng.integers(0, 4))]
            if u > 0.2
            else f"Image {letters[g]} (top-left)"
            if u > 0.05
            else "unsure"
            for g, u in zip(gold, noise, strict=True)
        ]
        opts = [
            ["Image A (top-left)", "Image B (top-right)", "Image C (bottom-left)", "Image D (bottom-right)"]
        ] * n
        return _table(task, n, rows, {"answer_index": gold.tolist(), "options": opts}), replies
    if task == "c3.absolute_distance":
        gold = rng.uniform(0.2, 2.0, n)
        rows = [
            {"gold_value": float(g), "measurement": ["length", "width"][i % 2], "plate_id": f"p{i // 8}"}
            for i, g in enumerate(gold)
        ]
        replies = [
            f"{g * rng.uniform(0.6, 1.4):.2f} cm" if u > 0.05 else "about 1 cm long"
            for g, u in zip(gold, noise, strict=True)
        ]
        return _table(task, n, rows), replies
    if task == "c3.localization":
        w, h = rng.integers(500, 4000, n), rng.integers(400, 3000, n)
        rows, replies = [], []
        for i in range(n):
            box = [float(w[i] * 0.2), float(h[i] * 0.2), float(w[i] * 0.5), float(h[i] * 0.5)]
            rows.append({"gold_box": box, "image_width": int(w[i]), "image_height": int(h[i])})
            replies.append("[200, 200, 700, 700]" if noise[i] > 0.3 else "The zebra is in the center")
        return _table(task, n, rows), replies
    if task == "c3.relative_position":
        gold = [DIRS[int(k)] for k in rng.integers(0, 8, n)]
        opts = [[g, *[d for d in DIRS if d != g][:3]] for g in gold]
        rows = [{"direction": g} for g in gold]
        replies = [o[int(rng.integers(0, 4))] for o in opts]
        return _table(task, n, rows, {"options": opts}), replies
    if task == "c3.viewpoint":
        gold = [VPS[int(k)] for k in rng.integers(0, 10, n)]
        rows = [{"viewpoint": g, "tier": "box"} for g in gold]
        replies = [
            VPS[int(k)] if u > 0.1 else "Front-Left."
            for k, u in zip(rng.integers(0, 10, n), noise, strict=True)
        ]
        return _table(task, n, rows), replies
    codes = [f"A00000{int(k):06d}" for k in rng.integers(0, 999_999, n)]
    rows = [{"code": c} for c in codes]
    replies = [c[:-2] + "00" if u > 0.1 else "The code is " + c for c, u in zip(codes, noise, strict=True)]
    return _table(task, n, rows), replies


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of Table 9's item counts")
    args = ap.parse_args()
    rng = np.random.default_rng(42)
    total_items, total_s, total_cpu = 0, 0.0, 0.0
    print(f"{'task':24s} {'items':>8s} {'wall s':>8s} {'us/item':>8s} {'cpu s':>8s} {'cpu us':>8s}  headline")
    for task, count in TABLE9.items():
        n = max(10, int(count * args.scale))
        table, replies = build(task, n, rng)
        start, cpu0 = time.perf_counter(), time.process_time()
        res = c3.score_task(task, table, replies)
        dt, cpu = time.perf_counter() - start, time.process_time() - cpu0
        total_items += n
        total_s += dt
        total_cpu += cpu
        m = res.metrics
        print(
            f"{task:24s} {n:8d} {dt:8.3f} {1e6 * dt / n:8.1f} {cpu:8.3f} {1e6 * cpu / n:8.1f}"
            f"  {m['headline_metric']}={m['headline']:.3f}"
        )
    print(
        f"{'all C3':24s} {total_items:8d} {total_s:8.3f} {1e6 * total_s / total_items:8.1f}"
        f" {total_cpu:8.3f} {1e6 * total_cpu / total_items:8.1f}"
    )


if __name__ == "__main__":
    main()
