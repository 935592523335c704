"""CUB-200-2011 reader and C2 manifest: the drawn miniature, the real excerpts, hostile input."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from builder.common import Report, SourceFormatError
from builder.manifests import c2 as c2_manifest
from builder.sources import cub
from builder.synth import cub as cub_synth


@pytest.fixture(scope="module")
def mini(tmp_path_factory) -> Path:
    """The synthetic miniature, written once for this module (read-only for the tests)."""
    out = tmp_path_factory.mktemp("cub-mini")
    assert cub_synth.synth(out) == {"cub": "cub"}
    return out / "cub"


@pytest.fixture
def mini_copy(mini, tmp_path) -> Path:
    """A private copy of the miniature to damage."""
    dst = tmp_path / "cub"
    shutil.copytree(mini, dst)
    return dst


def _dataset(root: Path) -> Path:
    return root / cub.DATASET_DIR


# ----------------------------------------------------------------------------------- the miniature


def test_miniature_round_trips_through_the_reader(mini):
    report = Report(strict=True)
    data = cub.read_cub(mini, report)
    n = len(data.images)
    assert 30 <= n <= 60
    assert len(data.classes) == 200 and data.classes[14] == "014.Indigo_Bunting"
    assert set(data.image_class) == set(data.images) == set(data.bboxes) == set(data.part_locs)
    assert all(len(locs) == cub.N_PARTS for locs in data.part_locs.values())
    assert data.parts[7] == "left eye" and data.parts[13] == "right wing"  # names with spaces
    assert len(data.attributes) == 312 and data.attributes[11].group == "has_wing_color"
    assert data.attributes_path == mini / "attributes.txt"  # the tarball's place, one level up
    assert data.certainties == {1: "not visible", 2: "guessing", 3: "probably", 4: "definitely"}
    assert data.labels is not None and data.labels.n_lines == 312 * n
    assert set(np.unique(data.labels.certainty)) <= {2, 3, 4}  # present labels
    assert data.class_attribute_percent.shape == (200, 312)
    assert not data.missing_files and report.n_bad == 0


def test_miniature_has_the_real_quirks(mini):
    d = _dataset(mini)
    assert b"\r\n" in (d / "bounding_boxes.txt").read_bytes()
    assert b"\r\n" in (d / "attributes" / "image_attribute_labels.txt").read_bytes()
    modes = {Image.open(p).mode for p in (d / "images").rglob("*.jpg")}
    assert modes == {"RGB", "L"}
    assert "0.0 0.0 0" in (d / "parts" / "part_locs.txt").read_text()
    first = (d / "images.txt").read_text().splitlines()[0]
    assert first.startswith("1 001.Black_footed_Albatross/Black_Footed_Albatross_")


def test_manifest_rows_and_contents(mini, tmp_path):
    summary = c2_manifest.build({"cub": mini}, tmp_path)
    table = pq.read_table(tmp_path / "cub.parquet")
    assert summary["rows"] == table.num_rows == len(cub.read_cub(mini).images)
    assert summary["excluded"] == {} and summary["bad_rows"] == 0
    assert "certainty >= 3" in summary["c2_certainty"]
    row = table.slice(0, 1).to_pylist()[0]
    img = Image.open(_dataset(mini) / "images" / row["path"])
    assert (row["width"], row["height"]) == img.size
    x, y, w, h = row["bbox"]
    assert 0 <= x and 0 <= y and x + w <= row["width"] and y + h <= row["height"]
    for p in row["parts"]:
        if p["visible"]:  # every visible part lies inside the bird's box
            assert x - 1 <= p["x"] <= x + w + 1 and y - 1 <= p["y"] <= y + h + 1
        else:
            assert p["x"] == p["y"] == 0.0
    assert {a["certainty"] for a in row["attributes"]} <= {2, 3, 4}
    classes = c2_manifest.load_classes(tmp_path)
    assert classes[14]["category"] == "Bunting" and classes[14]["kind"] == "Indigo"
    assert classes[130]["status"] == "mixed" and classes[130]["genus"] == ""


def test_manifest_is_byte_identical_across_runs(mini, tmp_path):
    c2_manifest.build({"cub": mini}, tmp_path / "a")
    c2_manifest.build({"cub": mini}, tmp_path / "b")
    for name in ("cub.parquet", "cub.exclusions.parquet", "cub_classes.parquet", "cub.summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_synth_is_deterministic_across_processes(tmp_path):
    """Byte-identical miniature from a fresh interpreter with another hash seed (set order!)."""
    cub_synth.synth(tmp_path / "a")
    code = (
        f"from pathlib import Path; from builder.synth.cub import synth; synth(Path({str(tmp_path / 'b')!r}))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=Path(__file__).resolve().parents[1])
    files_a = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*") if p.is_file())
    assert files_a == files_b
    for rel in files_a:
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel


# ----------------------------------------------------------------------------------- hostile input


@pytest.mark.parametrize("place", ["readme", "inside"])
def test_attributes_file_in_every_known_place(mini_copy, place):
    src = mini_copy / "attributes.txt"
    d = _dataset(mini_copy)
    dst = d / "attributes" / "attributes.txt" if place == "readme" else d / "attributes.txt"
    shutil.move(src, dst)
    data = cub.read_cub(mini_copy, with_labels=False)
    assert data.attributes_path == dst and len(data.attributes) == 312


def test_missing_attributes_file_is_listed_not_fatal(mini_copy):
    (mini_copy / "attributes.txt").unlink()
    data = cub.read_cub(mini_copy, with_labels=False)
    assert data.attributes == {} and "attributes.txt" in data.missing_files


def test_missing_required_file_raises_naming_it(mini_copy):
    (_dataset(mini_copy) / "images.txt").unlink()
    with pytest.raises(SourceFormatError, match="images.txt"):
        cub.read_cub(mini_copy)


def test_truncated_and_duplicate_rows_are_reported_and_counted(mini_copy, tmp_path):
    d = _dataset(mini_copy)
    boxes = (d / "bounding_boxes.txt").read_text().splitlines()
    boxes[4] = "5 10.0 20.0"  # truncated row
    (d / "bounding_boxes.txt").write_text("\n".join(boxes) + "\n")
    images = (d / "images.txt").read_text().splitlines()
    images.append(images[0].split(" ", 1)[0] + " 001.Black_footed_Albatross/duplicate.jpg")
    (d / "images.txt").write_text("\n".join(images) + "\n")

    report = Report()
    data = cub.read_cub(mini_copy, report)
    reasons = [str(b) for b in report.bad]
    assert any("bounding_boxes.txt:5" in r and "expected 5 fields" in r for r in reasons)
    assert any(f"images.txt:{len(images)}" in r and "duplicate id 1" in r for r in reasons)
    assert not data.images[1].endswith("duplicate.jpg")  # first occurrence kept

    summary = c2_manifest.build_c2_manifest(mini_copy, tmp_path, Report())
    assert summary["excluded"] == {"no bounding box": 1}
    excl = pq.read_table(tmp_path / "cub.exclusions.parquet").to_pylist()
    assert excl == [{"id": "5", "reason": "no bounding box"}]
    with pytest.raises(SourceFormatError, match="images.txt:.*duplicate id 1"):  # first bad row wins
        cub.read_cub(mini_copy, Report(strict=True))


def test_missing_corrupt_and_oversized_images_are_excluded(mini_copy, tmp_path, monkeypatch):
    data = cub.read_cub(mini_copy, with_labels=False)
    images_dir = _dataset(mini_copy) / "images"
    (images_dir / data.images[1]).unlink()
    jpg = images_dir / data.images[2]
    jpg.write_bytes(jpg.read_bytes()[:200])  # truncated JPEG
    (images_dir / data.images[3]).write_bytes(b"not an image at all")
    summary = c2_manifest.build_c2_manifest(mini_copy, tmp_path, Report())
    assert summary["excluded"] == {"image file missing": 1, "image undecodable": 2}
    assert summary["rows"] == len(data.images) - 3
    assert summary["bad_rows"] == 3  # each named with its file

    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1000)  # every image is now a "bomb"
    summary = c2_manifest.build_c2_manifest(mini_copy, tmp_path / "bomb", Report())
    assert summary["rows"] == 0 and summary["excluded"]["image too large"] == len(data.images) - 3


def test_image_without_attribute_labels_is_excluded(mini_copy, tmp_path):
    path = _dataset(mini_copy) / "attributes" / "image_attribute_labels.txt"
    lines = path.read_bytes().split(b"\r\n")
    path.write_bytes(b"\r\n".join(ln for ln in lines if not ln.startswith(b"2 ")))
    summary = c2_manifest.build_c2_manifest(mini_copy, tmp_path, Report())
    assert summary["excluded"] == {"no attribute labels": 1}


def test_part_outside_the_image_and_hidden_parts(mini_copy, tmp_path):
    d = _dataset(mini_copy)
    lines = (d / "parts" / "part_locs.txt").read_text().splitlines()
    lines[0] = "1 1 5000.0 10.0 1"  # visible, far outside the image
    (d / "parts" / "part_locs.txt").write_text("\n".join(lines) + "\n")
    summary = c2_manifest.build_c2_manifest(mini_copy, tmp_path, Report())
    assert summary["excluded"] == {"visible part outside the image": 1}
    data = cub.read_cub(mini_copy, with_labels=False)
    hidden = [loc for locs in data.part_locs.values() for loc in locs.values() if not loc.visible]
    assert hidden and all(loc.x == loc.y == 0.0 for loc in hidden)


def test_irregular_label_lines_fall_back_to_the_line_parser(tmp_path):
    path = tmp_path / "image_attribute_labels.txt"
    path.write_bytes(b"1 1 0 3 27.7080\r\n1 2 1 4 27.7080\r\n1 3 1\r\n1 4 1 9 3.0\r\n2 2 1 3 1.5\r\n")
    report = Report()
    labels = cub.read_image_attribute_labels(path, report)
    assert labels.image_id.tolist() == [1, 2] and labels.attribute_id.tolist() == [2, 2]
    assert labels.certainty.tolist() == [4, 3] and labels.n_lines == 5
    reasons = sorted(str(b) for b in report.bad)
    assert len(reasons) == 2
    assert ":3:" in reasons[0] and "expected 5 fields" in reasons[0]
    assert ":4:" in reasons[1] and "certainty 9" in reasons[1]


def test_regular_labels_use_the_fast_path(tmp_path):
    path = tmp_path / "labels.txt"
    rows = [f"{i} {a} {int(a % 7 == 0)} {1 + a % 4} 1.0" for i in (1, 2) for a in range(1, 313)]
    path.write_text("\r\n".join(rows) + "\r\n")
    report = Report(strict=True)
    labels = cub.read_image_attribute_labels(path, report, present_only=False)
    assert len(labels.image_id) == 624 and labels.n_lines == 624
    present = cub.read_image_attribute_labels(path, report)
    assert present.attribute_id.tolist() == [a for _ in (1, 2) for a in range(7, 313, 7)]


# ----------------------------------------------------------------------------------- real excerpts


def test_reader_on_the_real_excerpts(shared_sources, tmp_path):
    root = shared_sources / "cub-200-2011"
    report = Report(strict=True)
    data = cub.read_cub(root, report)
    assert sorted(data.images) == [
        4,
        33,
        44,
        55,
        728,
        734,
        750,
        768,
        902,
        904,
        911,
        926,
        1401,
        1600,
        1603,
        1615,
        1638,
    ]
    assert len(data.classes) == 200 and len(data.attributes) == 312
    assert data.attributes[218].value == "large_(16_-_32_in)"
    assert data.bboxes[4] == (112.0, 90.0, 255.0, 242.0)
    assert data.part_locs[4][3] == cub.PartLoc(0.0, 0.0, False)  # hidden belly: "0.0 0.0 0"
    assert data.part_locs[4][1] == cub.PartLoc(221.0, 179.0, True)
    assert data.missing_files == ["attributes/image_attribute_labels.txt"]  # only HEAD5 brought
    head = cub.read_image_attribute_labels(
        root / cub.DATASET_DIR / "attributes" / "image_attribute_labels.HEAD5.txt", report, present_only=False
    )
    assert head.image_id.tolist() == [1] * 5 and head.certainty.tolist() == [3] * 5

    summary = c2_manifest.build_c2_manifest(root, tmp_path, Report(strict=True))
    assert summary["rows"] == 17 and summary["excluded"] == {}
    rows = {r["image_id"]: r for r in c2_manifest.load_images(tmp_path)}
    assert rows[1401]["mode"] == "L"  # the grayscale cormorant
    assert all(not r["attributes"] for r in rows.values())


def test_full_part_locations_parse(shared_sources):
    path = shared_sources / "cub-200-2011" / "full_metadata" / "part_locs.txt"
    report = Report(strict=True)
    locs = cub.read_part_locs(path, report)
    assert len(locs) == 11_788 and all(len(v) == 15 for v in locs.values())
    hidden = sum(not loc.visible for v in locs.values() for loc in v.values())
    assert 0 < hidden < 176_820
