"""Time C1 scoring on synthetic full-scale items (the paper scores ~890K C1 items per model).

Usage: python -P bench/c1_score.py [--per-task 100000] [--unique-share 0.1] [--repeat 1]
Prints µs/item per task and in total (CPU: the minimum over ``--repeat`` runs, as the machine is shared;
runs after the first reuse the module-level reply-normalization caches, so quote ``--repeat 1`` as cold).
Synthetic: a random tree of ~12K species, replies that are right, near misses, synonyms, refusals and a
share of unique free-text strings (normalization cache misses). Wrong answers are drawn uniformly from
all 12K species, so most (answer, gold) pairs are distinct: a pessimistic case for the outcome caches.
"""

from __future__ import annotations

import argparse
import random
import time

import pyarrow as pa

from biovqa.metrics.c1 import TASK_RANKS, score_task
from biovqa.taxonomy import RANKS, Resources, SynonymMap, Taxonomy, build_vernacular_index, lineage_node_id


def synthetic_lineages(rng: random.Random, n_species: int) -> list[dict]:
    out = []
    for s in range(n_species):
        g = s // 3
        f = g // 4
        o = f // 6
        c = o // 5
        p = c // 4
        lin = {
            "kingdom": "Plantae" if p % 3 == 0 else "Animalia",
            "phylum": f"Phylum{p}",
            "class": f"Class{c}",
            "order": None if c % 7 == 3 else f"Order{o}",  # some "reptiles" without order (skip edges)
            "family": f"Family{f}",
            "genus": f"Genus{g}",
            "species": f"epithet{s}",
        }
        lin["scientific_name"] = f"{lin['genus']} {lin['species']}"
        lin["common_name"] = f"Common {s % 9000}"
        out.append(lin)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-task", type=int, default=100_000)
    ap.add_argument("--unique-share", type=float, default=0.1)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    rng = random.Random(42)
    species = synthetic_lineages(rng, 12_000)
    tax = Taxonomy.from_lineages(species)
    syn = SynonymMap([(f"oldgenus{s} epithet{s}", f"genus{s // 3} epithet{s}") for s in range(0, 12_000, 5)])
    vern = build_vernacular_index([(lin["common_name"], lineage_node_id(lin)) for lin in species], tax)
    res = Resources(tax, syn, vern)
    lineage_type = pa.struct([(r, pa.string()) for r in (*RANKS, "scientific_name", "common_name")])
    total_items, total_s, total_cpu = 0, 0.0, 0.0
    for task, kind in TASK_RANKS.items():
        rows = [species[rng.randrange(len(species))] for _ in range(args.per_task)]
        field = {"species": "species", "scientific_name": "scientific_name"}.get(kind, kind)
        if kind in ("common_name", "common_name_mcq"):
            field = "common_name"
        answers = [r[field] or r["family"] for r in rows]
        options = None
        if kind == "common_name_mcq":
            options = []
            for r in rows:
                opts = [r["common_name"]] + [
                    species[rng.randrange(len(species))]["common_name"] for _ in range(3)
                ]
                rng.shuffle(opts)
                options.append(opts)
        responses = []
        for r, a in zip(rows, answers, strict=True):
            u = rng.random()
            if u < 0.4:
                responses.append(a)
            elif u < 0.45:
                responses.append(f"The {kind.replace('_', ' ')} is {a}.")
            elif u < 0.75:
                other = species[rng.randrange(len(species))]
                responses.append(other[field] or other["family"])
            elif u < 0.78:
                responses.append("I am not sure")
            elif u < 0.78 + args.unique_share:
                responses.append(f"Some free text {rng.random():.12f}")
            else:
                responses.append(r["genus"])
        table = pa.table(
            {
                "qid": [f"{task}/syn/{i}" for i in range(len(rows))],
                "question": [f"What is the {kind} of the animal shown in this image?"] * len(rows),
                "answer": answers,
                "options": options if options is not None else [[] for _ in rows],
                "c1": pa.array(rows, type=lineage_type),
            }
        )
        dt = dc = float("inf")
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            ts = score_task(task, table, responses, res)
            dt, dc = min(dt, time.perf_counter() - t0), min(dc, time.process_time() - c0)
        total_items += len(rows)
        total_s += dt
        total_cpu += dc
        m = ts.metrics
        print(
            f"{task:22s} {dt * 1e6 / len(rows):6.2f} µs/item wall {dc * 1e6 / len(rows):6.2f} cpu  "
            f"em={m['em']:.3f} wup={m['wup']:.3f} severity={m['severity']:.3f}"
        )
    print(
        f"total {total_items} items: {total_s:.2f} s wall ({total_s * 1e6 / total_items:.2f} µs/item), "
        f"{total_cpu:.2f} s cpu ({total_cpu * 1e6 / total_items:.2f} µs/item)"
    )


if __name__ == "__main__":
    main()
