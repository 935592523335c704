"""Fixed-seed percentile bootstrap (§L.3): determinism, strata, clusters, category counts."""

from __future__ import annotations

import numpy as np
import pytest

from biovqa.metrics import stats


def test_same_seed_same_interval_and_other_seed_differs():
    v = np.random.default_rng(0).random(300)
    a = stats.bootstrap_mean_ci(v, n_boot=1000, seed=42)
    b = stats.bootstrap_mean_ci(v, n_boot=1000, seed=42)
    c = stats.bootstrap_mean_ci(v, n_boot=1000, seed=7)
    assert a == b
    assert a != c
    assert a[0] < v.mean() < a[1]


def test_interval_width_matches_the_standard_error():
    v = np.random.default_rng(1).random(2000)
    lo, hi = stats.bootstrap_mean_ci(v, n_boot=2000)
    se = v.std(ddof=1) / np.sqrt(v.size)
    assert (hi - lo) == pytest.approx(2 * 1.96 * se, rel=0.1)


def test_binary_values_use_exact_multinomial_and_agree_with_index_resampling():
    v = np.r_[np.ones(600), np.zeros(400)]
    lo, hi = stats.bootstrap_mean_ci(v, n_boot=4000)
    se = np.sqrt(0.6 * 0.4 / 1000)
    assert lo == pytest.approx(0.6 - 1.96 * se, abs=0.006)
    assert hi == pytest.approx(0.6 + 1.96 * se, abs=0.006)


def test_cluster_bootstrap_is_wider_when_items_share_a_cluster():
    rng = np.random.default_rng(3)
    plate_effect = rng.normal(0, 1, 40)
    plates = np.repeat(np.arange(40), 25)
    v = plate_effect[plates] + rng.normal(0, 0.2, plates.size)
    naive = stats.bootstrap_mean_ci(v, n_boot=1000)
    clustered = stats.bootstrap_mean_ci(v, n_boot=1000, clusters=plates)
    assert (clustered[1] - clustered[0]) > 3 * (naive[1] - naive[0])
    # a cluster of one item each (keys sorting in item order) is exactly the plain item bootstrap
    singletons = [f"{i:05d}" for i in range(v.size)]
    assert stats.bootstrap_mean_ci(v, n_boot=500, clusters=singletons) == stats.bootstrap_mean_ci(
        v, n_boot=500
    )


def test_strata_keep_their_sizes():
    # stratum a is all ones, stratum b all zeros: every resample keeps 100 + 300 items -> mean exactly .25
    v = np.r_[np.ones(100), np.zeros(300)]
    s = np.r_[["a"] * 100, ["b"] * 300]
    draws = stats.bootstrap_mean(v, n_boot=200, strata=s)
    assert np.allclose(draws, 0.25)


def test_category_count_bootstrap_keeps_stratum_sizes_and_is_deterministic():
    counts = np.array([[300, 200, 0], [10, 40, 50]])
    a = stats.bootstrap_category_counts(counts, n_boot=500, seed=42)
    b = stats.bootstrap_category_counts(counts, n_boot=500, seed=42)
    assert a.shape == (500, 2, 3)
    assert np.array_equal(a, b)
    assert (a.sum(axis=2) == counts.sum(axis=1)).all()
    assert (a[:, 0, 2] == 0).all()  # an empty category stays empty
    assert a[:, 0, 0].mean() == pytest.approx(300, rel=0.02)


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="NaN"):
        stats.bootstrap_mean([1.0, float("nan")])
    with pytest.raises(ValueError, match="strata"):
        stats.bootstrap_mean([1.0, 2.0], strata=["a"])
    assert np.isnan(stats.bootstrap_mean([], n_boot=3)).all()


def test_large_strata_use_the_clt_limit_of_the_same_bootstrap(monkeypatch):
    v = np.random.default_rng(5).random(4000)  # continuous: > 256 distinct values
    exact = stats.bootstrap_mean_ci(v, n_boot=2000)
    monkeypatch.setattr(stats, "MAX_INDEX_DRAWS", 1000)
    approx = stats.bootstrap_mean_ci(v, n_boot=2000)
    assert approx != exact
    assert approx == pytest.approx(exact, abs=0.002)
    assert approx == stats.bootstrap_mean_ci(v, n_boot=2000)  # still deterministic
    plates = np.random.default_rng(6).integers(0, 400, v.size)  # unequal cluster sizes
    exact_c = stats.bootstrap_mean_ci(v, n_boot=2000, clusters=[f"{p:04d}" for p in plates])
    monkeypatch.setattr(stats, "MAX_INDEX_DRAWS", 10)
    approx_c = stats.bootstrap_mean_ci(v, n_boot=2000, clusters=[f"{p:04d}" for p in plates])
    assert approx_c == pytest.approx(exact_c, abs=0.004)
