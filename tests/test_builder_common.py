"""Shared builder utilities: archive extraction that refuses escapes, bounded decoding, bad-row reports."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest
from PIL import Image

from builder.common import Report, SourceFormatError, open_image_checked, png_bytes, safe_extract


def test_zip_member_leaving_the_target_is_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("ok/a.txt", "fine")
        zf.writestr("../../escape.txt", "nope")
    with pytest.raises(SourceFormatError, match="leaves the target folder"):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "escape.txt").exists() and not (tmp_path / "out" / "ok").exists()


def test_tar_with_absolute_path_or_symlink_is_refused(tmp_path):
    for name, kind in (("/etc/evil", tarfile.REGTYPE), ("link", tarfile.SYMTYPE)):
        archive = tmp_path / f"evil-{kind!r}.tar"
        with tarfile.open(archive, "w") as tf:
            info = tarfile.TarInfo(name)
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "/etc/passwd"
                tf.addfile(info)
            else:
                data = b"x"
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        with pytest.raises(SourceFormatError, match="leaves the target folder"):
            safe_extract(archive, tmp_path / "out")


def test_good_archive_extracts(tmp_path):
    archive = tmp_path / "good.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("CUB_200_2011/images.txt", "1 a.jpg\n")
    paths = safe_extract(archive, tmp_path / "out")
    assert (tmp_path / "out" / "CUB_200_2011" / "images.txt").read_text() == "1 a.jpg\n"
    assert len(paths) == 1
    with pytest.raises(SourceFormatError, match="not a zip or tar"):
        safe_extract(tmp_path / "out" / "CUB_200_2011" / "images.txt", tmp_path / "o2")


def test_image_decoding_is_bounded_and_names_the_file(monkeypatch):
    data = png_bytes(Image.new("RGB", (64, 64), (1, 2, 3)))
    assert open_image_checked(data, "a.png").size == (64, 64)
    with pytest.raises(SourceFormatError, match="b.png: cannot decode"):
        open_image_checked(data[:40], "b.png")
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100)  # 4096 px > 2x the bound: a bomb
    with pytest.raises(SourceFormatError, match="c.png: image too large"):
        open_image_checked(data, "c.png")


def test_report_strict_and_tolerant():
    tolerant = Report()
    tolerant.error("x.txt", 3, "bad column count")
    assert tolerant.n_bad == 1 and "x.txt:3: bad column count" in tolerant.summary()
    with pytest.raises(SourceFormatError, match="x.txt:4: duplicate id"):
        Report(strict=True).error("x.txt", 4, "duplicate id")
