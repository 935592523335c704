"""Canvas toolkit: bounded decoding, fitting photos into panels, composing fixed-budget canvases.

Pixel budgets (documented choices; the paper only says "a fixed pixel budget"):
* counting canvases, every tier: ``COUNT_CANVAS`` = 1024×768 (one panel fills it; two panels split
  it left/right into halves). The paper says a target then covers "about half the area"; with the
  aspect ratio kept, a 4:3 photo in a half-canvas panel covers a quarter of its one-panel area (a 2:3
  portrait photo loses nothing), so the area cut depends on the photo's aspect;
* relative counting 2×2 grid: ``GRID_CANVAS`` = 1024×768 (four 508×380 panels);
* beetle-tray overlays (distances, relative position): longest side ``TRAY_MAX_SIDE`` = 2048,
  never upscaled, so the real 5568×3712 trays are shown at 2048×1365;
* viewpoint three-panel tier: ``VIEWPOINT_CANVAS`` = 1536×512; C4 pairs: ``PAIR_CANVAS`` = 1536×768.
Panels keep their aspect ratio and are letterboxed on a neutral grey; panels are separated by a
white gutter of ``GUTTER`` pixels.
"""

from __future__ import annotations

import io

from PIL import Image

from builder.common import SourceFormatError

COUNT_CANVAS = (1024, 768)
GRID_CANVAS = (1024, 768)
TRAY_MAX_SIDE = 2048
VIEWPOINT_CANVAS = (1536, 512)
PAIR_CANVAS = (1536, 768)
GUTTER = 8
LETTERBOX = (128, 128, 128)
GUTTER_COLOR = (255, 255, 255)
JPEG_QUALITY = 90


def load_rgb(path: str, target: tuple[int, int] | None = None) -> Image.Image:
    """Decode an image as RGB; JPEG decoding is reduced (DCT scaling) to no less than ``target``."""
    try:
        img = Image.open(path)
        if target is not None and img.format == "JPEG":
            img.draft("RGB", target)
        img = img.convert("RGB")
    except Exception as exc:
        raise SourceFormatError(f"{path}: cannot decode image: {exc}") from None
    return img


def fit_geometry(w: int, h: int, box_w: int, box_h: int) -> tuple[float, int, int, int, int]:
    """``(scale, new_w, new_h, offset_x, offset_y)`` fitting a w×h image centred in a box_w×box_h panel."""
    scale = min(box_w / w, box_h / h)
    nw, nh = max(1, round(w * scale)), max(1, round(h * scale))
    return scale, nw, nh, (box_w - nw) // 2, (box_h - nh) // 2


def max_side_scale(w: int, h: int, max_side: int) -> float:
    """Downscale factor so the longest side is at most ``max_side`` (never above 1)."""
    return min(1.0, max_side / max(w, h))


def panel_rects(canvas: tuple[int, int], rows: int, cols: int) -> list[tuple[int, int, int, int]]:
    """``[x, y, w, h]`` of each panel of a rows×cols layout (row-major) separated by the gutter."""
    W, H = canvas
    pw = (W - GUTTER * (cols - 1)) // cols
    ph = (H - GUTTER * (rows - 1)) // rows
    return [(c * (pw + GUTTER), r * (ph + GUTTER), pw, ph) for r in range(rows) for c in range(cols)]


def resize(img: Image.Image, size: tuple[int, int]) -> Image.Image:
    """Shrink bilinearly (reduced in steps); enlarge with nearest neighbour (adds no invented detail, and is
    ~10x faster: only small images, e.g. the synthetic miniature, are ever enlarged)."""
    if img.size == size:
        return img
    if size[0] > img.size[0]:
        return img.resize(size, Image.Resampling.NEAREST)
    return img.resize(size, Image.Resampling.BILINEAR, reducing_gap=2.0)


def encode(img: Image.Image) -> bytes:
    """The embedded bytes of a rendered image: deterministic baseline JPEG without chroma subsampling
    (4:4:4), so thin coloured overlay lines keep their colour."""
    buf = io.BytesIO()
    img.convert("RGB").save(
        buf, format="JPEG", quality=JPEG_QUALITY, subsampling=0, optimize=False, progressive=False
    )
    return buf.getvalue()
