"""Colour kernel (§C.5, eq. 13): sRGB anchors -> CIE-Lab (D65) -> CIEDE2000 -> similarity.

The CIEDE2000 implementation follows Sharma, Wu & Dalal (2005); it is vectorised with numpy and
cross-checked in the tests against ``skimage.color.deltaE_ciede2000``.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources as _res

import numpy as np

#: Reference white of D65 (2° observer), the same constants scikit-image uses.
D65_WHITE = (0.95047, 1.0, 1.08883)
_SRGB_TO_XYZ = np.array(
    [
        [0.412453, 0.357580, 0.180423],
        [0.212671, 0.715160, 0.072169],
        [0.019334, 0.119193, 0.950227],
    ]
)

#: Default temperature of the exponential kernel and ΔE range of the linear one (eq. 13).
TAU = 30.0
DELTA_E_MAX = 100.0


def srgb_to_linear(rgb) -> np.ndarray:
    """Inverse sRGB gamma: companded [0, 1] values -> linear RGB."""
    c = np.asarray(rgb, dtype=float)
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def srgb_to_lab(rgb) -> np.ndarray:
    """sRGB in [0, 1] (shape (..., 3)) -> CIE-Lab under D65."""
    xyz = srgb_to_linear(rgb) @ _SRGB_TO_XYZ.T
    t = xyz / np.asarray(D65_WHITE)
    eps = (6.0 / 29.0) ** 3
    f = np.where(t > eps, np.cbrt(t), t / (3 * (6.0 / 29.0) ** 2) + 4.0 / 29.0)
    L = 116.0 * f[..., 1] - 16.0
    a = 500.0 * (f[..., 0] - f[..., 1])
    b = 200.0 * (f[..., 1] - f[..., 2])
    return np.stack([L, a, b], axis=-1)


def delta_e_ciede2000(lab1, lab2, kL: float = 1.0, kC: float = 1.0, kH: float = 1.0) -> np.ndarray:
    """CIEDE2000 colour difference between Lab arrays of shape (..., 3)."""
    lab1 = np.asarray(lab1, dtype=float)
    lab2 = np.asarray(lab2, dtype=float)
    L1, a1, b1 = lab1[..., 0], lab1[..., 1], lab1[..., 2]
    L2, a2, b2 = lab2[..., 0], lab2[..., 1], lab2[..., 2]

    C1 = np.hypot(a1, b1)
    C2 = np.hypot(a2, b2)
    Cbar7 = ((C1 + C2) / 2.0) ** 7
    G = 0.5 * (1.0 - np.sqrt(Cbar7 / (Cbar7 + 25.0**7)))
    a1p = (1.0 + G) * a1
    a2p = (1.0 + G) * a2
    C1p = np.hypot(a1p, b1)
    C2p = np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360.0
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360.0
    # Hue is undefined for achromatic colours: Sharma sets it to 0.
    h1p = np.where(C1p == 0, 0.0, h1p)
    h2p = np.where(C2p == 0, 0.0, h2p)

    dLp = L2 - L1
    dCp = C2p - C1p
    prod = C1p * C2p
    dh = h2p - h1p
    dh = np.where(dh > 180.0, dh - 360.0, np.where(dh < -180.0, dh + 360.0, dh))
    dh = np.where(prod == 0, 0.0, dh)
    dHp = 2.0 * np.sqrt(prod) * np.sin(np.radians(dh) / 2.0)

    Lbp = (L1 + L2) / 2.0
    Cbp = (C1p + C2p) / 2.0
    hsum = h1p + h2p
    hbp = np.where(
        np.abs(h1p - h2p) <= 180.0,
        hsum / 2.0,
        np.where(hsum < 360.0, (hsum + 360.0) / 2.0, (hsum - 360.0) / 2.0),
    )
    hbp = np.where(prod == 0, hsum, hbp)

    T = (
        1.0
        - 0.17 * np.cos(np.radians(hbp - 30.0))
        + 0.24 * np.cos(np.radians(2.0 * hbp))
        + 0.32 * np.cos(np.radians(3.0 * hbp + 6.0))
        - 0.20 * np.cos(np.radians(4.0 * hbp - 63.0))
    )
    dtheta = 30.0 * np.exp(-(((hbp - 275.0) / 25.0) ** 2))
    Cbp7 = Cbp**7
    RC = 2.0 * np.sqrt(Cbp7 / (Cbp7 + 25.0**7))
    SL = 1.0 + 0.015 * (Lbp - 50.0) ** 2 / np.sqrt(20.0 + (Lbp - 50.0) ** 2)
    SC = 1.0 + 0.045 * Cbp
    SH = 1.0 + 0.015 * Cbp * T
    RT = -np.sin(np.radians(2.0 * dtheta)) * RC

    tL = dLp / (kL * SL)
    tC = dCp / (kC * SC)
    tH = dHp / (kH * SH)
    return np.sqrt(tL**2 + tC**2 + tH**2 + RT * tC * tH)


@lru_cache(maxsize=1)
def default_anchors() -> dict[str, tuple[float, float, float]]:
    """The 15 CUB colour words -> fitted sRGB triples shipped in ``resources/c2/color_anchors.json``."""
    text = _res.files("biovqa").joinpath("resources/c2/color_anchors.json").read_text(encoding="utf-8")
    data = json.loads(text)
    return {name: tuple(rgb) for name, rgb in data["srgb"].items()}


#: Colour words scored by exact match only (no fixed hue).
EXACT_ONLY = frozenset({"iridescent"})


class ColorKernel:
    """Similarity of two CUB colour words; ``mode`` is ``"exp"`` (default, τ = 30) or ``"linear"``."""

    def __init__(self, anchors: dict | None = None, mode: str = "exp", tau: float = TAU):
        if mode not in ("exp", "linear"):
            raise ValueError(f"colour kernel mode must be 'exp' or 'linear', not {mode!r}")
        anchors = anchors if anchors is not None else default_anchors()
        self.mode = mode
        self.tau = tau
        self._lab = {_norm_color(k): srgb_to_lab(np.asarray(v, dtype=float)) for k, v in anchors.items()}
        self._cache: dict[tuple[str, str], float] = {}

    @property
    def words(self) -> tuple[str, ...]:
        return tuple(self._lab)

    def delta_e(self, c1: str, c2: str) -> float:
        """CIEDE2000 between the anchors of two colour words (KeyError for an unknown word)."""
        return float(delta_e_ciede2000(self._lab[_norm_color(c1)], self._lab[_norm_color(c2)]))

    def __call__(self, c1: str, c2: str) -> float:
        key = (c1, c2)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        a, b = _norm_color(c1), _norm_color(c2)
        if a == b:
            sim = 1.0
        elif a in EXACT_ONLY or b in EXACT_ONLY or a not in self._lab or b not in self._lab:
            # Iridescent (and any word without an anchor) matches only itself.
            sim = 0.0
        else:
            de = self.delta_e(a, b)
            sim = math.exp(-de / self.tau) if self.mode == "exp" else max(0.0, 1.0 - de / DELTA_E_MAX)
        self._cache[key] = sim
        return sim


def _norm_color(word: str) -> str:
    w = word.strip().lower().replace("_", " ")
    return "grey" if w == "gray" else w
