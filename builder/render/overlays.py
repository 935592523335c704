"""Overlay drawing: lines with borders, solid and dotted boxes, all sized relative to the image."""

from __future__ import annotations

from PIL import ImageDraw

COLORS = {
    "red": (230, 25, 25),
    "blue": (30, 80, 255),
    "green": (20, 200, 40),
    "white": (255, 255, 255),
    "cyan": (0, 230, 230),
    "black": (0, 0, 0),
}


def stroke_width(size: tuple[int, int]) -> int:
    """Line width for an image: 0.4 % of its longest side, at least 3 px."""
    return max(3, round(0.004 * max(size)))


def line(draw: ImageDraw.ImageDraw, xyxy, color: str, width: int, border: str | None = None) -> None:
    """A line, optionally on a wider border line of another colour (drawn first)."""
    x1, y1, x2, y2 = xyxy
    if border:
        bw = width + 2 * max(1, width // 2)
        draw.line([(x1, y1), (x2, y2)], fill=COLORS[border], width=bw)
        r = bw / 2
        for x, y in ((x1, y1), (x2, y2)):  # round caps so the border also frames the ends
            draw.ellipse([x - r, y - r, x + r, y + r], fill=COLORS[border])
    draw.line([(x1, y1), (x2, y2)], fill=COLORS[color], width=width)


def box(draw: ImageDraw.ImageDraw, xywh, color: str, width: int, dotted: bool = False) -> None:
    """A rectangle outline ``[x, y, w, h]``; dotted boxes use dashes 2.5× the line width long."""
    x, y, w, h = xywh
    if not dotted:
        draw.rectangle([x, y, x + w, y + h], outline=COLORS[color], width=width)
        return
    dash = max(3, round(2.5 * width))
    edges = [
        ((x, y), (x + w, y)),
        ((x + w, y), (x + w, y + h)),
        ((x + w, y + h), (x, y + h)),
        ((x, y + h), (x, y)),
    ]
    for (ax, ay), (bx, by) in edges:
        length = max(abs(bx - ax), abs(by - ay))
        steps = max(1, int(length // (2 * dash)))
        for k in range(steps + 1):
            t0, t1 = min(1.0, 2 * k * dash / length), min(1.0, (2 * k + 1) * dash / length)
            if t0 >= 1.0:
                break
            draw.line(
                [(ax + (bx - ax) * t0, ay + (by - ay) * t0), (ax + (bx - ax) * t1, ay + (by - ay) * t1)],
                fill=COLORS[color],
                width=width,
            )
