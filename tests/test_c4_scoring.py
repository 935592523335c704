"""C4 scorer (Contract 4): confusion cells, pooling over species, d′/c, accuracy CI, floor, unparsed."""

from __future__ import annotations

import pyarrow as pa
import pytest
from scipy.stats import norm

from biovqa.metrics import c4, score_task
from biovqa.schema import QUESTION_SCHEMA, empty_record


def c4_table(spec: dict[str, tuple[int, int, int, int]], condition: str = "random"):
    """Rows + replies with the given (hits, misses, false alarms, correct rejections) per species."""
    rows, replies = [], []
    for sp, (hit, miss, fa, cr) in spec.items():
        cells = [(True, "Yes")] * hit + [(True, "No")] * miss + [(False, "Yes")] * fa + [(False, "No")] * cr
        for i, (same, reply) in enumerate(cells):
            r = empty_record()
            r.update(
                qid=f"c4.{condition}/{sp}/{i:05d}",
                component="c4",
                task=f"c4.{condition}",
                family=condition,
                source=sp,
                answer_form="yes_no",
                answer="Yes" if same else "No",
            )
            r["c4"] = {"catalog": sp, "species": sp, "condition": condition, "same": same}
            rows.append(r)
            replies.append(reply)
    return pa.Table.from_pylist(rows, schema=QUESTION_SCHEMA).drop_columns(["image"]), replies


def z(p):
    return norm.ppf(p)


def test_pooled_counts_and_dprime_by_hand():
    table, replies = c4_table({"leopard": (40, 10, 15, 35), "beluga": (30, 20, 25, 25)})
    m = score_task("c4.random", table, replies).metrics
    assert (m["hits"], m["misses"], m["false_alarms"], m["correct_rejections"]) == (70, 30, 40, 60)
    h, f = 70.5 / 101, 40.5 / 101
    assert m["dprime"] == pytest.approx(z(h) - z(f))
    assert m["criterion"] == pytest.approx(-0.5 * (z(h) + z(f)))
    assert m["headline"] == m["dprime"] and m["headline_metric"] == "dprime"
    assert m["accuracy"] == pytest.approx(130 / 200)
    assert m["balanced_accuracy"] == pytest.approx(0.5 * (0.7 + 0.6))
    assert m["n"] == 200 and m["parse_rate"] == 1.0
    leo = m["per_species"]["leopard"]
    assert leo["dprime"] == pytest.approx(z(40.5 / 51) - z(15.5 / 51))
    assert m["dprime_species_mean"] == pytest.approx(
        0.5 * (leo["dprime"] + m["per_species"]["beluga"]["dprime"])
    )


def test_items_record_cell_tier_and_score():
    table, replies = c4_table({"hyena": (1, 1, 1, 1)})
    replies[0] = "Yes, they are the same animal."
    items = score_task("c4.random", table, replies).items
    assert items["cell"] == ["hit", "miss", "false_alarm", "correct_rejection"]
    assert items["parse_tier"] == ["tier2", "tier1", "tier1", "tier1"]
    assert items["score"] == [1.0, 0.0, 0.0, 1.0]
    assert items["parsed"] == ["yes", "no", "yes", "no"]


def test_constant_yes_is_the_floor():
    table, replies = c4_table({sp: (500, 0, 500, 0) for sp in ("a", "b", "c", "d", "e")})
    m = score_task("c4.random", table, replies).metrics
    assert m["dprime"] == pytest.approx(0.0, abs=1e-12)
    assert m["accuracy"] == 0.5
    assert m["floor"] == pytest.approx(0.0, abs=1e-12) and m["floor_accuracy"] == 0.5
    # pooled correction over 2500 same pairs vs the per-species mean at 500 (Table 50 prints -3.09)
    assert m["criterion"] == pytest.approx(-z(2500.5 / 2501))
    assert m["criterion_species_mean"] == pytest.approx(-3.09, abs=0.005)
    assert m["mcc"] == 0.0 and m["kappa"] == 0.0


def test_unparsed_replies_stay_out_of_sdt_but_count_against_accuracy():
    table, replies = c4_table({"zebra": (10, 0, 0, 10)})
    replies[0] = "I am not sure."  # a same pair: refusal
    replies[10] = None  # a different pair: unanswered
    ts = score_task("c4.random", table, replies)
    m = ts.metrics
    assert (m["hits"], m["unparsed_same"], m["unparsed_different"], m["correct_rejections"]) == (9, 1, 1, 9)
    assert m["dprime"] == pytest.approx(z(9.5 / 10) - z(0.5 / 10))  # refusal is not a miss
    assert m["accuracy"] == pytest.approx(18 / 20)
    assert m["balanced_accuracy"] == pytest.approx(0.9)
    assert m["parse_rate"] == pytest.approx(0.9)
    assert m["parse_status"] == {"empty": 1, "ok": 18, "refusal": 1}
    assert ts.items["score"][0] == 0.0 and ts.items["parse_tier"][0] == "unparsed"


def test_bootstrap_interval_is_deterministic_and_brackets_the_estimate():
    table, replies = c4_table({"leopard": (40, 10, 15, 35), "beluga": (30, 20, 25, 25)})
    a = score_task("c4.random", table, replies).metrics
    b = score_task("c4.random", table, replies).metrics
    assert a["accuracy_ci"] == b["accuracy_ci"] and a["dprime_ci"] == b["dprime_ci"]
    assert a["accuracy_ci"][0] < a["accuracy"] < a["accuracy_ci"][1]
    assert a["dprime_ci"][0] < a["dprime"] < a["dprime_ci"][1]
    assert a["bootstrap"]["n_boot"] == 2000


def test_shards_add_up_to_the_whole():
    table, replies = c4_table({"leopard": (40, 10, 15, 35), "beluga": (30, 20, 25, 25)})
    whole = score_task("c4.random", table, replies).metrics
    parts = []
    for lo, hi in ((0, 77), (77, 200)):
        items, _ = c4.item_columns(table.slice(lo, hi - lo), replies[lo:hi])
        parts.append(c4.item_stats(items, replies[lo:hi]))
    merged = c4.score_shards("c4.random", parts)
    assert merged == whole


def test_row_without_gold_is_reported_not_dropped():
    table, replies = c4_table({"leopard": (2, 0, 0, 2)})
    rows = table.to_pylist()
    rows[1]["c4"]["same"] = None
    rows[1]["answer"] = None
    bad = pa.Table.from_pylist(rows, schema=table.schema)
    m = score_task("c4.random", bad, replies).metrics
    assert m["n"] == 4 and m["n_invalid"] == 1
    assert "row 1" in m["errors"][0] and "c4.random/leopard/00001" in m["errors"][0]


def test_length_mismatch_is_an_error():
    table, replies = c4_table({"leopard": (2, 0, 0, 2)})
    with pytest.raises(ValueError, match="4 question rows but 3 responses"):
        score_task("c4.random", table, replies[:3])


def test_score_valued_verdicts_give_auc_and_dprime():
    from scipy.stats import norm as _norm

    table, _ = c4_table({"zebra": (2, 0, 2, 0)})  # rows: same, same, different, different
    got = c4.score_similarity(table, [0.9, 0.4, 0.5, 0.1])
    # pairs (same > different): 0.9>0.5, 0.9>0.1, 0.4<0.5, 0.4>0.1 -> AUC 3/4
    assert got["auc"] == pytest.approx(0.75)
    assert got["dprime"] == pytest.approx(2**0.5 * _norm.ppf(0.75))
    assert got["per_species"]["zebra"]["n"] == 4
    none = c4.score_similarity(table, [0.9, None, float("nan"), 0.1])
    assert none["n"] == 2 and none["n_excluded"] == 2 and none["auc"] == 1.0
