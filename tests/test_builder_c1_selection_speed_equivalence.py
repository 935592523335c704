"""The C1 selection's speed-ups must not change a single output byte: each fast path against the
straightforward formulation it replaced."""

from __future__ import annotations

import io
import math
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

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


def test_species_cuts_match_the_per_species_loop():
    rng = random.Random(7)
    eligible = {
        g: {f"G{i}\tsp{i}": max(1, int(rng.paretovariate(0.6))) for i in range(300)}
        for g in list(c1_select.GROUPS)[:4]
    }
    cfg = c1_select.SelectionConfig(budget_per_group=200, species_cap=5, cap_overrides=())
    cuts = {g: rng.uniform(0.001, 0.5) for g in list(eligible)[:3]}
    got = c1_select.species_cuts(eligible, cuts, cfg, 2.0).to_pylist()
    want = []
    for group, per in eligible.items():
        if group not in cuts:
            continue
        for key, n in per.items():
            f = 4 * cfg.cap(group) * 2.0 / n
            if f < cuts[group]:
                genus, species = key.split("\t")
                cut = min(c1_select.HASH_MAX - 1, math.floor(f * c1_select.HASH_MAX))
                want.append({"grp": group, "genus": genus, "species": species, "cut": cut})
    assert want and got == want


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


def _selected_rows(n: int) -> list[dict]:
    rng = random.Random(3)
    rows = []
    for i in range(n):
        rows.append(
            {
                "uuid": f"{rng.getrandbits(64):016x}",
                "grp": rng.choice(sorted(c1_select.GROUPS)),
                "h": rng.getrandbits(64),
                **{r: f"{r}{i % 7}" for r in c1_select.RANKS},
                "species": f"Genus{i % 5} ep{i}",
                "genus": f"Genus{i % 5}",
                "species_binomial": f"Genus{i % 5} ep{i}",
                "common_name": f"name {i}",
                "common_name_en": f"Name {i}",
                "common_name_mechanism": "catalog",
                **(
                    {"image_path": f"s/{i}.parquet", "image_row": i, "sha256": "ab" * 32, "width": 300}
                    if i % 2
                    else {}
                ),
                **({"height": 301} if i % 2 else {}),
            }
        )
    return rows


@pytest.mark.parametrize("n", [0, 1, 257])
def test_manifest_table_equals_the_row_dict_build(n):
    selected = _selected_rows(n)
    reference = []
    for c in sorted(selected, key=lambda c: (c["grp"], c["h"], c["uuid"])):
        reference.append(
            {
                "id": c["uuid"],
                "group": c["grp"],
                "order_key": c["h"],
                **{r: c[r] for r in c1_select.RANKS if r != "species"},
                "species": c1_select._epithet(c["species"], c["genus"]),
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
    want = pa.Table.from_pylist(reference, schema=c1_select.MANIFEST_SCHEMA)
    got = c1_select._manifest_table(selected)
    assert got.equals(want)
    a, b = io.BytesIO(), io.BytesIO()
    pq.write_table(got, a)
    pq.write_table(want, b)
    assert a.getvalue() == b.getvalue()


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
    rng = random.Random(5)
    rows = [
        {
            "uuid": f"{rng.getrandbits(128):032x}",
            "kingdom": "Animalia",
            "phylum": "Chordata",
            "class": "Aves",
            "order": "Passeriformes",
            "family": f"Fam{k % 3}",
            "genus": f"Genus{k % 40}",
            "species": f"Genus{k % 40} sp{k % 40}",
            "scientific_name": f"Genus{k % 40} sp{k % 40}",
            "common_name": f"Bird {k % 40}",
            "resized_size": [300, 400],
        }
        for k in range(2000)
    ]
    cat = tmp_path / "catalog.parquet"
    pq.write_table(pa.Table.from_pylist(rows), cat)
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
