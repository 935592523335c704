"""Benchmark: the C1 selection designs that were measured and rejected, on the bench catalog.

    python bench/c1_select.py --rows 50000000 --workdir /tmp/c1-bench      # generates the catalog
    python bench/c1_select_alternatives.py --rows 50000000 --workdir /tmp/c1-bench

Reproduces the figures of the "measured" list in the docstring of ``builder/manifests/c1_select.py``:
each variant is one DuckDB statement materialized into a temp table (2 threads, 512 MB, as the
selection runs), timed wall and CPU. The cuts are the ones the selection computes for this catalog.
pyarrow's decoding of the uuid column is timed beside DuckDB's; polars is timed when installed (it is
not a project dependency).
"""

from __future__ import annotations

import os
import sys

# run from a checkout: the repo root (for ``builder``) instead of bench/ on the import path
if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
    sys.path.pop(0)

import argparse
import math
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _timed(label: str, run) -> None:
    t0, c0 = time.perf_counter(), time.process_time()
    run()
    print(
        f"{label:<62} {time.perf_counter() - t0:6.2f} s wall {time.process_time() - c0:6.2f} s CPU",
        flush=True,
    )


def main() -> None:
    from builder.manifests import c1_select as cs
    from builder.sources.treeoflife import catalog_columns

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=50_000_000)
    ap.add_argument("--species", type=int, default=200_000)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/biovqa-c1-select-bench"))
    args = ap.parse_args()
    catalog = args.workdir / f"catalog-{args.rows}-{args.species}.parquet"
    if not catalog.exists():
        sys.exit(f"{catalog} is missing: run bench/c1_select.py with the same arguments first")

    files = [catalog]
    sql = cs._catalog_sql(files, catalog_columns(files))
    con = cs.connect(2, "512MB", args.workdir / ".duckdb-tmp-alternatives")
    ranks = ", ".join(cs._q(r) for r in cs.RANKS)
    lineage = f"any_value(struct_pack({ranks})) AS lin, count(*) AS n"
    common = "count(*) FILTER (WHERE common_name <> '') AS n_common"
    small = "count(*) FILTER (WHERE common_name <> '' AND min_side < 224) AS n_small"
    packed = (
        "sum(CASE WHEN coalesce(common_name, '') = '' THEN 1 WHEN min_side < 224 THEN 4294967297 "
        "ELSE 281474976710657 END) AS packed"
    )

    def create(select: str):
        def run():
            con.execute("DROP TABLE IF EXISTS alt")
            con.execute(f"CREATE TEMP TABLE alt AS {select}")

        return run

    cs.lineage_pass(con, sql)
    counts, available = cs.lineage_exclusions(con)
    cfg = cs.SelectionConfig.full()
    need = int(cfg.budget_per_group * cfg.oversample)
    cuts = {g: cs.hash_cut(available[g].values(), cfg.cap(g), need) for g in cs.GROUPS if available[g]}
    top = min(cs.HASH_MAX - 1, math.floor(max(cuts.values()) * cs.HASH_MAX))
    case_cut = " ".join(
        f"WHEN {cs._lit(g)} THEN {min(cs.HASH_MAX - 1, math.floor(f * cs.HASH_MAX))}::UBIGINT"
        for g, f in sorted(cuts.items())
    )

    print(f"{catalog} ({args.rows:,} rows); widest cut {max(cuts.values()):.4f}")
    print("lineage pass")
    _timed("  ranks only (the selection)", create(f"SELECT {lineage} FROM ({sql}) GROUP BY hash({ranks})"))
    _timed("  + common-name flag", create(f"SELECT {lineage}, {common} FROM ({sql}) GROUP BY hash({ranks})"))
    _timed(
        "  + common-name and size flags (the first version)",
        create(f"SELECT {lineage}, {common}, {small} FROM ({sql}) GROUP BY hash({ranks})"),
    )
    _timed(
        "  + both flags as one packed sum",
        create(
            f"SELECT any_value(struct_pack({ranks})) AS lin, {packed} FROM ({sql}) GROUP BY hash({ranks})"
        ),
    )
    complete = cs._complete_sql("grp")
    _timed(
        "  the flags in a third scan instead (totals per class)",
        create(
            f"SELECT class, phylum, cmp, ce, sm, count(*) FROM (SELECT *, {cs.group_case()} AS grp, "
            f"({complete}) AS cmp, common_name = '' AS ce, min_side < 224 AS sm FROM ({sql})) GROUP BY ALL"
        ),
    )
    print("candidate pass")
    gmap = [
        (rank, value, group, min(cs.HASH_MAX - 1, math.floor(cuts[group] * cs.HASH_MAX)))
        for group, (rank, values) in cs.GROUPS.items()
        if group in cuts
        for value in values
    ]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE alt_gmap (rank VARCHAR, value VARCHAR, grp VARCHAR, cut UBIGINT)"
    )
    con.executemany("INSERT INTO alt_gmap VALUES (?, ?, ?, ?)", gmap)
    under_top = f"SELECT *, hash(uuid) AS h FROM ({sql}) WHERE hash(uuid) <= {top}::UBIGINT"
    _timed(
        "  group cut by joins (the selection)",
        create(
            f"SELECT r.*, coalesce(mc.grp, mp.grp) AS grp FROM ({under_top}) r "
            "LEFT JOIN (SELECT * FROM alt_gmap WHERE rank = 'class') mc ON mc.value = r.class "
            "LEFT JOIN (SELECT * FROM alt_gmap WHERE rank = 'phylum') mp ON mp.value = r.phylum "
            "WHERE coalesce(mc.grp, mp.grp) IS NOT NULL AND r.h <= coalesce(mc.cut, mp.cut)"
        ),
    )
    _timed(
        "  group cut as a CASE filter",
        create(
            f"SELECT * FROM (SELECT r.*, {cs.group_case()} AS grp FROM ({under_top}) r) "
            f"WHERE h <= (CASE grp {case_cut} ELSE 0::UBIGINT END)"
        ),
    )
    _timed(
        "  one scan: candidates carried in the lineage aggregate (list)",
        create(
            f"SELECT {lineage}, list(struct_pack(uuid, h, common_name, min_side)) FILTER (WHERE h <= {top}::UBIGINT) "
            f"FROM (SELECT *, hash(uuid) AS h FROM ({sql})) GROUP BY hash({ranks})"
        ),
    )
    _timed(
        "  flags and candidates as one aggregate over all rows",
        create(
            f"SELECT class, phylum, ce, sm, cu, count(*) AS n, any_value(struct_pack(h, {ranks}, common_name, min_side)) "
            f"FILTER (WHERE cu IS NOT NULL) FROM (SELECT *, hash(uuid) AS h, CASE WHEN hash(uuid) <= {top}::UBIGINT "
            f"THEN uuid END AS cu, common_name = '' AS ce, min_side < 224 AS sm FROM ({sql})) GROUP BY ALL"
        ),
    )
    print("decoding the uuid column")
    _timed("  DuckDB", lambda: con.sql(f"SELECT sum(length(uuid)) FROM read_parquet('{catalog}')").fetchall())

    def pyarrow_uuids():
        import pyarrow.parquet as pq

        def one(i):
            return pq.ParquetFile(catalog).read_row_group(i, columns=["uuid"], use_threads=False).num_rows

        with ThreadPoolExecutor(2) as pool:
            sum(pool.map(one, range(pq.ParquetFile(catalog).num_row_groups)))

    _timed("  pyarrow, 2 threads over row groups", pyarrow_uuids)
    try:
        import polars as pl
    except ImportError:
        print("polars: not installed, skipped")
    else:
        _timed(
            f"polars {pl.__version__}: lineage group-by (streaming)",
            lambda: (
                pl.scan_parquet(catalog)
                .group_by(list(cs.RANKS))
                .agg(pl.len(), (pl.col("common_name") != "").sum())
                .collect(engine="streaming")
            ),
        )
    con.close()


if __name__ == "__main__":
    main()
