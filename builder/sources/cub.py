"""Reader for CUB-200-2011 in its real on-disk layout (FORMATS.md §1).

Every index file is space separated, 1-based ids, no header. The reader copes with what real copies
do: CRLF endings, names containing spaces (split on the first space only), hidden parts written as
``0.0 0.0 0``, ``attributes.txt`` in any of its three known places, and a 3.7M-line
``image_attribute_labels.txt`` that is streamed with pyarrow (falling back to a line parser that
names every irregular line). Bad rows go to a :class:`builder.common.Report` (file, line, reason);
the first occurrence of a duplicated id wins and the duplicate is reported.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from builder.common import Report, SourceFormatError

DATASET_DIR = "CUB_200_2011"
N_PARTS = 15
N_ATTRIBUTES = 312
CERTAINTY_NAMES = {1: "not visible", 2: "guessing", 3: "probably", 4: "definitely"}


@dataclass(frozen=True)
class PartLoc:
    x: float
    y: float
    visible: bool


@dataclass(frozen=True)
class Attribute:
    attribute_id: int
    name: str  # e.g. "has_wing_color::brown"
    group: str  # "has_wing_color"
    value: str  # "brown"


@dataclass
class AttributeLabels:
    """Image-level attribute labels as parallel arrays (one entry per kept line)."""

    image_id: np.ndarray  # int32
    attribute_id: np.ndarray  # int16
    is_present: np.ndarray  # int8
    certainty: np.ndarray  # int8
    n_lines: int = 0

    def present(self) -> AttributeLabels:
        """Only the labels marked present (what the manifest keeps)."""
        m = self.is_present == 1
        return AttributeLabels(
            self.image_id[m], self.attribute_id[m], self.is_present[m], self.certainty[m], self.n_lines
        )


@dataclass
class CubData:
    """Everything read from one CUB-200-2011 copy, keyed by the dataset's own 1-based ids."""

    root: Path  # the CUB_200_2011 folder
    classes: dict[int, str] = field(default_factory=dict)  # id -> folder name "014.Indigo_Bunting"
    images: dict[int, str] = field(default_factory=dict)  # id -> path relative to images/
    image_class: dict[int, int] = field(default_factory=dict)
    is_training: dict[int, int] = field(default_factory=dict)
    bboxes: dict[int, tuple[float, float, float, float]] = field(default_factory=dict)  # x, y, w, h
    parts: dict[int, str] = field(default_factory=dict)  # id -> "left eye"
    part_locs: dict[int, dict[int, PartLoc]] = field(default_factory=dict)
    attributes: dict[int, Attribute] = field(default_factory=dict)
    attributes_path: Path | None = None
    certainties: dict[int, str] = field(default_factory=dict)
    labels: AttributeLabels | None = None  # present labels only
    class_attribute_percent: np.ndarray | None = None  # (n_classes, 312) in 0-100
    missing_files: list[str] = field(default_factory=list)

    @property
    def images_dir(self) -> Path:
        return self.root / "images"


def find_dataset_dir(root: str | Path) -> Path:
    """The ``CUB_200_2011`` folder given either it or the folder holding it."""
    root = Path(root)
    if (root / DATASET_DIR).is_dir():
        return root / DATASET_DIR
    if (root / "images.txt").is_file():
        return root
    raise SourceFormatError(f"{root}: no {DATASET_DIR}/ folder and no images.txt here")


def find_attributes_file(dataset_dir: Path) -> Path | None:
    """attributes.txt: README place, one level up (tarball), or inside CUB_200_2011/ (MMAL-Net)."""
    for cand in (
        dataset_dir / "attributes" / "attributes.txt",
        dataset_dir.parent / "attributes.txt",
        dataset_dir / "attributes.txt",
    ):
        if cand.is_file():
            return cand
    return None


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, line without CR/LF) for non-blank lines; tolerates CRLF and a BOM."""
    with open(path, encoding="utf-8-sig", errors="replace", newline="") as fh:
        for i, raw in enumerate(fh, start=1):
            line = raw.rstrip("\r\n").strip()
            if line:
                yield i, line


def _read_table(
    path: Path,
    report: Report,
    parse: Callable[[list[str]], tuple[int, object]],
    *,
    maxsplit: int = -1,
    n_fields: int | None = None,
) -> dict[int, object]:
    """Read ``id value…`` lines into a dict; bad and duplicate rows are reported, first id wins."""
    out: dict[int, object] = {}
    for lineno, line in iter_lines(path):
        fields = line.split(None, maxsplit) if maxsplit > 0 else line.split()
        if n_fields is not None and len(fields) != n_fields:
            report.error(path, lineno, f"expected {n_fields} fields, got {len(fields)}: {line[:80]!r}")
            continue
        try:
            key, value = parse(fields)
        except (ValueError, IndexError) as exc:
            report.error(path, lineno, f"cannot parse {line[:80]!r}: {exc}")
            continue
        if key in out:
            report.error(path, lineno, f"duplicate id {key} (first occurrence kept)")
            continue
        out[key] = value
    return out


def _positive_int(text: str) -> int:
    v = int(text)
    if v < 1:
        raise ValueError(f"id must be >= 1, got {v}")
    return v


def _name_row(fields: list[str]) -> tuple[int, str]:
    if len(fields) != 2 or not fields[1]:
        raise ValueError("expected '<id> <name>'")
    return _positive_int(fields[0]), fields[1]


def _int_row(fields: list[str]) -> tuple[int, int]:
    return _positive_int(fields[0]), int(fields[1])


def _bbox_row(fields: list[str]) -> tuple[int, tuple[float, float, float, float]]:
    x, y, w, h = (float(v) for v in fields[1:5])
    if w <= 0 or h <= 0 or x < 0 or y < 0:
        raise ValueError(f"degenerate box x={x} y={y} w={w} h={h}")
    return _positive_int(fields[0]), (x, y, w, h)


def _split_attribute(attribute_id: int, name: str) -> Attribute:
    group, sep, value = name.partition("::")
    if not sep or not group or not value:
        raise ValueError(f"attribute name {name!r} is not '<group>::<value>'")
    return Attribute(attribute_id, name, group, value)


def read_part_locs(path: Path, report: Report, n_parts: int = N_PARTS) -> dict[int, dict[int, PartLoc]]:
    """``image_id part_id x y visible``; hidden parts are ``0.0 0.0 0``."""
    out: dict[int, dict[int, PartLoc]] = {}
    for lineno, line in iter_lines(path):
        f = line.split()
        if len(f) != 5:
            report.error(path, lineno, f"expected 5 fields, got {len(f)}: {line[:80]!r}")
            continue
        try:
            image_id, part_id = _positive_int(f[0]), _positive_int(f[1])
            x, y, vis = float(f[2]), float(f[3]), int(f[4])
        except ValueError as exc:
            report.error(path, lineno, f"cannot parse {line[:80]!r}: {exc}")
            continue
        if vis not in (0, 1) or part_id > n_parts:
            report.error(path, lineno, f"visible must be 0/1 and part id <= {n_parts}: {line[:80]!r}")
            continue
        if vis == 1 and (x < 0 or y < 0):
            report.error(path, lineno, f"visible part at negative coordinates: {line[:80]!r}")
            continue
        per_image = out.setdefault(image_id, {})
        if part_id in per_image:
            report.error(path, lineno, f"duplicate (image {image_id}, part {part_id}) (first kept)")
            continue
        per_image[part_id] = PartLoc(x, y, bool(vis))
    return out


_LABEL_COLUMNS = ("image_id", "attribute_id", "is_present", "certainty_id")


def _labels_from_arrays(cols: dict[str, np.ndarray], n_lines: int) -> AttributeLabels:
    return AttributeLabels(
        cols["image_id"].astype(np.int32),
        cols["attribute_id"].astype(np.int16),
        cols["is_present"].astype(np.int8),
        cols["certainty_id"].astype(np.int8),
        n_lines,
    )


def _check_label_values(
    path: Path, labels: AttributeLabels, report: Report, line_of: np.ndarray
) -> np.ndarray:
    """Mask of rows whose values are in range; out-of-range rows are reported with their line."""
    ok = (
        (labels.image_id >= 1)
        & (labels.attribute_id >= 1)
        & (labels.attribute_id <= N_ATTRIBUTES)
        & np.isin(labels.is_present, (0, 1))
        & (labels.certainty >= 1)
        & (labels.certainty <= 4)
    )
    for idx in np.flatnonzero(~ok)[:1000]:
        report.error(
            path,
            int(line_of[idx]),
            f"value out of range: image {labels.image_id[idx]} attribute {labels.attribute_id[idx]} "
            f"is_present {labels.is_present[idx]} certainty {labels.certainty[idx]}",
        )
    if (~ok).sum() > 1000:
        report.error(path, 0, f"{int((~ok).sum()) - 1000} more out-of-range label rows")
    return ok


def read_image_attribute_labels(path: Path, report: Report, *, present_only: bool = True) -> AttributeLabels:
    """Stream ``image_id attribute_id is_present certainty_id time`` (3.7M lines at full scale).

    The fast path is pyarrow's streaming CSV reader (space delimiter, CRLF-safe); any irregular
    line sends the whole file through :func:`_read_labels_lines`, which names each bad line.
    Keeps only present labels unless ``present_only=False``.
    """
    try:
        labels, line_of = _read_labels_arrow(path)
    except Exception:  # pyarrow raises several types on irregular rows; the line parser names them
        labels, line_of = _read_labels_lines(path, report)
    ok = _check_label_values(path, labels, report, line_of)
    if present_only:
        ok &= labels.is_present == 1
    return AttributeLabels(
        labels.image_id[ok],
        labels.attribute_id[ok],
        labels.is_present[ok],
        labels.certainty[ok],
        labels.n_lines,
    )


def _read_labels_arrow(path: Path) -> tuple[AttributeLabels, np.ndarray]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    names = [*_LABEL_COLUMNS, "time"]
    types = {n: pa.int32() for n in _LABEL_COLUMNS} | {"time": pa.float64()}
    reader = pacsv.open_csv(
        path,
        read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter=" ", ignore_empty_lines=False),
        convert_options=pacsv.ConvertOptions(column_types=types, include_columns=list(_LABEL_COLUMNS)),
    )
    chunks: dict[str, list[np.ndarray]] = {n: [] for n in _LABEL_COLUMNS}
    for batch in reader:
        for n in _LABEL_COLUMNS:
            col = batch.column(n)
            if col.null_count:
                raise ValueError("missing field")
            chunks[n].append(col.to_numpy(zero_copy_only=False))
    cols = {n: (np.concatenate(v) if v else np.zeros(0, np.int32)) for n, v in chunks.items()}
    n = len(cols["image_id"])
    return _labels_from_arrays(cols, n), np.arange(1, n + 1)


def _read_labels_lines(path: Path, report: Report) -> tuple[AttributeLabels, np.ndarray]:
    rows: list[tuple[int, int, int, int]] = []
    line_of: list[int] = []
    n_lines = 0
    for lineno, line in iter_lines(path):
        n_lines = lineno
        f = line.split()
        if len(f) < 4:
            report.error(path, lineno, f"expected 5 fields, got {len(f)}: {line[:80]!r}")
            continue
        try:
            rows.append((int(f[0]), int(f[1]), int(f[2]), int(f[3])))
        except ValueError as exc:
            report.error(path, lineno, f"cannot parse {line[:80]!r}: {exc}")
            continue
        line_of.append(lineno)
    arr = np.array(rows, dtype=np.int64).reshape(-1, 4)
    cols = {n: arr[:, i] for i, n in enumerate(_LABEL_COLUMNS)}
    return _labels_from_arrays(cols, n_lines), np.array(line_of, dtype=np.int64)


def read_class_attribute_continuous(path: Path, report: Report) -> np.ndarray | None:
    """200 lines x 312 percentages, no id column (line n = class n)."""
    rows: list[list[float]] = []
    for lineno, line in iter_lines(path):
        f = line.split()
        try:
            vals = [float(v) for v in f]
        except ValueError as exc:
            report.error(path, lineno, f"cannot parse: {exc}")
            vals = []
        if len(vals) != N_ATTRIBUTES:
            if vals:
                report.error(path, lineno, f"expected {N_ATTRIBUTES} values, got {len(vals)}")
            vals = [np.nan] * N_ATTRIBUTES
        rows.append(vals)
    return np.array(rows, dtype=np.float64) if rows else None


def read_cub(root: str | Path, report: Report | None = None, *, with_labels: bool = True) -> CubData:
    """Read every CUB index, part, box and attribute file under ``root``.

    Required: images.txt, classes.txt, image_class_labels.txt (raise :class:`SourceFormatError`
    when missing). Optional files that are absent are listed in ``missing_files`` (the manifest
    summary shows them); a missing attributes.txt leaves ``attributes`` empty.
    """
    report = report if report is not None else Report()
    d = find_dataset_dir(root)
    data = CubData(root=d)

    def need(rel: str) -> Path:
        p = d / rel
        if not p.is_file():
            raise SourceFormatError(f"{p}: required CUB file is missing")
        return p

    def opt(rel: str) -> Path | None:
        p = d / rel
        if p.is_file():
            return p
        data.missing_files.append(rel)  # surfaced in the manifest summary, not a bad row
        return None

    def name_parse(fields: list[str]) -> tuple[int, str]:
        return _name_row(fields)

    data.images = _read_table(need("images.txt"), report, name_parse, maxsplit=1)  # type: ignore[assignment]
    data.classes = _read_table(need("classes.txt"), report, name_parse, maxsplit=1)  # type: ignore[assignment]
    data.image_class = _read_table(need("image_class_labels.txt"), report, _int_row, n_fields=2)  # type: ignore[assignment]
    if p := opt("train_test_split.txt"):
        data.is_training = _read_table(p, report, _int_row, n_fields=2)  # type: ignore[assignment]
    if p := opt("bounding_boxes.txt"):
        data.bboxes = _read_table(p, report, _bbox_row, n_fields=5)  # type: ignore[assignment]
    if p := opt("parts/parts.txt"):
        data.parts = _read_table(p, report, name_parse, maxsplit=1)  # type: ignore[assignment]
    if p := opt("parts/part_locs.txt"):
        data.part_locs = read_part_locs(p, report, max(data.parts, default=N_PARTS))
    if p := opt("attributes/certainties.txt"):
        data.certainties = _read_table(p, report, name_parse, maxsplit=1)  # type: ignore[assignment]

    attr_path = find_attributes_file(d)
    if attr_path is None:
        data.missing_files.append("attributes.txt")
    else:
        data.attributes_path = attr_path

        def attr_parse(fields: list[str]) -> tuple[int, Attribute]:
            aid, name = _name_row(fields)
            return aid, _split_attribute(aid, name)

        data.attributes = _read_table(attr_path, report, attr_parse, maxsplit=1)  # type: ignore[assignment]

    if p := opt("attributes/class_attribute_labels_continuous.txt"):
        data.class_attribute_percent = read_class_attribute_continuous(p, report)
    if with_labels and (p := opt("attributes/image_attribute_labels.txt")):
        data.labels = read_image_attribute_labels(p, report)
    return data


# --------------------------------------------------------------------------------- attribute schema

# fmt: off
#: The 15 colour values and 4 pattern values that many attribute groups share, in file order.
_COLORS = (
    "blue", "brown", "iridescent", "purple", "rufous", "grey", "yellow", "olive", "green", "pink",
    "orange", "black", "white", "red", "buff",
)
_PATTERNS = ("solid", "spotted", "striped", "multi-colored")
#: The 28 attribute groups of ``attributes.txt`` with their values, in file order (ids 1..312).
CUB_ATTRIBUTE_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("has_bill_shape", (
        "curved_(up_or_down)", "dagger", "hooked", "needle", "hooked_seabird", "spatulate", "all-purpose",
        "cone", "specialized",
    )),
    ("has_wing_color", _COLORS),
    ("has_upperparts_color", _COLORS),
    ("has_underparts_color", _COLORS),
    ("has_breast_pattern", _PATTERNS),
    ("has_back_color", _COLORS),
    ("has_tail_shape", (
        "forked_tail", "rounded_tail", "notched_tail", "fan-shaped_tail", "pointed_tail", "squared_tail",
    )),
    ("has_upper_tail_color", _COLORS),
    ("has_head_pattern", (
        "spotted", "malar", "crested", "masked", "unique_pattern", "eyebrow", "eyering", "plain", "eyeline",
        "striped", "capped",
    )),
    ("has_breast_color", _COLORS),
    ("has_throat_color", _COLORS),
    ("has_eye_color", (
        "blue", "brown", "purple", "rufous", "grey", "yellow", "olive", "green", "pink", "orange", "black",
        "white", "red", "buff",
    )),
    ("has_bill_length", ("about_the_same_as_head", "longer_than_head", "shorter_than_head")),
    ("has_forehead_color", _COLORS),
    ("has_under_tail_color", _COLORS),
    ("has_nape_color", _COLORS),
    ("has_belly_color", _COLORS),
    ("has_wing_shape", ("rounded-wings", "pointed-wings", "broad-wings", "tapered-wings", "long-wings")),
    ("has_size", (
        "large_(16_-_32_in)", "small_(5_-_9_in)", "very_large_(32_-_72_in)", "medium_(9_-_16_in)",
        "very_small_(3_-_5_in)",
    )),
    ("has_shape", (
        "upright-perching_water-like", "chicken-like-marsh", "long-legged-like", "duck-like", "owl-like",
        "gull-like", "hummingbird-like", "pigeon-like", "tree-clinging-like", "hawk-like", "sandpiper-like",
        "upland-ground-like", "swallow-like", "perching-like",
    )),
    ("has_back_pattern", _PATTERNS),
    ("has_tail_pattern", _PATTERNS),
    ("has_belly_pattern", _PATTERNS),
    ("has_primary_color", _COLORS),
    ("has_leg_color", _COLORS),
    ("has_bill_color", _COLORS),
    ("has_crown_color", _COLORS),
    ("has_wing_pattern", _PATTERNS),
)
# fmt: on


def attribute_names() -> list[str]:
    """The 312 ``has_<group>::<value>`` names in id order (attribute id = index + 1)."""
    return [f"{g}::{v}" for g, values in CUB_ATTRIBUTE_GROUPS for v in values]


def group_part_property(group: str) -> tuple[str, str]:
    """``has_upper_tail_color`` -> ("upper tail", "color"); ``has_size`` -> ("", "size")."""
    words = group.removeprefix("has_").split("_")
    return " ".join(words[:-1]), words[-1]


def display_value(value: str) -> str:
    """Attribute value as option text: underscores become spaces (``curved (up or down)``)."""
    return " ".join(value.replace("_", " ").split())
