"""2018-NEON-beetles (imageomics/2018-NEON-beetles) reader: ``BeetleMeasurements.csv`` + group images.

One CSV row per measurement (``structure`` ElytraLength / ElytraWidth), two per beetle per annotator.
``scalebar`` and ``coords_pix`` are JSON line end points ``{"x1":…, "y1":…, "x2":…, "y2":…}``;
``coords_pix_scaled_up`` (image-viewer version) uses single quotes and is parsed too. ``cm_pix`` is
pixels per 1 cm on the ruler. Older (BeetlePalooza v1) column names are accepted as aliases.

Choices (the paper is silent):
* One annotator per picture: ``IsaFluck`` (who did every picture and whose rows make
  ``individual_metadata.csv``), else the annotator with most rows (ties by name).
* Coordinate frame: ``coords_pix`` is used when present; a file with only ``coords_pix_scaled_up``
  uses the full ``group_images/`` with the scale bar scaled by image_dim / resized_image_dim. With
  ``coords_pix``, ``beetle_images_resized/<pictureID>`` when present (the frame the
  1949×1299 annotations were made in), else ``group_images/<pictureID>`` with ``coords_pix`` as is.
  The manifest audit rejects any picture whose lines fall outside its image.
* A picture's count is verified only when its individuals are exactly 1..N with N < 99 (99+ means
  the count may be capped, per the processing README); otherwise it is excluded from counting.
* A beetle whose recorded length is shorter than its width (swapped measurements, EDA-0-3) is
  excluded from the measurement tasks.
"""

from __future__ import annotations

import ast
import csv
import io
import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from builder.common import Report, SourceFormatError

SOURCE = "neon_beetles"
CSV_NAME = "BeetleMeasurements.csv"
PREFERRED_ANNOTATOR = "IsaFluck"
CAPPED_INDIVIDUAL = 99
CODE_RE = re.compile(r"^A\d{11}$")
STRUCTURES = {"elytralength": "length", "elytrawidth": "width"}
ALIASES = {
    "PictureID": "pictureID",
    "NEON_sampleID_": "NEON_sampleID",
    "field_site_name": "site_name",
    "workflow_id": "workflowID",
    "lyingstraight": "lying_flat",
    "scale_dist_pix": "cm_pix",
}
REQUIRED = ("pictureID", "scalebar", "cm_pix", "individual", "structure", "user_name")


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float

    @property
    def length(self) -> float:
        return math.hypot(self.x2 - self.x1, self.y2 - self.y1)

    def scaled(self, sx: float, sy: float) -> Line:
        return Line(self.x1 * sx, self.y1 * sy, self.x2 * sx, self.y2 * sy)


@dataclass(frozen=True)
class Beetle:
    individual: int
    length: Line
    width: Line
    length_cm: float
    width_cm: float

    def box(self, pad: float = 0.2) -> tuple[float, float, float, float]:
        """``[x, y, w, h]`` around both elytra lines, padded by ``pad`` × elytra length on each side."""
        xs = [self.length.x1, self.length.x2, self.width.x1, self.width.x2]
        ys = [self.length.y1, self.length.y2, self.width.y1, self.width.y2]
        m = pad * self.length.length
        return (min(xs) - m, min(ys) - m, max(xs) - min(xs) + 2 * m, max(ys) - min(ys) + 2 * m)

    @property
    def center(self) -> tuple[float, float]:
        x, y, w, h = self.box()
        return (x + w / 2, y + h / 2)


@dataclass(frozen=True)
class Plate:
    picture_id: str  # file name without extension
    path: str  # image path relative to the source root
    annotator: str
    scalebar: Line
    cm_pix: float
    beetles: tuple[Beetle, ...]  # usable for measurement tasks
    n_individuals: int
    count_verified: bool
    count_reason: str
    scientific_name: str
    genus: str
    species: str
    code: str | None  # printed accession code (OCR answer) when the picture id is one


def parse_line(text: str) -> Line:
    """A line from JSON (``{"x1": …}``) or its single-quoted Python-literal variant."""
    try:
        obj = json.loads(text)
    except (json.JSONDecodeError, TypeError):
        try:
            obj = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError):
            raise ValueError(f"not a JSON/literal line object: {text!r:.80}") from None
    if not isinstance(obj, dict) or not all(k in obj for k in ("x1", "y1", "x2", "y2")):
        raise ValueError(f"expected keys x1, y1, x2, y2, got {text!r:.80}")
    vals = [obj[k] for k in ("x1", "y1", "x2", "y2")]
    if not all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) for v in vals):
        raise ValueError(f"non-numeric end point in {text!r:.80}")
    return Line(*(float(v) for v in vals))


def _rows(path: Path, report: Report) -> tuple[list[str], list[tuple[int, dict]]]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise SourceFormatError(f"{path}: not found (expected {CSV_NAME} at the dataset root)") from None
    except UnicodeDecodeError as exc:
        raise SourceFormatError(f"{path}: not UTF-8 text: {exc}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    header = [ALIASES.get(h, h) for h in (reader.fieldnames or [])]
    missing = [c for c in REQUIRED if c not in header]
    if "coords_pix" not in header and "coords_pix_scaled_up" not in header:
        missing.append("coords_pix")
    if missing:
        raise SourceFormatError(f"{path}: missing columns {missing}; header is {reader.fieldnames}")
    reader.fieldnames = header
    rows = []
    while True:
        start = reader.line_num + 1  # the line a record starts on (a quoted field may span lines)
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            report.error(path, start, f"unreadable CSV record: {exc}")
            continue
        if None in row or any(v is None for v in row.values()):
            report.error(path, start, "wrong number of fields (truncated or extra separator)")
            continue
        rows.append((start, row))
    return header, rows


def read(root: str | Path, report: Report) -> tuple[list[Plate], list[tuple[str, str]]]:
    """Plates (one per picture) plus exclusions ``(id, reason)``; bad rows go to ``report``."""
    root = Path(root)
    path = root / CSV_NAME
    header, rows = _rows(path, report)
    scaled = "coords_pix" not in header
    coord_col = "coords_pix_scaled_up" if scaled else "coords_pix"
    by_pic: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for lineno, row in rows:
        pic = row["pictureID"].strip()
        if not pic:
            report.error(path, lineno, "empty pictureID")
            continue
        by_pic[pic].append((lineno, row))
    plates: list[Plate] = []
    excluded: list[tuple[str, str]] = []
    for pic in sorted(by_pic):
        plate = _plate(root, path, pic, by_pic[pic], coord_col, scaled, report, excluded)
        if plate is not None:
            plates.append(plate)
    return plates, excluded


def _scale_factor(row: dict) -> float:
    """Full-frame / resized-frame factor from ``image_dim`` and ``resized_image_dim`` ("(H, W, C)")."""
    try:
        full = ast.literal_eval(row["image_dim"])
        small = ast.literal_eval(row["resized_image_dim"])
        return float(full[1]) / float(small[1])
    except (KeyError, ValueError, SyntaxError, TypeError, IndexError, ZeroDivisionError):
        raise ValueError(
            "coords_pix_scaled_up needs image_dim and resized_image_dim as '(H, W, C)'"
        ) from None


def _image_path(root: Path, pic: str, scaled: bool) -> str:
    if not scaled and (root / "beetle_images_resized" / pic).is_file():
        return f"beetle_images_resized/{pic}"
    return f"group_images/{pic}"


def _plate(root, path, pic, rows, coord_col, scaled, report, excluded) -> Plate | None:
    stem = pic.rsplit(".", 1)[0] if pic.lower().endswith((".jpg", ".jpeg", ".png")) else pic
    per_user: dict[str, list[tuple[int, dict]]] = defaultdict(list)
    for lineno, row in rows:
        per_user[row["user_name"].strip()].append((lineno, row))
    if PREFERRED_ANNOTATOR in per_user:
        user = PREFERRED_ANNOTATOR
    else:
        user = sorted(per_user, key=lambda u: (-len(per_user[u]), u))[0]
    scalebar = cm_pix = None
    meas: dict[tuple[int, str], tuple[Line, float]] = {}
    dup: set[int] = set()
    individuals: set[int] = set()
    bad_individuals: set[int] = set()
    for lineno, row in per_user[user]:
        try:
            sb = parse_line(row["scalebar"])
            cp = float(row["cm_pix"])
            if scaled:
                f = _scale_factor(row)
                sb, cp = sb.scaled(f, f), cp * f
            if not (cp > 0 and math.isfinite(cp)):
                raise ValueError(f"cm_pix must be a positive number, got {row['cm_pix']!r}")
            ind = int(float(row["individual"]))
            if ind < 1:
                raise ValueError(f"individual must be ≥ 1, got {ind}")
            structure = STRUCTURES.get(row["structure"].strip().lower())
            if structure is None:
                raise ValueError(f"structure {row['structure']!r} is not ElytraLength/ElytraWidth")
            line = parse_line(row[coord_col])
        except (ValueError, KeyError) as exc:
            report.error(path, lineno, f"{pic}: {exc}")
            try:
                bad_individuals.add(int(float(row["individual"])))
            except ValueError:
                excluded.append((stem, f"row {lineno}: unreadable individual number"))
                return None
            continue
        if scalebar is None:
            scalebar, cm_pix = sb, cp
        elif abs(cp - cm_pix) > 1e-6:
            report.error(path, lineno, f"{pic}: cm_pix {cp} differs from {cm_pix} earlier in the picture")
        individuals.add(ind)
        if (ind, structure) in meas:
            report.error(path, lineno, f"{pic}: individual {ind} has two {structure} rows")
            dup.add(ind)
            continue
        dist_pix = line.length
        if row.get("dist_pix", "").strip():
            try:
                recorded = float(row["dist_pix"])
            except ValueError:
                recorded = float("nan")
            if not scaled and not math.isclose(recorded, dist_pix, rel_tol=0.01, abs_tol=1.5):
                report.error(
                    path, lineno, f"{pic}: dist_pix {recorded} disagrees with the line ({dist_pix:.2f})"
                )
                bad_individuals.add(ind)
                continue
        meas[(ind, structure)] = (line, cp)
    if scalebar is None:
        excluded.append((stem, "no usable measurement rows"))
        return None
    n = max(individuals | bad_individuals)
    every = individuals | bad_individuals
    if n >= CAPPED_INDIVIDUAL:
        verified, reason = False, f"individual numbers reach {n} (≥ 99: count may be capped)"
    elif every != set(range(1, n + 1)):
        verified, reason = (
            False,
            f"individual numbers are not 1..{n} (missing {sorted(set(range(1, n + 1)) - every)[:5]})",
        )
    else:
        verified, reason = True, ""
    beetles = []
    for ind in sorted(individuals):
        if ind in dup or ind in bad_individuals:
            excluded.append((f"{stem}_{ind}", "bad or duplicate measurement row"))
            continue
        if (ind, "length") not in meas or (ind, "width") not in meas:
            excluded.append((f"{stem}_{ind}", "length or width measurement missing"))
            continue
        length, width = meas[(ind, "length")][0], meas[(ind, "width")][0]
        # dist_cm = dist_pix / cm_pix (the dataset's own definition), from the line as drawn
        l_cm, w_cm = length.length / cm_pix, width.length / cm_pix
        if l_cm < w_cm:
            excluded.append((f"{stem}_{ind}", "elytra length shorter than width (swapped?)"))
            continue
        beetles.append(Beetle(ind, length, width, l_cm, w_cm))
    first = per_user[user][0][1]
    return Plate(
        picture_id=stem,
        path=_image_path(root, pic, scaled),
        annotator=user,
        scalebar=scalebar,
        cm_pix=cm_pix,
        beetles=tuple(beetles),
        n_individuals=n,
        count_verified=verified,
        count_reason=reason,
        scientific_name=(first.get("scientificName") or "").strip(),
        genus=(first.get("genus") or "").strip(),
        species=(first.get("species") or "").strip(),
        code=stem if CODE_RE.match(stem) else None,
    )


def read_individual_metadata(path: str | Path, report: Report) -> dict[str, tuple[float, float]]:
    """``individual_metadata.csv``: ``combinedID`` → (elytraLength cm, elytraWidth cm)."""
    path = Path(path)
    text = path.read_bytes().decode("utf-8-sig")
    reader = csv.DictReader(io.StringIO(text, newline=""))
    need = ("combinedID", "elytraLength", "elytraWidth")
    if not reader.fieldnames or any(c not in reader.fieldnames for c in need):
        raise SourceFormatError(f"{path}: expected columns {need}, header is {reader.fieldnames}")
    out = {}
    for row in reader:
        try:
            out[row["combinedID"]] = (float(row["elytraLength"]), float(row["elytraWidth"]))
        except (TypeError, ValueError):
            report.error(path, reader.line_num, "non-numeric elytraLength/elytraWidth")
    return out
