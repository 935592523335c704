"""biovqa.data: loading configs from a Hub-shaped folder and attaching source pixels to image_ref rows."""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from biovqa.data import MissingImagesError, attach_image_ref, attach_images, decode_image, load_questions
from biovqa.schema import QUESTION_SCHEMA
from biovqa.sources import load_sources
from builder import tiny_vlms


@pytest.fixture
def ds(tmp_path):
    return tiny_vlms.make_question_folder(tmp_path, per_task=4)


def test_load_sorted_filtered_and_limited_per_task(ds):
    folder, _ = ds
    table = load_questions(folder, "lite")
    qids = table.column("qid").to_pylist()
    assert qids == sorted(qids) and len(qids) == 4 * 4 + 3
    c1 = load_questions(folder, "lite", tasks=["c1"], limit=2)
    assert c1.column("qid").to_pylist() == ["c1.phylum/synth/0000", "c1.phylum/synth/0001"]
    two = load_questions(folder, "lite", tasks=["c2.morphology", "c4.random"], limit=1)
    assert two.column("qid").to_pylist() == ["c2.morphology/synth/0000", "c4.random/synth/0000"]


def test_load_errors_name_the_problem(ds, tmp_path):
    folder, _ = ds
    with pytest.raises(FileNotFoundError, match=r"config 'c9' not found.*\['lite'\]"):
        load_questions(folder, "c9")
    with pytest.raises(ValueError, match="no rows for tasks"):
        load_questions(folder, "lite", tasks=["c3.ocr"])
    empty = tmp_path / "empty"
    (empty / "data" / "lite").mkdir(parents=True)
    pq.write_table(QUESTION_SCHEMA.empty_table(), empty / "data" / "lite" / "test-00000-of-00001.parquet")
    with pytest.raises(ValueError, match="holds no questions"):
        load_questions(empty, "lite")
    bad = tmp_path / "bad" / "data" / "lite"
    bad.mkdir(parents=True)
    pq.write_table(pa.table({"qid": ["x"]}), bad / "test-00000-of-00001.parquet")
    with pytest.raises(ValueError, match=r"test-00000-of-00001.parquet: missing question columns"):
        load_questions(tmp_path / "bad", "lite")
    with pytest.raises(FileNotFoundError, match="not a Hub dataset id"):
        load_questions(tmp_path / "nowhere" / "x" / "y", "lite")


def test_attach_resolves_cub_file_treeoflife_file_and_bgr_shard(ds):
    folder, sources = ds
    table = load_questions(folder, "lite")
    got = attach_images(table, sources, verify_sha256=True)
    assert got.excluded == []
    images = dict(
        zip(got.table.column("qid").to_pylist(), got.table.column("image").to_pylist(), strict=True)
    )
    assert all(im and im["bytes"] for im in images.values())
    shard_img = decode_image(images["c1.phylum/synth/0901"]["bytes"])
    assert shard_img.size == (30, 20)
    assert shard_img.getpixel((0, 0)) == (160, 80, 40)  # BGR (40, 80, 160) -> RGB
    assert decode_image(images["c2.morphology/synth/0900"]["bytes"]).size == (50, 40)


def test_missing_images_listed_together_or_counted_with_skip(ds, tmp_path):
    folder, sources = ds
    table = load_questions(folder, "lite")
    (sources.parent / "cub" / "CUB_200_2011" / "images" / "001.Bird" / "Bird_0001.jpg").unlink()
    toml = tmp_path / "S.toml"
    toml.write_text(f'[sources]\ncub = "{sources.parent / "cub"}"\n')  # treeoflife root not configured
    with pytest.raises(MissingImagesError) as err:
        attach_images(table, toml)
    msg = str(err.value)
    assert "3 source image(s)" in msg and "Bird_0001.jpg not found (looked in" in msg
    assert "source 'treeoflife' has no root in SOURCES.toml" in msg
    got = attach_images(table, toml, skip_missing=True)
    assert len(got.excluded) == 3 and got.table.num_rows == table.num_rows - 3
    with pytest.raises(MissingImagesError, match="no --sources"):
        attach_images(table, None)


def test_sha256_mismatch_is_an_error(ds):
    folder, sources = ds
    table = load_questions(folder, "lite", tasks=["c2"])
    (sources.parent / "cub" / "CUB_200_2011" / "images" / "001.Bird" / "Bird_0001.jpg").write_bytes(b"other")
    with pytest.raises(MissingImagesError, match="sha256 mismatch"):
        attach_images(table, sources, verify_sha256=True)


def test_attach_image_ref_for_dataset_map(ds):
    folder, sources = ds
    roots = load_sources(sources)
    row = load_questions(folder, "lite", tasks=["c1"]).drop_columns(["image"]).to_pylist()[-1]
    row["image"] = None
    out = attach_image_ref(row, roots)
    assert Image.open(io.BytesIO(out["image"]["bytes"])).size == (30, 20)
    row["image_ref"] = dict(row["image_ref"], id="../../etc/passwd")
    with pytest.raises(ValueError, match="leaves the source root"):
        attach_image_ref(row, roots)


def test_decode_caps_the_long_side():
    buf = io.BytesIO()
    Image.new("RGB", (400, 100)).save(buf, format="PNG")
    assert decode_image(buf.getvalue(), max_side=200).size == (200, 50)
    from PIL import UnidentifiedImageError

    with pytest.raises(UnidentifiedImageError):
        decode_image(b"not an image")
