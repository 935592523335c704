"""The shipped C2 resources are what tools/fit_c2_resources.py derives (checked against real CUB when present)."""

from __future__ import annotations

import importlib.util
import json
from importlib import resources
from pathlib import Path

import pytest

TOOL = Path(__file__).resolve().parents[1] / "tools" / "fit_c2_resources.py"


def _tool():
    spec = importlib.util.spec_from_file_location("fit_c2_resources", TOOL)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _shipped(name: str) -> dict:
    return json.loads(resources.files("biovqa").joinpath(f"resources/c2/{name}").read_text(encoding="utf-8"))


def test_colour_anchors_are_the_fit():
    fitted = _tool().fit_color_anchors()
    assert fitted == _shipped("color_anchors.json")["srgb"]


def test_anatomy_layout_matches_real_cub_part_locs(shared_sources):
    cub = shared_sources / "cub-200-2011"
    if not (cub / "full_metadata" / "part_locs.txt").is_file():
        pytest.skip("full CUB part_locs.txt is not present")
    tool = _tool()
    layout2d = tool.median_part_layout(
        cub / "full_metadata" / "part_locs.txt", cub / "full_metadata" / "bounding_boxes.txt"
    )
    shipped = _shipped("anatomy_layout.json")
    assert set(layout2d) == set(shipped["parts"])
    for part, (x, y) in layout2d.items():
        assert shipped["parts"][part][:2] == pytest.approx([x, y], abs=1e-6), part
    assert tool.solve_z(layout2d) == pytest.approx(shipped["z_offset"], abs=1e-6)


def test_median_layout_on_a_tiny_fixture(tmp_path):
    # two images of a bird facing left and right: mirroring puts both beaks on the right
    locs = [
        "1 2 90 10 1",  # beak right
        "1 14 10 50 1",  # tail left
        "2 2 10 10 1",  # beak left -> mirrored
        "2 14 90 50 1",
        "2 5 50 50 0",  # invisible crown: ignored
    ]
    (tmp_path / "part_locs.txt").write_text("\n".join(locs) + "\n")
    (tmp_path / "bounding_boxes.txt").write_text("1 0 0 100 100\n2 0 0 100 100\n")
    layout = _tool().median_part_layout(tmp_path / "part_locs.txt", tmp_path / "bounding_boxes.txt")
    assert layout["beak"] == pytest.approx((0.9, 0.1))
    assert layout["tail"] == pytest.approx((0.1, 0.5))
