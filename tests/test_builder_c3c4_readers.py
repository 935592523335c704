"""C3/C4 source readers: the miniature round-trips, the real excerpts parse, formats are checked."""

from __future__ import annotations

import json
import shutil

import pytest
from PIL import Image

from builder.common import Report, SourceFormatError
from builder.sources import boxes_on_bees, coco, depondfi, gzcd, neon_beetles, waid, wildme, yolo
from builder.sources.records import normalize_viewpoint
from builder.synth import boxes_on_bees as s_bob
from builder.synth import depondfi as s_dep
from builder.synth import neon_beetles as s_beetles
from builder.synth import waid as s_waid
from builder.synth import wildme as s_wildme


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    root = tmp_path_factory.mktemp("c3c4-mini")
    s_waid.synth(root)
    s_bob.synth(root)
    s_dep.synth(root)
    s_beetles.synth(root)
    for key in s_wildme.CATALOGS:
        s_wildme.synth(root, key)
    return root


def test_waid_miniature_round_trip(mini):
    rep = Report(strict=True)
    res = waid.read(mini / "waid", rep)
    assert len(res.records) == len(s_waid.CLASSES) * len(s_waid.COUNTS) and not res.excluded
    per_class = {}
    for r in res.records:
        cats = {o.category for o in r.objects}
        assert len(cats) == 1 and all(o.normalized for o in r.objects)
        per_class.setdefault(cats.pop(), []).append(len(r.objects))
    assert {c: sorted(v) for c, v in per_class.items()} == {c: sorted(s_waid.COUNTS) for c in s_waid.CLASSES}
    assert all(r.path.startswith("WAID/images/") and "_jpg.rf." in r.path for r in res.records)


def test_blob_sources_round_trip(mini):
    rep = Report(strict=True)
    bees = boxes_on_bees.read(mini / "boxes-on-bees", rep)
    assert [len(r.objects) for r in bees.records] == list(s_bob.COUNTS)
    fish = depondfi.read(mini / "depondfi", rep)
    assert sorted(len(r.objects) for r in fish.records) == sorted(s_dep.COUNTS)


def test_wildme_round_trip_polygon_boxes_and_unknown_names(mini):
    rep = Report(strict=True)
    res = wildme.read(mini / "whaleshark", rep, "whaleshark")
    raw = json.loads(next((mini / "whaleshark").rglob("instances_*.json")).read_text())
    assert "bbox" not in raw["annotations"][0]  # whale shark miniature ships polygons only
    assert len(res.records) == len(raw["images"])
    by_id = {a["image_id"]: a for a in raw["annotations"]}
    for r in res.records:
        ann = by_id[int(r.id.split("/")[1])]
        x, y, w, h = r.objects[0].box
        xs = ann["segmentation"][0][0::2]
        assert (x, y, x + w) == (min(xs), min(ann["segmentation"][0][1::2]), max(xs))
        assert r.objects[0].individual == (None if ann["name"] == "____" else ann["name"])
        assert r.objects[0].viewpoint in ("left", "right")
    assert sum(r.objects[0].individual is None for r in res.records) == 2


def test_gzcd_nested_categories(mini):
    res = gzcd.read(mini / "gzcd", Report(strict=True))
    herds = [r for r in res.records if len(r.objects) > 1]
    assert len(herds) == 7  # eight herd photographs, one of them a lone Grevy's zebra
    cats = {o.category for r in herds for o in r.objects}
    assert cats == {"zebra_grevys", "zebra_plains", "giraffe_reticulated"}


def test_beetles_miniature(mini):
    plates, excluded = neon_beetles.read(mini / "2018-neon-beetles", Report(strict=True))
    assert [(p.picture_id, p.n_individuals) for p in plates] == sorted(s_beetles.PLATES)
    assert not excluded
    for p in plates:
        assert p.annotator == "IsaFluck" and p.count_verified
        assert p.scalebar.length == pytest.approx(p.cm_pix)  # the drawn bar is exactly 1 cm
        assert (p.code == p.picture_id) == p.picture_id.startswith("A")
        for b in p.beetles:
            assert b.length_cm == pytest.approx(b.length.length / p.cm_pix)
    meta = neon_beetles.read_individual_metadata(
        mini / "2018-neon-beetles" / "individual_metadata.csv", Report()
    )
    b = plates[0].beetles[0]
    assert meta[f"{plates[0].picture_id}_{b.individual}"][0] == pytest.approx(b.length_cm, abs=1e-6)


def test_beetle_line_parsing_json_and_single_quotes():
    assert neon_beetles.parse_line('{"x1": 815, "y1": 244, "x2": 892, "y2": 244}').length == 77
    assert neon_beetles.parse_line("{'x1': 3014, 'y1': 10, 'x2': 3014, 'y2': 40}").length == 30
    for bad in ("{'x1': 1}", "not json", '{"x1": "a", "y1": 0, "x2": 0, "y2": 0}'):
        with pytest.raises(ValueError):
            neon_beetles.parse_line(bad)


def test_beetles_scaled_up_variant(tmp_path):
    """The image-viewer CSV: only coords_pix_scaled_up (single quotes) + tuple-string image dims."""
    (tmp_path / "group_images").mkdir()
    Image.new("RGB", (600, 400), "white").save(tmp_path / "group_images" / "A00000000001.jpg")
    head = "pictureID,scalebar,cm_pix,individual,structure,user_name,coords_pix_scaled_up,image_dim,resized_image_dim"
    rows = [
        'A00000000001.jpg,"{""x1"": 10, ""y1"": 5, ""x2"": 30, ""y2"": 5}",20,1,ElytraLength,IsaFluck,'
        "\"{'x1': 100, 'y1': 100, 'x2': 100, 'y2': 160}\",\"(400, 600, 3)\",\"(200, 300, 3)\"",
        'A00000000001.jpg,"{""x1"": 10, ""y1"": 5, ""x2"": 30, ""y2"": 5}",20,1,ElytraWidth,IsaFluck,'
        "\"{'x1': 80, 'y1': 130, 'x2': 120, 'y2': 130}\",\"(400, 600, 3)\",\"(200, 300, 3)\"",
    ]
    (tmp_path / "BeetleMeasurements.csv").write_text("\n".join([head, *rows]) + "\n")
    plates, _ = neon_beetles.read(tmp_path, Report(strict=True))
    (p,) = plates
    assert p.cm_pix == 40 and p.scalebar.x2 == 60  # scaled ×2 into the full frame
    assert p.beetles[0].length_cm == pytest.approx(60 / 40) and p.path == "group_images/A00000000001.jpg"


def test_viewpoint_normalisation():
    assert normalize_viewpoint("Front_Left") == "frontleft"
    assert normalize_viewpoint("top") == "up"
    assert normalize_viewpoint("upleft") is None and normalize_viewpoint(None) is None


def test_coco_box_from_polygon_and_unknown_name():
    ann = {"segmentation": [[1, 2, 11, 2, 11, 22, 1, 22]], "name": "____"}
    assert coco.annotation_box(ann) == (1.0, 2.0, 10.0, 20.0)
    assert coco.individual_name(ann) is None and coco.individual_name({"name": 17}) == "17"


# --------------------------------------------------------------------------- real excerpts (skip if absent)


def test_waid_real_labels(shared_sources, tmp_path):
    base = shared_sources / "waid" / "WAID"
    classes = yolo.read_classes(base / "classes.txt")
    assert classes == ["sheep", "cattle", "seal", "camelus", "kiang", "zebra"]
    # give every real label file a stand-in image, then read the real layout
    dst = tmp_path / "WAID"
    shutil.copytree(base / "labels", dst / "labels")
    shutil.copy(base / "classes.txt", dst / "classes.txt")
    n_lines = {}
    for lab in sorted((dst / "labels").rglob("*.txt")):
        img = dst / "images" / lab.parent.name / f"{lab.stem}.jpg"
        img.parent.mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (640, 640)).save(img)
        n_lines[f"{lab.parent.name}/{lab.stem}"] = sum(
            1 for line in lab.read_text().splitlines() if line.strip()
        )
    res = waid.read(tmp_path, Report(strict=True))
    assert {r.id: len(r.objects) for r in res.records} == n_lines
    assert len(res.records) == 10 and {o.category for r in res.records for o in r.objects} == {"cattle"}


def test_beetle_real_yolo_export(shared_sources):
    base = shared_sources / "2018-neon-beetles" / "yolo_round1"
    names = yolo.read_classes(base / "obj.names")
    assert names == ["beetle", "scale_bar"]
    labels = base / "obj_train_data" / "beetle_group_images"
    rep = Report(strict=True)
    boxes = {p.stem: yolo.read_label_file(p, len(names), rep) for p in labels.glob("*.txt")}
    assert boxes["A00000032929"] == []  # the one empty label file
    assert sum(b.cls == 0 for b in boxes["A00000012427"]) == 15  # 15 beetles (Carabus goryi)
    assert sum(b.cls == 1 for b in boxes["A00000012427"]) == 1


def test_beetle_real_derived_table_is_refused_clearly(shared_sources, tmp_path):
    """The early per-individual table is not BeetleMeasurements.csv: the error names the missing columns."""
    src = shared_sources / "2018-neon-beetles" / "metadata" / "all_measurements.7e11f68.subset.csv"
    shutil.copy(src, tmp_path / "BeetleMeasurements.csv")
    with pytest.raises(SourceFormatError, match="missing columns.*pictureID"):
        neon_beetles.read(tmp_path, Report())


def test_dist_cm_worked_example(tmp_path):
    """FORMATS/notebook example: dist_cm = dist_pix / cm_pix = 108.115679 / 77 = 1.4041."""
    (tmp_path / "group_images").mkdir()
    Image.new("RGB", (1949, 1299), "white").save(tmp_path / "group_images" / "A00000000002.jpg")
    sb = '"{""x1"": 815, ""y1"": 244, ""x2"": 892, ""y2"": 244}"'
    length = '"{""x1"": 100, ""y1"": 100, ""x2"": 208.115679, ""y2"": 100}"'
    width = '"{""x1"": 140, ""y1"": 80, ""x2"": 140, ""y2"": 120}"'
    head = "pictureID,scalebar,cm_pix,individual,structure,user_name,coords_pix,dist_pix"
    rows = [
        f"A00000000002.jpg,{sb},77,1,ElytraLength,IsaFluck,{length},108.115679",
        f"A00000000002.jpg,{sb},77,1,ElytraWidth,IsaFluck,{width},40",
    ]
    (tmp_path / "BeetleMeasurements.csv").write_text("\n".join([head, *rows]) + "\n")
    (p,), _ = neon_beetles.read(tmp_path, Report(strict=True))
    assert p.scalebar.length == 77 and round(p.beetles[0].length_cm, 4) == 1.4041
    assert p.code == "A00000000002"
