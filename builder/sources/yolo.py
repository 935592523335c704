"""Generic YOLO label reader (``class cx cy w h`` per line, normalised to [0, 1]).

Used by WAID (Roboflow export) and the NEON-beetles round-1 CVAT "YOLO 1.1" export. A label file is
all-or-nothing: one bad line makes the whole file unusable for counting (its completeness can no
longer be verified), so the file is reported and ``None`` returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from builder.common import Report, SourceFormatError


@dataclass(frozen=True)
class YoloBox:
    cls: int
    cx: float
    cy: float
    w: float
    h: float

    def to_xywh(self, width: int, height: int) -> tuple[float, float, float, float]:
        """Absolute top-left ``[x, y, w, h]`` in pixels of an image of the given size."""
        return (
            (self.cx - self.w / 2) * width,
            (self.cy - self.h / 2) * height,
            self.w * width,
            self.h * height,
        )


def _read_text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SourceFormatError(f"{path}: not UTF-8 text: {exc}") from None


def read_classes(path: str | Path) -> list[str]:
    """Class names, one a line (``classes.txt`` / ``obj.names``); CRLF and a missing final newline are fine."""
    path = Path(path)
    if not path.is_file():
        raise SourceFormatError(f"{path}: class list not found (expected one class name per line)")
    names = [line.strip() for line in _read_text(path).splitlines()]
    while names and not names[-1]:
        names.pop()
    if not names or any(not n for n in names):
        raise SourceFormatError(f"{path}: expected one non-empty class name per line, got {names!r}")
    if len(set(names)) != len(names):
        raise SourceFormatError(f"{path}: duplicate class names {names!r}")
    return names


def read_label_file(path: str | Path, n_classes: int, report: Report) -> list[YoloBox] | None:
    """Parse one YOLO label file; ``None`` (and a reported bad row) when any line is malformed."""
    path = Path(path)
    boxes: list[YoloBox] = []
    for lineno, raw in enumerate(_read_text(path).splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 5:
            report.error(path, lineno, f"expected 'class cx cy w h' (5 fields), got {len(parts)}: {line!r}")
            return None
        try:
            cls = int(parts[0])
            cx, cy, w, h = (float(p) for p in parts[1:])
        except ValueError:
            report.error(path, lineno, f"non-numeric field in {line!r}")
            return None
        if not 0 <= cls < n_classes:
            report.error(path, lineno, f"class {cls} outside 0..{n_classes - 1}")
            return None
        if not (0 <= cx <= 1 and 0 <= cy <= 1 and 0 < w <= 1 and 0 < h <= 1):
            report.error(path, lineno, f"box {cx, cy, w, h} is not normalised to [0, 1] with positive size")
            return None
        boxes.append(YoloBox(cls, cx, cy, w, h))
    return boxes
