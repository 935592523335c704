"""Benchmark: C1 selection over a large catalog in TreeOfLife layout (streaming, peak RSS, rows/s).

    python bench/c1_select.py --rows 50000000 --workdir /tmp/c1-bench

Generates (once, in row groups so generation itself stays in memory bounds) a catalog.parquet with
uuid, the seven ranks, scientific/common names and ``resized_size``; the species follow a Zipf law
over the ten C1 groups plus out-of-group taxa, with a share of incomplete lineages and missing
common names. Then runs the selection's catalog stage (exposure counts, exclusion counts, hash-ordered
per-species cap and per-group budget) in a child process and prints rows/s and that process's peak RSS.
The image-verification stage is not part of this figure (the bench catalog has no pixels).
"""

from __future__ import annotations

import os
import sys

# run from a checkout: the repo root (for ``builder``) instead of bench/ on the import path
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import json
import resource
import subprocess
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

_CLASSES = [  # (group, kingdom, phylum, class, has_order)
    ("Amphibians", "Animalia", "Chordata", "Amphibia", True),
    ("Angiosperms", "Plantae", "Tracheophyta", "Magnoliopsida", True),
    ("Angiosperms", "Plantae", "Tracheophyta", "Liliopsida", True),
    ("Arachnids", "Animalia", "Arthropoda", "Arachnida", True),
    ("Birds", "Animalia", "Chordata", "Aves", True),
    ("Bryophytes", "Plantae", "Bryophyta", "Bryopsida", True),
    ("Fish", "Animalia", "Chordata", "Actinopterygii", True),
    ("Fish", "Animalia", "Chordata", "Elasmobranchii", True),
    ("Gymnosperms", "Plantae", "Tracheophyta", "Pinopsida", True),
    ("Insects", "Animalia", "Arthropoda", "Insecta", True),
    ("Mammals", "Animalia", "Chordata", "Mammalia", True),
    ("Reptiles", "Animalia", "Chordata", "Squamata", False),
    ("Reptiles", "Animalia", "Chordata", "Testudines", False),
    ("", "Fungi", "Basidiomycota", "Agaricomycetes", True),
    ("", "Animalia", "Mollusca", "Gastropoda", True),
]
_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _uuids(rng: np.random.Generator, n: int) -> pa.Array:
    raw = rng.integers(0, 16, size=(n, 32), dtype=np.uint8)
    chars = _HEX[raw]
    out = np.full((n, 36), ord("-"), dtype=np.uint8)
    for dst, src in (
        (slice(0, 8), slice(0, 8)),
        (slice(9, 13), slice(8, 12)),
        (slice(14, 18), slice(12, 16)),
        (slice(19, 23), slice(16, 20)),
        (slice(24, 36), slice(20, 32)),
    ):
        out[:, dst] = chars[:, src]
    offsets = pa.py_buffer(np.arange(0, 36 * (n + 1), 36, dtype=np.int32))
    return pa.StringArray.from_buffers(n, offsets, pa.py_buffer(out.tobytes()))


def species_table(n_species: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """A synthetic lineage per species (dictionary of string columns)."""
    cls = rng.integers(0, len(_CLASSES), n_species)
    from builder.manifests.c1_select import RANKS

    cols: dict[str, list] = {k: [] for k in (*RANKS, "scientific_name", "common_name")}
    for i in range(n_species):
        _, kingdom, phylum, klass, has_order = _CLASSES[cls[i]]
        fam, gen = i // 97, i // 7
        genus = f"Genus{gen}"
        cols["kingdom"].append(kingdom)
        cols["phylum"].append(phylum)
        cols["class"].append(klass)
        cols["order"].append(f"Order{fam // 13}{klass[:3]}" if has_order else None)
        cols["family"].append(f"Family{fam}{klass[:3]}")
        cols["genus"].append(genus)
        cols["species"].append(f"{genus} epithet{i}")
        cols["scientific_name"].append(f"{genus} epithet{i}")
        cols["common_name"].append(f"Common species {i}")
    return {k: np.array(v, dtype=object) for k, v in cols.items()}


def generate(path: Path, rows: int, n_species: int, seed: int = 42, chunk: int = 1_000_000) -> None:
    """Write the bench catalog in row groups of ``chunk`` rows."""
    rng = np.random.default_rng(seed)
    table = species_table(n_species, rng)
    dicts = {k: pa.array(v, pa.string()) for k, v in table.items()}
    weights = 1.0 / np.arange(1, n_species + 1) ** 1.1
    weights /= weights.sum()
    schema = pa.schema(
        [("uuid", pa.string())] + [(k, pa.string()) for k in table] + [("resized_size", pa.list_(pa.int64()))]
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(path, schema, compression="snappy") as writer:
        done = 0
        while done < rows:
            n = min(chunk, rows - done)
            sp = rng.choice(n_species, size=n, p=weights).astype(np.int32)
            cols = {"uuid": _uuids(rng, n)}
            for k, d in dicts.items():
                idx = pa.array(sp)
                if k in ("family", "common_name"):  # 2 % holes: incomplete lineage / no common name
                    idx = pa.array(np.where(rng.random(n) < 0.02, -1, sp), mask=None)
                    idx = pa.array(idx.to_numpy(), mask=(idx.to_numpy() < 0))
                cols[k] = pa.DictionaryArray.from_arrays(idx, d).dictionary_decode()
            side = rng.integers(128, 1024, size=(n, 2))
            side[rng.random(n) < 0.03] = 100  # below the threshold
            offsets = pa.array(np.arange(0, 2 * n + 1, 2, dtype=np.int32))
            cols["resized_size"] = pa.ListArray.from_arrays(offsets, pa.array(side.ravel()))
            writer.write_table(pa.table(cols, schema=schema))
            done += n


def _child(catalog: Path, out: Path, threads: int) -> None:
    from builder.manifests import c1_select

    t0 = time.perf_counter()
    usage0 = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = usage0.ru_utime + usage0.ru_stime
    result = c1_select.select_from_catalog(
        [catalog], out, config=c1_select.SelectionConfig.full(), threads=threads
    )
    wall = time.perf_counter() - t0
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": usage.ru_utime + usage.ru_stime - cpu0,
                "peak_rss_mib": usage.ru_maxrss / 1024,
                "selected": result["selected"],
                "accounted": result["accounted"],
                "exclusions": result["exclusions"],
                "timings": result["timings_s"],
                "catalog_rows": result["catalog_rows"],
                "load_avg": os.getloadavg()[0],
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000_000)
    ap.add_argument("--species", type=int, default=200_000)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/biovqa-c1-select-bench"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    catalog = args.workdir / f"catalog-{args.rows}-{args.species}.parquet"
    if args.child:
        _child(catalog, args.workdir / "out", args.threads)
        return
    if not catalog.exists():
        t0 = time.perf_counter()
        generate(catalog, args.rows, args.species)
        print(
            f"generated {args.rows:,} rows in {time.perf_counter() - t0:.1f} s ({catalog.stat().st_size / 2**20:.0f} MiB)"
        )
    cmd = [
        sys.executable,
        __file__,
        "--child",
        "--rows",
        str(args.rows),
        "--species",
        str(args.species),
        "--workdir",
        str(args.workdir),
        "--threads",
        str(args.threads),
    ]
    res = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ})
    if res.returncode != 0:
        sys.exit(res.stderr)
    fig = json.loads(res.stdout.strip().splitlines()[-1])
    print(
        f"selection: {fig['catalog_rows']:,} rows in {fig['wall_s']:.2f} s wall = "
        f"{fig['catalog_rows'] / fig['wall_s'] / 1e6:.2f} M rows/s; CPU {fig['cpu_s']:.1f} s "
        f"(= {fig['catalog_rows'] / fig['cpu_s'] * args.threads / 1e6:.2f} M rows/s on {args.threads} idle cores); "
        f"peak RSS {fig['peak_rss_mib']:.0f} MiB; selected {fig['selected']:,}; "
        f"load average at the end {fig['load_avg']:.1f}; stages {fig['timings']}"
    )
    print(f"every row accounted for: {fig['accounted']}; exclusions {fig['exclusions']}")


if __name__ == "__main__":
    main()
