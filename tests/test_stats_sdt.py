"""Signal detection (§C.7): d′, c, the log-linear correction, the Φ(d′/2) table, AUC → d′."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import norm

from biovqa.metrics import stats


def test_dprime_and_criterion_match_scipy_on_hand_counts():
    # 40 hits / 10 misses, 15 false alarms / 35 correct rejections
    sd = stats.signal_detection(40, 10, 15, 35)
    h, f = 40.5 / 51, 15.5 / 51
    assert sd.hit_rate == pytest.approx(h)
    assert sd.false_alarm_rate == pytest.approx(f)
    assert sd.dprime == pytest.approx(norm.ppf(h) - norm.ppf(f), abs=1e-12)
    assert sd.criterion == pytest.approx(-0.5 * (norm.ppf(h) + norm.ppf(f)), abs=1e-12)
    assert stats.norm_ppf(0.975) == pytest.approx(norm.ppf(0.975), abs=1e-12)


def test_loglinear_correction_keeps_perfect_rates_finite():
    sd = stats.signal_detection(500, 0, 0, 500)  # HR = 1, FAR = 0 before correction
    assert sd.hit_rate == pytest.approx(500.5 / 501)
    assert sd.false_alarm_rate == pytest.approx(0.5 / 501)
    assert math.isfinite(sd.dprime) and sd.dprime == pytest.approx(2 * norm.ppf(500.5 / 501))
    assert sd.criterion == pytest.approx(0.0, abs=1e-12)
    # a constant "yes" on one species (500 same, 500 different): d' = 0 and c = -3.09 (Table 50)
    yes = stats.signal_detection(500, 0, 500, 0)
    assert yes.dprime == pytest.approx(0.0, abs=1e-12)
    assert yes.criterion == pytest.approx(-3.09, abs=0.005)


def test_correction_is_unconditional():
    # applied even when no rate is 0 or 1 (§C.7: "unconditionally")
    assert stats.signal_detection(30, 20, 20, 30).hit_rate == pytest.approx(30.5 / 51)


@pytest.mark.parametrize("dprime, bal", [(0.0, 0.5), (0.5, 0.599), (1.0, 0.691), (2.0, 0.841), (3.0, 0.933)])
def test_dprime_to_balanced_accuracy_table(dprime, bal):
    assert float(stats.dprime_to_balanced_accuracy(dprime)) == pytest.approx(bal, abs=5e-4)


def test_auc_to_dprime():
    assert float(stats.auc_to_dprime(0.5)) == pytest.approx(0.0)
    assert float(stats.auc_to_dprime(0.76)) == pytest.approx(math.sqrt(2) * norm.ppf(0.76))
    # Table 53: AUC .698 -> d' .733 (MegaDescriptor, random condition)
    assert float(stats.auc_to_dprime(0.698)) == pytest.approx(0.733, abs=0.002)
    assert float(stats.auc_to_dprime(0.247)) < 0


def test_roc_auc_with_ties():
    assert stats.roc_auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True]) == pytest.approx(0.75)
    assert stats.roc_auc([1, 1, 1, 1], [True, False, True, False]) == pytest.approx(0.5)
    assert math.isnan(stats.roc_auc([1, 2], [True, True]))


def test_binary_table_metrics_by_hand():
    m = stats.binary_table_metrics(tp=40, fn=10, fp=15, tn=35)
    assert m["accuracy"] == pytest.approx(0.75)
    assert m["balanced_accuracy"] == pytest.approx(0.5 * (0.8 + 0.7))
    assert m["mcc"] == pytest.approx((40 * 35 - 15 * 10) / math.sqrt(55 * 50 * 50 * 45))
    pe = (55 * 50 + 45 * 50) / 100**2
    assert m["kappa"] == pytest.approx((0.75 - pe) / (1 - pe))
    const = stats.binary_table_metrics(tp=50, fn=0, fp=50, tn=0)
    assert const["mcc"] == 0.0 and const["kappa"] == 0.0 and const["accuracy"] == 0.5


def test_vectorized_signal_detection_matches_scalar():
    h, f, d, c = stats.signal_detection(
        np.array([40, 500]), np.array([10, 0]), np.array([15, 500]), np.array([35, 0])
    )
    assert d[0] == pytest.approx(stats.signal_detection(40, 10, 15, 35).dprime)
    assert d[1] == pytest.approx(0.0, abs=1e-12)
