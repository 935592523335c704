"""The C1 selection's speed-ups must not change a single output byte: each fast path against the
straightforward formulation it replaced."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from c1_catalogs import dense_bird_catalog

from builder.manifests import c1_select


def _hash_cut_reference(counts: list[int], cap: int, need: int) -> float:
    """The original pure-Python bisection (left-to-right float sums)."""
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


def test_hash_cut_is_bit_identical_to_the_python_bisection():
    rng = random.Random(42)
    for _ in range(400):
        counts = [max(1, int(rng.paretovariate(0.7))) for _ in range(rng.randint(1, 400))]
        cap = rng.choice([3, 4, 50, 200])
        need = rng.randint(1, 4000)
        assert c1_select.hash_cut(counts, cap, need) == _hash_cut_reference(counts, cap, need)


def test_min_side_expression_equals_least_of_the_first_two(tmp_path):
    import duckdb

    sizes = [[300, 400], [400, 100], None, [], [50], [None, 300], [None, None], [500, 600, 10], [7, None, 1]]
    path = tmp_path / "cat.parquet"
    pq.write_table(
        pa.table(
            {
                "uuid": [f"u{i}" for i in range(len(sizes))],
                **{r: ["x"] * len(sizes) for r in c1_select.RANKS},
                "resized_size": pa.array(sizes, pa.list_(pa.int64())),
            }
        ),
        path,
    )
    mapping = {c: c for c in ("uuid", *c1_select.RANKS)} | {"resized_size": "resized_size"}
    sql = c1_select._catalog_sql([path], mapping)
    got = [r[0] for r in duckdb.sql(f"SELECT min_side FROM ({sql}) ORDER BY uuid").fetchall()]
    want = [
        r[0]
        for r in duckdb.sql(
            f"SELECT least(resized_size[1], resized_size[2]) FROM read_parquet('{path}') ORDER BY uuid"
        ).fetchall()
    ]
    assert got == want == [300, 100, None, None, 50, 300, None, 500, 7]


def _reference_walk(rows: list[dict], config, verify, english, cuts):
    """The row-by-row walk the column-wise one replaced (images verified in the same batches)."""
    names = {}
    for c in rows:
        key = (c["scientific_name"], c["common_name"])
        if key not in names:
            names[key] = english(*key) if english else (c["common_name"], "catalog", "")
    verified = {}
    while True:
        selected, excluded = [], []
        per_species, per_group = {}, {}
        for c in rows:
            group = c["grp"]
            if c["dup"]:
                excluded.append(
                    (c["uuid"], group, "duplicate_uuid", "uuid appears more than once in the catalog")
                )
                continue
            en, mechanism, detail = names[(c["scientific_name"], c["common_name"])]
            if en is None:
                excluded.append((c["uuid"], group, "no_english_common_name", detail))
                continue
            v = verified.get(c["uuid"])
            if v is not None and not v.ok:
                excluded.append((c["uuid"], group, v.reason, v.detail))
                continue
            key = (group, c["scientific_name"])
            if per_species.get(key, 0) >= config.cap(group):
                excluded.append((c["uuid"], group, "over_species_cap", f"cap {config.cap(group)}"))
                continue
            if per_group.get(group, 0) >= config.budget_per_group:
                excluded.append((c["uuid"], group, "over_group_budget", f"budget {config.budget_per_group}"))
                continue
            per_species[key] = per_species.get(key, 0) + 1
            per_group[group] = per_group.get(group, 0) + 1
            selected.append((c["uuid"], en, mechanism))
        todo = [c for c in rows if c["uuid"] in {u for u, _, _ in selected} and c["uuid"] not in verified]
        if not todo or verify is None:
            break
        verified.update(verify(todo))
    short = sorted(g for g in cuts if per_group.get(g, 0) < config.budget_per_group and cuts[g] < 1.0)
    failures = {}
    for _, group, reason, _ in excluded:
        if reason in ("image_missing", "image_corrupt", "below_resolution"):
            failures[group] = failures.get(group, 0) + 1
    images = [verified.get(u) for u, _, _ in selected]
    return selected, excluded, short, failures, images


def _walk_candidates(rng: random.Random, n: int) -> pa.Table:
    groups = sorted(c1_select.GROUPS)[:3]
    rows = []
    for _ in range(n):
        group = rng.choice(groups)
        k = min(int(rng.paretovariate(1.1)), 9)
        rows.append(
            {
                "uuid": f"{rng.getrandbits(64):016x}",
                "h": rng.getrandbits(64),
                "grp": group,
                "scientific_name": f"Genus{k} sp{k}",
                "common_name": rng.choice(["Name", "Other", "nom"]) + str(k % 3),
                "dup": False,
            }
        )
    for a, b in zip(rows[::17], rows[5::17], strict=False):  # duplicated uuids (same hash)
        b.update(uuid=a["uuid"], h=a["h"], dup=True)
        a["dup"] = True
    rows.sort(key=lambda r: (r["grp"], r["h"], r["uuid"]))
    schema = pa.schema(
        [("uuid", pa.string()), ("h", pa.uint64()), ("grp", pa.string())]
        + [("scientific_name", pa.string()), ("common_name", pa.string()), ("dup", pa.bool_())]
    )
    return pa.Table.from_pylist(rows, schema=schema)


@pytest.mark.parametrize("seed", range(12))
def test_column_wise_walk_equals_the_row_by_row_walk(seed):
    rng = random.Random(seed)
    cand = _walk_candidates(rng, rng.choice([0, 1, 40, 300]))
    cfg = c1_select.SelectionConfig(
        budget_per_group=rng.choice([3, 8, 30]),
        species_cap=rng.choice([1, 2, 4]),
        cap_overrides=((sorted(c1_select.GROUPS)[1], 6),),
    )
    cuts = {g: rng.choice([0.3, 1.0]) for g in sorted(c1_select.GROUPS)[:3]}
    bad = {u for u in cand["uuid"].to_pylist() if rng.random() < 0.25}
    calls = {"fast": [], "ref": []}

    def verifier(tag):
        def verify(batch):
            calls[tag].append(sorted(c["uuid"] for c in batch))
            out = {}
            for c in batch:
                u = c["uuid"]
                if u in bad:
                    why = "image_missing" if int(u, 16) % 2 else "below_resolution"
                    out[u] = c1_select.Verified(False, why, f"{why} {u}")
                else:
                    out[u] = c1_select.Verified(True, "", "", f"p/{u}", int(u[:4], 16), "ab" * 32, 300, 301)
            return out

        return verify

    def english(sci, common):
        return (
            (None, "none", f"no English name for {common}")
            if common.startswith("nom")
            else (common.upper(), "overrides", "")
        )

    use_verify = rng.random() < 0.8
    fast = c1_select.walk(cand, cfg, verifier("fast") if use_verify else None, english, cuts)
    sel, excl, short, failures, images = _reference_walk(
        cand.to_pylist(), cfg, verifier("ref") if use_verify else None, english, cuts
    )
    assert fast.selected["uuid"].to_pylist() == [u for u, _, _ in sel]
    assert fast.selected["common_name_en"].to_pylist() == [e for _, e, _ in sel]
    assert fast.selected["common_name_mechanism"].to_pylist() == [m for _, _, m in sel]
    assert fast.selected["image_path"].to_pylist() == [v.path if v else "" for v in images]
    assert fast.selected["width"].to_pylist() == [v.width if v else 0 for v in images]
    assert [tuple(r.values()) for r in fast.excluded.to_pylist()] == excl
    assert fast.short_groups == short and fast.failures == failures
    assert [sorted(b) for b in calls["fast"]] == calls["ref"]


def test_paused_gc_is_restored_and_does_not_change_the_output(tmp_path):
    import gc

    calls = []

    @c1_select._without_cyclic_gc
    def probe(fail: bool) -> bool:
        calls.append(gc.isenabled())
        if fail:
            raise ValueError("boom")
        return True

    assert gc.isenabled()
    assert probe(False) and calls == [False] and gc.isenabled()
    with pytest.raises(ValueError):
        probe(True)
    assert gc.isenabled()
    gc.disable()
    try:
        probe(False)
        assert not gc.isenabled()  # a caller's own setting is left as it was
    finally:
        gc.enable()

    # a whole selection: the same bytes whether the collector was on or off around it
    cat = tmp_path / "catalog.parquet"
    dense_bird_catalog(cat, n=2000)
    cfg = c1_select.SelectionConfig.mini()
    c1_select.select_from_catalog([cat], tmp_path / "on", config=cfg)
    gc.disable()
    try:
        c1_select.select_from_catalog([cat], tmp_path / "off", config=cfg)
    finally:
        gc.enable()
    assert c1_select.select_from_catalog.__name__ == "select_from_catalog"
    for name in ("c1_manifest.parquet", "c1_exclusions.parquet", "c1_exposure.parquet"):
        assert (tmp_path / "on" / name).read_bytes() == (tmp_path / "off" / name).read_bytes()
