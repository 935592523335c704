"""The embedded default end to end: miniature sources -> Hub folder -> load_dataset, Lite, determinism."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from biovqa.schema import CONFIGS
from biovqa.sources import load_sources
from biovqa.tasks import TASK_IDS
from builder import pipeline

REPO = Path(__file__).resolve().parents[1]
FROZEN_LITE = REPO / "lite" / "miniature-qids.txt"


def _quiet(_msg: str) -> None:
    pass


@pytest.fixture(scope="module")
def hub(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("mini-a")
    toml = pipeline.sample(root / "sources", log=_quiet)
    pipeline.build(load_sources(toml), root / "bio-vqa", work_dir=root / "work", scale="mini", log=_quiet)
    return root / "bio-vqa"


def _digest(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_every_config_loads_with_images_and_every_task_is_present(hub, tmp_path):
    from datasets import load_dataset

    info = json.loads((hub / "build_info.json").read_text())
    seen_tasks = set()
    for cfg in CONFIGS:
        ds = load_dataset(str(hub), cfg, split="test", cache_dir=str(tmp_path / cfg))
        assert len(ds) == info["counts"][cfg] > 0
        if cfg != "lite":
            seen_tasks.update(ds.unique("task"))
        rendered = ds.filter(lambda ex: ex["image"] is not None).select(range(1))
        if len(rendered):
            assert rendered[0]["image"].size[0] > 0  # embedded bytes decode to a PIL image
    assert seen_tasks == set(TASK_IDS)
    assert sum(info["tasks"].values()) == sum(info["counts"][c] for c in ("c1", "c2", "c3", "c4"))


def test_source_photos_are_references_with_hashes(hub):
    table = pq.read_table(sorted((hub / "data" / "c1").glob("*.parquet")), columns=["image", "image_ref"])
    refs = table.column("image_ref").to_pylist()
    assert all(r and r["source"] == "treeoflife" and len(r["sha256"]) == 64 for r in refs)
    assert all(img is None for img in table.column("image").to_pylist())


def test_lite_matches_the_frozen_list_and_the_card_says_it_takes_all(hub):
    qids = (hub / "lite" / "qids.txt").read_text().splitlines()
    assert qids == FROZEN_LITE.read_text().splitlines()
    report = json.loads((hub / "lite" / "report.json").read_text())
    assert set(report) == set(TASK_IDS)
    assert all(r["selected"] == min(500, r["available"]) for r in report.values())
    card = (hub / "README.md").read_text()
    assert "config_name: lite" in card and "fewer than 500 items here" in card
    assert "fallback:" in card  # the C4 embedder used offline is named on the card


def test_publish_dry_run_loads_every_config(hub):
    from builder.hub.publish import dry_run

    report = dry_run(hub)
    assert set(report["configs"]) == set(CONFIGS)
    assert "README.md" in report["files"] and "resources/taxonomy.parquet" in report["files"]


def test_a_second_build_is_byte_identical(hub, tmp_path):
    toml = pipeline.sample(tmp_path / "sources", log=_quiet)
    pipeline.build(
        load_sources(toml), tmp_path / "bio-vqa", work_dir=tmp_path / "work", scale="mini", log=_quiet
    )
    first, second = _digest(hub), _digest(tmp_path / "bio-vqa")
    assert first.keys() == second.keys()
    assert [k for k in first if first[k] != second[k]] == []
