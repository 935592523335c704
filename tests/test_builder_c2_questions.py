"""C2 questions on the drawn miniature: right by construction, well-formed, deterministic."""

from __future__ import annotations

import hashlib
import io
import json
import os
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from biovqa import prompts, schema
from biovqa.parse.mcq import route_family
from builder.components import c2 as component
from builder.manifests import c2 as c2_manifest
from builder.questions.c2 import FAMILY_TASK, C2Generator, _item_rng
from builder.render.markers import MARKER_COLORS, MARKER_SHAPES, OUTLINE, Marker, render_markers, shape_points
from builder.synth.cub import PALETTE, BirdSpec, draw_bird
from builder.taxonomy.cub_names import NAMES_CSV

#: Colour groups whose value is painted at one CUB part location.
GROUP_PART = {
    "has_back_color": "back",
    "has_upperparts_color": "back",
    "has_breast_color": "breast",
    "has_belly_color": "belly",
    "has_underparts_color": "belly",
    "has_crown_color": "crown",
    "has_forehead_color": "forehead",
    "has_nape_color": "nape",
    "has_throat_color": "throat",
    "has_upper_tail_color": "tail",
    "has_under_tail_color": "tail",
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("c2")
    component.synth(root)
    roots = {"cub": root / "cub"}
    component.manifests(roots, root / "manifests")
    records = list(component.questions(root / "manifests", roots, root / "hub"))
    images = {r["image_id"]: r for r in c2_manifest.load_images(root / "manifests")}
    return root, roots, records, images


def _nearest(rgb, palette: dict) -> str:
    return min(
        palette, key=lambda k: sum((int(a) - int(b)) ** 2 for a, b in zip(rgb, palette[k], strict=True))
    )


def _pixel(img: Image.Image, x: float, y: float) -> tuple[int, int, int]:
    """Median of the 3x3 block at (x, y) (robust to JPEG ringing)."""
    arr = np.asarray(img.convert("RGB"), dtype=np.int32)
    xi, yi = round(x), round(y)
    block = arr[max(yi - 1, 0) : yi + 2, max(xi - 1, 0) : xi + 2].reshape(-1, 3)
    return tuple(int(v) for v in np.median(block, axis=0))


def _part(row: dict, name: str) -> dict:
    return next(p for p in row["parts"] if p["part"] == name)


def test_every_record_fits_the_schema_and_its_task(built):
    root, _, records, images = built
    assert records
    for rec in records:
        schema.validate_record(rec)
        assert rec["task"] == FAMILY_TASK[rec["family"]]
        assert rec["component"] == "c2" and rec["source"] == "cub"
        assert rec["qid"].startswith(f"{rec['task']}/cub/")
        assert rec["instruction"] == prompts.c2_instruction(rec["family"])
        assert route_family(rec["question"], rec["options"]) == rec["family"]  # the scorer's §K.5 routing
        if rec["options"]:
            assert rec["answer_form"] == "mcq_lettered"
            assert (
                rec["answer"]
                == f"({prompts.LETTERS[rec['answer_index']]}) {rec['options'][rec['answer_index']]}"
            )
            assert len(set(rec["options"])) == len(rec["options"])
            assert prompts.format_lettered(rec["options"]) in rec["question"]
        else:
            assert rec["answer_form"] == "open_text" and rec["answer_index"] == -1
        assert (rec["image"] is None) != (rec["image_ref"] is None)
    assert len({r["qid"] for r in records}) == len(records)
    released = root / "hub" / "resources" / "cub_scientific_names.csv"
    assert released.read_bytes() == NAMES_CSV.read_bytes()


def test_family_counts_follow_the_paper(built):
    _, _, records, images = built
    n = len(images)
    counts = Counter(r["family"] for r in records)
    assert counts["marker_localization"] == n  # one rendered image per source image
    assert counts["visibility_partset"] == 10 * n
    assert counts["visibility_side"] == 3 * n
    assert counts["open_common_name"] == n
    classes = {r["c2"]["class_id"]: r["c2"] for r in records}
    with_category = sum(1 for row in images.values() if classes[row["class_id"]]["category"])
    assert (
        counts["category_mcq"] == counts["open_kind_of"] == with_category < n
    )  # Cardinal, Chuck-will's-widow …
    per_class = Counter(row["class_id"] for row in images.values())
    assert counts["open_genus"] == n - per_class[130]  # the mixed Tree Sparrow class has no genus
    assert counts["open_scientific_name"] == n - per_class[130] - per_class[103]  # nor Sayornis a species
    assert counts["attr_bare_value"] > 10 * n and counts["attr_group_value"] > counts["attr_bare_value"]


def test_attribute_gold_is_the_drawn_colour_and_distractors_are_not(built):
    root, roots, records, images = built
    checked = 0
    for rec in records:
        if rec["family"] != "attr_bare_value":
            continue
        group = "has_" + rec["qid"].rsplit("-", 1)[1]
        if group not in GROUP_PART:
            continue
        row = images[rec["c2"]["image_id"]]
        img = Image.open(roots["cub"] / "CUB_200_2011" / "images" / row["path"])
        p = _part(row, GROUP_PART[group])
        drawn = _nearest(_pixel(img, p["x"], p["y"]), PALETTE)
        gold = rec["options"][rec["answer_index"]]
        assert drawn in rec["c2"]["gold_values"], (rec["qid"], drawn, rec["c2"]["gold_values"])
        assert gold == rec["c2"]["gold_values"][0]
        distractors = [o for i, o in enumerate(rec["options"]) if i != rec["answer_index"]]
        true_values = {a["value"] for a in row["attributes"] if a["group"] == group}
        assert drawn not in distractors and not true_values & set(distractors)
        assert 2 <= len(distractors) <= 4
        checked += 1
    assert checked > 100


def test_guessing_labels_never_become_answers(built):
    _, _, records, images = built
    guessed = {
        (row["image_id"], a["group"], a["value"])
        for row in images.values()
        for a in row["attributes"]
        if a["certainty"] < c2_manifest.MIN_CANDIDATE_CERTAINTY
    }
    assert guessed  # the miniature has some
    for rec in records:
        if rec["family"] == "attr_bare_value":
            group = "has_" + rec["qid"].rsplit("-", 1)[1]
            gold = rec["options"][rec["answer_index"]]
            assert (rec["c2"]["image_id"], group, gold) not in guessed
            assert rec["c2"]["certainty"] >= 3
            assert not any((rec["c2"]["image_id"], group, o) in guessed for o in rec["options"] if o != gold)


def test_salience_has_exactly_one_true_option(built):
    _, _, records, images = built
    from builder.questions.c2 import pair_text

    for rec in (r for r in records if r["family"] == "attr_group_value"):
        row = images[rec["c2"]["image_id"]]
        true = {pair_text(a["group"], a["value"]) for a in row["attributes"]}
        assert [o for o in rec["options"] if o in true] == [rec["options"][rec["answer_index"]]]
        regions = [o.split(":")[0] for o in rec["options"]]
        assert len(set(regions)) == len(regions)  # one option per part+property, as in Table 8


def test_marker_sits_on_the_named_part_with_both_controls(built):
    root, roots, records, images = built
    gen = C2Generator(list(images.values()), c2_manifest.load_classes(root / "manifests"), Path("."))
    for rec in (r for r in records if r["family"] == "marker_localization"):
        row = images[rec["c2"]["image_id"]]
        img = Image.open(io.BytesIO(rec["image"]["bytes"]))
        assert img.size == (row["width"], row["height"]) and img.mode == "RGB"
        c2 = rec["c2"]
        assert f"marked with the {c2['marker_color']} {c2['marker_shape']}?" in rec["question"]
        target = _part(row, c2["part"])
        assert target["visible"] and rec["options"][rec["answer_index"]] == c2["part"]
        assert _nearest(_pixel(img, target["x"], target["y"]), MARKER_COLORS) == c2["marker_color"]
        # the placement the generator used (same per-item seed): both controls are options and drawn
        markers, parts, _ = gen.marker_placement(row, _item_rng(42, rec["qid"]))
        assert parts[0] == c2["part"] and set(parts) <= set(rec["options"])
        colour_ctl, shape_ctl, drawn_target = markers
        assert (drawn_target.color, drawn_target.shape) == (c2["marker_color"], c2["marker_shape"])
        assert colour_ctl.color == c2["marker_color"] and colour_ctl.shape != c2["marker_shape"]
        assert shape_ctl.shape == c2["marker_shape"] and shape_ctl.color != c2["marker_color"]
        for m in markers:
            assert _nearest(_pixel(img, m.x, m.y), MARKER_COLORS) == m.color


def test_changed_source_image_is_skipped_and_counted(built, tmp_path):
    root, roots, _, images = built
    row = dict(images[min(images)], sha256="0" * 64)
    gen = C2Generator(
        [row], c2_manifest.load_classes(root / "manifests"), roots["cub"] / "CUB_200_2011" / "images"
    )
    assert list(gen.marker_localization(row)) == []
    assert gen.skipped == {"marker_localization: source image missing or changed since the manifest": 1}


def test_marker_controls_differ_in_exactly_one_cue():
    gen = C2Generator([], {}, Path("."))
    row = {
        "bbox": [0, 0, 200, 100],
        "parts": [{"part": f"p{i}", "x": 20.0 * i, "y": 50.0, "visible": True} for i in range(1, 9)],
    }
    markers, parts, radius = gen.marker_placement(row, random.Random(3))
    colour_ctl, shape_ctl, target = markers
    assert colour_ctl.color == target.color and colour_ctl.shape != target.shape
    assert shape_ctl.shape == target.shape and shape_ctl.color != target.color
    assert len(set(parts)) == 3 and radius == 8.0
    crowded = {
        "bbox": [0, 0, 200, 100],
        "parts": [{"part": f"p{i}", "x": 50.0 + i, "y": 50.0, "visible": True} for i in range(5)],
    }
    assert gen.marker_placement(crowded, random.Random(3)) is None


def test_marker_shapes_are_distinct_and_contain_their_centre():
    masks = []
    for shape in MARKER_SHAPES:
        pts = shape_points(shape, 20, 20, 12)
        assert len(pts) >= 3
        img = render_markers(Image.new("L", (40, 40), 128), [Marker(20, 20, "red", shape)], 12)
        assert img.mode == "RGB" and img.getpixel((20, 20)) == MARKER_COLORS["red"]
        assert OUTLINE in {img.getpixel((x, 20)) for x in range(40)}
        masks.append(np.all(np.asarray(img) == MARKER_COLORS["red"], axis=2))
    for i in range(len(masks)):
        for j in range(i + 1, len(masks)):
            assert (masks[i] != masks[j]).sum() > 10, (MARKER_SHAPES[i], MARKER_SHAPES[j])
    with pytest.raises(ValueError, match="shape"):
        shape_points("hexagon", 0, 0, 1)


def test_visibility_answers_follow_the_part_flags(built):
    _, _, records, images = built
    for rec in records:
        if rec["family"] not in ("visibility_partset", "visibility_side"):
            continue
        row = images[rec["c2"]["image_id"]]
        vis = {p["part"]: p["visible"] for p in row["parts"]}
        gold = rec["options"][rec["answer_index"]]
        if rec["family"] == "visibility_side":
            sp = rec["c2"]["side_part"]
            left, right = vis[f"left {sp}"], vis[f"right {sp}"]
            assert gold == {(1, 1): "Both", (1, 0): "Left", (0, 1): "Right", (0, 0): "None"}[(left, right)]
        else:
            parts = rec["options"][:3]
            assert rec["options"][3:] == ["None", "All three"]
            seen = [p for p in parts if vis[p]]
            assert len(seen) in (0, 1, 3) and rec["c2"]["gold_values"] == seen
            assert gold == ("None" if not seen else "All three" if len(seen) == 3 else seen[0])
    golds = Counter(r["answer"].split(") ")[1] for r in records if r["family"] == "visibility_side")
    assert {"Left", "Right", "Both", "None"} <= set(golds)


def test_partset_outcomes_are_balanced():
    parts = [f"p{i}" for i in range(15)]
    vis = {p: i < 12 for i, p in enumerate(parts)}  # 12 visible, 3 hidden: a typical CUB bird
    triples = C2Generator.partset_triples(vis, random.Random(0))
    assert len(triples) == len(set(triples)) == 10
    outcomes = Counter(sum(vis[p] for p in t) for t in triples)
    assert outcomes == {0: 1, 1: 4, 3: 5} or outcomes == {0: 1, 1: 5, 3: 4}  # None only once: C(3,3) = 1
    all_visible = {p: True for p in parts}
    assert {
        sum(all_visible[p] for p in t) for t in C2Generator.partset_triples(all_visible, random.Random(0))
    } == {3}


def test_drawn_bird_parts_are_where_the_parts_are_painted():
    spec = BirdSpec(
        width=360, height=260, background=(170, 200, 225), facing=1, cx=150, cy=130, s=40,
        colors={"back": "brown", "wing": "blue", "wing2": "black", "under": "buff", "head": "grey", "cap": "red",
                "throat": "white", "bill": "yellow", "eye": "black", "leg": "pink", "tail": "olive"},
        bill_length="longer_than_head", bill_shape="dagger", tail_shape="forked_tail", wing_shape="rounded-wings",
        wing_pattern="striped", breast_pattern="solid", head_pattern="capped", size="medium_(9_-_16_in)",
        shape="perching-like", far_wing=False, legs="near",
    )  # fmt: skip
    bird = draw_bird(spec)
    expect = {"back": "brown", "right wing": "blue", "belly": "buff", "breast": "buff", "crown": "red",
              "forehead": "red", "nape": "grey", "throat": "white", "tail": "olive", "beak": "yellow"}  # fmt: skip
    for part, colour in expect.items():
        x, y, vis = bird.parts[part]
        assert vis and _nearest(bird.image.getpixel((x, y)), PALETTE) == colour, part
    # facing right shows the right side: the left eye, wing and leg are hidden (not in parts)
    assert "right eye" in bird.parts and "left eye" not in bird.parts and "left wing" not in bird.parts
    assert "right leg" in bird.parts and "left leg" not in bird.parts
    x, y, w, h = bird.bbox
    assert all(x <= px < x + w and y <= py < y + h for px, py, _ in bird.parts.values())
    assert bird.labels["has_wing_color"] == {"blue", "black"} and bird.labels["has_wing_pattern"] == {
        "striped"
    }
    assert bird.labels["has_crown_color"] == {"red"} and bird.labels["has_nape_color"] == {"grey"}
    # bill length: the painted bill is longer than the head diameter
    row = np.asarray(bird.image)[round(bird.parts["beak"][1])]
    bill_px = np.all(row == PALETTE["yellow"], axis=1).sum()
    assert bill_px > 2 * 0.38 * spec.s


def test_open_naming_golds_and_chance_pools(built):
    _, _, records, _ = built
    by_family: dict[str, list[dict]] = {}
    for rec in records:
        by_family.setdefault(rec["family"], []).append(rec)
    for fam in prompts.C2_OPEN_FAMILIES:
        for rec in by_family[fam]:
            pool = rec["c2"]["chance_pool"]
            assert pool and len(pool) <= 40 and rec["answer"] not in pool
            assert set(pool) <= {r["answer"] for r in by_family[fam]}
    kind = next(r for r in by_family["open_kind_of"] if r["c2"]["class_id"] == 59)
    assert (
        kind["question"] == "What kind of gull is the bird in this image?" and kind["answer"] == "California"
    )
    sci = next(r for r in by_family["open_scientific_name"] if r["c2"]["class_id"] == 14)
    assert sci["answer"] == "Passerina cyanea" and sci["c2"]["kernel"] == "scientific"
    genus = next(r for r in by_family["open_genus"] if r["c2"]["class_id"] == 103)
    assert genus["answer"] == "Sayornis" and genus["c2"]["kernel"] == "genus"
    cat = next(r for r in by_family["category_mcq"] if r["c2"]["class_id"] == 29)
    assert cat["options"][cat["answer_index"]] == "Crow" and len(cat["options"]) == 5


def test_chance_pool_samples_forty_other_golds():
    classes = {i: {"common_name": f"Bird {i}", "kind": "", "category": "", "genus": "G", "scientific_name": "",
                   "status": "genus_only", "class_folder": f"{i:03d}.Bird_{i}"} for i in range(1, 101)}  # fmt: skip
    images = [{"image_id": k, "class_id": 1 + k % 100, "attributes": []} for k in range(1, 501)]
    gen = C2Generator(images, classes, Path("."))
    pool = gen._chance_pool("open_common_name", "Bird 7", random.Random("42:x"))
    assert len(pool) == 40 and "Bird 7" not in pool
    assert pool == gen._chance_pool("open_common_name", "Bird 7", random.Random("42:x"))


_DIGEST = """
import hashlib, json, sys
from pathlib import Path
from builder.components import c2
root = Path(sys.argv[1])
c2.synth(root)
c2.manifests({"cub": root / "cub"}, root / "m")
h = hashlib.sha256()
for rec in c2.questions(root / "m", {"cub": root / "cub"}, root / "hub"):
    img = rec["image"] and hashlib.sha256(rec["image"]["bytes"]).hexdigest()
    h.update(json.dumps({**rec, "image": img}, sort_keys=True).encode())
print(h.hexdigest())
"""


def test_questions_are_byte_identical_across_runs(built, tmp_path):
    root, roots, records, _ = built
    again = list(component.questions(root / "manifests", roots, tmp_path))
    assert again == records
    # a fresh interpreter with another hash seed builds the same records from scratch
    h = hashlib.sha256()
    for rec in records:
        img = rec["image"] and hashlib.sha256(rec["image"]["bytes"]).hexdigest()
        h.update(json.dumps({**rec, "image": img}, sort_keys=True).encode())
    env = {**os.environ, "PYTHONHASHSEED": "987"}
    out = subprocess.run(
        [sys.executable, "-c", _DIGEST, str(tmp_path / "fresh")],
        check=True, env=env, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    assert out.stdout.strip().splitlines()[-1] == h.hexdigest()
    c2_manifest.build({"cub": roots["cub"]}, tmp_path / "m2")
    other_seed = list(component.questions(tmp_path / "m2", roots, tmp_path, seed=7))
    assert [r["qid"] for r in other_seed] == [r["qid"] for r in records]
    assert [r["options"] for r in other_seed] != [r["options"] for r in records]


def test_real_excerpts_give_every_label_free_family(shared_sources, tmp_path):
    roots = {"cub": shared_sources / "cub-200-2011"}
    component.manifests(roots, tmp_path)
    records = list(component.questions(tmp_path, roots, tmp_path / "hub"))
    fams = Counter(r["family"] for r in records)
    assert fams["marker_localization"] == 17 and fams["visibility_side"] == 51
    assert "attr_bare_value" not in fams  # the full attribute labels were not brought
    gray = next(r for r in records if r["family"] == "marker_localization" and r["c2"]["image_id"] == 1401)
    assert Image.open(io.BytesIO(gray["image"]["bytes"])).mode == "RGB"
    side = next(r for r in records if r["qid"] == "c2.localization/cub/000004-side-eye")
    assert side["answer"] == "(A) Left"  # image 4: left eye visible, right eye "0.0 0.0 0"
