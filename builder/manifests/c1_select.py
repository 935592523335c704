"""C1 selection manifest (§3.1, Table 5, §L.1): ten groups, complete lineage, resolution, caps, budgets.

Streaming over a TreeOfLife catalog of any size with DuckDB (bounded memory, two scans):

1. *Lineage pass*: one hash aggregate over the seven ranks gives the image count of every distinct
   lineage, from which come the exposure counts c(t) of every tree node (§E.3: images whose lineage
   passes through t, over the whole catalog), the lineage-level exclusions (outside the ten groups,
   incomplete lineage) and, per species, the rows the selection may draw from.
2. *Candidate pass*: the selection order is a hash of the uuid (deterministic, unlike the paper's
   download race). Per group a hash cut ``tau_g`` is chosen from the per-species counts so that the rows
   under it are enough to fill the budget under the species cap (:func:`hash_cut`, with ``oversample``
   rows per budget slot). Only rows under their cut leave the scan. Of these, rows without a common
   name or with a catalog-declared size under the threshold are counted with that reason; windows
   rank the rest within species and group (hash order) and prune what is surely over the cap /
   budget. If the walk runs out before the budget fills (say, most rows of a group lack a common
   name), the cuts widen and the pass reruns; the selection does not depend on the cut.
3. *Walk* (column-wise, :func:`walk`): per group in hash order, a candidate is taken while its species
   is under the cap and the group under budget, after its image is verified (present, decodable,
   size) and its common name resolved to English. Image checks run in batches; a failed one gives
   its slot to the next candidate, so the result equals the sequential walk over verified rows.

Every catalog row is accounted for exactly once. Lineage-level reasons are counted over the whole
catalog; row-level reasons (``missing_common_name``, ``below_resolution`` by the catalog's size) are
known for the rows the selection examined, i.e. those under the cut; complete in-group rows beyond
it are ``not_reached``. Rows the walk examines and does not take get a per-row exclusion record
(duplicate uuid, no English name, failed image check, over the cap or budget); rows pruned in SQL
are counted as over the cap / budget. Duplicate uuids are found among the rows under the cuts (equal
uuids have equal hashes, so both copies fall under the same cut unless they sit in different
groups); every copy is excluded, since the label is ambiguous.
Choices where the paper is silent: threshold 224 px on the short side, cap 50 images per species
(Gymnosperms 200: "significantly relaxing our sampling constraints", §M.2), budget 10 000 per group.

The order key is DuckDB's 64-bit ``hash(uuid)``: cheap enough to stream (an MD5 costs 11x more), but
defined by DuckDB, so a rebuild reproduces the selection byte for byte only with the same DuckDB
version (recorded in the summary); the released manifest pins uuids and image hashes either way (§L.1).

Speed (bench/c1_select.py, 50M rows, 2 cores, DuckDB 2.0.1): lineage pass ~2.5 s, candidate pass
~4.5 s (the exposure counts run on a second cursor meanwhile), walk and outputs under 1 s. Both scans
are CPU-bound parquet decoding. What was measured (``python bench/c1_select_alternatives.py`` prints
these variants; two runs, wall time) and why it is built this way:

* The lineage pass decodes only the ranks (2.4 s). With the common-name flag counted per lineage it
  takes 3.3 s, with the common-name and size flags (the first version) 4.0-4.2 s, with both as one
  packed ``sum`` 4.1 s; the flags in a third scan instead cost 3.3 s more. So row-level reasons are
  judged on the examined rows only. The price: the first cut is chosen from rows with a complete
  lineage, so a group where most rows lack a common name can run short and cost a second candidate
  pass.
* One scan that carries the rows under the cut inside the lineage aggregate (a ``list()`` of them)
  takes 9.4-9.5 s, and the flags plus the candidates as one aggregate over all rows 7.2-7.3 s, against
  2.4 + 4.2-4.4 s for the two passes: DuckDB has no second sink for one scan.
* The group cut is applied through joins on a tiny (rank value -> group, cut) table (4.2-4.4 s):
  written as a ``CASE`` in the filter it is pushed into the parquet scan and evaluated on every row
  (6.5-7.5 s). (A CTE referenced twice is inlined twice, i.e. two scans.)
* Late materialization of the candidate pass does not pay: the ``hash(uuid)`` filter is already pushed
  into the scan, which decodes the other columns only for the passing rows, but tens of rows of every
  2048-row vector pass, so every page is decompressed anyway. Decoding the uuid column takes DuckDB
  1.7 s and pyarrow 2.6-2.8 s (2 threads over row groups), so DuckDB stays the reader.
* Per-abundant-species tighter cuts (an earlier version) shrank the candidate rows but needed
  per-species counts of eligible rows, i.e. the flags above; the SQL windows prune those rows instead.
* The walk, binomials and output tables are column-wise (numpy ranks over dictionary codes), 0.15-0.3 s
  in the bench run (tests/test_builder_c1_selection_speed_equivalence.py checks the equality with the
  row-by-row walk).
"""

from __future__ import annotations

import functools
import gc
import math
import shutil
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

HASH_MAX = 2**64  # DuckDB hash() is a UBIGINT

#: Table 5: group -> (filter rank, accepted values).
GROUPS: dict[str, tuple[str, tuple[str, ...]]] = {
    "Amphibians": ("class", ("Amphibia",)),
    "Angiosperms": ("class", ("Magnoliopsida", "Liliopsida")),
    "Arachnids": ("class", ("Arachnida",)),
    "Birds": ("class", ("Aves",)),
    "Bryophytes": ("phylum", ("Bryophyta",)),
    "Fish": (
        "class",
        ("Actinopterygii", "Teleostei", "Elasmobranchii", "Holocephali", "Coelacanthi", "Dipneusti"),
    ),
    "Gymnosperms": ("class", ("Pinopsida",)),
    "Insects": ("class", ("Insecta",)),
    "Mammals": ("class", ("Mammalia",)),
    "Reptiles": ("class", ("Squamata", "Testudines", "Crocodylia", "Sphenodontia")),
}
#: Groups whose backbone lineage has no order (§A.1, §M.2): order may be null, the question is skipped.
NO_ORDER_GROUPS = frozenset({"Reptiles"})
RANKS = ("kingdom", "phylum", "class", "order", "family", "genus", "species")

REASONS = (
    "not_in_group",
    "incomplete_lineage",
    "missing_common_name",
    "below_resolution",
    "duplicate_uuid",
    "image_missing",
    "image_corrupt",
    "no_english_common_name",
    "over_species_cap",
    "over_group_budget",
    "not_reached",
)

MANIFEST_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("group", pa.string()),
        ("order_key", pa.uint64()),
        ("kingdom", pa.string()),
        ("phylum", pa.string()),
        ("class", pa.string()),
        ("order", pa.string()),
        ("family", pa.string()),
        ("genus", pa.string()),
        ("species", pa.string()),  # epithet
        ("scientific_name", pa.string()),  # binomial
        ("common_name", pa.string()),  # resolved English name
        ("catalog_common_name", pa.string()),
        ("common_name_mechanism", pa.string()),
        ("image_path", pa.string()),
        ("image_row", pa.int64()),  # row in the shard; -1 for a file
        ("sha256", pa.string()),
        ("width", pa.int32()),
        ("height", pa.int32()),
    ]
)
EXCLUSION_SCHEMA = pa.schema(
    [("id", pa.string()), ("group", pa.string()), ("reason", pa.string()), ("detail", pa.string())]
)
EXPOSURE_SCHEMA = pa.schema([("node", pa.string()), ("rank", pa.string()), ("exposure", pa.int64())])


@dataclass(frozen=True)
class SelectionConfig:
    budget_per_group: int = 10_000
    species_cap: int = 50
    cap_overrides: tuple[tuple[str, int], ...] = (("Gymnosperms", 200),)
    min_side: int = 224
    #: rows (complete lineage, under the cut) per budget slot before the first widening of the cut
    oversample: float = 2.0

    def cap(self, group: str) -> int:
        return dict(self.cap_overrides).get(group, self.species_cap)

    @classmethod
    def full(cls) -> SelectionConfig:
        return cls()

    @classmethod
    def mini(cls) -> SelectionConfig:
        """The miniature: a budget of 24 per group, 3 per species (Gymnosperms 4), 96 px."""
        return cls(budget_per_group=24, species_cap=3, cap_overrides=(("Gymnosperms", 4),), min_side=96)


@dataclass(frozen=True)
class Verified:
    """What the walk learns about one candidate's image."""

    ok: bool
    reason: str = ""  # exclusion reason when not ok
    detail: str = ""
    path: str = ""
    row: int = -1
    sha256: str = ""
    width: int = 0
    height: int = 0


#: verify(list of candidate dicts) -> {uuid: Verified}
Verifier = Callable[[list[dict]], dict[str, Verified]]
#: english(binomial, catalog common name) -> (english or None, mechanism, detail)
EnglishResolver = Callable[[str, str], tuple[str | None, str, str]]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def group_case(prefix: str = "") -> str:
    """SQL CASE assigning the Table 5 group from phylum/class."""
    arms = []
    # class filters first, then phylum filters (the candidate pass's joins use the same precedence)
    for group, (rank, values) in sorted(GROUPS.items(), key=lambda kv: kv[1][0] != "class"):
        arms.append(f"WHEN {prefix}{_q(rank)} IN ({', '.join(_lit(v) for v in values)}) THEN {_lit(group)}")
    return "CASE " + " ".join(arms) + " ELSE NULL END"


def _catalog_sql(files: list[Path], mapping: dict[str, str | None]) -> str:
    """A SELECT of the raw catalog columns under builder names (plus ``min_side`` when sizes exist).

    Normalization (empty string -> NULL) is applied after aggregation/filtering, on few rows.
    """
    cols = []
    for col in ("uuid", *RANKS, "scientific_name", "common_name"):
        src = mapping.get(col)
        cols.append(f"CAST({_q(src)} AS VARCHAR) AS {_q(col)}" if src else f"NULL::VARCHAR AS {_q(col)}")
    if mapping.get("resized_size"):
        # == least(resized_size[1], resized_size[2]) (both skip NULLs); list_min is cheaper on the usual pair
        cols.append(
            "CASE WHEN len(resized_size) = 2 THEN list_min(resized_size) "
            "ELSE least(resized_size[1], resized_size[2]) END AS min_side"
        )
    elif mapping.get("width") and mapping.get("height"):
        cols.append("least(width, height) AS min_side")
    else:
        cols.append("NULL::BIGINT AS min_side")
    paths = ", ".join(_lit(str(f)) for f in files)
    return f"SELECT {', '.join(cols)} FROM read_parquet([{paths}])"


def _nullif(col: str) -> str:
    return f"NULLIF({_q(col)}, '') AS {_q(col)}"


def _complete_sql(group_col: str = "grp") -> str:
    """SQL predicate: every rank the generator needs is present (order may be null for reptiles)."""
    need = [f"{_q(r)} IS NOT NULL" for r in RANKS if r != "order"]
    no_order = ", ".join(_lit(g) for g in sorted(NO_ORDER_GROUPS))
    order_ok = f"({_q('order')} IS NOT NULL OR {group_col} IN ({no_order}))"
    return " AND ".join([*need, order_ok])


def _duckdb_version() -> str:
    import duckdb

    return duckdb.__version__


def connect(threads: int = 2, memory_limit: str = "512MB", temp_dir: Path | None = None):
    """A DuckDB connection with bounded memory (spills to ``temp_dir``)."""
    import duckdb

    con = duckdb.connect()
    con.execute(f"SET threads={int(threads)}")
    con.execute(f"SET memory_limit='{memory_limit}'")
    con.execute("SET preserve_insertion_order=false")
    con.execute("SET enable_progress_bar=false")
    if temp_dir is not None:
        temp_dir.mkdir(parents=True, exist_ok=True)
        con.execute(f"SET temp_directory={_lit(str(temp_dir))}")
    return con


def lineage_pass(con, catalog_sql: str) -> None:
    """Table ``c1_lin``: per distinct lineage (empty -> NULL) its group and image count.

    One hash aggregate over the seven ranks; no per-row column is decoded beyond them (row-level
    properties are judged by :func:`candidate_pass`, on the rows it examines)."""
    lineage_hash = "hash(" + ", ".join(_q(r) for r in RANKS) + ")"
    con.execute("DROP TABLE IF EXISTS c1_lin")
    con.execute(f"""
        CREATE TABLE c1_lin AS  -- not TEMP: the exposure cursor reads it
        WITH raw AS (
            -- one struct any_value costs less than seven string ones
            SELECT any_value(struct_pack({", ".join(_q(r) for r in RANKS)})) AS lin, count(*) AS n
            FROM ({catalog_sql}) GROUP BY {lineage_hash}
        ), norm AS (
            SELECT {", ".join(f"NULLIF(lin.{_q(r)}, '') AS {_q(r)}" for r in RANKS)}, n FROM raw
        )
        SELECT {", ".join(_q(r) for r in RANKS)}, {group_case()} AS grp, sum(n)::BIGINT AS n
        FROM norm GROUP BY ALL
    """)


_EPITHET_SQL = (
    "CASE WHEN species LIKE genus || ' %' THEN ltrim(substr(species, length(genus) + 2)) "
    "WHEN regexp_matches(species, '^[A-Z]\\S*\\s') THEN regexp_replace(species, '^\\S+\\s+', '') ELSE species END"
)


def exposure_counts(con) -> pa.Table:
    """c(t) for every node id (Contract 5 ids, kingdom down, missing ranks skipped) over the whole catalog."""
    levels = []
    for k, rank in enumerate(RANKS):
        parts = [_q(r) for r in RANKS[:k]] + ([_EPITHET_SQL] if rank == "species" else [_q(rank)])
        levels.append(
            f"SELECT {_lit(rank)} AS rank, concat_ws('|', {', '.join(parts)}) AS node, n "
            f"FROM c1_lin WHERE {_q(rank)} IS NOT NULL"
        )
    sql = f"""
        SELECT node, rank, sum(n)::BIGINT AS exposure FROM ({" UNION ALL ".join(levels)})
        GROUP BY node, rank ORDER BY node, rank
    """
    return con.sql(sql).to_arrow_table().cast(EXPOSURE_SCHEMA)


def lineage_exclusions(con) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Lineage-level exclusion counts, and per group {genus<TAB>species: rows with a complete lineage}."""
    complete = _complete_sql()
    rows = con.sql(f"""
        SELECT
            sum(n) FILTER (WHERE grp IS NULL) AS not_in_group,
            sum(n) FILTER (WHERE grp IS NOT NULL AND NOT ({complete})) AS incomplete_lineage
        FROM c1_lin
    """).fetchall()[0]
    counts = dict.fromkeys(REASONS, 0)
    counts["not_in_group"], counts["incomplete_lineage"] = (int(v or 0) for v in rows)
    available: dict[str, dict[str, int]] = {g: {} for g in GROUPS}
    per_species = con.sql(f"""
        SELECT grp, genus || chr(9) || species AS k, sum(n)::BIGINT AS n
        FROM c1_lin WHERE grp IS NOT NULL AND ({complete}) GROUP BY ALL ORDER BY grp, k
    """).fetchall()
    for group, key, n in per_species:
        available[group][key] = int(n)
    return counts, available


def hash_cut(species_counts: Iterable[int], cap: int, need: int) -> float:
    """Smallest fraction f (bisection) with sum_s min(cap, n_s * f) >= need; 1.0 when never reached."""
    import numpy as np

    counts = np.fromiter(species_counts, dtype=np.int64)
    if int(np.minimum(counts, cap).sum()) <= need:
        return 1.0
    scaled = counts.astype(np.float64)
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        # cumsum adds left to right like Python's sum() (np.sum is pairwise): the same float, the same cut
        total = np.cumsum(np.minimum(scaled * mid, float(cap)))[-1]
        if total >= need:
            hi = mid
        else:
            lo = mid
    return min(1.0, hi * 1.05)


def candidate_pass(
    con, catalog_sql: str, cuts: dict[str, float], config: SelectionConfig, slack: float
) -> tuple[pa.Table, dict[str, int]]:
    """Rows under their group's hash cut that the walk may need, in (group, hash) order.

    Of the rows under the cut with a complete lineage (the others were counted by the lineage pass),
    rows without a common name or with a catalog-declared size under the threshold are counted
    (``missing_common_name``, ``below_resolution``); the rest are pruned in SQL to the first
    ``cap * slack`` of their species and the first ``budget * slack`` of their group (hash order),
    the pruned ones counted as over the cap / budget. Duplicated uuids come back (flag ``dup``) so each
    gets its own exclusion record. ``under_cut`` counts every complete in-group row under the cut.
    """
    if not cuts:  # no group has rows to draw from: the same (empty) tables, without a scan
        catalog_sql = f"SELECT * FROM ({catalog_sql}) LIMIT 0"
    top_int = min(HASH_MAX - 1, math.floor(max(cuts.values(), default=0.0) * HASH_MAX))
    cap_sql = " ".join(f"WHEN {_lit(g)} THEN {int(config.cap(g) * slack) + 1}" for g in sorted(GROUPS))
    budget = int(config.budget_per_group * slack) + 1
    # group and group cut by joining a tiny (rank value -> group, cut) table: a CASE in the filter would
    # be pushed into the scan and evaluated on every catalog row, the joins only see rows under the cut
    gmap = [
        (rank, value, group, min(HASH_MAX - 1, math.floor(cuts[group] * HASH_MAX)))
        for group, (rank, values) in GROUPS.items()
        if group in cuts
        for value in values
    ]
    con.execute("DROP TABLE IF EXISTS c1_gmap")
    con.execute("CREATE TEMP TABLE c1_gmap (rank VARCHAR, value VARCHAR, grp VARCHAR, cut UBIGINT)")
    if gmap:
        con.executemany("INSERT INTO c1_gmap VALUES (?, ?, ?, ?)", gmap)
    con.execute("DROP TABLE IF EXISTS c1_j")
    con.execute(f"""
        CREATE TEMP TABLE c1_j AS
        WITH r AS (
            SELECT *, hash(uuid) AS h FROM ({catalog_sql})
            WHERE uuid IS NOT NULL AND uuid <> '' AND hash(uuid) <= {top_int}::UBIGINT
        ), c AS (
            SELECT {", ".join(_nullif(col) for col in ("uuid", *RANKS, "common_name"))}, min_side, h FROM r
        ), g AS (
            -- Table 5: a class filter wins over the phylum filter (Bryophytes), as in group_case()
            SELECT c.*, coalesce(mc.grp, mp.grp) AS grp, coalesce(mc.cut, mp.cut) AS gcut
            FROM c LEFT JOIN (SELECT * FROM c1_gmap WHERE rank = 'class') mc ON mc.value = c."class"
                   LEFT JOIN (SELECT * FROM c1_gmap WHERE rank = 'phylum') mp ON mp.value = c.phylum
        )
        SELECT * EXCLUDE (gcut) FROM g WHERE grp IS NOT NULL AND h <= gcut
    """)
    # equal uuids have equal hashes: grouping the integer is the cheap duplicate test
    con.execute("DROP TABLE IF EXISTS c1_under")
    con.execute(f"""
        CREATE TEMP TABLE c1_under AS
        SELECT *, h IN (SELECT h FROM c1_j GROUP BY h HAVING count(*) > 1) AS dup,
               CASE WHEN common_name IS NULL THEN 'missing_common_name'
                    WHEN min_side < {int(config.min_side)} THEN 'below_resolution' END AS row_reason
        FROM c1_j WHERE {_complete_sql()}
    """)
    con.execute("DROP TABLE IF EXISTS c1_cand")
    con.execute(f"""
        CREATE TEMP TABLE c1_cand AS
        WITH s AS (
            SELECT *, CASE WHEN dup THEN 0 ELSE row_number() OVER (
                PARTITION BY grp, genus, species, dup ORDER BY h, uuid) END AS srn
            FROM c1_under WHERE row_reason IS NULL
        ), g AS (
            SELECT *, CASE WHEN dup THEN 0 ELSE row_number() OVER (
                PARTITION BY grp, dup, srn <= (CASE grp {cap_sql} END) ORDER BY h, uuid) END AS grn
            FROM s
        )
        SELECT uuid, h, grp, {", ".join(_q(r) for r in RANKS)}, common_name, min_side, dup,
               CASE WHEN dup THEN 'keep' WHEN srn > (CASE grp {cap_sql} END) THEN 'over_species_cap'
                    WHEN grn > {budget} THEN 'over_group_budget' ELSE 'keep' END AS fate
        FROM g
    """)
    counts = dict(
        con.sql(
            "SELECT fate, count(*) FROM c1_cand WHERE fate <> 'keep' GROUP BY fate "
            "UNION ALL SELECT row_reason, count(*) FROM c1_under WHERE row_reason IS NOT NULL GROUP BY 1 "
            "UNION ALL SELECT 'under_cut', count(*) FROM c1_under"
        ).fetchall()
    )
    # the catalog's scientific_name is not read: the binomial comes from genus + epithet
    cols = f"uuid, h, grp, {', '.join(_q(r) for r in RANKS)}, common_name, min_side, dup"
    table = con.sql(f"SELECT {cols} FROM c1_cand WHERE fate = 'keep' ORDER BY grp, h, uuid").to_arrow_table()
    for name in ("c1_j", "c1_under", "c1_cand"):  # give the memory back before the walk
        con.execute(f"DROP TABLE {name}")
    return table, {k: int(v) for k, v in counts.items()}


@dataclass
class WalkResult:
    selected: pa.Table  # candidate rows taken (hash order), with English name and verified image
    excluded: pa.Table  # EXCLUSION_SCHEMA rows the walk examined and did not take, in walk order
    short_groups: list[str] = field(default_factory=list)  # groups that ran out of candidates
    failures: dict[str, int] = field(default_factory=dict)  # group -> failed image checks


def _rank_within(keys, mask):
    """For rows where ``mask`` holds: how many earlier masked rows share the row's key (-1 elsewhere)."""
    import numpy as np

    rank = np.full(len(keys), -1, dtype=np.int64)
    idx = np.flatnonzero(mask)
    if idx.size:
        order = np.argsort(keys[idx], kind="stable")
        sorted_keys = keys[idx][order]
        starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
        run_start = np.repeat(starts, np.diff(np.r_[starts, sorted_keys.size]))
        rank[idx[order]] = np.arange(sorted_keys.size) - run_start
    return rank


def _codes(column) -> tuple:
    """(int64 codes, distinct values in order of first appearance) of a string column."""
    import numpy as np

    enc = pa.chunked_array(column).combine_chunks().dictionary_encode()
    return np.asarray(enc.indices, dtype=np.int64), enc.dictionary.to_pylist()


def walk(
    cand: pa.Table,
    config: SelectionConfig,
    verify: Verifier | None,
    english: EnglishResolver | None,
    cuts: dict[str, float],
) -> WalkResult:
    """Hash-order walk with species cap and group budget, computed column-wise.

    ``cand`` is in walk order (group, hash, uuid) and has a ``scientific_name`` (binomial) column.
    The result equals visiting the rows one by one: a duplicate, a row without an English name or
    with a failed image check is excluded; otherwise a row is over the species cap when its species
    already has ``cap`` taken, over the group budget when its group is full, else taken. Images are
    verified in batches (the rows the walk would take, until all of them passed); a failed one gives
    its slot to the next candidate. (tests/test_builder_c1_selection_speed_equivalence.py checks the
    equality against the row-by-row walk.)
    """
    import numpy as np

    n = cand.num_rows
    gcode, groups = _codes(cand["grp"])
    sci_code, _ = _codes(cand["scientific_name"])
    species = gcode * (int(sci_code.max(initial=0)) + 1) + sci_code
    cap = np.array([config.cap(g) for g in groups], dtype=np.int64)[gcode]
    budget = config.budget_per_group
    dup = np.asarray(cand["dup"].to_numpy(), dtype=bool)

    # English names: resolved once per (binomial, catalog name), in order of first appearance
    pair_code, _ = _codes(pc.binary_join_element_wise(cand["scientific_name"], cand["common_name"], "\x1f"))
    _, first = np.unique(pair_code, return_index=True)
    first = pa.array(first)
    names = [
        english(sci, common) if english else (common, "catalog", "")
        for sci, common in zip(
            cand["scientific_name"].take(first).to_pylist(),
            cand["common_name"].take(first).to_pylist(),
            strict=True,
        )
    ]
    no_english = ~dup & ~np.array([nm[0] is not None for nm in names], dtype=bool)[pair_code]

    verified: dict[str, Verified] = {}
    checked = np.zeros(n, dtype=bool)
    failed = np.zeros(n, dtype=bool)
    while True:
        active = ~(dup | no_english | failed)
        srank = _rank_within(species, active)
        passing = active & (srank < cap)
        grank = _rank_within(gcode, passing)
        taken = passing & (grank < budget)
        todo = np.flatnonzero(taken & ~checked)
        if verify is None or not todo.size:
            break
        batch = cand.take(pa.array(todo))
        verified.update(verify(batch.to_pylist()))
        checked[todo] = True
        for i, u in zip(todo.tolist(), batch["uuid"].to_pylist(), strict=True):
            v = verified.get(u)
            failed[i] = v is not None and not v.ok

    # the reason of every examined row that is not taken; past the row that filled its group's budget
    # a row is over the cap only when its species had already filled the cap before that point
    rows = np.arange(n)
    fill_row = np.full(len(groups), n, dtype=np.int64)
    at_fill = np.flatnonzero(taken & (grank == budget - 1))
    fill_row[gcode[at_fill]] = at_fill
    taken_per_species = np.bincount(species[taken], minlength=int(species.max(initial=0)) + 1)
    species_full = taken_per_species[species] >= cap
    over_cap = active & ~taken & ((rows <= fill_row[gcode]) | species_full)
    over_budget = active & ~taken & ~over_cap

    reason = np.full(n, None, dtype=object)
    detail = np.full(n, None, dtype=object)
    reason[dup], detail[dup] = "duplicate_uuid", "uuid appears more than once in the catalog"
    reason[no_english] = "no_english_common_name"
    detail[no_english] = np.array([nm[2] for nm in names], dtype=object)[pair_code[no_english]]
    uuids = cand["uuid"].to_pylist() if failed.any() else []
    for i in np.flatnonzero(failed & ~dup & ~no_english).tolist():
        v = verified[uuids[i]]
        reason[i], detail[i] = v.reason, v.detail
    reason[over_cap] = "over_species_cap"
    detail[over_cap] = np.array([f"cap {c}" for c in cap[over_cap].tolist()], dtype=object)
    reason[over_budget], detail[over_budget] = "over_group_budget", f"budget {budget}"
    left_out = pa.array(np.flatnonzero(~taken))
    excluded = pa.table(
        [
            cand["uuid"].take(left_out),
            cand["grp"].take(left_out),
            pa.array(reason[~taken].tolist(), pa.string()),
            pa.array(detail[~taken].tolist(), pa.string()),
        ],
        schema=EXCLUSION_SCHEMA,
    )

    take = np.flatnonzero(taken)
    selected = cand.take(pa.array(take))
    pairs = pair_code[take].tolist()
    selected = selected.append_column("common_name_en", pa.array([names[k][0] for k in pairs], pa.string()))
    selected = selected.append_column(
        "common_name_mechanism", pa.array([names[k][1] for k in pairs], pa.string())
    )
    images = [verified.get(u) for u in selected["uuid"].to_pylist()] if verified else [None] * len(take)
    for col, attr, typ, default in (
        ("image_path", "path", pa.string(), ""),
        ("image_row", "row", pa.int64(), -1),
        ("sha256", "sha256", pa.string(), ""),
        ("width", "width", pa.int32(), 0),
        ("height", "height", pa.int32(), 0),
    ):
        values = [default if v is None else getattr(v, attr) for v in images]
        selected = selected.append_column(col, pa.array(values, typ))

    taken_in = dict(zip(groups, np.bincount(gcode[taken], minlength=len(groups)).tolist(), strict=True))
    short = sorted(g for g in cuts if taken_in.get(g, 0) < budget and cuts[g] < 1.0)
    failures: dict[str, int] = {}
    image_failed = np.isin(reason, ["image_missing", "image_corrupt", "below_resolution"])
    for g in cand["grp"].take(pa.array(np.flatnonzero(image_failed))).to_pylist():
        failures[g] = failures.get(g, 0) + 1
    return WalkResult(selected, excluded, short, failures)


@functools.lru_cache(maxsize=1 << 17)  # bounded: ~100k distinct species per run
def _epithet(species: str, genus: str) -> str:
    from builder.taxonomy.names import species_epithet

    return species_epithet(species, genus) or species


def _without_cyclic_gc(func):
    """Run ``func`` with Python's cyclic garbage collector paused (restored afterwards).

    The selection turns Arrow columns into Python lists of up to a few hundred thousand strings and
    tuples (names, binomials, verifier batches; no reference cycles); with the collector on, every
    allocation burst triggers generation scans over all of them. Reference counting still frees
    everything; results are unaffected.
    """

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return func(*args, **kwargs)
        finally:
            if was_enabled:
                gc.enable()

    return wrapper


@_without_cyclic_gc
def select_from_catalog(
    catalog_files: list[Path],
    out_dir: Path,
    *,
    config: SelectionConfig,
    verify: Verifier | None = None,
    english: EnglishResolver | None = None,
    threads: int = 2,
    memory_limit: str = "512MB",
) -> dict:
    """Run the selection; write manifest/exclusions/exposure parquet under ``out_dir``; return a summary."""
    from builder.sources.treeoflife import catalog_columns

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    mapping = catalog_columns(list(catalog_files))
    catalog_sql = _catalog_sql(list(catalog_files), mapping)
    # from the parquet footers, not from the passes: the accounting check below stays independent
    catalog_rows = sum(_parquet_rows(f) for f in catalog_files)
    import duckdb

    con = connect(threads, memory_limit, out_dir / ".duckdb-tmp")
    background = ThreadPoolExecutor(max_workers=1)
    try:
        timings: dict[str, float] = {}
        t0, c0 = time.perf_counter(), time.process_time()
        lineage_pass(con, catalog_sql)
        timings["lineage_pass"] = time.perf_counter() - t0
        timings["lineage_pass_cpu"] = time.process_time() - c0
        counts, available = lineage_exclusions(con)
        # the exposure counts need only c1_lin: computed on a second cursor while the candidate pass
        # and the walk run (the walk is single-threaded Python; DuckDB uses the other core meanwhile)
        exposure = background.submit(exposure_counts, con.cursor())
        n_available = sum(sum(s.values()) for s in available.values())
        factor, slack = config.oversample, 2.0
        while True:
            cuts = {
                g: hash_cut(available[g].values(), config.cap(g), int(config.budget_per_group * factor))
                for g in GROUPS
                if available[g]
            }
            t1, cpu1 = time.perf_counter(), time.process_time()
            cand_table, sql_counts = candidate_pass(con, catalog_sql, cuts, config, slack)
            timings["candidate_pass"] = timings.get("candidate_pass", 0.0) + time.perf_counter() - t1
            timings["candidate_pass_cpu"] = (
                timings.get("candidate_pass_cpu", 0.0) + time.process_time() - cpu1
            )
            timings["candidates"] = cand_table.num_rows
            candidates = _with_binomials(cand_table)
            t1 = time.perf_counter()
            result = walk(candidates, config, verify, english, cuts)
            timings["walk"] = timings.get("walk", 0.0) + time.perf_counter() - t1
            timings["rounds"] = timings.get("rounds", 0) + 1
            # image failures may have eaten the pruning slack: then widen and redo (same result, more rows)
            slack_used = max(result.failures.values(), default=0) >= min(
                config.budget_per_group, config.species_cap
            ) * (slack - 1)
            if not result.short_groups and not slack_used:
                break
            factor, slack = factor * 4, slack * 2
        t1 = time.perf_counter()
        exp_table = exposure.result()
        timings["exposure_wait"] = time.perf_counter() - t1
    except duckdb.Error as exc:  # a corrupt or unreadable catalog file: name it
        from builder.common import SourceFormatError

        names = ", ".join(str(f) for f in catalog_files)
        raise SourceFormatError(f"{names}: cannot read the catalog: {exc}") from None
    finally:
        background.shutdown()  # before closing the connection its cursor belongs to
        con.close()
        shutil.rmtree(out_dir / ".duckdb-tmp", ignore_errors=True)

    for reason, n in zip(*_value_counts(result.excluded["reason"]), strict=True):
        counts[reason] += n
    for reason in ("missing_common_name", "below_resolution", "over_species_cap", "over_group_budget"):
        counts[reason] += sql_counts.get(reason, 0)
    # complete in-group rows beyond their group's hash cut were never examined
    counts["not_reached"] = n_available - sql_counts.get("under_cut", 0)
    manifest = _manifest_table(result.selected)
    excl_table = result.excluded.sort_by(
        [("group", "ascending"), ("reason", "ascending"), ("id", "ascending")]
    )
    # one chunk per column: page boundaries (hence bytes) must not follow DuckDB's thread scheduling
    for table, name in ((manifest, "c1_manifest"), (excl_table, "c1_exclusions"), (exp_table, "c1_exposure")):
        pq.write_table(table.combine_chunks(), out_dir / f"{name}.parquet")
    per_group = {g: 0 for g in GROUPS}
    for group, n in zip(*_value_counts(manifest["group"]), strict=True):
        per_group[group] = n
    return {
        "catalog_rows": catalog_rows,
        "selected": manifest.num_rows,
        "per_group": per_group,
        "exclusions": {k: v for k, v in counts.items() if v},
        "accounted": manifest.num_rows + sum(counts.values()) == catalog_rows,
        "cuts": {g: round(f, 6) for g, f in sorted(cuts.items())},
        "timings_s": {k: round(v, 3) for k, v in timings.items()},
        "order_key": f"duckdb {_duckdb_version()} hash(uuid)",
    }


def _parquet_rows(path: Path) -> int:
    try:
        return pq.ParquetFile(path).metadata.num_rows
    except Exception as exc:
        from builder.common import SourceFormatError

        raise SourceFormatError(f"{path}: not a readable parquet file: {exc}") from None


def _value_counts(column) -> tuple[list, list[int]]:
    counts = pc.value_counts(column)
    return counts.field("values").to_pylist(), counts.field("counts").to_pylist()


def _with_binomials(cand: pa.Table) -> pa.Table:
    """Add ``epithet`` and ``scientific_name`` (genus + epithet), computed once per distinct pair."""
    import numpy as np

    code, _ = _codes(pc.binary_join_element_wise(cand["genus"], cand["species"], "\x1f"))
    _, first = np.unique(code, return_index=True)
    pairs = zip(*(cand[c].take(pa.array(first)).to_pylist() for c in ("genus", "species")), strict=True)
    epithets = [_epithet(species, genus) for genus, species in pairs]
    epithet = pa.array(epithets, pa.string()).take(pa.array(code))
    binomial = pc.binary_join_element_wise(cand["genus"], epithet, " ")
    return cand.append_column("epithet", epithet).append_column("scientific_name", binomial)


def _manifest_table(selected: pa.Table) -> pa.Table:
    """The manifest from the walk's selected rows (already in (group, order key, id) order)."""
    columns = {
        "id": selected["uuid"],
        "group": selected["grp"],
        "order_key": selected["h"],
        **{r: selected[r] for r in RANKS if r != "species"},
        "species": selected["epithet"],
        "scientific_name": selected["scientific_name"],
        "common_name": selected["common_name_en"],
        "catalog_common_name": selected["common_name"],
        "common_name_mechanism": selected["common_name_mechanism"],
        **{c: selected[c] for c in ("image_path", "image_row", "sha256", "width", "height")},
    }
    return pa.table([columns[f.name].cast(f.type) for f in MANIFEST_SCHEMA], schema=MANIFEST_SCHEMA)
