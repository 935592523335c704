"""``biovqa eval`` / ``biovqa models`` from the command line; the floor model reproduces the scorer's floor."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from biovqa.cli_eval import app
from biovqa.schema import QUESTION_SCHEMA
from builder import tiny_vlms

runner = CliRunner()


@pytest.fixture
def ds(tmp_path):
    return tiny_vlms.make_question_folder(tmp_path, per_task=4)


def test_models_json_lists_18():
    res = runner.invoke(app, ["models", "--json"])
    assert res.exit_code == 0
    rows = json.loads(res.stdout)
    assert len(rows) == 18 and rows[0]["checkpoint"] == "Qwen/Qwen2.5-VL-3B-Instruct"
    table = runner.invoke(app, ["models"])
    assert table.exit_code == 0 and "Bio-VQA models (18, Table 13)" in table.stdout


def test_floor_eval_scores_at_the_floor(ds, tmp_path):
    folder, _ = ds
    res = runner.invoke(
        app,
        [
            "eval",
            "--model",
            "floor",
            "--dataset",
            str(folder),
            "--out",
            str(tmp_path / "runs"),
            "--no-progress",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "items: 19 (answered now 19, resumed 0, errors 0, excluded 0)" in res.stdout
    (run_dir,) = (tmp_path / "runs").iterdir()
    card = json.loads((run_dir / "scores" / "scorecard.json").read_text())
    for task in ("c1.phylum", "c4.random"):
        m = card[task]
        assert m["headline"] == pytest.approx(m["floor"]), (task, m)
    again = runner.invoke(
        app,
        [
            "eval",
            "--model",
            "floor",
            "--dataset",
            str(folder),
            "--out",
            str(tmp_path / "runs"),
            "--no-progress",
            "--no-score",
        ],
    )
    assert "resumed 19" in again.stdout


def test_clear_errors_for_missing_sources_and_empty_config(ds, tmp_path):
    folder, sources = ds
    model = tmp_path / "m"  # never reached: sources are checked before weights load
    res = runner.invoke(
        app, ["eval", "--model", str(model), "--dataset", str(folder), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2 and "3 source image(s) could not be attached" in res.output
    assert "no --sources SOURCES.toml was given" in res.output
    res = runner.invoke(
        app,
        [
            "eval",
            "--model",
            "floor",
            "--dataset",
            str(folder),
            "--out",
            str(tmp_path / "o"),
            "--sources",
            str(tmp_path / "nope.toml"),
        ],
    )
    assert res.exit_code == 0  # the floor needs no pixels
    res = runner.invoke(
        app,
        [
            "eval",
            "--model",
            str(model),
            "--dataset",
            str(folder),
            "--out",
            str(tmp_path / "o"),
            "--sources",
            str(tmp_path / "nope.toml"),
        ],
    )
    assert res.exit_code == 2 and "nope.toml: sources file not found" in res.output
    empty = tmp_path / "empty"
    (empty / "data" / "lite").mkdir(parents=True)
    pq.write_table(QUESTION_SCHEMA.empty_table(), empty / "data" / "lite" / "test-00000-of-00001.parquet")
    res = runner.invoke(
        app, ["eval", "--model", "floor", "--dataset", str(empty), "--out", str(tmp_path / "o")]
    )
    assert res.exit_code == 2 and "holds no questions" in res.output
