"""Derive the C2 kernel resources shipped under ``biovqa/resources/c2`` (run once; output committed).

* ``color_anchors.json`` — the 15 CUB colour words as sRGB triples. Starting from plausible bird
  colours (muted, not CSS named colours), the anchors of the seven words in the paper's pair table
  (§C.5 eq. 13: blue, purple, green, yellow, brown, rufous, orange) are moved by a bounded
  least-squares fit (scipy) until CIEDE2000 reproduces the ΔE₀₀ the table implies
  (blue/purple 20.9, blue/green 60.3, blue/yellow 88.1, brown/rufous 8.2, yellow/orange 20.4),
  with a small pull towards the starting colours; black and white are the sRGB extremes
  (ΔE₀₀ = 100, which gives the table's 0.036 and linear 0.000).
* ``anatomy_layout.json`` — the 3-D part layout of eq. 16 from CUB ``parts/part_locs.txt`` and
  ``bounding_boxes.txt``: per image, visible part coordinates normalised by the bird's bounding box,
  the image mirrored (x -> 1 - x) when the beak lies left of the tail, then the per-part median. The
  lateral z offset (+z right, -z left) is solved so that left wing / right wing scores 0.883.

Usage: ``python tools/fit_c2_resources.py --cub /path/to/cub-200-2011 [--out biovqa/resources/c2]``
(the folder holding ``full_metadata/`` or ``CUB_200_2011/``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from biovqa.metrics.c2.color import delta_e_ciede2000, srgb_to_lab  # noqa: E402

#: Plausible, muted bird colours (sRGB in [0, 1]) used as starting points / fixed anchors.
START_SRGB: dict[str, tuple[float, float, float]] = {
    "blue": (0.25, 0.42, 0.72),
    "brown": (0.45, 0.32, 0.20),
    "iridescent": (0.20, 0.45, 0.50),  # never compared by ΔE (exact match only); kept for plots
    "purple": (0.45, 0.30, 0.60),
    "rufous": (0.62, 0.34, 0.20),
    "grey": (0.55, 0.55, 0.55),
    "yellow": (0.88, 0.78, 0.30),
    "olive": (0.50, 0.50, 0.25),
    "green": (0.35, 0.55, 0.30),
    "pink": (0.90, 0.62, 0.66),
    "orange": (0.88, 0.55, 0.20),
    "black": (0.0, 0.0, 0.0),
    "white": (1.0, 1.0, 1.0),
    "red": (0.78, 0.16, 0.16),
    "buff": (0.85, 0.75, 0.55),
}

#: ΔE₀₀ implied by the paper's exponential column: -30·ln(s) (calibration.md).
TARGET_DE = {
    ("blue", "purple"): 20.9,
    ("blue", "green"): 60.3,
    ("blue", "yellow"): 88.1,
    ("brown", "rufous"): 8.2,
    ("yellow", "orange"): 20.4,
}
FITTED = ("blue", "purple", "green", "yellow", "brown", "rufous", "orange")


def fit_color_anchors() -> dict[str, list[float]]:
    """Least-squares fit of the seven table colours; returns all 15 anchors rounded to 4 decimals."""
    from scipy.optimize import least_squares

    x0 = np.array([START_SRGB[n] for n in FITTED]).ravel()

    def residuals(x: np.ndarray) -> np.ndarray:
        rgb = {n: x[3 * i : 3 * i + 3] for i, n in enumerate(FITTED)}
        res = [
            float(delta_e_ciede2000(srgb_to_lab(rgb[a]), srgb_to_lab(rgb[b]))) - t
            for (a, b), t in TARGET_DE.items()
        ]
        pull = 2.0 * (x - x0)  # stay near the plausible starting colour
        return np.concatenate([np.array(res), pull])

    sol = least_squares(residuals, x0, bounds=(0.0, 1.0))
    out = {n: list(v) for n, v in START_SRGB.items()}
    for i, n in enumerate(FITTED):
        out[n] = [round(float(v), 4) for v in sol.x[3 * i : 3 * i + 3]]
    return out


PART_NAMES = (
    "back beak belly breast crown forehead left_eye left_leg left_wing nape "
    "right_eye right_leg right_wing tail throat"
).split()
LATERAL = {"left_eye": -1, "left_leg": -1, "left_wing": -1, "right_eye": 1, "right_leg": 1, "right_wing": 1}


def _find(cub: Path, name: str) -> Path:
    for cand in (cub / "full_metadata" / name, cub / "CUB_200_2011" / name, cub / name):
        if cand.is_file():
            return cand
    if name == "part_locs.txt":
        return _find(cub, "parts/part_locs.txt")
    raise FileNotFoundError(f"{name} not found under {cub}")


def median_part_layout(part_locs: Path, bboxes: Path) -> dict[str, tuple[float, float]]:
    """Per-part median of bbox-normalised (x, y), each image mirrored so the beak is right of the tail."""
    locs = np.loadtxt(part_locs, dtype=float, ndmin=2)  # image part x y visible
    boxes = np.loadtxt(bboxes, dtype=float, ndmin=2)  # image x y w h
    box_of = {int(r[0]): r[1:] for r in boxes}
    per_image: dict[int, dict[int, tuple[float, float]]] = {}
    for img, part, x, y, vis in locs:
        if vis < 1:
            continue
        bx, by, bw, bh = box_of[int(img)]
        if bw <= 0 or bh <= 0:
            continue
        per_image.setdefault(int(img), {})[int(part)] = ((x - bx) / bw, (y - by) / bh)
    coords: dict[int, list[tuple[float, float]]] = {p: [] for p in range(1, 16)}
    beak, tail = 2, 14
    for parts in per_image.values():
        mirror = beak in parts and tail in parts and parts[beak][0] < parts[tail][0]
        for p, (x, y) in parts.items():
            coords[p].append((1.0 - x if mirror else x, y))
    missing = [PART_NAMES[p - 1] for p, v in coords.items() if not v]
    if missing:
        print(
            f"{part_locs}: no visible location for parts {missing}; left out of the layout", file=sys.stderr
        )
    return {
        PART_NAMES[p - 1]: tuple(float(c) for c in np.median(np.array(v), axis=0))
        for p, v in coords.items()
        if v
    }


def solve_z(layout2d: dict[str, tuple[float, float]], target: float = 0.883) -> float:
    """The lateral offset z (left at -z, right at +z) giving left wing / right wing = ``target``."""
    from biovqa.metrics.c2.anatomy import AnatomyLayout

    def sim(z: float) -> float:
        return AnatomyLayout.from_2d(layout2d, z).similarity("left_wing", "right_wing")

    lo, hi = 0.0, 1.0
    for _ in range(80):
        mid = (lo + hi) / 2.0
        if sim(mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def _dump(doc: dict) -> str:
    """JSON with one line per colour / part (small diffs when the resources are re-derived)."""
    out = ["{"]
    items = list(doc.items())
    for k, (key, value) in enumerate(items):
        comma = "," if k + 1 < len(items) else ""
        if isinstance(value, dict):
            inner = [f"  {json.dumps(n)}: {json.dumps(v)}" for n, v in value.items()]
            out.append(f" {json.dumps(key)}: {{\n" + ",\n".join(inner) + f"\n }}{comma}")
        else:
            out.append(f" {json.dumps(key)}: {json.dumps(value)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cub", type=Path, required=True)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "biovqa/resources/c2")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)

    anchors = fit_color_anchors()
    color_doc = {
        "comment": "15 CUB colour words -> sRGB in [0,1]; seven fitted to the §C.5 pair table by "
        "tools/fit_c2_resources.py (bounded least squares on CIEDE2000 with a pull to plausible bird "
        "colours), the rest plausible bird colours; black/white are the sRGB extremes.",
        "srgb": anchors,
    }
    (args.out / "color_anchors.json").write_text(_dump(color_doc), encoding="utf-8")

    layout2d = median_part_layout(_find(args.cub, "part_locs.txt"), _find(args.cub, "bounding_boxes.txt"))
    z = solve_z(layout2d)
    from biovqa.metrics.c2.anatomy import AnatomyLayout

    layout = AnatomyLayout.from_2d(layout2d, z)
    anat_doc = {
        "comment": "CUB part layout for eq. 16: per-part medians of bbox-normalised (x, y) over visible "
        "parts (part_locs.txt), images mirrored so the beak is right of the tail; y runs down; z is the "
        "lateral offset solved so left wing / right wing = 0.883. Made by tools/fit_c2_resources.py.",
        "z_offset": round(z, 6),
        "parts": {k: [round(float(c), 6) for c in v] for k, v in layout.coords.items()},
    }
    (args.out / "anatomy_layout.json").write_text(_dump(anat_doc), encoding="utf-8")
    for a, b in [
        ("nape", "crown"),
        ("beak", "forehead"),
        ("left_wing", "right_wing"),
        ("crown", "belly"),
        ("beak", "tail"),
    ]:
        print(f"{a}/{b}: {layout.similarity(a, b):.3f}")


if __name__ == "__main__":
    main()
