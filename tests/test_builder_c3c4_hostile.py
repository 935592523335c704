"""Hostile input for the C3/C4 readers and manifests: clear errors or counted exclusions, never silence."""

from __future__ import annotations

import json
import shutil

import pyarrow.parquet as pq
import pytest
from PIL import Image

from builder.common import Report, SourceFormatError
from builder.manifests import c3 as man
from builder.sources import coco, depondfi, neon_beetles, waid, wildme, yolo
from builder.synth import boxes_on_bees as s_bob
from builder.synth import depondfi as s_dep
from builder.synth import neon_beetles as s_beetles
from builder.synth import waid as s_waid
from builder.synth import wildme as s_wildme


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    root = tmp_path_factory.mktemp("c3c4-pristine")
    s_waid.synth(root)
    s_bob.synth(root)
    s_dep.synth(root)
    s_beetles.synth(root)
    s_wildme.synth(root, "hyena")
    return root


@pytest.fixture
def src(pristine, tmp_path):
    shutil.copytree(pristine, tmp_path / "src")
    return tmp_path / "src"


def exclusions(out, source):
    return {r["id"]: r["reason"] for r in pq.read_table(out / f"{source}.exclusions.parquet").to_pylist()}


def test_crlf_and_bom_files_read_the_same(src):
    base = waid.read(src / "waid", Report(strict=True))
    for p in list((src / "waid").rglob("*.txt")):
        p.write_bytes(b"\xef\xbb\xbf" + p.read_bytes().replace(b"\n", b"\r\n"))
    again = waid.read(src / "waid", Report(strict=True))
    assert again.records == base.records


def test_truncated_and_missing_images_are_counted(src, tmp_path):
    imgs = sorted((src / "boxes-on-bees" / "images").glob("*.jpg"))
    data = imgs[0].read_bytes()
    imgs[0].write_bytes(data[: len(data) // 2])
    imgs[1].unlink()
    summary = man.build(["boxes_on_bees"], {"boxes_on_bees": src / "boxes-on-bees"}, tmp_path / "m")
    s = summary["boxes_on_bees"]
    assert s["rows"] == len(s_bob.COUNTS) - 2
    assert s["excluded"] == {"image missing or undecodable": 2} and s["bad_rows"] == 2
    assert any("frame_0001.jpg" in e and "decode" in e for e in s["bad_row_examples"])
    assert any("frame_0002.jpg" in e and "missing" in e for e in s["bad_row_examples"])
    with pytest.raises(SourceFormatError, match="frame_0001.jpg"):
        man.build(["boxes_on_bees"], {"boxes_on_bees": src / "boxes-on-bees"}, tmp_path / "m2", strict=True)


def test_decompression_bomb_guard(src, monkeypatch):
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)
    img = next((src / "boxes-on-bees" / "images").glob("*.jpg"))
    with pytest.raises(SourceFormatError, match="decompression-bomb"):
        man.verify_image(img)


def test_duplicate_coco_ids_exclude_both_with_a_reason(src, tmp_path):
    js = next((src / "hyena").rglob("instances_*.json"))
    data = json.loads(js.read_text())
    data["images"].append(dict(data["images"][0]))
    data["annotations"].append({"id": 999, "image_id": 424242, "category_id": 1, "bbox": [0, 0, 5, 5]})
    js.write_text(json.dumps(data))
    rep = Report()
    res = wildme.read(src / "hyena", rep, "hyena")
    first = f"train2022/{data['images'][0]['id']}"
    assert (first, f"bad annotation entry in {js.name}") in res.excluded
    assert first not in {r.id for r in res.records}
    reasons = [b.reason for b in rep.bad]
    assert any("duplicate image id" in r for r in reasons) and any("424242" in r for r in reasons)


def test_broken_coco_file_errors_and_other_sources_go_on(src, tmp_path):
    js = next((src / "hyena").rglob("instances_*.json"))
    js.write_text('{"images": [')
    roots = {"hyena": src / "hyena", "depondfi": src / "depondfi"}
    summary = man.build(["hyena", "depondfi"], roots, tmp_path / "m")
    assert "not valid JSON" in summary["hyena"]["error"] and js.name in summary["hyena"]["error"]
    assert summary["depondfi"]["rows"] == len(s_dep.COUNTS)
    with pytest.raises(SourceFormatError, match="'images' and 'annotations'"):
        js.write_text('{"foo": []}')
        coco.load_coco(js, Report())


def test_malformed_yolo_line_names_file_and_line(src, tmp_path):
    lab = sorted((src / "waid" / "WAID" / "labels").rglob("*.txt"))[0]
    lab.write_text(lab.read_text() + "1 0.5 0.5 banana 0.1\n")
    rep = Report()
    res = waid.read(src / "waid", rep)
    assert (f"{lab.parent.name}/{lab.stem}", "malformed label file") in res.excluded
    n = len(lab.read_text().splitlines())
    assert rep.bad[0].file == str(lab) and rep.bad[0].line == n
    with pytest.raises(SourceFormatError, match=lab.name):
        yolo.read_label_file(lab, 6, Report(strict=True))


def test_missing_label_and_empty_label_are_unverifiable(src):
    labs = sorted((src / "waid" / "WAID" / "labels").rglob("*.txt"))
    labs[0].unlink()
    labs[1].write_text("")
    res = waid.read(src / "waid", Report())
    reasons = sorted(r for _, r in res.excluded)
    assert reasons == [
        "empty label file: annotation completeness unverifiable",
        "no label file: annotation completeness unverifiable",
    ]


def test_depondfi_keypoints_not_multiple_of_nine(src):
    txt = src / "depondfi" / "train" / "3.txt"
    txt.write_text("\n".join(txt.read_text().splitlines()[:-1]) + "\n")
    rep = Report()
    res = depondfi.read(src / "depondfi", rep)
    assert ("train/3", "keypoint count not a multiple of 9") in res.excluded
    assert "multiple of 9" in rep.bad[0].reason


def test_beetle_csv_problems(src, tmp_path):
    csv_path = src / "2018-neon-beetles" / "BeetleMeasurements.csv"
    lines = csv_path.read_text().splitlines()
    header, rows = lines[0], lines[1:]
    # truncated row, a gap in the individual numbers (count unverifiable), swapped length/width
    pic = "A00000012430.jpg"
    kept = [r for r in rows if not (r.startswith(pic) and ",2,Elytra" in r)]
    kept[0] = kept[0][: len(kept[0]) // 3]
    csv_path.write_text("\n".join([header, *kept]) + "\n")
    rep = Report()
    plates, excluded = neon_beetles.read(src / "2018-neon-beetles", rep)
    assert rep.bad and rep.bad[0].line == 2 and "number of fields" in rep.bad[0].reason
    p = {p.picture_id: p for p in plates}["A00000012430"]
    assert not p.count_verified and "missing [2]" in p.count_reason
    summary = man.build(["neon_beetles"], {"neon_beetles": src / "2018-neon-beetles"}, tmp_path / "m")
    assert any("not 1..5" in k for k in summary["neon_beetles"]["excluded"])
    csv_path.write_text(header.replace("structure", "part") + "\n")
    with pytest.raises(SourceFormatError, match=r"missing columns \['structure'\]"):
        neon_beetles.read(src / "2018-neon-beetles", Report())


def test_swapped_length_and_width_is_excluded(src):
    csv_path = src / "2018-neon-beetles" / "BeetleMeasurements.csv"
    text = csv_path.read_text().replace("ElytraLength", "TMP").replace("ElytraWidth", "ElytraLength")
    csv_path.write_text(text.replace("TMP", "ElytraWidth"))
    plates, excluded = neon_beetles.read(src / "2018-neon-beetles", Report())
    assert all(not p.beetles for p in plates)
    assert sum(r == "elytra length shorter than width (swapped?)" for _, r in excluded) == sum(
        n for _, n in s_beetles.PLATES
    )


def test_manifests_are_byte_identical(pristine, tmp_path):
    roots = {
        "waid": pristine / "waid",
        "neon_beetles": pristine / "2018-neon-beetles",
        "hyena": pristine / "hyena",
    }
    man.build(list(roots), roots, tmp_path / "a")
    man.build(list(roots), roots, tmp_path / "b")
    for f in sorted((tmp_path / "a").iterdir()):
        assert f.read_bytes() == (tmp_path / "b" / f.name).read_bytes(), f.name


def test_miniature_is_deterministic(tmp_path):
    for d in ("a", "b"):
        s_beetles.synth(tmp_path / d)
        s_wildme.synth(tmp_path / d, "gzcd")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert files and all(
        (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files
    )
