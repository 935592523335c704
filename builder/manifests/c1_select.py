"""C1 selection manifest (§3.1, Table 5, §L.1): ten groups, complete lineage, resolution, caps, budgets.

Streaming over a TreeOfLife catalog of any size with DuckDB (bounded memory, two scans):

1. *Lineage pass*: one hash aggregate over the seven ranks gives per-lineage image counts, from which
   come the exposure counts c(t) of every tree node (§E.3: images whose lineage passes through t, over
   the whole catalog) and the counted exclusions that need no image (outside the ten groups,
   incomplete lineage, no common name, catalog-declared size below the threshold).
2. *Candidate pass*: the selection order is a hash of the uuid (deterministic, unlike the paper's
   download race). Per group a hash cut ``tau_g`` is chosen from the per-species counts so that the rows
   under it are enough to fill the budget under the species cap; only those rows leave DuckDB, where a
   window ranks them within species. If the walk runs out before the budget fills, the cut widens.
3. *Walk* (Python, small): per group in hash order, a candidate is taken while its species is under
   the cap and the group under budget, after its image is verified (present, decodable, size) and
   its common name resolved to English. Image checks run in batches; a failed one gives its slot to the
   next candidate, so the result equals the sequential walk over verified rows.

Every row the walk examines that is not selected gets a per-row exclusion record with its reason;
rows beyond the cut are counted as ``not_reached``; all other reasons are counted by the lineage pass.
Choices where the paper is silent: threshold 224 px on the short side, cap 50 images per species
(Gymnosperms 200: "significantly relaxing our sampling constraints", §M.2), budget 10 000 per group.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
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
    "Fish": ("class", ("Actinopterygii", "Teleostei", "Elasmobranchii", "Holocephali", "Coelacanthi", "Dipneusti")),
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
EXCLUSION_SCHEMA = pa.schema([("id", pa.string()), ("group", pa.string()), ("reason", pa.string()), ("detail", pa.string())])
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
    for group, (rank, values) in GROUPS.items():
        arms.append(f"WHEN {prefix}{_q(rank)} IN ({', '.join(_lit(v) for v in values)}) THEN {_lit(group)}")
    return "CASE " + " ".join(arms) + " ELSE NULL END"


def _catalog_sql(files: list[Path], mapping: dict[str, str | None]) -> str:
    """A SELECT normalizing catalog columns (empty strings -> NULL; sizes when the catalog has them)."""
    cols = []
    for col in ("uuid", *RANKS, "scientific_name", "common_name"):
        src = mapping.get(col)
        cols.append(f"NULLIF(CAST({_q(src)} AS VARCHAR), '') AS {_q(col)}" if src else f"NULL::VARCHAR AS {_q(col)}")
    if mapping.get("resized_size"):
        cols.append('least(resized_size[1], resized_size[2]) AS min_side')
    elif mapping.get("width") and mapping.get("height"):
        cols.append("least(width, height) AS min_side")
    else:
        cols.append("NULL::BIGINT AS min_side")
    paths = ", ".join(_lit(str(f)) for f in files)
    return f"SELECT {', '.join(cols)} FROM read_parquet([{paths}])"


def _complete_sql(prefix: str = "") -> str:
    """SQL predicate: every rank the generator needs is present (order may be null for reptiles)."""
    need = [f"{prefix}{_q(r)} IS NOT NULL" for r in RANKS if r != "order"]
    order_ok = f"({prefix}{_q('order')} IS NOT NULL OR ({group_case(prefix)}) IN ({', '.join(_lit(g) for g in sorted(NO_ORDER_GROUPS))}))"
    return " AND ".join([*need, order_ok])


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


def lineage_pass(con, catalog_sql: str, min_side: int) -> pa.Table:
    """Per distinct lineage: image count, rows with a common name, rows with one and a small size."""
    lineage_hash = "hash(" + ", ".join(_q(r) for r in RANKS) + ")"
    sql = f"""
        SELECT {", ".join(f"any_value({_q(r)}) AS {_q(r)}" for r in RANKS)},
               count(*) AS n,
               count(common_name) AS n_common,
               count(*) FILTER (WHERE common_name IS NOT NULL AND min_side < {int(min_side)}) AS n_small
        FROM ({catalog_sql}) GROUP BY {lineage_hash}
    """
    table = con.sql(sql).to_arrow_table()
    # deterministic order for everything computed from it
    return table.sort_by([(r, "ascending") for r in RANKS] + [("n", "ascending")])


def exposure_counts(lineages: pa.Table) -> dict[str, tuple[str, int]]:
    """c(t) for every node id (Contract 5 ids) over the whole catalog: {node: (rank, count)}."""
    from biovqa.taxonomy import lineage_path

    out: dict[str, list] = {}
    cols = {c: lineages[c].to_pylist() for c in (*RANKS, "n")}
    for i in range(lineages.num_rows):
        lineage = {r: cols[r][i] for r in RANKS}
        node = ""
        for rank, segment, _ in lineage_path(lineage):
            node = f"{node}|{segment}" if node else segment
            hit = out.get(node)
            if hit is None:
                out[node] = [rank, cols["n"][i]]
            else:
                hit[1] += cols["n"][i]
    return {k: (v[0], v[1]) for k, v in out.items()}


def _group_of(row: dict) -> str | None:
    for group, (rank, values) in GROUPS.items():
        if row.get(rank) in values:
            return group
    return None


def _complete(row: dict, group: str | None) -> bool:
    return all(row.get(r) for r in RANKS if r != "order") and (bool(row.get("order")) or group in NO_ORDER_GROUPS)


def lineage_exclusions(lineages: pa.Table) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Counted exclusions from the lineage pass, and per group {species binomial: eligible rows}."""
    counts = dict.fromkeys(REASONS, 0)
    eligible: dict[str, dict[str, int]] = {g: {} for g in GROUPS}
    cols = {c: lineages[c].to_pylist() for c in lineages.column_names}
    for i in range(lineages.num_rows):
        row = {c: cols[c][i] for c in cols}
        group = _group_of(row)
        if group is None:
            counts["not_in_group"] += row["n"]
        elif not _complete(row, group):
            counts["incomplete_lineage"] += row["n"]
        else:
            counts["missing_common_name"] += row["n"] - row["n_common"]
            counts["below_resolution"] += row["n_small"]
            ok = row["n_common"] - row["n_small"]
            if ok:
                key = f"{row['genus']}\t{row['species']}"
                eligible[group][key] = eligible[group].get(key, 0) + ok
    return counts, eligible


def hash_cut(species_counts: Iterable[int], cap: int, need: int) -> float:
    """Smallest fraction f (bisection) with sum_s min(cap, n_s * f) >= need; 1.0 when never reached."""
    counts = list(species_counts)
    if sum(min(cap, n) for n in counts) <= need:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if sum(min(cap, n * mid) for n in counts) >= need:
            hi = mid
        else:
            lo = mid
    return min(1.0, hi * 1.05)


def candidate_pass(
    con, catalog_sql: str, cuts: dict[str, float], config: SelectionConfig, slack: float
) -> tuple[pa.Table, dict[str, int]]:
    """Rows under their group's hash cut that the walk may need, in (group, hash) order.

    Eligible, non-duplicate rows are pruned in SQL to the first ``cap * slack`` of their species and the
    first ``budget * slack`` of their group (hash order); the pruned ones are counted as over the cap /
    budget. Duplicated uuids come back (flag ``dup``) so each gets its own exclusion record.
    """
    cut_sql = " ".join(
        f"WHEN {_lit(g)} THEN {min(HASH_MAX - 1, math.floor(f * HASH_MAX))}::UBIGINT" for g, f in sorted(cuts.items())
    )
    top_int = min(HASH_MAX - 1, math.floor(max(cuts.values()) * HASH_MAX))
    cap_sql = " ".join(f"WHEN {_lit(g)} THEN {int(config.cap(g) * slack) + 1}" for g in sorted(GROUPS))
    budget = int(config.budget_per_group * slack) + 1
    con.execute("DROP TABLE IF EXISTS c1_cand")
    con.execute(f"""
        CREATE TEMP TABLE c1_cand AS
        WITH c AS (
            SELECT *, hash(uuid) AS h, {group_case()} AS grp
            FROM ({catalog_sql}) WHERE uuid IS NOT NULL AND hash(uuid) <= {top_int}::UBIGINT
        ), k AS (
            SELECT *, count(*) OVER (PARTITION BY uuid) > 1 AS dup
            FROM c WHERE grp IS NOT NULL AND h <= CASE grp {cut_sql} ELSE 0::UBIGINT END
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
        SELECT uuid, h, grp, {", ".join(_q(r) for r in RANKS)}, scientific_name, common_name, min_side, dup,
               CASE WHEN dup THEN 'keep' WHEN srn > (CASE grp {cap_sql} END) THEN 'over_species_cap'
                    WHEN grn > {budget} THEN 'over_group_budget' ELSE 'keep' END AS fate
        FROM g
    """)
    pruned = dict(con.sql("SELECT fate, count(*) FROM c1_cand WHERE fate <> 'keep' GROUP BY fate").fetchall())
    cols = f"uuid, h, grp, {', '.join(_q(r) for r in RANKS)}, scientific_name, common_name, min_side, dup"
    table = con.sql(f"SELECT {cols} FROM c1_cand WHERE fate = 'keep'").to_arrow_table()
    examined = int(con.sql("SELECT count(*) FROM c1_cand").fetchall()[0][0])
    table = table.sort_by([("grp", "ascending"), ("h", "ascending"), ("uuid", "ascending")])
    return table, {"examined": examined, **pruned}


@dataclass
class WalkResult:
    selected: list[dict] = field(default_factory=list)
    excluded: list[tuple[str, str, str, str]] = field(default_factory=list)  # id, group, reason, detail
    short_groups: list[str] = field(default_factory=list)  # groups that ran out of candidates
    failures: dict = field(default_factory=dict)  # (group, "") -> failed image checks


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
    for c in candidates:
        group = c["grp"]
        if c["dup"]:
            out.excluded.append((c["uuid"], group, "duplicate_uuid", "uuid appears more than once in the catalog"))
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
        if per_species.get(key, 0) >= config.cap(group):
            out.excluded.append((c["uuid"], group, "over_species_cap", f"cap {config.cap(group)}"))
            continue
        if per_group.get(group, 0) >= config.budget_per_group:
            out.excluded.append((c["uuid"], group, "over_group_budget", f"budget {config.budget_per_group}"))
            continue
        per_species[key] = per_species.get(key, 0) + 1
        per_group[group] = per_group.get(group, 0) + 1
        out.selected.append(dict(c, common_name_en=english, common_name_mechanism=mechanism))
    out.short_groups = sorted(g for g in cuts if per_group.get(g, 0) < config.budget_per_group and cuts[g] < 1.0)
    failed: dict[tuple[str, str], int] = {}
    for uuid_, group, reason, _ in out.excluded:
        if reason in ("image_missing", "image_corrupt", "below_resolution"):
            failed[(group, "")] = failed.get((group, ""), 0) + 1
    out.failures = failed
    return out


def _epithet(species: str, genus: str) -> str:
    from builder.taxonomy.names import species_epithet

    return species_epithet(species, genus) or species


def select_from_catalog(
    catalog_files: list[Path],
    out_dir: Path,
    *,
    config: SelectionConfig,
    image_index=None,
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
    con = connect(threads, memory_limit, out_dir / ".duckdb-tmp")
    try:
        lineages = lineage_pass(con, catalog_sql, config.min_side)
        counts, eligible = lineage_exclusions(lineages)
        exposure = exposure_counts(lineages)
        catalog_rows = int(pc.sum(lineages["n"]).as_py() or 0)
        n_eligible = sum(sum(s.values()) for s in eligible.values())
        factor, slack = config.oversample, 2.0
        while True:
            cuts = {
                g: hash_cut(eligible[g].values(), config.cap(g), int(config.budget_per_group * factor))
                for g in GROUPS
                if eligible[g]
            }
            if cuts:
                cand_table, sql_counts = candidate_pass(con, catalog_sql, cuts, config, slack)
            else:
                cand_table, sql_counts = None, {"examined": 0}
            candidates = cand_table.to_pylist() if cand_table is not None else []
            for c in candidates:
                c["species_binomial"] = f"{c['genus']} {_epithet(c['species'], c['genus'])}"
                c["scientific_name"] = c["species_binomial"]
            result = walk(candidates, config, verify, english, cuts)
            # image failures may have eaten the pruning slack: then widen and redo (same result, more rows)
            slack_used = max(result.failures.values(), default=0) >= min(config.budget_per_group, config.species_cap) * (slack - 1)
            if not result.short_groups and not slack_used:
                break
            factor, slack = factor * 4, slack * 2
    finally:
        con.close()

    for _, _, reason, _ in result.excluded:
        counts[reason] += 1
    counts["over_species_cap"] += sql_counts.get("over_species_cap", 0)
    counts["over_group_budget"] += sql_counts.get("over_group_budget", 0)
    pruned = sql_counts.get("over_species_cap", 0) + sql_counts.get("over_group_budget", 0)
    counts["not_reached"] = n_eligible - len(candidates) - pruned
    manifest = _manifest_table(result.selected)
    excl = sorted(result.excluded, key=lambda e: (e[1], e[2], e[0]))
    excl_table = pa.Table.from_pylist(
        [{"id": e[0], "group": e[1], "reason": e[2], "detail": e[3]} for e in excl], schema=EXCLUSION_SCHEMA
    )
    exp_rows = sorted(exposure.items())
    exp_table = pa.table(
        {"node": [k for k, _ in exp_rows], "rank": [v[0] for _, v in exp_rows], "exposure": [v[1] for _, v in exp_rows]},
        schema=EXPOSURE_SCHEMA,
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
    }


def _manifest_table(selected: list[dict]) -> pa.Table:
    rows = []
    for c in sorted(selected, key=lambda c: (c["grp"], c["h"], c["uuid"])):
        rows.append(
            {
                "id": c["uuid"],
                "group": c["grp"],
                "order_key": c["h"],
                **{r: c[r] for r in RANKS if r != "species"},
                "species": _epithet(c["species"], c["genus"]),
                "scientific_name": c["species_binomial"],
                "common_name": c["common_name_en"],
                "catalog_common_name": c["common_name"],
                "common_name_mechanism": c["common_name_mechanism"],
                "image_path": c.get("image_path", ""),
                "image_row": c.get("image_row", -1),
                "sha256": c.get("sha256", ""),
                "width": c.get("width", 0),
                "height": c.get("height", 0),
            }
        )
    return pa.Table.from_pylist(rows, schema=MANIFEST_SCHEMA)
