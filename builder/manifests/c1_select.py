"""C1 selection manifest (§3.1, Table 5, §L.1): ten groups, complete lineage, resolution, caps, budgets.

Streaming over a TreeOfLife catalog of any size with DuckDB (bounded memory, two scans):

1. *Lineage pass*: one hash aggregate over the seven ranks gives per-lineage image counts, from which
   come the exposure counts c(t) of every tree node (§E.3: images whose lineage passes through t, over
   the whole catalog) and the counted exclusions that need no image (outside the ten groups,
   incomplete lineage, no common name, catalog-declared size below the threshold).
2. *Candidate pass*: the selection order is a hash of the uuid (deterministic, unlike the paper's
   download race). Per group a hash cut ``tau_g`` is chosen from the per-species counts so that the rows
   under it are enough to fill the budget under the species cap; an abundant species gets its own,
   tighter cut (:func:`species_cuts`, checked to have delivered enough rows). Only rows under their cut
   leave the scan; windows rank them within species and group (hash order) and prune what is surely
   over the cap / budget. If the walk runs out before the budget fills, the cuts widen and it reruns.
3. *Walk* (Python, small): per group in hash order, a candidate is taken while its species is under
   the cap and the group under budget, after its image is verified (present, decodable, size) and
   its common name resolved to English. Image checks run in batches; a failed one gives its slot to the
   next candidate, so the result equals the sequential walk over verified rows.

Every row the walk examines that is not selected gets a per-row exclusion record with its reason;
rows beyond the cut are counted as ``not_reached`` (rows of a tightened species beyond its own cut as
``over_species_cap``); all other reasons are counted by the lineage pass. Duplicate uuids are found
among the rows under the cuts (equal uuids have equal hashes, so both copies fall under the same cut
unless they sit in different groups); every copy is excluded, since the label is ambiguous.
Choices where the paper is silent: threshold 224 px on the short side, cap 50 images per species
(Gymnosperms 200: "significantly relaxing our sampling constraints", §M.2), budget 10 000 per group.

The order key is DuckDB's 64-bit ``hash(uuid)``: cheap enough to stream (an MD5 costs 11x more), but
defined by DuckDB, so a rebuild reproduces the selection byte for byte only with the same DuckDB
version (recorded in the summary); the released manifest pins uuids and image hashes either way (§L.1).

Speed (bench/c1_select.py, 50M rows, 2 cores): both scans are CPU-bound parquet decoding (the lineage
pass decodes the ranks, common name and size of every row; the candidate pass additionally hashes
every uuid and, since about one row per 2048-row vector passes, still decodes every column).
Measured and rejected as slower: one scan that carries the rows under a provisional cut inside the
lineage aggregate (as extra group keys or as a ``list()`` aggregate: 6.7-16 s instead of ~8 s for both
scans), grouping by the seven strings instead of their hash, and ``count_if``/``sum(CASE)`` instead of
``FILTER``. Late materialization of the candidate pass (DuckDB 2.0.1, 50M rows, quiet machine) is
also slower: the ``hash(uuid)`` filter is already pushed into the parquet scan, which decodes the other
columns only for the passing rows of each vector, but ~58 rows of every 2048-row vector pass the widest
cut (1.43M rows), so every page is touched anyway. A first scan of uuid + ``file_row_number`` alone
takes 1.5-1.7 s, but fetching the other columns for those rows afterwards cannot be pushed into the
scan: ``file_row_number IN (SELECT ...)`` decodes every row (2.3 s alone; whole candidate pass 6.6 s
instead of 4.5 s), a join on (filename, row number) 8.4 s, and pyarrow ``read_row_group`` + ``take``
(ranks read as dictionaries) 5.1 s for the second step alone. The Python steps (cut bisection, species cuts, manifest/exclusion tables) are vectorised
or column-built so that they give bit-identical results to the plain loops
(tests/test_builder_c1_selection_speed_equivalence.py).
"""

from __future__ import annotations

import functools
import gc
import math
import shutil
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
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
    #: candidates pulled per budget slot before the first widening of the hash cut
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


def lineage_pass(con, catalog_sql: str, min_side: int) -> None:
    """Table ``c1_lin``: per distinct lineage (empty -> NULL), image count, rows with a common name,
    rows with one and a catalog-declared size under ``min_side``. One hash aggregate over the catalog."""
    lineage_hash = "hash(" + ", ".join(_q(r) for r in RANKS) + ")"
    con.execute("DROP TABLE IF EXISTS c1_lin")
    con.execute(f"""
        CREATE TEMP TABLE c1_lin AS
        WITH raw AS (
            -- one struct any_value costs less than seven string ones
            SELECT any_value(struct_pack({", ".join(_q(r) for r in RANKS)})) AS lin,
                   count(*) AS n,
                   count(*) FILTER (WHERE common_name <> '') AS n_common,
                   count(*) FILTER (WHERE common_name <> '' AND min_side < {int(min_side)}) AS n_small
            FROM ({catalog_sql}) GROUP BY {lineage_hash}
        ), norm AS (
            SELECT {", ".join(f"NULLIF(lin.{_q(r)}, '') AS {_q(r)}" for r in RANKS)}, n, n_common, n_small
            FROM raw
        )
        SELECT {", ".join(_q(r) for r in RANKS)}, {group_case()} AS grp,
               sum(n)::BIGINT AS n, sum(n_common)::BIGINT AS n_common, sum(n_small)::BIGINT AS n_small
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
    """Counted exclusions from the lineage pass, and per group {genus/species key: eligible rows}."""
    complete = _complete_sql()
    rows = con.sql(f"""
        SELECT
            sum(n) FILTER (WHERE grp IS NULL) AS not_in_group,
            sum(n) FILTER (WHERE grp IS NOT NULL AND NOT ({complete})) AS incomplete_lineage,
            sum(n - n_common) FILTER (WHERE grp IS NOT NULL AND ({complete})) AS missing_common_name,
            sum(n_small) FILTER (WHERE grp IS NOT NULL AND ({complete})) AS below_resolution
        FROM c1_lin
    """).fetchall()[0]
    counts = dict.fromkeys(REASONS, 0)
    for name, value in zip(
        ("not_in_group", "incomplete_lineage", "missing_common_name", "below_resolution"), rows, strict=True
    ):
        counts[name] = int(value or 0)
    eligible: dict[str, dict[str, int]] = {g: {} for g in GROUPS}
    per_species = con.sql(f"""
        SELECT grp, genus || chr(9) || species AS k, sum(n_common - n_small)::BIGINT AS ok
        FROM c1_lin WHERE grp IS NOT NULL AND ({complete}) GROUP BY ALL HAVING ok > 0 ORDER BY grp, k
    """).fetchall()
    for group, key, ok in per_species:
        eligible[group][key] = int(ok)
    return counts, eligible


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


def species_cuts(
    eligible: dict[str, dict[str, int]], cuts: dict[str, float], config: SelectionConfig, slack: float
) -> pa.Table:
    """Per-species hash cuts tighter than the group's for abundant species.

    A species with n eligible rows needs at most ``cap * slack`` of them; its cut is set so that about
    four times that many fall under it (``4 * cap * slack / n``). :func:`candidate_pass` verifies that
    every tightened species still delivered ``cap * slack`` rows (else the caller widens and redoes),
    so the result equals the untightened one.
    """
    import numpy as np

    rows = {"grp": [], "genus": [], "species": [], "cut": []}
    for group, per in eligible.items():
        if group not in cuts:
            continue
        need = 4 * config.cap(group) * slack
        keys = list(per)
        counts = np.fromiter(per.values(), dtype=np.float64, count=len(keys))
        # numpy only finds the (few) abundant species; their cuts are computed exactly as before
        for i in np.flatnonzero(need / counts < cuts[group]).tolist():
            key = keys[i]
            f = need / per[key]
            if f < cuts[group]:
                genus, species = key.split("\t")
                rows["grp"].append(group)
                rows["genus"].append(genus)
                rows["species"].append(species)
                rows["cut"].append(min(HASH_MAX - 1, math.floor(f * HASH_MAX)))
    return pa.table(
        {
            "grp": pa.array(rows["grp"], pa.string()),
            "genus": pa.array(rows["genus"], pa.string()),
            "species": pa.array(rows["species"], pa.string()),
            "cut": pa.array(rows["cut"], pa.uint64()),
        }
    )


def candidate_pass(
    con,
    catalog_sql: str,
    cuts: dict[str, float],
    config: SelectionConfig,
    slack: float,
    tight: pa.Table,
) -> tuple[pa.Table, dict[str, int]]:
    """Rows under their group's (or species') hash cut that the walk may need, in (group, hash) order.

    Eligible, non-duplicate rows are pruned in SQL to the first ``cap * slack`` of their species and the
    first ``budget * slack`` of their group (hash order); the pruned ones are counted as over the cap /
    budget. Duplicated uuids come back (flag ``dup``) so each gets its own exclusion record.
    ``short_species`` counts tightened species that delivered fewer than ``cap * slack`` rows.
    """
    top_int = min(HASH_MAX - 1, math.floor(max(cuts.values()) * HASH_MAX))
    cap_sql = " ".join(f"WHEN {_lit(g)} THEN {int(config.cap(g) * slack) + 1}" for g in sorted(GROUPS))
    source = f"""
        SELECT *, hash(uuid) AS h FROM ({catalog_sql})
        WHERE uuid IS NOT NULL AND uuid <> '' AND hash(uuid) <= {top_int}::UBIGINT"""
    budget = int(config.budget_per_group * slack) + 1
    con.register("c1_tight_arrow", tight)
    con.execute("DROP TABLE IF EXISTS c1_tight")
    # integer join key: hashing the three strings once per row beats a three-string hash join
    con.execute(
        "CREATE TEMP TABLE c1_tight AS SELECT hash(grp, genus, species) AS k, cut FROM c1_tight_arrow"
    )
    con.unregister("c1_tight_arrow")
    # group and group cut by joining a tiny (rank value -> group, cut) table: a CASE in the filter would
    # be pushed into the scan and evaluated on every catalog row, the joins only see rows under the cut
    gmap = [
        (
            rank,
            value,
            group,
            min(HASH_MAX - 1, math.floor(cuts[group] * HASH_MAX)),
            0 if rank == "class" else 1,
        )
        for group, (rank, values) in GROUPS.items()
        if group in cuts
        for value in values
    ]
    con.execute("DROP TABLE IF EXISTS c1_gmap")
    con.execute(
        "CREATE TEMP TABLE c1_gmap (rank VARCHAR, value VARCHAR, grp VARCHAR, cut UBIGINT, pri INTEGER)"
    )
    if gmap:
        con.executemany("INSERT INTO c1_gmap VALUES (?, ?, ?, ?, ?)", gmap)
    con.execute("DROP TABLE IF EXISTS c1_cand")
    con.execute(f"""
        CREATE TEMP TABLE c1_cand AS
        WITH r AS ({source}), c AS (
            SELECT {", ".join(_nullif(col) for col in ("uuid", *RANKS, "common_name"))},
                   min_side, h
            FROM r
        ), c2 AS (
            -- Table 5: a class filter wins over the phylum filter (Bryophytes), as in group_case()
            SELECT c.*, coalesce(mc.grp, mp.grp) AS grp, coalesce(mc.cut, mp.cut) AS gcut
            FROM c LEFT JOIN (SELECT * FROM c1_gmap WHERE rank = 'class') mc ON mc.value = c."class"
                   LEFT JOIN (SELECT * FROM c1_gmap WHERE rank = 'phylum') mp ON mp.value = c.phylum
        ), j AS (
            SELECT c3.* EXCLUDE (gcut), t.cut AS species_cut
            FROM (SELECT * FROM c2 WHERE grp IS NOT NULL AND h <= gcut) c3
            LEFT JOIN c1_tight t ON t.k = hash(c3.grp, c3.genus, c3.species)
        ), k AS (
            -- equal uuids have equal hashes: partitioning by the integer is the cheap duplicate test
            SELECT *, count(*) OVER (PARTITION BY h) > 1 AS dup
            FROM j WHERE species_cut IS NULL OR h <= species_cut
        ), e AS (
            SELECT * FROM k WHERE ({_complete_sql()}) AND common_name IS NOT NULL
                AND (min_side IS NULL OR min_side >= {int(config.min_side)})
        ), s AS (
            SELECT *, CASE WHEN dup THEN 0 ELSE row_number() OVER (PARTITION BY grp, genus, species, dup ORDER BY h, uuid) END AS srn
            FROM e
        ), g AS (
            SELECT *, CASE WHEN dup THEN 0 ELSE row_number() OVER (
                PARTITION BY grp, dup, srn <= (CASE grp {cap_sql} END) ORDER BY h, uuid) END AS grn
            FROM s
        )
        SELECT uuid, h, grp, {", ".join(_q(r) for r in RANKS)}, common_name, min_side, dup,
               species_cut IS NOT NULL AS tightened, srn,
               CASE WHEN dup THEN 'keep' WHEN srn > (CASE grp {cap_sql} END) THEN 'over_species_cap'
                    WHEN grn > {budget} THEN 'over_group_budget' ELSE 'keep' END AS fate
        FROM g
    """)
    pruned = dict(con.sql("SELECT fate, count(*) FROM c1_cand WHERE fate <> 'keep' GROUP BY fate").fetchall())
    # the catalog's scientific_name is not read: the binomial comes from genus + epithet
    cols = f"uuid, h, grp, {', '.join(_q(r) for r in RANKS)}, common_name, min_side, dup"
    table = con.sql(f"SELECT {cols} FROM c1_cand WHERE fate = 'keep'").to_arrow_table()
    examined = int(con.sql("SELECT count(*) FROM c1_cand").fetchall()[0][0])
    short = con.sql(f"""
        SELECT count(*) FROM (
            SELECT grp, genus, species, max(srn) AS got FROM c1_cand WHERE tightened AND NOT dup GROUP BY ALL
        ) WHERE got < (CASE grp {cap_sql} END) - 1
    """).fetchall()[0][0]
    examined_tight = con.sql("SELECT count(*) FROM c1_cand WHERE tightened").fetchall()[0][0]
    table = table.sort_by([("grp", "ascending"), ("h", "ascending"), ("uuid", "ascending")])
    return table, {
        "examined": examined,
        "short_species": int(short),
        "examined_tight": int(examined_tight),
        **pruned,
    }


@dataclass
class WalkResult:
    selected: list[dict] = field(default_factory=list)
    excluded: list[tuple[str, str, str, str]] = field(default_factory=list)  # id, group, reason, detail
    short_groups: list[str] = field(default_factory=list)  # groups that ran out of candidates
    failures: dict[str, int] = field(default_factory=dict)  # group -> failed image checks


def walk(
    candidates: list[dict],
    config: SelectionConfig,
    verify: Verifier | None,
    english: EnglishResolver | None,
    cuts: dict[str, float],
) -> WalkResult:
    """Hash-order walk with cap and budget; images verified in batches (see module docstring)."""
    names: dict[tuple[str, str], tuple[str | None, str, str]] = {}
    for c in candidates:
        key = (c["scientific_name"], c["common_name"])
        if key not in names:
            names[key] = english(*key) if english else (c["common_name"], "catalog", "")
    verified: dict[str, Verified] = {}
    while True:
        result = _simulate(candidates, config, verified, names, cuts)
        todo = [c for c in result.selected if c["uuid"] not in verified]
        if not todo or verify is None:
            break
        verified.update(verify(todo))
    for c in result.selected:
        v = verified.get(c["uuid"])
        if v is not None:
            c.update(image_path=v.path, image_row=v.row, sha256=v.sha256, width=v.width, height=v.height)
    return result


def _simulate(candidates, config, verified, names, cuts) -> WalkResult:
    out = WalkResult()
    per_species: dict[tuple[str, str], int] = {}
    per_group: dict[str, int] = {}
    caps = {g: config.cap(g) for g in GROUPS}
    for c in candidates:
        group = c["grp"]
        if c["dup"]:
            out.excluded.append(
                (c["uuid"], group, "duplicate_uuid", "uuid appears more than once in the catalog")
            )
            continue
        english, mechanism, detail = names[(c["scientific_name"], c["common_name"])]
        if english is None:
            out.excluded.append((c["uuid"], group, "no_english_common_name", detail))
            continue
        v = verified.get(c["uuid"])
        if v is not None and not v.ok:
            out.excluded.append((c["uuid"], group, v.reason, v.detail))
            continue
        key = (group, c["scientific_name"])
        if per_species.get(key, 0) >= caps[group]:
            out.excluded.append((c["uuid"], group, "over_species_cap", f"cap {caps[group]}"))
            continue
        if per_group.get(group, 0) >= config.budget_per_group:
            out.excluded.append((c["uuid"], group, "over_group_budget", f"budget {config.budget_per_group}"))
            continue
        per_species[key] = per_species.get(key, 0) + 1
        per_group[group] = per_group.get(group, 0) + 1
        out.selected.append(dict(c, common_name_en=english, common_name_mechanism=mechanism))
    out.short_groups = sorted(
        g for g in cuts if per_group.get(g, 0) < config.budget_per_group and cuts[g] < 1.0
    )
    for _, group, reason, _ in out.excluded:
        if reason in ("image_missing", "image_corrupt", "below_resolution"):
            out.failures[group] = out.failures.get(group, 0) + 1
    return out


@functools.lru_cache(maxsize=1 << 17)  # bounded: ~100k distinct species per run
def _epithet(species: str, genus: str) -> str:
    from builder.taxonomy.names import species_epithet

    return species_epithet(species, genus) or species


def _without_cyclic_gc(func):
    """Run ``func`` with Python's cyclic garbage collector paused (restored afterwards).

    The walk builds a few hundred thousand small dicts and tuples (no reference cycles); with the
    collector on, every allocation burst triggers generation scans over all of them (0.2 s of an 11 s
    50M-row run). Reference counting still frees everything; results are unaffected.
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
    import duckdb

    con = connect(threads, memory_limit, out_dir / ".duckdb-tmp")
    try:
        timings: dict[str, float] = {}
        t0, c0 = time.perf_counter(), time.process_time()
        lineage_pass(con, catalog_sql, config.min_side)
        timings["lineage_pass"] = time.perf_counter() - t0
        timings["lineage_pass_cpu"] = time.process_time() - c0
        counts, eligible = lineage_exclusions(con)
        exp_table = exposure_counts(con)
        timings["exposure"] = time.perf_counter() - t0 - timings["lineage_pass"]
        catalog_rows = int(con.sql("SELECT coalesce(sum(n), 0) FROM c1_lin").fetchall()[0][0])
        n_eligible = sum(sum(s.values()) for s in eligible.values())
        factor, slack = config.oversample, 2.0
        while True:
            cuts = {
                g: hash_cut(eligible[g].values(), config.cap(g), int(config.budget_per_group * factor))
                for g in GROUPS
                if eligible[g]
            }
            if cuts:
                t1, cpu1 = time.perf_counter(), time.process_time()
                tight = species_cuts(eligible, cuts, config, slack)
                cand_table, sql_counts = candidate_pass(con, catalog_sql, cuts, config, slack, tight)
                timings["candidate_pass"] = timings.get("candidate_pass", 0.0) + time.perf_counter() - t1
                timings["candidate_pass_cpu"] = (
                    timings.get("candidate_pass_cpu", 0.0) + time.process_time() - cpu1
                )
                timings["candidates"] = sql_counts["examined"]
            else:
                cand_table, sql_counts = None, {"examined": 0}
            candidates = cand_table.to_pylist() if cand_table is not None else []
            for c in candidates:
                c["species_binomial"] = f"{c['genus']} {_epithet(c['species'], c['genus'])}"
                c["scientific_name"] = c["species_binomial"]
            t1 = time.perf_counter()
            result = walk(candidates, config, verify, english, cuts)
            timings["walk"] = timings.get("walk", 0.0) + time.perf_counter() - t1
            timings["rounds"] = timings.get("rounds", 0) + 1
            # image failures may have eaten the pruning slack: then widen and redo (same result, more rows)
            slack_used = max(result.failures.values(), default=0) >= min(
                config.budget_per_group, config.species_cap
            ) * (slack - 1)
            if not result.short_groups and not slack_used and not sql_counts.get("short_species"):
                break
            factor, slack = factor * 4, slack * 2
    except duckdb.Error as exc:  # a corrupt or unreadable catalog file: name it
        from builder.common import SourceFormatError

        names = ", ".join(str(f) for f in catalog_files)
        raise SourceFormatError(f"{names}: cannot read the catalog: {exc}") from None
    finally:
        con.close()
        shutil.rmtree(out_dir / ".duckdb-tmp", ignore_errors=True)

    for _, _, reason, _ in result.excluded:
        counts[reason] += 1
    counts["over_species_cap"] += sql_counts.get("over_species_cap", 0)
    counts["over_group_budget"] += sql_counts.get("over_group_budget", 0)
    pruned = sql_counts.get("over_species_cap", 0) + sql_counts.get("over_group_budget", 0)
    # rows of a tightened species beyond its own cut: that species already delivered cap * slack rows
    tight_rows = (
        sum(
            eligible[g][f"{ge}\t{sp}"]
            for g, ge, sp in zip(*(tight[c].to_pylist() for c in ("grp", "genus", "species")), strict=True)
        )
        if cuts
        else 0
    )
    beyond = tight_rows - sql_counts.get("examined_tight", 0)
    counts["over_species_cap"] += beyond
    counts["not_reached"] = n_eligible - len(candidates) - pruned - beyond
    manifest = _manifest_table(result.selected)
    excl = sorted(result.excluded, key=lambda e: (e[1], e[2], e[0]))
    excl_columns = list(zip(*excl, strict=True)) if excl else [[] for _ in EXCLUSION_SCHEMA]
    excl_table = pa.table(
        [pa.array(col, f.type) for col, f in zip(excl_columns, EXCLUSION_SCHEMA, strict=True)],
        schema=EXCLUSION_SCHEMA,
    )
    pq.write_table(manifest, out_dir / "c1_manifest.parquet")
    pq.write_table(excl_table, out_dir / "c1_exclusions.parquet")
    pq.write_table(exp_table, out_dir / "c1_exposure.parquet")
    per_group = {g: 0 for g in GROUPS}
    for r in result.selected:
        per_group[r["grp"]] += 1
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


def _manifest_table(selected: list[dict]) -> pa.Table:
    """The manifest, sorted by (group, order key, id); built column by column (cheaper than row dicts)."""
    rows = sorted(selected, key=lambda c: (c["grp"], c["h"], c["uuid"]))
    columns = {
        "id": [c["uuid"] for c in rows],
        "group": [c["grp"] for c in rows],
        "order_key": [c["h"] for c in rows],
        **{r: [c[r] for c in rows] for r in RANKS if r != "species"},
        "species": [_epithet(c["species"], c["genus"]) for c in rows],
        "scientific_name": [c["species_binomial"] for c in rows],
        "common_name": [c["common_name_en"] for c in rows],
        "catalog_common_name": [c["common_name"] for c in rows],
        "common_name_mechanism": [c["common_name_mechanism"] for c in rows],
        "image_path": [c.get("image_path", "") for c in rows],
        "image_row": [c.get("image_row", -1) for c in rows],
        "sha256": [c.get("sha256", "") for c in rows],
        "width": [c.get("width", 0) for c in rows],
        "height": [c.get("height", 0) for c in rows],
    }
    return pa.table([pa.array(columns[f.name], f.type) for f in MANIFEST_SCHEMA], schema=MANIFEST_SCHEMA)
