"""C2 marker renderer: coloured shapes drawn on part locations (§3.2 anatomical localization).

A pure function of (source image, markers, radius): the image is converted to RGB (CUB has
grayscale JPEGs) and each marker is drawn as a filled shape with a dark outline so it stays visible
on any plumage. The marker radius is relative to the bird's bounding box, so markers look the same
size on a bird whatever the photo's resolution. The centre pixel of every marker carries its fill
colour (all shapes contain their centre), which is what the tests check.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from PIL import Image, ImageDraw

#: Marker fill colours: saturated, nameable, far apart from each other.
MARKER_COLORS: dict[str, tuple[int, int, int]] = {
    "red": (230, 25, 25),
    "yellow": (255, 225, 0),
    "blue": (30, 90, 255),
    "green": (0, 200, 60),
    "magenta": (235, 0, 235),
    "cyan": (0, 225, 235),
}
MARKER_SHAPES = ("dot", "square", "triangle", "diamond", "star")  # "dot" as in Table 8
OUTLINE = (15, 15, 15)
RADIUS_FRACTION = 0.08  # of the shorter side of the bird's bounding box
MIN_RADIUS = 4.0


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    color: str  # key of MARKER_COLORS
    shape: str  # one of MARKER_SHAPES


def marker_radius(bbox: Sequence[float]) -> float:
    """Marker radius in pixels for a bird box ``[x, y, w, h]``."""
    return max(MIN_RADIUS, RADIUS_FRACTION * min(bbox[2], bbox[3]))


def outline_width(radius: float) -> int:
    return max(1, round(radius / 5))


def outer_radius(radius: float, shape: str) -> float:
    """Circumradius of the outline polygon (pointed shapes need a larger one for an even rim)."""
    return radius + outline_width(radius) * (2.2 if shape in ("triangle", "star") else 1.4)


def min_separation(radius: float) -> float:
    """Smallest centre distance at which two markers (outline included) never touch."""
    return 2 * outer_radius(radius, "star") + 2


def shape_points(shape: str, x: float, y: float, r: float) -> list[tuple[float, float]]:
    """Polygon of a marker shape centred on (x, y) with circumradius ``r`` (dot: 32-gon)."""
    if shape == "dot":
        n, rr, start = 32, [r], 0.0
    elif shape == "square":
        n, rr, start = 4, [r], math.pi / 4
    elif shape == "diamond":
        n, rr, start = 4, [r], 0.0
    elif shape == "triangle":
        n, rr, start = 3, [r], -math.pi / 2
    elif shape == "star":
        n, rr, start = 10, [r, 0.45 * r], -math.pi / 2
    else:
        raise ValueError(f"unknown marker shape {shape!r}; expected one of {MARKER_SHAPES}")
    return [
        (
            x + rr[i % len(rr)] * math.cos(start + 2 * math.pi * i / n),
            y + rr[i % len(rr)] * math.sin(start + 2 * math.pi * i / n),
        )
        for i in range(n)
    ]


def render_markers(image: Image.Image, markers: Sequence[Marker], radius: float) -> Image.Image:
    """A new RGB image with ``markers`` drawn in order (later markers on top)."""
    out = image.convert("RGB") if image.mode != "RGB" else image.copy()
    draw = ImageDraw.Draw(out)
    for m in markers:
        if m.color not in MARKER_COLORS:
            raise ValueError(f"unknown marker colour {m.color!r}; expected one of {tuple(MARKER_COLORS)}")
        draw.polygon(shape_points(m.shape, m.x, m.y, outer_radius(radius, m.shape)), fill=OUTLINE)
        draw.polygon(shape_points(m.shape, m.x, m.y, radius), fill=MARKER_COLORS[m.color])
    return out
