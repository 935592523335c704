"""Anatomy kernel (§C.5, eq. 16): normalised proximity of body parts in a 3-D layout.

The layout (``resources/c2/anatomy_layout.json``) is derived from CUB part locations by
``tools/fit_c2_resources.py``: the bird faces right, y runs down, z is a small lateral offset
separating left from right. ``d_max`` is the layout diameter (largest distance between two parts).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources as _res

#: The 15 CUB parts (``parts/parts.txt``), spaces as underscores.
CUB_PARTS = (
    "back",
    "beak",
    "belly",
    "breast",
    "crown",
    "forehead",
    "left_eye",
    "left_leg",
    "left_wing",
    "nape",
    "right_eye",
    "right_leg",
    "right_wing",
    "tail",
    "throat",
)

#: Attribute regions (the part of ``has_<part>_<property>``) -> the layout parts they average.
#: Choice (the paper does not list it): paired regions sit between their left and right parts,
#: upper/under parts average the parts they cover, and regions with no place on the body
#: (primary colour, size, overall shape) sit at the centroid of all 15 parts.
REGION_PARTS: dict[str, tuple[str, ...]] = {
    "bill": ("beak",),
    "beak": ("beak",),
    "wing": ("left_wing", "right_wing"),
    "eye": ("left_eye", "right_eye"),
    "leg": ("left_leg", "right_leg"),
    "upperparts": ("back", "nape"),
    "underparts": ("breast", "belly"),
    "upper_tail": ("tail",),
    "under_tail": ("tail",),
    "head": ("crown", "forehead"),
    "primary": CUB_PARTS,
    "size": CUB_PARTS,
    "shape": CUB_PARTS,
    "body": CUB_PARTS,
}


@lru_cache(maxsize=65536)
def norm_part(name: str) -> str:
    """``"Left Wing"`` / ``"left-wing"`` / ``"upper tail"`` -> ``"left_wing"`` / ``"upper_tail"``."""
    return "_".join(name.strip().lower().replace("-", " ").replace("_", " ").split())


class AnatomyLayout:
    """Part coordinates in 3-D and the similarity ``max(0, 1 - ||p1 - p2|| / d_max)``."""

    def __init__(self, coords: dict[str, tuple[float, float, float]]):
        self.coords = {norm_part(k): tuple(float(c) for c in v) for k, v in coords.items()}
        pts = list(self.coords.values())
        self.d_max = max((math.dist(p, q) for i, p in enumerate(pts) for q in pts[i + 1 :]), default=0.0)
        self._cache: dict[tuple[str, str], float] = {}

    @classmethod
    def from_2d(cls, layout2d: dict[str, tuple[float, float]], z: float) -> AnatomyLayout:
        """Add the lateral offset: left parts at ``-z``, right parts at ``+z``, midline parts at 0."""
        coords = {}
        for name, (x, y) in layout2d.items():
            n = norm_part(name)
            side = -1.0 if n.startswith("left_") else 1.0 if n.startswith("right_") else 0.0
            coords[n] = (x, y, side * z)
        return cls(coords)

    def position(self, region: str) -> tuple[float, float, float]:
        """Coordinates of a part or attribute region (KeyError naming it when unknown)."""
        r = norm_part(region)
        if r in self.coords:
            return self.coords[r]
        parts = REGION_PARTS.get(r)
        if parts is None:
            raise KeyError(f"unknown body part or region {region!r}")
        pts = [self.coords[p] for p in parts]
        return tuple(sum(c) / len(pts) for c in zip(*pts, strict=True))

    def knows(self, region: str) -> bool:
        r = norm_part(region)
        return r in self.coords or r in REGION_PARTS

    def similarity(self, a: str, b: str) -> float:
        """Eq. 16 for two parts/regions; identical names score 1, unknown names 0."""
        key = (a, b)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        na, nb = norm_part(a), norm_part(b)
        if na == nb:
            sim = 1.0
        elif not (self.knows(na) and self.knows(nb)) or self.d_max <= 0:
            sim = 0.0
        else:
            sim = max(0.0, 1.0 - math.dist(self.position(na), self.position(nb)) / self.d_max)
        self._cache[key] = sim
        return sim


@lru_cache(maxsize=1)
def default_layout() -> AnatomyLayout:
    """The shipped layout fitted from the full CUB ``part_locs.txt``."""
    text = _res.files("biovqa").joinpath("resources/c2/anatomy_layout.json").read_text(encoding="utf-8")
    return AnatomyLayout({k: tuple(v) for k, v in json.loads(text)["parts"].items()})
