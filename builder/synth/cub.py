"""Synthetic CUB-200-2011 miniature: drawn birds in the real on-disk layout, correct by construction.

Each bird is drawn with PIL in profile (body, head, beak, wings, tail, legs, eye) from a
:class:`BirdSpec`; the annotations are read off the drawing, never invented beside it:

* part locations are the points where the parts are painted (the near-side eye, wing and leg are
  visible; the far-side eye is hidden, the far wing and leg only when drawn), hidden parts are
  written ``0.0 0.0 0``; the bounding box is the bird's painted extent;
* every colour attribute is the palette colour painted at that part (primary colour is the
  majority colour of the painted bird); bill length is the drawn bill against the head
  diameter; patterns, tail/wing shapes and head patterns are the drawn ones; size and shape are
  per class and the drawn scale follows size;
* certainties: true labels 4 (definitely) or 3 (probably); some true labels demoted to 2
  (guessing) and some wrong "guessing" labels added, so the certainty rule has work to do; groups
  of hidden parts get certainty 1 (not visible).

Layout quirks of real copies are reproduced: attributes.txt one level above CUB_200_2011/,
CRLF endings in bounding_boxes.txt and image_attribute_labels.txt, grayscale JPEGs (the crows,
whose colours survive conversion), image rows not sorted by file name inside a class.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from builder.sources.cub import CUB_ATTRIBUTE_GROUPS, DATASET_DIR, attribute_names
from builder.taxonomy.cub_names import load_cub_names

#: Drawing colour of each CUB colour word (iridescent has no fixed hue and is never drawn).
PALETTE: dict[str, tuple[int, int, int]] = {
    "blue": (40, 80, 200),
    "brown": (115, 70, 30),
    "purple": (120, 50, 150),
    "rufous": (185, 85, 40),
    "grey": (128, 128, 128),
    "yellow": (235, 210, 40),
    "olive": (120, 120, 40),
    "green": (40, 140, 50),
    "pink": (235, 140, 170),
    "orange": (240, 140, 20),
    "black": (20, 20, 20),
    "white": (245, 245, 245),
    "red": (200, 30, 30),
    "buff": (225, 195, 140),
}
BACKGROUNDS = ((170, 200, 225), (150, 175, 140), (200, 190, 175))
SIZE_SCALE = {"very_small_(3_-_5_in)": 30, "small_(5_-_9_in)": 35, "medium_(9_-_16_in)": 40}
SIZE_SCALE |= {"large_(16_-_32_in)": 46, "very_large_(32_-_72_in)": 52}
BILL_LENGTH = {"shorter_than_head": 0.35, "about_the_same_as_head": 0.76, "longer_than_head": 1.25}

# Per class: alternatives drawn per bird. Keys are CUB class folders (ids are the real ones).
# fmt: off
CLASS_SPECS: dict[str, dict] = {
    "001.Black_footed_Albatross": dict(
        n=5, size="very_large_(32_-_72_in)", shape="gull-like", bill_shape="hooked_seabird",
        bill_length=["longer_than_head"], back=["brown"], wing=["brown", "black"], under=["brown", "grey"],
        head=["brown"], throat=["white", "brown"], bill=["black", "grey"], eye=["black"], leg=["black"],
        tail=["brown", "black"], tail_shape=["rounded_tail", "squared_tail"], wing_shape=["pointed-wings"],
        wing_pattern=["solid"], breast_pattern=["solid"], head_pattern=["plain"],
    ),
    "014.Indigo_Bunting": dict(
        n=6, size="very_small_(3_-_5_in)", shape="perching-like", bill_shape="cone",
        bill_length=["shorter_than_head"], back=["blue", "brown"], wing=["blue", "black", "brown"],
        under=["blue", "buff"], head=["blue"], throat=["blue"], bill=["grey", "black"], eye=["black"],
        leg=["black", "grey"], tail=["blue", "black"], tail_shape=["forked_tail", "squared_tail"],
        wing_shape=["rounded-wings"], wing_pattern=["solid", "striped"], breast_pattern=["solid"],
        head_pattern=["plain", "eyering"],
    ),
    "017.Cardinal": dict(
        n=6, size="small_(5_-_9_in)", shape="perching-like", bill_shape="cone",
        bill_length=["shorter_than_head"], back=["red", "brown"], wing=["red", "brown"], under=["red",
        "buff"], head=["red"], throat=["black"], bill=["orange", "red"], eye=["black"], leg=["pink",
        "brown"], tail=["red"], tail_shape=["rounded_tail", "squared_tail"], wing_shape=["rounded-wings"],
        wing_pattern=["solid"], breast_pattern=["solid"], head_pattern=["crested"],
    ),
    "029.American_Crow": dict(
        n=5, size="large_(16_-_32_in)", shape="perching-like", bill_shape="all-purpose",
        bill_length=["about_the_same_as_head"], back=["black"], wing=["black"], under=["black"],
        head=["black"], throat=["black"], bill=["black"], eye=["black"], leg=["black"], tail=["black"],
        tail_shape=["rounded_tail", "squared_tail"], wing_shape=["rounded-wings", "pointed-wings"],
        wing_pattern=["solid"], breast_pattern=["solid"], head_pattern=["plain"], grayscale=(1, 3),
    ),
    "059.California_Gull": dict(
        n=6, size="medium_(9_-_16_in)", shape="gull-like", bill_shape="hooked",
        bill_length=["about_the_same_as_head"], back=["grey"], wing=["grey"], wing2=["black"],
        under=["white"], head=["white"], throat=["white"], bill=["yellow"], eye=["yellow", "black"],
        leg=["yellow", "green"], tail=["white"], tail_shape=["squared_tail"], wing_shape=["pointed-wings"],
        wing_pattern=["multi-colored", "solid"], breast_pattern=["solid"], head_pattern=["plain"],
    ),
    "130.Tree_Sparrow": dict(
        n=5, size="small_(5_-_9_in)", shape="perching-like", bill_shape="cone",
        bill_length=["shorter_than_head"], back=["brown", "rufous"], wing=["brown", "rufous"],
        wing2=["black"], under=["grey", "buff"], head=["grey"], cap=["rufous"], throat=["grey", "white"],
        bill=["yellow", "grey"], eye=["black"], leg=["brown", "pink"], tail=["brown"],
        tail_shape=["forked_tail"], wing_shape=["rounded-wings"], wing_pattern=["striped"],
        breast_pattern=["solid", "spotted"], spot=["brown", "black"], head_pattern=["capped"],
    ),
    "022.Chuck_will_Widow": dict(
        n=5, size="medium_(9_-_16_in)", shape="perching-like", bill_shape="specialized",
        bill_length=["shorter_than_head"], back=["brown", "rufous"], wing=["brown"], wing2=["black",
        "buff"], under=["buff"], head=["brown"], throat=["buff", "white"], bill=["black"], eye=["black"],
        leg=["brown"], tail=["brown", "rufous"], tail_shape=["rounded_tail"], wing_shape=["rounded-wings"],
        wing_pattern=["spotted"], breast_pattern=["spotted", "solid"], spot=["black", "brown"],
        head_pattern=["plain"],
    ),
    "103.Sayornis": dict(
        n=5, size="small_(5_-_9_in)", shape="perching-like", bill_shape="all-purpose",
        bill_length=["shorter_than_head", "about_the_same_as_head"], back=["grey", "olive"], wing=["grey"],
        wing2=["white"], under=["white", "yellow", "buff"], head=["grey"], cap=["black"], throat=["white"],
        bill=["black"], eye=["black"], leg=["black"], tail=["grey", "black"], tail_shape=["forked_tail"],
        wing_shape=["rounded-wings"], wing_pattern=["striped", "solid"], breast_pattern=["solid"],
        head_pattern=["capped", "plain"],
    ),
}
# fmt: on


@dataclass
class BirdSpec:
    """What one drawn bird looks like; everything else (labels, parts, box) is derived from it."""

    width: int
    height: int
    background: tuple[int, int, int]
    facing: int  # +1 beak to the right (bird shows its right side), -1 to the left
    cx: float
    cy: float
    s: float  # scale in pixels (body semi-axis)
    colors: dict[str, str]  # back wing under head throat bill eye leg tail (+ wing2, cap, spot)
    bill_length: str
    bill_shape: str
    tail_shape: str
    wing_shape: str
    wing_pattern: str
    breast_pattern: str
    head_pattern: str
    size: str
    shape: str
    far_wing: bool
    legs: str  # both | near | none


@dataclass
class DrawnBird:
    image: Image.Image
    parts: dict[str, tuple[float, float, bool]]  # CUB part name -> (x, y, visible)
    bbox: tuple[int, int, int, int]  # x, y, w, h
    labels: dict[str, set[str]] = field(default_factory=dict)  # group -> values true of the picture


class _Painter:
    """Draws every shape on the image and on a silhouette mask (for the box and primary colour)."""

    def __init__(self, img: Image.Image):
        self.img, self.mask = img, Image.new("L", img.size, 0)
        self.d, self.m = ImageDraw.Draw(img), ImageDraw.Draw(self.mask)

    def ellipse(self, box, color):
        self.d.ellipse(box, fill=color)
        self.m.ellipse(box, fill=255)

    def polygon(self, pts, color):
        self.d.polygon(pts, fill=color)
        self.m.polygon(pts, fill=255)

    def line(self, pts, color, width):
        self.d.line(pts, fill=color, width=width)
        self.m.line(pts, fill=255, width=width)

    def patterned(self, shape_fn, base, pattern_fn):
        """Fill a shape with ``base`` and a pattern drawn by ``pattern_fn`` clipped to the shape."""
        layer = Image.new("RGB", self.img.size, base)
        pattern_fn(ImageDraw.Draw(layer))
        clip = Image.new("L", self.img.size, 0)
        shape_fn(ImageDraw.Draw(clip))
        self.img.paste(layer, mask=clip)
        shape_fn(self.m)


def _ell(x, y, rx, ry):
    return [x - rx, y - ry, x + rx, y + ry]


def draw_bird(spec: BirdSpec) -> DrawnBird:
    """Paint the bird of ``spec`` and read its parts, box and true attribute values off the drawing."""
    img = Image.new("RGB", (spec.width, spec.height), spec.background)
    p = _Painter(img)
    c = {k: PALETTE[v] for k, v in spec.colors.items()}
    f, s, cx, cy = spec.facing, spec.s, spec.cx, spec.cy

    def X(dx: float) -> float:  # x offset along the bird's facing direction
        return cx + dx * s * f

    def Y(dy: float) -> float:
        return cy + dy * s

    hx, hy, hr = X(1.05), Y(-0.55), 0.38 * s
    near, far = ("right", "left") if f > 0 else ("left", "right")
    parts: dict[str, tuple[float, float, bool]] = {}

    if spec.far_wing:
        tri = [(X(-0.05), Y(-0.35)), (X(-0.6), Y(-0.4)), (X(-0.55), Y(-1.15))]
        p.polygon(tri, c["wing"])
        parts[f"{far} wing"] = (X(-0.4), Y(-0.633), True)
    # tail (behind the body)
    base_top, base_bot, end = (X(-0.8), Y(-0.15)), (X(-0.8), Y(0.1)), -1.75
    if spec.tail_shape == "forked_tail":
        tail = [base_top, (X(end), Y(-0.3)), (X(end + 0.35), Y(-0.02)), (X(end), Y(0.22)), base_bot]
    elif spec.tail_shape == "rounded_tail":
        tail = [base_top, (X(end + 0.1), Y(-0.3)), (X(end), Y(-0.04)), (X(end + 0.1), Y(0.22)), base_bot]
    else:  # squared
        tail = [base_top, (X(end), Y(-0.28)), (X(end), Y(0.2)), base_bot]
    p.polygon(tail, c["tail"])
    parts["tail"] = (X(-1.3), Y(-0.02), True)
    leg_w = max(3, round(0.1 * s))
    if spec.legs == "both":
        p.line([(X(-0.2), Y(0.5)), (X(-0.2), Y(1.0))], c["leg"], leg_w)
        parts[f"{far} leg"] = (X(-0.2), Y(0.85), True)
    # body: underparts, then the upper half in the back colour, breast spots clipped to the lower half
    body = _ell(cx, cy, s, 0.6 * s)
    if spec.breast_pattern == "spotted":
        spots = [(0.3, 0.2), (0.45, 0.42), (0.78, 0.1)]

        def spot_fn(dr):
            for dx, dy in spots:
                dr.ellipse(_ell(X(dx), Y(dy), 0.07 * s, 0.07 * s), fill=c["spot"])

        p.patterned(lambda dr: dr.ellipse(body, fill=255), c["under"], spot_fn)
    else:
        p.ellipse(body, c["under"])
    p.d.chord(body, 180, 360, fill=c["back"])
    parts["back"], parts["belly"], parts["breast"] = (
        (X(-0.1), Y(-0.45), True),
        (X(-0.1), Y(0.45), True),
        (
            X(0.6),
            Y(0.25),
            True,
        ),
    )
    # near wing with its pattern (the centre point always shows the base colour)
    wx, wy = X(-0.15), Y(-0.05)
    if spec.wing_shape == "pointed-wings":
        wing_pts = [(X(0.35), Y(-0.25)), (X(0.35), Y(0.15)), (X(-0.95), Y(-0.1))]

        def wing_shape(dr):
            dr.polygon(wing_pts, fill=255)
    else:
        wing_box = _ell(wx, wy, 0.55 * s, 0.28 * s)

        def wing_shape(dr):
            dr.ellipse(wing_box, fill=255)

    def wing_pattern(dr):
        if spec.wing_pattern == "striped":
            for dx in (0.25, 0.42, -0.3, -0.48):
                dr.line(
                    [(X(-0.15 + dx), Y(-0.4)), (X(-0.15 + dx), Y(0.3))],
                    fill=c["wing2"],
                    width=max(2, round(0.06 * s)),
                )
        elif spec.wing_pattern == "spotted":
            for dx, dy in ((0.28, -0.08), (-0.3, 0.05), (0.05, 0.15), (-0.45, -0.1)):
                dr.ellipse(_ell(X(-0.15 + dx), Y(-0.05 + dy), 0.06 * s, 0.06 * s), fill=c["wing2"])
        elif spec.wing_pattern == "multi-colored":
            x0, x1 = sorted((X(-0.45), X(-1.2)))
            dr.rectangle([x0, Y(-0.5), x1, Y(0.4)], fill=c["wing2"])

    p.patterned(wing_shape, c["wing"], wing_pattern)
    parts[f"{near} wing"] = (wx, wy, True)
    # head, crest, cap, throat, beak, eye
    if spec.head_pattern == "crested":
        p.polygon(
            [
                (hx - 0.2 * s * f, hy - 0.2 * s),
                (hx - 0.35 * s * f, hy - 0.62 * s),
                (hx + 0.1 * s * f, hy - 0.3 * s),
            ],
            c["head"],
        )
    p.ellipse(_ell(hx, hy, hr, hr), c["head"])
    if spec.head_pattern == "capped":
        p.d.chord(_ell(hx, hy, hr, hr), 200, 340, fill=c["cap"])
    p.ellipse(_ell(hx + 0.05 * s * f, hy + 0.3 * s, 0.2 * s, 0.14 * s), c["throat"])
    L = BILL_LENGTH[spec.bill_length] * s
    bx0, half = hx + 0.3 * s * f, (0.13 if spec.bill_shape == "cone" else 0.1) * s
    p.polygon(
        [(bx0, hy + 0.01 * s - half), (bx0, hy + 0.01 * s + half), (bx0 + (L + 0.08 * s) * f, hy + 0.01 * s)],
        c["bill"],
    )
    parts["beak"] = (hx + (0.38 * s + 0.3 * L) * f, hy + 0.01 * s, True)
    parts["crown"], parts["forehead"] = (hx, hy - 0.28 * s, True), (hx + 0.26 * s * f, hy - 0.2 * s, True)
    parts["nape"], parts["throat"] = (
        (hx - 0.3 * s * f, hy - 0.05 * s, True),
        (hx + 0.05 * s * f, hy + 0.33 * s, True),
    )
    ex, ey, er = hx + 0.12 * s * f, hy - 0.04 * s, max(2.0, 0.09 * s)
    if spec.head_pattern == "eyering":
        p.ellipse(_ell(ex, ey, er + 2, er + 2), PALETTE["white"])
    p.ellipse(_ell(ex, ey, er, er), c["eye"])
    parts[f"{near} eye"] = (ex, ey, True)
    if spec.legs in ("both", "near"):
        p.line([(X(0.1), Y(0.5)), (X(0.1), Y(1.0))], c["leg"], leg_w)
        parts[f"{near} leg"] = (X(0.1), Y(0.85), True)

    x0, y0, x1, y1 = p.mask.getbbox()
    labels = _labels(spec, img, p.mask)
    return DrawnBird(
        img,
        {k: (round(x), round(y), v) for k, (x, y, v) in parts.items()},
        (x0, y0, x1 - x0, y1 - y0),
        labels,
    )


def _labels(spec: BirdSpec, img: Image.Image, mask: Image.Image) -> dict[str, set[str]]:
    col = spec.colors
    wing = {col["wing"]} | ({col["wing2"]} if spec.wing_pattern != "solid" else set())
    breast = {col["under"]} | ({col["spot"]} if spec.breast_pattern == "spotted" else set())
    crown = col["cap"] if spec.head_pattern == "capped" else col["head"]
    labels = {
        "has_bill_shape": {spec.bill_shape},
        "has_wing_color": wing,
        "has_upperparts_color": {col["back"]},
        "has_underparts_color": {col["under"]},
        "has_breast_pattern": {spec.breast_pattern},
        "has_back_color": {col["back"]},
        "has_tail_shape": {spec.tail_shape},
        "has_upper_tail_color": {col["tail"]},
        "has_head_pattern": {spec.head_pattern},
        "has_breast_color": breast,
        "has_throat_color": {col["throat"]},
        "has_eye_color": {col["eye"]},
        "has_bill_length": {spec.bill_length},
        "has_forehead_color": {crown},
        "has_under_tail_color": {col["tail"]},
        "has_nape_color": {col["head"]},
        "has_belly_color": {col["under"]},
        "has_wing_shape": {spec.wing_shape},
        "has_size": {spec.size},
        "has_shape": {spec.shape},
        "has_back_pattern": {"solid"},
        "has_tail_pattern": {"solid"},
        "has_belly_pattern": {"solid"},
        "has_primary_color": {_majority_color(img, mask)},
        "has_bill_color": {col["bill"]},
        "has_crown_color": {crown},
        "has_wing_pattern": {spec.wing_pattern},
    }
    if spec.legs != "none":
        labels["has_leg_color"] = {col["leg"]}
    return labels


def _majority_color(img: Image.Image, mask: Image.Image) -> str:
    px = np.asarray(img).reshape(-1, 3)[np.asarray(mask).reshape(-1) > 0]
    counts = {name: int(np.all(px == rgb, axis=1).sum()) for name, rgb in PALETTE.items()}
    return max(sorted(counts), key=lambda k: counts[k])


def random_spec(rng: random.Random, cls: dict) -> BirdSpec:
    """One bird of a class: pick each alternative, a pose and a place on a canvas that holds it."""
    width, height = rng.randrange(300, 381, 4), rng.randrange(232, 289, 4)
    colors = {
        k: rng.choice(cls[k])
        for k in ("back", "wing", "under", "head", "throat", "bill", "eye", "leg", "tail")
    }
    for k, differs_from in (("wing2", "wing"), ("cap", "head"), ("spot", "under")):
        choices = [v for v in cls.get(k, ()) if v != colors[differs_from]]
        if choices:
            colors[k] = rng.choice(choices)
    wing_pattern = rng.choice(cls["wing_pattern"])
    if wing_pattern != "solid" and colors.get("wing2", colors["wing"]) == colors["wing"]:
        colors["wing2"] = "black" if colors["wing"] != "black" else "white"
    breast_pattern = rng.choice(cls["breast_pattern"])
    if breast_pattern == "spotted" and colors.get("spot", colors["under"]) == colors["under"]:
        colors["spot"] = "brown" if colors["under"] != "brown" else "black"
    bill_length = rng.choice(cls["bill_length"])
    s = SIZE_SCALE[cls["size"]] * rng.uniform(0.92, 1.08)
    facing = rng.choice((1, -1))
    front, rear = 1.43 + BILL_LENGTH[bill_length] + 0.1, 1.8
    left_ext, right_ext = (rear, front) if facing > 0 else (front, rear)
    cx = rng.uniform(left_ext * s + 4, width - right_ext * s - 4)
    cy = rng.uniform(1.2 * s + 4, height - 1.1 * s - 4)
    return BirdSpec(
        width=width,
        height=height,
        background=rng.choice(BACKGROUNDS),
        facing=facing,
        cx=cx,
        cy=cy,
        s=s,
        colors=colors,
        bill_length=bill_length,
        bill_shape=cls["bill_shape"],
        tail_shape=rng.choice(cls["tail_shape"]),
        wing_shape=rng.choice(cls["wing_shape"]),
        wing_pattern=wing_pattern,
        breast_pattern=breast_pattern,
        head_pattern=rng.choice(cls["head_pattern"]),
        size=cls["size"],
        shape=cls["shape"],
        far_wing=rng.random() < 0.5,
        legs=rng.choice(("both", "near", "near", "none")),
    )


def _file_prefix(folder: str) -> str:
    """``001.Black_footed_Albatross`` -> ``Black_Footed_Albatross`` (real files capitalise every token)."""
    return "_".join(t[:1].upper() + t[1:] for t in folder.split(".", 1)[1].split("_"))


def _fmt(v: float) -> str:
    return f"{float(v):.1f}"


def synth(out_root: Path, seed: int = 42) -> dict[str, str]:
    """Write the miniature under ``out_root/cub`` (CUB_200_2011/ + attributes.txt); return {"cub": "cub"}."""
    rng = random.Random(seed)
    root = Path(out_root) / "cub"
    d = root / DATASET_DIR
    for sub in ("images", "parts", "attributes"):
        (d / sub).mkdir(parents=True, exist_ok=True)
    names = load_cub_names()
    folders = sorted(names, key=lambda k: names[k].class_id)
    attr_names = attribute_names()
    attr_id = {n: i + 1 for i, n in enumerate(attr_names)}
    group_of = [n.split("::")[0] for n in attr_names]
    colour_groups = [g for g, _ in CUB_ATTRIBUTE_GROUPS if g.endswith("_color")]

    images_rows, class_rows, split_rows, box_rows, part_rows, label_rows = [], [], [], [], [], []
    present_by_class: dict[int, list[np.ndarray]] = {}
    image_id = 0
    for folder in sorted(CLASS_SPECS, key=lambda k: names[k].class_id):
        cls, class_id = CLASS_SPECS[folder], names[folder].class_id
        (d / "images" / folder).mkdir(exist_ok=True)
        ids_in_class = []
        file_numbers = list(range(1, cls["n"] + 1))
        rng.shuffle(file_numbers)  # real images.txt: ids follow the rows, file names are not sorted
        for k in range(cls["n"]):
            image_id += 1
            bird = draw_bird(random_spec(rng, cls))
            fname = f"{folder}/{_file_prefix(folder)}_{file_numbers[k]:04d}_{rng.randrange(100, 999999)}.jpg"
            img = bird.image.convert("L") if k in cls.get("grayscale", ()) else bird.image
            img.save(d / "images" / fname, format="JPEG", quality=92)
            ids_in_class.append((image_id, fname))
            class_rows.append(f"{image_id} {class_id}")
            split_rows.append(f"{image_id} {int(k % 2 == 0)}")
            box_rows.append(f"{image_id} " + " ".join(_fmt(v) for v in bird.bbox))
            for part_id, part in enumerate(_PART_NAMES, start=1):
                x, y, vis = bird.parts.get(part, (0, 0, False))
                part_rows.append(
                    f"{image_id} {part_id} {_fmt(x)} {_fmt(y)} {int(vis)}"
                    if vis
                    else f"{image_id} {part_id} 0.0 0.0 0"
                )
            present = np.zeros(len(attr_names), dtype=np.int8)
            certainty = np.array([rng.choice((3, 4, 4)) for _ in attr_names], dtype=np.int8)
            for group, values in bird.labels.items():
                for v in sorted(values):  # sets iterate in hash order, which changes per process
                    present[attr_id[f"{group}::{v}"] - 1] = 1
                    certainty[attr_id[f"{group}::{v}"] - 1] = 4 if rng.random() < 0.8 else 3
            if "has_leg_color" not in bird.labels:  # legs hidden: nothing to see
                certainty[[i for i, g in enumerate(group_of) if g == "has_leg_color"]] = 1
            guessed_group = None
            if rng.random() < 0.35:  # a wrong guess, flagged as guessing
                guessed_group = rng.choice(colour_groups)
                wrong = [v for v in PALETTE if v not in bird.labels.get(guessed_group, set())]
                i = attr_id[f"{guessed_group}::{rng.choice(wrong)}"] - 1
                present[i], certainty[i] = 1, 2
            if rng.random() < 0.25:  # a true label the annotator was unsure about
                group = rng.choice([g for g in ("has_eye_color", "has_bill_color") if g != guessed_group])
                for v in bird.labels[group]:
                    certainty[attr_id[f"{group}::{v}"] - 1] = 2
            for i in range(len(attr_names)):
                label_rows.append(f"{image_id} {i + 1} {present[i]} {certainty[i]} {rng.uniform(2, 40):.4f}")
            present_by_class.setdefault(class_id, []).append(present)
        images_rows.extend(f"{i} {fname}" for i, fname in ids_in_class)

    _write(d / "images.txt", images_rows)
    _write(d / "classes.txt", [f"{names[f].class_id} {f}" for f in folders])
    _write(d / "image_class_labels.txt", class_rows)
    _write(d / "train_test_split.txt", split_rows)
    _write(d / "bounding_boxes.txt", box_rows, crlf=True)
    _write(d / "parts" / "parts.txt", [f"{i} {n}" for i, n in enumerate(_PART_NAMES, start=1)])
    _write(d / "parts" / "part_locs.txt", part_rows)
    _write(root / "attributes.txt", [f"{i + 1} {n}" for i, n in enumerate(attr_names)])
    _write(
        d / "attributes" / "certainties.txt", ["1 not visible", "2 guessing", "3 probably", "4 definitely"]
    )
    _write(d / "attributes" / "image_attribute_labels.txt", label_rows, crlf=True)
    cont = []
    for f in folders:
        rows = present_by_class.get(names[f].class_id)
        pct = np.mean(rows, axis=0) * 100 if rows else np.zeros(len(attr_names))
        cont.append(" ".join(repr(round(float(v), 10)) for v in pct))
    _write(d / "attributes" / "class_attribute_labels_continuous.txt", cont)
    (d / "README").write_text(
        "Synthetic miniature of CUB-200-2011 (drawn birds), written by builder.synth.cub.\n"
    )
    return {"cub": "cub"}


_PART_NAMES = (
    "back",
    "beak",
    "belly",
    "breast",
    "crown",
    "forehead",
    "left eye",
    "left leg",
    "left wing",
    "nape",
    "right eye",
    "right leg",
    "right wing",
    "tail",
    "throat",
)


def _write(path: Path, rows: list[str], *, crlf: bool = False) -> None:
    nl = "\r\n" if crlf else "\n"
    path.write_bytes((nl.join(rows) + nl).encode("utf-8"))
