"""Render specs and the renderer: (source images, spec) -> image bytes; ``render_many`` across processes.

A spec is plain data (picklable, JSON-able) so the rendering can run in worker processes and give
the same bytes with 1 or N processes:

``{"canvas": [W, H] | None, "layout": [rows, cols], "max_side": int | None,
   "panels": [{"path": str, "lines": [{"xyxy", "color", "border"}], "boxes": [{"xywh", "color", "dotted"}]}]}``

Overlay coordinates are in source-image pixels; they are mapped through the same scale/offset as the
photo. ``canvas=None`` means one panel shown at its own aspect, downscaled to ``max_side``.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from builder.render import canvas as cv
from builder.render import overlays as ov


def render_image(spec: dict) -> Image.Image:
    """Render one spec to a PIL image (pure function of the spec and the files it names)."""
    panels = spec["panels"]
    if spec.get("canvas") is None:
        if len(panels) != 1:
            raise ValueError("a spec without a canvas takes exactly one panel")
        probe = Image.open(panels[0]["path"])
        w, h = probe.size
        s = cv.max_side_scale(w, h, spec.get("max_side") or max(w, h))
        size = (max(1, round(w * s)), max(1, round(h * s)))
        img = cv.resize(cv.load_rgb(panels[0]["path"], size), size)
        out = img if img is not probe else img.copy()
        geoms = [(size[0] / w, size[1] / h, 0, 0)]
    else:
        W, H = spec["canvas"]
        rows, cols = spec["layout"]
        out = Image.new("RGB", (W, H), cv.GUTTER_COLOR)
        geoms = []
        for panel, (px, py, pw, ph) in zip(panels, cv.panel_rects((W, H), rows, cols), strict=True):
            out.paste(cv.LETTERBOX, (px, py, px + pw, py + ph))
            w, h = Image.open(panel["path"]).size
            scale, nw, nh, ox, oy = cv.fit_geometry(w, h, pw, ph)
            img = cv.resize(cv.load_rgb(panel["path"], (nw, nh)), (nw, nh))
            out.paste(img, (px + ox, py + oy))
            geoms.append((nw / w, nh / h, px + ox, py + oy))
    draw = ImageDraw.Draw(out)
    width = ov.stroke_width(out.size)
    for panel, (sx, sy, ox, oy) in zip(panels, geoms, strict=True):
        for b in panel.get("boxes", ()):
            x, y, bw, bh = b["xywh"]
            ov.box(
                draw, (ox + x * sx, oy + y * sy, bw * sx, bh * sy), b["color"], width, b.get("dotted", False)
            )
        for ln in panel.get("lines", ()):
            x1, y1, x2, y2 = ln["xyxy"]
            ov.line(
                draw,
                (ox + x1 * sx, oy + y1 * sy, ox + x2 * sx, oy + y2 * sy),
                ln["color"],
                width,
                ln.get("border"),
            )
    return out


def render(spec: dict) -> bytes:
    """Render one spec to its embedded bytes."""
    return cv.encode(render_image(spec))


def render_many(specs: list[dict], processes: int = 1, chunksize: int = 8) -> list[bytes]:
    """Render specs in order; the same bytes whatever ``processes`` is."""
    if processes <= 1 or len(specs) < 2:
        return [render(s) for s in specs]
    import multiprocessing as mp

    # fork starts workers in milliseconds where it exists; the output does not depend on the method
    method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
    with mp.get_context(method).Pool(processes) as pool:
        return pool.map(render, specs, chunksize=chunksize)
