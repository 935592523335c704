"""Shared builder utilities: bad-row reporting, hashing, bounded image decoding, safe extraction."""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image

#: Decompression-bomb bound for every image the builder decodes (about 16K x 11K pixels).
MAX_IMAGE_PIXELS = 178_956_970
Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS


class SourceFormatError(ValueError):
    """A source file does not have the format its reader expects (names file, line and reason)."""


@dataclass(frozen=True)
class BadRow:
    file: str
    line: int  # 1-based; 0 when the problem is the whole file
    reason: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.reason}"


@dataclass
class Report:
    """Collects bad rows. ``strict=True`` raises on the first one; otherwise they are counted."""

    strict: bool = False
    bad: list[BadRow] = field(default_factory=list)

    def error(self, file: str | Path, line: int, reason: str) -> None:
        row = BadRow(str(file), line, reason)
        if self.strict:
            raise SourceFormatError(str(row))
        self.bad.append(row)

    @property
    def n_bad(self) -> int:
        return len(self.bad)

    def summary(self) -> str:
        if not self.bad:
            return "no bad rows"
        head = "\n".join(f"  {b}" for b in self.bad[:20])
        more = f"\n  … and {len(self.bad) - 20} more" if len(self.bad) > 20 else ""
        return f"{len(self.bad)} bad rows:\n{head}{more}"


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def open_image_checked(data: bytes, name: str) -> Image.Image:
    """Decode image bytes fully (bounded by MAX_IMAGE_PIXELS); raise SourceFormatError naming the file."""
    try:
        img = Image.open(io.BytesIO(data))
        img.load()
    except Image.DecompressionBombError as exc:
        raise SourceFormatError(f"{name}: image too large (decompression bomb guard): {exc}") from None
    except Exception as exc:  # PIL raises many types for corrupt/truncated data
        raise SourceFormatError(f"{name}: cannot decode image: {exc}") from None
    return img


def png_bytes(img: Image.Image) -> bytes:
    """Deterministic PNG encoding (no timestamps/metadata)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()


def jpeg_bytes(img: Image.Image, quality: int = 90) -> bytes:
    """Deterministic JPEG encoding."""
    buf = io.BytesIO()
    img.convert("RGB").save(buf, format="JPEG", quality=quality, optimize=False, progressive=False)
    return buf.getvalue()


def safe_extract(archive: str | Path, target: str | Path) -> list[Path]:
    """Extract a zip/tar archive, refusing any member whose path leaves ``target``."""
    archive, target = Path(archive), Path(target).resolve()
    target.mkdir(parents=True, exist_ok=True)
    out: list[Path] = []
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                dest = (target / info.filename).resolve()
                if not dest.is_relative_to(target):
                    raise SourceFormatError(f"{archive}: member {info.filename!r} leaves the target folder")
            zf.extractall(target)
            out = [target / i.filename for i in zf.infolist()]
    elif tarfile.is_tarfile(archive):
        with tarfile.open(archive) as tf:
            for m in tf.getmembers():
                dest = (target / m.name).resolve()
                if not dest.is_relative_to(target) or m.issym() or m.islnk():
                    raise SourceFormatError(f"{archive}: member {m.name!r} leaves the target folder")
            tf.extractall(target, filter="data")
            out = [target / m.name for m in tf.getmembers()]
    else:
        raise SourceFormatError(f"{archive}: not a zip or tar archive")
    return out
