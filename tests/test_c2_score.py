"""cags (eqs. 11-12), severity (eq. 22), the C2 scorer (Contract 4) and its additive statistics."""

from __future__ import annotations

import math

import numpy as np
import pytest
from c2_rows import mcq_row, open_row, table

from biovqa.metrics import score_task as dispatch_score_task
from biovqa.metrics.c2 import build_kernels, open_answer, reduce, score_items, score_task
from biovqa.metrics.c2.cags import bootstrap_ci, cags, chance_baseline, sample_chance_pool, severity
from biovqa.metrics.c2.kernels import KernelSet
from biovqa.metrics.common import merge_stats

COLOURS = ["blue", "purple", "green", "yellow"]


def wing_rows(n: int, task="c2.morphology") -> list[dict]:
    return [
        mcq_row(
            f"{task}/cub/{i:06d}-wing_color",
            task,
            "attr_bare_value",
            "What is the wing color of this bird?",
            COLOURS,
            "blue",
            part="wing",
            property="color",
        )
        for i in range(n)
    ]


def test_cags_worked_example():
    k = KernelSet()
    b = chance_baseline("blue", ["purple", "green", "yellow"], lambda p, g: k.similarity("color", p, g))
    assert b == pytest.approx(0.228, abs=5e-4)
    expected = {"blue": 1.000, "purple": 0.350, "green": -0.122, "yellow": -0.227}
    for answer, value in expected.items():
        assert cags(k.similarity("color", answer, "blue"), b) == pytest.approx(value, abs=5e-4)


def test_score_task_worked_example_items_and_metrics():
    res = score_task("c2.morphology", table(wing_rows(4)), ["(A) blue", "(B) purple", "green", "D"])
    it, m = res.items, res.metrics
    assert it["cags"] == pytest.approx([1.0, 0.350, -0.122, -0.227], abs=5e-4)
    assert it["score"] == it["cags"]
    assert it["b"] == pytest.approx([0.228] * 4, abs=5e-4)
    assert it["em"] == [True, False, False, False]
    assert it["parsed"] == ["blue", "purple", "green", "yellow"]
    assert it["resolution"] == ["letter_text", "letter_text", "text", "letter"]
    assert it["category"] == ["morphology"] * 4 and it["kernel"] == ["color"] * 4
    assert it["severity"][0] is None
    # a random guesser's expected cags is 1/K (here exactly: one reply per option)
    assert m["headline"] == pytest.approx(0.25) and m["headline_metric"] == "cags"
    assert m["em"] == 0.25 and m["choose_a_rate"] == 0.25 and m["parse_rate"] == 1.0
    assert m["gs_raw"] == pytest.approx((1 + 0.498 + 0.134 + 0.053) / 4, abs=1e-3)
    assert m["severity"] == pytest.approx(np.mean([1 - 0.350, 1 + 0.122, 1 + 0.227]), abs=1e-3)
    assert m["per_family"]["attr_bare_value"]["n"] == 4
    assert set(m["per_category"]) == {"morphology"}
    assert m["cags_ci_low"] <= m["headline"] <= m["cags_ci_high"]
    assert m["n"] == 4 and m["n_invalid"] == 0


def test_contract4_through_dispatcher():
    res = dispatch_score_task("c2.morphology", table(wing_rows(3)), ["A", None, "(B) Red"])
    assert res.items["parse_ok"] == [True, False, True]


def test_parse_failure_scores_zero_similarity_and_counts_as_wrong():
    res = score_task("c2.morphology", table(wing_rows(3)), [None, "I cannot tell.", "(A) blue"])
    it, m = res.items, res.metrics
    assert it["parse_ok"] == [False, False, True]
    assert it["parse_status"][:2] == ["empty", "refusal"]
    assert it["s"][:2] == [0.0, 0.0]
    # "assign a score of zero": the failure contributes 0 to the headline, 1 to severity
    assert it["cags"][:2] == [0.0, 0.0] and it["score"][:2] == [0.0, 0.0]
    assert m["parse_rate"] == pytest.approx(1 / 3)
    assert m["severity"] == pytest.approx(1.0)
    assert m["headline"] == pytest.approx(1 / 3) and m["gs_raw"] == pytest.approx(1 / 3)


def test_mismatch_and_choose_a_rates():
    # "(B) Blue": letter B (purple) wins over text (blue); recorded as mismatch
    res = score_task("c2.morphology", table(wing_rows(4)), ["(B) Blue", "(A) blue", "A", "(C) green"])
    m = res.metrics
    assert res.items["mismatch"] == [True, False, False, False]
    assert res.items["parsed"][0] == "purple" and not res.items["em"][0]
    assert m["mismatch_rate"] == 0.25
    assert m["choose_a_rate"] == 0.5


def test_bad_rows_are_reported_not_dropped():
    rows = wing_rows(3)
    rows[1]["answer"], rows[1]["answer_index"] = "(Z) magenta", -1
    rows[2]["family"] = "made_up_family"
    res = score_task("c2.morphology", table(rows), ["A", "A", "A"])
    m = res.metrics
    assert m["n"] == 3 and m["n_scored"] == 1 and m["n_invalid"] == 2
    assert any("000001" in r and "magenta" in r for r in m["invalid_rows"])
    assert any("made_up_family" in r for r in m["invalid_rows"])
    assert res.items["parse_status"][1:] == ["invalid_row", "invalid_row"]
    assert res.items["score"][1:] == [None, None]
    assert m["headline"] == 1.0


def test_row_of_another_task_is_invalid():
    rows = wing_rows(2)
    res = score_task("c2.naming", table(rows), ["A", "A"])
    assert res.metrics["n_invalid"] == 2
    assert "not part of task" in res.metrics["invalid_rows"][0]


def test_family_routing_disagreement_is_counted():
    rows = wing_rows(2)
    rows[0]["question"] = "What is the body part of this bird marked with the red dot? Options: (A) blue"
    res = score_task("c2.morphology", table(rows), ["A", "A"])
    assert res.metrics["route_mismatch"] == 1
    assert res.metrics["per_family"]["attr_bare_value"]["route_mismatch"] == 1


def test_length_mismatch_raises():
    with pytest.raises(ValueError, match="responses"):
        score_task("c2.morphology", table(wing_rows(2)), ["A"])


def test_localization_families_and_side_set_kernel():
    side = mcq_row(
        "c2.localization/cub/1-eye",
        "c2.localization",
        "visibility_side",
        "Which of the eyes of the bird are visible in this image?",
        ["Left", "Right", "Both", "None"],
        "Both",
        side_part="eye",
    )
    marker = mcq_row(
        "c2.localization/cub/1-marker",
        "c2.localization",
        "marker_localization",
        "What is the body part of this bird marked with the yellow dot?",
        ["nape", "tail", "left leg", "belly", "beak"],
        "nape",
    )
    res = score_task("c2.localization", table([side, marker]), ["(A) Left", "(C) left leg"])
    it = res.items
    # side: b = mean(sJac(L,B)=.5, sJac(R,B)=.5, sJac(None,B)=0) = 1/3; s = 0.5 -> cags = 0.25
    assert it["b"][0] == pytest.approx(1 / 3) and it["s"][0] == 0.5 and it["cags"][0] == pytest.approx(0.25)
    assert it["kernel"] == ["set", "anatomy"]
    assert set(res.metrics["per_family"]) == {"visibility_side", "marker_localization"}
    assert res.metrics["route_mismatch"] == 0


def test_salience_pair_kernel():
    opts = [
        "bill color: black",
        "underparts color: white",
        "primary color: green",
        "breast color: red",
        "eye color: white",
    ]
    row = mcq_row(
        "c2.salience/cub/1",
        "c2.salience",
        "attr_group_value",
        "Which of the following is the most prominently visible physical trait of the bird in this image?",
        opts,
        "breast color: red",
    )
    res = score_task("c2.salience", table([row, row]), ["(D) breast color: red", "underparts color: white"])
    assert res.items["kernel"] == ["pair", "pair"]
    assert res.items["cags"][0] == 1.0
    assert -1.0 < res.items["cags"][1] < 1.0


def naming_rows() -> list[dict]:
    birds = [
        ("California Gull", "Larus", "Larus californicus", "gull"),
        ("Western Gull", "Larus", "Larus occidentalis", "gull"),
        ("Song Sparrow", "Melospiza", "Melospiza melodia", "sparrow"),
        ("Lincoln Sparrow", "Melospiza", "Melospiza lincolnii", "sparrow"),
        ("Fox Sparrow", "Passerella", "Passerella iliaca", "sparrow"),
        ("American Crow", "Corvus", "Corvus brachyrhynchos", "crow"),
    ]
    rows = []
    for i, (common, genus, sci, cat) in enumerate(birds):
        c2 = {"common_name": common, "genus": genus, "scientific_name": sci, "category": cat}
        rows.append(
            open_row(
                f"c2.naming/cub/{i}-common",
                "open_common_name",
                "What is the common name of the bird?",
                common,
                **c2,
            )
        )
        rows.append(
            open_row(
                f"c2.naming/cub/{i}-sci",
                "open_scientific_name",
                "What is the scientific name of the bird?",
                sci,
                **c2,
            )
        )
        rows.append(
            open_row(f"c2.naming/cub/{i}-genus", "open_genus", "What is the genus of the bird?", genus, **c2)
        )
        rows.append(
            open_row(
                f"c2.naming/cub/{i}-kind",
                "open_kind_of",
                f"What kind of {cat} is the bird in this image?",
                common.split()[0],
                **c2,
            )
        )
    return rows


def test_open_naming_families():
    rows = naming_rows()
    replies = {
        "c2.naming/cub/2-common": "Lincoln's Sparrow",  # not the CUB spelling: F1 .5 + head -> .7
        "c2.naming/cub/3-common": "Song Sparrow",  # same genus -> lifted to .75
        "c2.naming/cub/0-common": "The common name is California Gull.",
        "c2.naming/cub/2-sci": "*Melospiza georgiana*",
        "c2.naming/cub/5-sci": "Melospiza melodia",
        "c2.naming/cub/4-genus": "Passerella",
        "c2.naming/cub/0-kind": "California Gull",  # full name: s = 1, strict EM = 0
        "c2.naming/cub/1-kind": "western",
    }
    res = score_task("c2.naming", table(rows), [replies.get(r["qid"]) for r in rows])
    it = res.items
    pos = {r["qid"]: i for i, r in enumerate(rows)}

    def get(col, qid):
        return it[col][pos[qid]]

    assert get("s", "c2.naming/cub/2-common") == pytest.approx(0.7)
    assert get("s", "c2.naming/cub/3-common") == 0.75
    assert (
        get("em", "c2.naming/cub/0-common") and get("parsed", "c2.naming/cub/0-common") == "california gull"
    )
    assert get("s", "c2.naming/cub/2-sci") == pytest.approx(0.575, abs=5e-4)
    assert get("s", "c2.naming/cub/5-sci") == pytest.approx(0.054, abs=5e-4)
    assert get("em", "c2.naming/cub/4-genus") and get("cags", "c2.naming/cub/4-genus") == 1.0
    assert get("s", "c2.naming/cub/0-kind") == 1.0 and not get("em", "c2.naming/cub/0-kind")
    assert get("em", "c2.naming/cub/1-kind") and get("s", "c2.naming/cub/1-kind") == 1.0
    assert get("parse_status", "c2.naming/cub/5-common") == "empty"
    # open items: b from the fixed-seed sample of the other golds of the family (here: all 5 others)
    b_genus = get("b", "c2.naming/cub/4-genus")
    assert 0.0 < b_genus < 0.3
    m = res.metrics
    assert m["n_open"] == len(rows) and m["n_mcq"] == 0 and math.isnan(m["mismatch_rate"])
    assert set(m["per_family"]) == {"open_common_name", "open_scientific_name", "open_genus", "open_kind_of"}


def test_chance_pool_column_is_used():
    rows = naming_rows()[:4]
    for r in rows:
        r["c2"]["chance_pool"] = ["Larus"] * 40 if r["family"] == "open_genus" else []
    res = score_task("c2.naming", table(rows), [None] * 4)
    assert res.items["b"][2] == 1.0  # every pool answer equals the gold genus


def test_sample_chance_pool_is_deterministic_and_excludes_gold():
    golds = [f"genus{i:03d}" for i in range(200)]
    a = sample_chance_pool("genus007", golds)
    assert a == sample_chance_pool("genus007", list(reversed(golds)))
    assert len(a) == 40 and "genus007" not in a and len(set(a)) == 40
    assert sample_chance_pool("x", ["x", "y"]) == ["y"]


def test_severity_and_degenerate_baseline():
    assert severity(np.array([1.0, 0.5, -0.5]), np.array([True, False, False])) == pytest.approx(1.0)
    assert math.isnan(severity(np.array([1.0]), np.array([True])))
    assert cags(1.0, 1.0) == 1.0 and cags(0.5, 1.0) == 0.0


def test_additive_statistics_merge_equals_whole():
    rows = wing_rows(40) + naming_rows()
    rng = np.random.default_rng(42)
    replies = [str(rng.choice(["A", "B", "(C) green", "yellow", "nonsense"])) for _ in rows]
    # "c2" (the whole component) is not a registry task: every family is accepted
    whole = score_task("c2", table(rows), replies)
    assert whole.metrics["n_invalid"] == 0 and set(whole.metrics["per_category"]) == {"morphology", "naming"}
    k = build_kernels(table(rows))
    _, s1 = score_items("c2", table(rows[:20]), replies[:20], k)
    _, s2 = score_items("c2", table(rows[20:]), replies[20:], k)
    merged = reduce("c2", merge_stats(s1, s2))
    for key in ("headline", "gs_raw", "em", "severity", "parse_rate", "choose_a_rate", "n", "em_open"):
        assert merged[key] == pytest.approx(whole.metrics[key]), key
    assert merged["cags_ci_low"] == pytest.approx(whole.metrics["cags_ci_low"])
    assert merged["per_family"]["attr_bare_value"] == pytest.approx(
        whole.metrics["per_family"]["attr_bare_value"], nan_ok=True
    )


def test_deterministic():
    rows = wing_rows(30)
    replies = ["A", "(B) purple", "green"] * 10
    a = score_task("c2.morphology", table(rows), replies)
    b = score_task("c2.morphology", table(rows), replies)
    assert a.items == b.items
    assert a.metrics["cags_ci_low"] == b.metrics["cags_ci_low"]


def test_bootstrap_ci_large_n_agrees_with_exact_item_bootstrap():
    from biovqa.metrics.stats import bootstrap_mean_ci

    v = np.random.default_rng(7).normal(0.5, 0.4, 30_000)
    lo, hi = bootstrap_ci(v)
    elo, ehi = bootstrap_mean_ci(v)
    assert lo < v.mean() < hi
    # different random streams: agree to Monte-Carlo precision of 1000 resamples
    assert lo == pytest.approx(elo, abs=1.5e-3) and hi == pytest.approx(ehi, abs=1.5e-3)
    assert bootstrap_ci(v) == (lo, hi)


@pytest.mark.parametrize(
    "reply,expected",
    [
        ("California Gull (Larus californicus)", "california gull"),
        ("The common name is California Gull.", "california gull"),
        ("*Larus californicus*", "larus californicus"),
        ("It is a Western Gull", "western gull"),
        ("Sure!\nCalifornia Gull", "california gull"),
        ("Here is the answer:\nLarus", "larus"),
        ("Larus\nI am confident because of the red bill spot.", "larus"),
        ("Gray Catbird", "grey catbird"),
    ],
)
def test_open_answer_extraction(reply, expected):
    assert open_answer(reply) == (expected, "ok")


@pytest.mark.parametrize("reply", [None, "", "  \n ", 7])
def test_open_answer_empty(reply):
    assert open_answer(reply) == ("", "empty")


def test_open_answer_bounded_on_megabyte_reply():
    ans, status = open_answer("Larus " * 300_000)
    assert status == "ok" and len(ans) <= 256


def test_per_family_and_category_intervals_for_multi_family_task():
    rows = naming_rows()
    res = score_task("c2.naming", table(rows), [r["answer"] for r in rows])
    for fam, row in res.metrics["per_family"].items():
        assert row["cags"] == pytest.approx(1.0), fam
        assert row["cags_ci_low"] == pytest.approx(1.0) and row["cags_ci_high"] == pytest.approx(1.0)
    assert res.metrics["per_category"]["naming"]["cags_ci_low"] == res.metrics["cags_ci_low"]


def test_empty_task():
    res = score_task("c2.naming", table([]), [])
    assert res.metrics["n"] == 0 and math.isnan(res.metrics["headline"]) and res.items["score"] == []


def test_options_parsed_from_question_when_column_empty():
    row = wing_rows(1)[0]
    row["options"], row["answer_index"] = [], -1
    res = score_task("c2.morphology", table([row]), ["(B) purple"])
    assert res.items["parsed"] == ["purple"] and res.items["s"][0] == pytest.approx(0.498, abs=5e-4)
    assert res.metrics["route_mismatch"] == 0
