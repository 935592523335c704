"""DePondFi (Detection of Pond Fish) keypoint reader.

From ``dsabarinathan/DePondFi24``: one ``.txt`` per image with the image's stem, one ``x,y`` pair per
line in absolute pixels, nine keypoints per fish, fish after fish. ASSUMPTION: the label file sits
beside the image or in a sibling ``labels``/``annotations`` folder. A file whose line count is not a
multiple of nine cannot give a verified count and is excluded; each fish's box is its keypoints'
extent.
"""

from __future__ import annotations

from pathlib import Path

from builder.common import Report
from builder.sources.records import ImageRecord, Obj, ReadResult

SOURCE = "depondfi"
KEYPOINTS_PER_FISH = 9
IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png")


def read_keypoints(path: Path, report: Report) -> list[tuple[float, float]] | None:
    """The ``x,y`` pairs of one file; None (reported) when a line is malformed."""
    pts = []
    text = path.read_bytes().decode("utf-8-sig", errors="replace")
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        parts = [p for p in line.replace(";", ",").replace(" ", ",").split(",") if p]
        try:
            x, y = (float(p) for p in parts)
        except ValueError:
            report.error(path, lineno, f"expected 'x,y' in absolute pixels, got {line!r}")
            return None
        if x < 0 or y < 0:
            report.error(path, lineno, f"negative keypoint {line!r}")
            return None
        pts.append((x, y))
    return pts


def _label_for(img: Path) -> Path | None:
    for cand in (
        img.with_suffix(".txt"),
        img.parent.parent / "labels" / img.parent.name / f"{img.stem}.txt",
        img.parent.parent / "annotations" / img.parent.name / f"{img.stem}.txt",
        img.parent.parent / "labels" / f"{img.stem}.txt",
        img.parent.parent / "annotations" / f"{img.stem}.txt",
    ):
        if cand.is_file():
            return cand
    return None


def read(root: str | Path, report: Report) -> ReadResult:
    """Every image under ``root`` (recursively) with its keypoint file; fish = keypoints / 9."""
    root = Path(root)
    out = ReadResult()
    images = sorted(p for p in root.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file())
    for img in images:
        rel = img.relative_to(root).as_posix()
        iid = rel.rsplit(".", 1)[0]
        label = _label_for(img)
        if label is None:
            out.excluded.append((iid, "no keypoint file: annotation completeness unverifiable"))
            continue
        pts = read_keypoints(label, report)
        if pts is None:
            out.excluded.append((iid, "malformed keypoint file"))
            continue
        if not pts or len(pts) % KEYPOINTS_PER_FISH:
            report.error(label, 0, f"{len(pts)} keypoints is not a positive multiple of {KEYPOINTS_PER_FISH}")
            out.excluded.append((iid, "keypoint count not a multiple of 9"))
            continue
        objs = []
        for k in range(0, len(pts), KEYPOINTS_PER_FISH):
            xs = [p[0] for p in pts[k : k + KEYPOINTS_PER_FISH]]
            ys = [p[1] for p in pts[k : k + KEYPOINTS_PER_FISH]]
            objs.append(Obj("fish", (min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))))
        out.records.append(ImageRecord(SOURCE, iid, rel, tuple(objs)))
    return out
