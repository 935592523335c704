"""`biovqa report`: tables, plots and the §J cross-model analysis on hand-made scorecards."""

from __future__ import annotations

import json

import numpy as np
import pytest

from biovqa.report.analysis import cross_model, holm
from biovqa.report.build import write_report
from biovqa.tasks import TASKS


def _scorecard(quality: float, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    card = {}
    for t in TASKS.values():
        v = float(np.clip(quality + rng.normal(0, 0.05), 0, 1))
        m = {"headline": v, "headline_metric": t.headline_metric, "parse_rate": 1.0, "n": 100, "floor": 0.1}
        if t.component == "c1":
            m.update(em=v, em_soft=v + 0.01, wup=v + 0.2, lin=v + 0.1, severity=2.0)
        if t.component == "c4":
            m.update(
                accuracy=0.5 + v / 4,
                criterion_c=0.1,
                per_species={"zebra": {"dprime": v, "criterion_c": 0.0, "accuracy": 0.6}},
            )
        card[t.id] = m
    return card


def _runs(tmp_path, qualities):
    dirs = []
    for k, q in enumerate(qualities):
        d = tmp_path / f"run{k}"
        (d / "scores").mkdir(parents=True)
        (d / "scores" / "scorecard.json").write_text(json.dumps(_scorecard(q, k)))
        (d / "run.json").write_text(json.dumps({"model": f"model-{k}"}))
        dirs.append(d)
    return dirs


def test_report_writes_markdown_html_and_pngs(tmp_path):
    out = tmp_path / "report"
    written = write_report(
        _runs(tmp_path, [0.2, 0.5, 0.8]), out, command="biovqa report r0 r1 r2 --out report"
    )
    md = written["markdown"].read_text()
    assert "| model | phy | cls |" in md and "| Floor |" in md
    assert "biovqa report r0 r1 r2 --out report" in md and "sha256" in md
    assert "**" in md  # best per column marked
    assert "Cross-component analysis" in md and "label-permutation p" in md
    html = written["html"].read_text()
    assert html.count("data:image/png;base64,") == len(written["figures"]) >= 4
    assert 'src="c1_' not in html  # self-contained
    for png in written["figures"]:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_report_with_two_models_skips_cross_analysis(tmp_path):
    written = write_report(_runs(tmp_path, [0.3, 0.6]), tmp_path / "r")
    assert written["cross"] is None
    assert "Needs three or more models" in written["markdown"].read_text()


def test_report_names_a_missing_scorecard(tmp_path):
    with pytest.raises(FileNotFoundError, match="scorecard.json"):
        write_report([tmp_path], tmp_path / "out")


def test_holm_matches_hand_computation():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_cross_model_block_structure_and_pc1():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=8), rng.normal(size=8)
    # three tasks driven by factor a (component x), three by factor b (component y)
    matrix = np.column_stack([a, a * 2 + 0.01 * rng.normal(size=8), a + 1, b, b * 3, b - 2])
    res = cross_model(matrix, [f"t{i}" for i in range(6)], ["x"] * 3 + ["y"] * 3)
    assert res.within_mean > 0.9 and res.within_mean > res.across_mean
    assert res.permutation_p < 0.2
    one_factor = np.column_stack([a, 2 * a, a + 5])
    assert cross_model(one_factor, ["p", "q", "r"], ["x", "y", "z"]).pc1_share == pytest.approx(1.0)
