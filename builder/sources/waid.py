"""WAID (Wildlife Aerial Images from Drone, xiaohuicui/WAID) reader.

Layout: ``WAID/classes.txt`` (sheep, cattle, seal, camelus, kiang, zebra; no trailing newline),
``WAID/images/{train,valid,test}/<stem>.jpg`` and ``WAID/labels/{split}/<stem>.txt`` (YOLO,
normalised). The root may be the folder holding ``WAID/`` or ``WAID/`` itself. An image without a
label file, or with an empty or malformed one, cannot have its count verified and is excluded.
"""

from __future__ import annotations

from pathlib import Path

from builder.common import Report, SourceFormatError
from builder.sources.records import ImageRecord, Obj, ReadResult
from builder.sources.yolo import read_classes, read_label_file

SOURCE = "waid"
SPLITS = ("train", "valid", "test")
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def find_root(root: str | Path) -> Path:
    """The ``WAID`` folder under ``root`` (or ``root`` itself)."""
    root = Path(root)
    for cand in (root / "WAID", root):
        if (cand / "classes.txt").is_file() and (cand / "images").is_dir():
            return cand
    raise SourceFormatError(f"{root}: not a WAID folder (expected WAID/classes.txt and WAID/images/<split>/)")


def read(root: str | Path, report: Report) -> ReadResult:
    """Read every split; image ids are ``<split>/<stem>``, paths relative to ``root``."""
    root = Path(root)
    base = find_root(root)
    classes = read_classes(base / "classes.txt")
    out = ReadResult()
    for split in SPLITS:
        img_dir = base / "images" / split
        if not img_dir.is_dir():
            continue
        for img in sorted(p for p in img_dir.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES):
            iid = f"{split}/{img.stem}"
            label = base / "labels" / split / f"{img.stem}.txt"
            if not label.is_file():
                out.excluded.append((iid, "no label file: annotation completeness unverifiable"))
                continue
            boxes = read_label_file(label, len(classes), report)
            if boxes is None:
                out.excluded.append((iid, "malformed label file"))
                continue
            if not boxes:
                out.excluded.append((iid, "empty label file: annotation completeness unverifiable"))
                continue
            objs = tuple(
                Obj(classes[b.cls], (b.cx - b.w / 2, b.cy - b.h / 2, b.w, b.h), normalized=True)
                for b in boxes
            )
            out.records.append(ImageRecord(SOURCE, iid, img.relative_to(root).as_posix(), objs))
    return out
