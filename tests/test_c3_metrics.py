"""C3 scorers (§C.6, §G, Table 3): worked examples, hand-computed metrics, floors, lift, shard merging."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest

from biovqa.metrics import c3
from biovqa.metrics.common import merge_stats
from biovqa.schema import QUESTION_SCHEMA, empty_record

RPOS_OPTIONS = ["top-left", "right", "bottom", "bottom-right"]


def _table(task: str, rows: list[dict]) -> pa.Table:
    """Question rows of one C3 task; each dict holds ``c3`` fields plus optional top-level ones."""
    recs = []
    for i, fields in enumerate(rows):
        rec = empty_record()
        top = {k: v for k, v in fields.items() if k in QUESTION_SCHEMA.names}
        rec.update(
            qid=f"{task}/test/{i:04d}", component="c3", task=task, source="test", answer_form="integer"
        )
        rec["c3"] = {k: v for k, v in fields.items() if k not in QUESTION_SCHEMA.names}
        rec.update(top)
        recs.append(rec)
    return pa.Table.from_pylist(recs, schema=QUESTION_SCHEMA)


def _same(a, b) -> bool:
    """Equality of metric values, NaN-aware and recursive."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


# ------------------------------------------------------------------------------------------- counting
CAS_TABLE = [  # §C.6: true, pred, cas, EM
    (10, 10, 1.000, 1),
    (10, 12, 0.800, 0),
    (10, 15, 0.500, 0),
    (10, 20, 0.000, 0),
    (10, 90, 0.000, 0),
    (100, 95, 0.950, 0),
]


@pytest.mark.parametrize(("gold", "pred", "expected", "em"), CAS_TABLE)
def test_cas_worked_table(gold, pred, expected, em):
    assert c3.cas(pred, gold) == pytest.approx(expected, abs=1e-12)


def test_counting_scores_the_worked_table_end_to_end():
    table = _table(
        "c3.counting",
        [{"corpus": "waid", "gold_value": g, "plate_id": f"p{i}"} for i, (g, *_) in enumerate(CAS_TABLE)],
    )
    res = c3.score_task("c3.counting", table, [str(p) for _, p, _, _ in CAS_TABLE])
    assert res.items["score"] == pytest.approx([row[2] for row in CAS_TABLE])
    assert res.items["em"] == [bool(row[3]) for row in CAS_TABLE]
    assert res.metrics["cas"] == pytest.approx(np.mean([row[2] for row in CAS_TABLE]))
    assert res.metrics["em"] == pytest.approx(1 / 6)
    lo, hi = res.metrics["cas_ci"]
    assert lo <= res.metrics["cas"] <= hi


def test_counting_macro_average_over_corpora_and_floor():
    # corpus a: golds 3, 3, 5 (mode 3); corpus b: 10, 12, 12 (mode 12)
    rows = [
        {"corpus": c, "gold_value": g, "plate_id": f"{c}{i}"}
        for i, (c, g) in enumerate([("a", 3), ("a", 3), ("a", 5), ("b", 10), ("b", 12), ("b", 12)])
    ]
    table = _table("c3.counting", rows)
    res = c3.score_task("c3.counting", table, ["3", "4", "5", "10", "12", "6"])
    cas_a = np.mean([1, 1 - 1 / 3, 1])
    cas_b = np.mean([1, 1, 0.5])
    assert res.metrics["cas"] == pytest.approx((cas_a + cas_b) / 2)
    assert res.metrics["cas_micro"] == pytest.approx(np.mean([1, 1 - 1 / 3, 1, 1, 1, 0.5]))
    # floor: per-corpus modal counts 3 and 12 → a: 1, 1, 0.6; b: 0.8, 1, 1 → macro 0.9
    assert res.metrics["floor"] == pytest.approx(0.9)
    assert res.metrics["lift"] == pytest.approx((res.metrics["cas"] - 0.9) / 0.1)
    assert res.metrics["lift_raw"] == pytest.approx(res.metrics["cas"] - 0.9)
    assert c3.floor_prediction("c3.counting", table) == ["3", "3", "3", "12", "12", "12"]


def test_counting_constant_answer_has_zero_rank_correlation():
    table = _table("c3.counting", [{"corpus": "a", "gold_value": g} for g in (2, 4, 6, 8)])
    res = c3.score_task("c3.counting", table, ["5"] * 4)
    assert res.metrics["spearman_by_corpus"]["a"] == 0.0
    perfect = c3.score_task("c3.counting", table, ["2", "4", "6", "9"])
    assert perfect.metrics["spearman_by_corpus"]["a"] == pytest.approx(1.0)


def test_unparsed_rows_are_kept_out_and_the_floor_refit_on_parsed_rows():
    table = _table("c3.counting", [{"corpus": "a", "gold_value": g} for g in (2, 2, 9, 9, 9)])
    res = c3.score_task("c3.counting", table, ["2", "2", "many", None, "There are 5-7"])
    m = res.metrics
    assert m["n_parsed"] == 2 and m["parse_rate"] == pytest.approx(0.4)
    assert m["parse_status"] == {"empty": 1, "no_integer": 1, "ok": 2, "range": 1}
    assert m["cas"] == 1.0 and m["floor"] == 1.0  # the floor sees only the two parsed rows (gold 2, 2)
    assert math.isnan(res.items["score"][2]) and res.items["parse_ok"][2] is False


# ------------------------------------------------------------------------------ balanced accuracy tasks
def test_balanced_accuracy_by_hand():
    # confusion: gold A ×4 (pred A,A,A,B), gold B ×2 (pred B,A), gold C ×1 (pred C)
    gold = ["A", "A", "A", "A", "B", "B", "C"]
    pred = ["A", "A", "A", "B", "B", "A", "C"]
    assert c3.balanced_accuracy(pred, gold) == pytest.approx((3 / 4 + 1 / 2 + 1) / 3)


@pytest.mark.parametrize("task", ["c3.relative_counting", "c3.relative_distance"])
def test_choice_tasks(task):
    gold = [0, 0, 0, 0, 1, 1, 2]
    replies = ["Image A", "A", "(A)", "Beetle B", "B", "A", "C", "C"][:7]
    table = _table(task, [{"measurement": "most", "answer_index": g} for g in gold])
    res = c3.score_task(task, table, replies)
    m = res.metrics
    assert m["balanced_accuracy"] == pytest.approx((3 / 4 + 1 / 2 + 1) / 3)
    assert m["headline"] == m["balanced_accuracy"]
    assert m["accuracy"] == pytest.approx(5 / 7)
    # majority-class floor: constant A → recall 1 on A, 0 on B and C → 1/3
    assert m["floor"] == pytest.approx(1 / 3) and m["floor_answer"] == "A"
    assert m["answer_share"]["A"] == pytest.approx(4 / 7)
    assert c3.floor_prediction(task, table) == ["A"] * 7


def test_relative_position_metrics_and_floor():
    gold = ["top-left", "top-left", "right", "bottom", "bottom-right"]
    table = _table("c3.relative_position", [{"direction": g, "options": RPOS_OPTIONS} for g in gold])
    replies = ["top-left", "right", "right", "bottom-right", "bottom-right"]
    m = c3.score_task("c3.relative_position", table, replies).metrics
    assert m["accuracy"] == pytest.approx(3 / 5)
    assert m["balanced_accuracy"] == pytest.approx((1 / 2 + 1 + 0 + 1) / 4)
    # errors: top-left→right is 3 steps (135°), bottom→bottom-right 1 step (45°)
    assert m["angular_error"] == pytest.approx((135 + 45) / 5)
    assert m["within45"] == pytest.approx(4 / 5)
    # floor: top-left is the most frequent gold and is offered on every row → recall 1 on top-left only
    assert m["floor"] == pytest.approx(1 / 4) and m["floor_accuracy"] == pytest.approx(2 / 5)


def test_relative_position_reply_not_offered_is_unparsed():
    table = _table("c3.relative_position", [{"direction": "right", "options": RPOS_OPTIONS}])
    res = c3.score_task("c3.relative_position", table, ["left"])
    assert res.items["parse_status"] == ["not_offered"] and res.metrics["n_parsed"] == 0


# ------------------------------------------------------------------------------------ absolute distance
def test_acc20_edges():
    gold = np.array([1.0, 1.0, 1.0, 1.0, 0.5, 0.5])
    pred = np.array([1.2, 0.8, 1.2000001, 0.79, 0.6, 0.4])
    assert c3.within20(pred, gold).tolist() == [1, 1, 0, 0, 1, 1]


def test_absolute_distance_metrics():
    rows = [
        {"gold_value": g, "measurement": t, "object_type": "beetle", "plate_id": p}
        for g, t, p in [
            (1.0, "length", "p1"),
            (1.1, "length", "p1"),
            (2.0, "length", "p2"),
            (0.5, "width", "p2"),
            (0.6, "width", "p3"),
        ]
    ]
    table = _table("c3.absolute_distance", rows)
    replies = ["1.0 cm", "1.5 cm", "2.2 cm", "5 mm", "about 0.9 centimeters"]
    m = c3.score_task("c3.absolute_distance", table, replies).metrics
    assert m["acc20"] == pytest.approx(3 / 5)
    assert m["by_type"]["beetle/length"]["rho"] == pytest.approx(1.0)
    assert m["by_type"]["beetle/width"]["rho"] == pytest.approx(1.0)
    assert m["rho_within"] == pytest.approx(1.0)
    # compression: width preds 0.5, 0.9 (sd .2) vs gold sd .05 → κ = 1 − 4 = −3
    assert m["by_type"]["beetle/width"]["compression_kappa"] == pytest.approx(-3.0)
    # floor: length golds 1.0, 1.1, 2.0 → best constant 0.88 covers two; width 0.5, 0.6 → 0.48 covers both
    assert m["floor_constants"] == {"beetle/length": pytest.approx(0.88), "beetle/width": pytest.approx(0.48)}
    assert m["floor"] == pytest.approx(4 / 5)
    lo, hi = m["acc20_ci"]
    assert 0 <= lo <= m["acc20"] <= hi <= 1


def test_constant_answer_compression_and_calibration():
    golds = [0.5, 0.7, 0.9, 1.1]
    table = _table("c3.absolute_distance", [{"gold_value": g, "measurement": "length"} for g in golds])
    m = c3.score_task("c3.absolute_distance", table, ["0.8 cm"] * 4).metrics
    assert m["compression_kappa"] == pytest.approx(1.0) and m["rho_within"] == 0.0
    # a model that reads the image on a scale off by ×2: rho 1, acc@20 0, calibrated acc@20 1
    m2 = c3.score_task("c3.absolute_distance", table, [f"{2 * g} cm" for g in golds]).metrics
    assert m2["acc20"] == 0.0 and m2["acc20_calibrated"] == 1.0 and m2["rho_within"] == pytest.approx(1.0)


# ------------------------------------------------------------------------------------------ localization
def test_localization_charges_unparsed_and_detects_convention():
    golds = [[0, 0, 50, 50], [50, 50, 50, 50], [10, 10, 80, 80], [20, 30, 40, 50]]
    table = _table(
        "c3.localization", [{"gold_box": g, "image_width": 100, "image_height": 200} for g in golds]
    )
    # the model answers in xyxy normalized to [0, 1000] (x by width, y by height)
    replies = [
        "[0, 0, 500, 250]",
        "[500, 250, 1000, 500]",
        "The animal is in the middle",
        "[200, 150, 600, 400]",
    ]
    res = c3.score_task("c3.localization", table, replies)
    m = res.metrics
    assert m["convention"] == "n1000_xyxy"
    assert m["mean_iou_parsed"] == pytest.approx(1.0)
    assert m["mean_iou"] == pytest.approx(3 / 4) and m["headline"] == m["mean_iou"]
    assert m["acc@0.90"] == 1.0 and m["parse_rate"] == pytest.approx(3 / 4)
    assert res.items["score"] == pytest.approx([1.0, 1.0, 0.0, 1.0])
    forced = c3.score_task("c3.localization", table, replies, resources={"box_convention": "abs_xywh"})
    assert forced.metrics["convention"] == "abs_xywh" and forced.metrics["mean_iou"] < 0.5


def test_localization_floor_is_the_better_of_mean_box_and_whole_image():
    golds = [[0, 0, 50, 50], [50, 50, 50, 50]]
    table = _table(
        "c3.localization", [{"gold_box": g, "image_width": 100, "image_height": 100} for g in golds]
    )
    m = c3.score_task("c3.localization", table, ["[0, 0, 50, 50]", "[50, 50, 50, 50]"]).metrics
    # mean box [25, 25, 50, 50] → IoU 625 / 4375 = 1/7 each; whole image → 2500 / 10000 = .25 each
    assert m["floor"] == pytest.approx(0.25)
    assert c3.floor_prediction("c3.localization", table) == ["[0.0, 0.0, 100.0, 100.0]"] * 2
    golds = [[10, 10, 20, 20], [12, 12, 20, 20]]
    table = _table(
        "c3.localization", [{"gold_box": g, "image_width": 100, "image_height": 100} for g in golds]
    )
    assert c3.floor_prediction("c3.localization", table) == ["[11.0, 11.0, 20.0, 20.0]"] * 2


# ---------------------------------------------------------------------------------------------- viewpoint
def test_viewpoint_credit_table41():
    assert [c3.viewpoint_credit("left", a) for a in ("left", "frontleft", "front", "right")] == [
        1.0,
        0.25,
        0.10,
        0.0,
    ]
    assert c3.viewpoint_credit("up", "front") == 0.0 and c3.viewpoint_credit("up", "up") == 1.0


def test_viewpoint_constant_right_reproduces_the_papers_macro_floor():
    # every one of the ten labels present, right the most frequent: constant right → macroVAS 1.7/10 = .170
    labels = [
        "front",
        "back",
        "left",
        "right",
        "right",
        "right",
        "frontleft",
        "frontright",
        "backleft",
        "backright",
        "up",
        "down",
    ]
    table = _table("c3.viewpoint", [{"viewpoint": v} for v in labels])
    m = c3.score_task("c3.viewpoint", table, ["right"] * len(labels)).metrics
    assert m["macro_vas"] == pytest.approx(0.170)
    assert m["em"] == pytest.approx(3 / 12)
    assert m["vas"] == pytest.approx((3 + 2 * 0.25 + 2 * 0.1) / 12)
    assert m["floor"] == pytest.approx(0.170) and m["floor_answer"] == "right"
    assert m["kappa_vas"] == pytest.approx(0.0) and m["lift"] == pytest.approx(0.0)


def test_viewpoint_over_class_and_angular_error():
    labels = ["left", "left", "right", "up"]
    table = _table("c3.viewpoint", [{"viewpoint": v, "tier": "box"} for v in labels])
    m = c3.score_task("c3.viewpoint", table, ["front-left", "left", "Back Right", "down"]).metrics
    # front-left for left and back-right for right both add a component the gold lacks
    assert m["outcome_share"]["over"] == pytest.approx(2 / 4)
    assert m["outcome_share"]["off_ring"] == pytest.approx(1 / 4)
    # ring rows: 45°, 0°, 45° → mean 30°, over 3 of 4 rows
    assert m["angular_error"] == pytest.approx(30.0) and m["angular_coverage"] == pytest.approx(3 / 4)
    # macro over gold labels: left (0.25 + 1)/2, right 0.25, up 0
    assert m["macro_vas"] == pytest.approx(((0.25 + 1) / 2 + 0.25 + 0) / 3)


# ---------------------------------------------------------------------------------------------------- OCR
def test_ocr_metrics_and_constant_string_floor():
    golds = ["A00000012345", "A00000012399", "A00000054345"]
    table = _table("c3.ocr", [{"code": g} for g in golds])
    res = c3.score_task("c3.ocr", table, ["A00000012345", "A00000012300", "no code here"])
    m = res.metrics
    assert m["exact_match"] == pytest.approx(1 / 2)
    assert m["char_acc"] == pytest.approx((1 + 10 / 12) / 2)
    assert m["suffix_char_acc"] == pytest.approx((1 + 4 / 6) / 2)
    assert m["inflation"] == pytest.approx(m["char_acc"] - m["suffix_char_acc"])
    # floor on the two parsed rows: per-position modes of A00000012345 / A00000012399 (ties → smaller)
    assert m["floor_answer"] == "A00000012345"
    assert m["floor"] == pytest.approx(1 / 2)
    full = c3.floor_prediction("c3.ocr", table)
    assert full == ["A00000012345"] * 3
    fm = c3.score_task("c3.ocr", table, full).metrics
    assert fm["floor_suffix_char_acc"] == pytest.approx((1 + 4 / 6 + 4 / 6) / 3)


# ------------------------------------------------------------------------ floors, shards, bad rows, determinism
def _demo_tables() -> dict[str, tuple[pa.Table, list]]:
    rng = np.random.default_rng(7)
    n = 40
    out = {}
    counts = rng.integers(1, 30, n)
    out["c3.counting"] = (
        _table(
            "c3.counting",
            [
                {
                    "corpus": ["waid", "bob"][i % 2],
                    "gold_value": int(c),
                    "plate_id": f"p{i // 3}",
                    "tier": "easy",
                }
                for i, c in enumerate(counts)
            ],
        ),
        [str(int(c) + int(rng.integers(-3, 4))) for c in counts],
    )
    for task in ("c3.relative_counting", "c3.relative_distance"):
        gold = rng.integers(0, 4, n)
        out[task] = (
            _table(task, [{"answer_index": int(g), "measurement": "most"} for g in gold]),
            [["A", "B", "C", "D"][int(rng.integers(0, 4))] for _ in gold],
        )
    lengths = rng.uniform(0.3, 1.5, n)
    out["c3.absolute_distance"] = (
        _table(
            "c3.absolute_distance",
            [
                {"gold_value": float(g), "measurement": ["length", "width"][i % 2], "plate_id": f"p{i // 4}"}
                for i, g in enumerate(lengths)
            ],
        ),
        [f"{g * rng.uniform(0.7, 1.3):.2f} cm" for g in lengths],
    )
    boxes = [
        [
            float(rng.uniform(0, 300)),
            float(rng.uniform(0, 300)),
            float(rng.uniform(50, 300)),
            float(rng.uniform(50, 300)),
        ]
        for _ in range(n)
    ]
    out["c3.localization"] = (
        _table("c3.localization", [{"gold_box": b, "image_width": 640, "image_height": 480} for b in boxes]),
        [
            f"[{b[0] + 10:.0f}, {b[1]:.0f}, {b[2]:.0f}, {b[3]:.0f}]" if i % 5 else "no idea"
            for i, b in enumerate(boxes)
        ],
    )
    dirs = ["top", "bottom", "left", "right", "top-left", "top-right", "bottom-left", "bottom-right"]
    gold_dirs = [dirs[int(k)] for k in rng.integers(0, 8, n)]
    opts = [[g, *[d for d in dirs if d != g][:3]] for g in gold_dirs]
    out["c3.relative_position"] = (
        _table(
            "c3.relative_position",
            [{"direction": g, "options": o} for g, o in zip(gold_dirs, opts, strict=True)],
        ),
        [o[int(rng.integers(0, 4))] for o in opts],
    )
    vps = ["front", "back", "left", "right", "frontleft", "frontright", "backleft", "backright", "up", "down"]
    gold_vp = [vps[int(k)] for k in rng.integers(0, 10, n)]
    out["c3.viewpoint"] = (
        _table("c3.viewpoint", [{"viewpoint": v, "tier": "box"} for v in gold_vp]),
        [vps[int(k)] for k in rng.integers(0, 10, n)],
    )
    codes = [f"A00000{int(k):06d}" for k in rng.integers(0, 999999, n)]
    out["c3.ocr"] = (_table("c3.ocr", [{"code": c} for c in codes]), [c[:-2] + "00" for c in codes])
    return out


DEMO = _demo_tables()


@pytest.mark.parametrize("task", c3.TASKS)
def test_scoring_floor_predictions_reproduces_the_floor(task):
    table, _ = DEMO[task]
    replies = c3.floor_prediction(task, table)
    m = c3.score_task(task, table, replies).metrics
    assert m["parse_rate"] == 1.0
    assert m["headline"] == pytest.approx(m["floor"], abs=1e-12)
    assert m["lift"] == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize("task", c3.TASKS)
def test_shard_stats_merge_to_the_whole(task):
    table, replies = DEMO[task]
    whole = c3.score_task(task, table, replies).metrics
    shards = []
    for lo, hi in ((0, 13), (13, 27), (27, 40)):
        _, st, _ = c3.item_stats(task, table.slice(lo, hi - lo), replies[lo:hi])
        shards.append(st)
    merged = c3.score_shards(task, shards)
    assert _same(merged, whole)
    assert merge_stats(merge_stats(shards[0], shards[1]), shards[2])["n"] == 40


@pytest.mark.parametrize("task", c3.TASKS)
def test_deterministic(task):
    table, replies = DEMO[task]
    a = c3.score_task(task, table, replies)
    b = c3.score_task(task, table, replies)
    assert _same(a.metrics, b.metrics) and _same(a.items, b.items)
    assert set(a.items) >= {"parsed", "parse_ok", "parse_status", "score", "gold"}
    assert all(len(v) == table.num_rows for v in a.items.values())


@pytest.mark.parametrize("task", c3.TASKS)
def test_floor_prediction_on_a_schema_inferred_from_dicts(task):
    # the floor baseline model passes pa.Table.from_pylist(rows) without the question schema
    table, _ = DEMO[task]
    rows = table.to_pylist()
    for r in rows:
        r["image_ref"] = None
    inferred = pa.Table.from_pylist(rows)
    assert c3.floor_prediction(task, inferred) == c3.floor_prediction(task, table)


def test_bad_rows_are_named_counted_and_excluded():
    rows = [{"viewpoint": "left"}, {"viewpoint": "upleft"}, {"viewpoint": None}, {"viewpoint": "right"}]
    table = _table("c3.viewpoint", rows)
    res = c3.score_task("c3.viewpoint", table, ["left", "left", "left", "right"])
    m = res.metrics
    assert m["n_invalid"] == 2 and m["n_errors"] == 2 and m["n_valid"] == 2
    assert "c3.viewpoint/test/0001" in m["errors"][0] and "upleft" in m["errors"][0]
    assert res.items["parse_status"] == ["ok", "invalid_row", "invalid_row", "ok"]
    assert m["em"] == 1.0 and m["parse_rate"] == 1.0
    assert c3.floor_prediction("c3.viewpoint", table)[1] is None


def test_unknown_task_and_length_mismatch_fail_clearly():
    table, replies = DEMO["c3.ocr"]
    with pytest.raises(KeyError, match="unknown C3 task"):
        c3.score_task("c3.nope", table, replies)
    with pytest.raises(ValueError, match="40 question rows but 3 responses"):
        c3.score_task("c3.ocr", table, replies[:3])


def test_all_unparsed_gives_nan_not_an_error():
    table, _ = DEMO["c3.counting"]
    m = c3.score_task("c3.counting", table, [None] * table.num_rows).metrics
    assert m["parse_rate"] == 0.0 and math.isnan(m["headline"]) and math.isnan(m["lift"])
    lt, _ = DEMO["c3.localization"]
    ml = c3.score_task("c3.localization", lt, [""] * lt.num_rows).metrics
    assert ml["mean_iou"] == 0.0 and math.isnan(ml["floor"])


def test_builder_records_score_end_to_end(tmp_path):
    """The builder's C3 records (synthetic miniature) score through the Contract-4 dispatcher: gold
    replies are perfect, floor replies reproduce the floor."""
    from collections import defaultdict

    from c3c4_helpers import build_miniature

    from biovqa.metrics import score_task
    from builder.questions import c3 as c3_questions

    roots, manifests = build_miniature(tmp_path)
    by_task = defaultdict(list)
    for rec, _ in c3_questions.items(manifests, roots):
        by_task[rec["task"]].append({**rec, "image": None})
    assert set(by_task) == set(c3.TASKS)
    for task, recs in by_task.items():
        table = pa.Table.from_pylist(recs, schema=QUESTION_SCHEMA).drop_columns(["image"])
        gold = score_task(task, table, [r["answer"] for r in recs]).metrics
        assert gold["n_invalid"] == 0 and gold["parse_rate"] == 1.0, task
        assert gold["headline"] == pytest.approx(1.0, abs=1e-3), task
        floor = score_task(task, table, c3.floor_prediction(task, table)).metrics
        assert floor["headline"] == pytest.approx(gold["floor"], abs=1e-12), task
