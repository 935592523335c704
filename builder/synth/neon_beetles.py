"""Synthetic 2018-NEON-beetles: trays of drawn beetles with a 1 cm scale bar and a barcode label.

Each beetle's elytra length/width lines are the drawn extent of its elytra, the scale bar is drawn
exactly ``cm_pix`` pixels long, so ``dist_cm = dist_pix / cm_pix`` in ``BeetleMeasurements.csv`` is
true of the picture. The label shows a barcode-like pattern with the accession code (``A`` + 11
digits = the picture id) printed under it. Two plates carry a second annotator, whose rows the reader
must set aside.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from PIL import ImageDraw, ImageFont

from builder.synth.scenes import background, det_uuid, rng_for, save_jpeg

FOLDER = "2018-neon-beetles"
SIZE = (320, 240)
COLUMNS = (
    "pictureID",
    "scalebar",
    "cm_pix",
    "individual",
    "structure",
    "lying_flat",
    "coords_pix",
    "dist_pix",
    "dist_cm",
    "scientificName",
    "NEON_sampleID",
    "siteID",
    "site_name",
    "plotID",
    "user_name",
    "workflowID",
    "genus",
    "species",
    "combinedID",
    "measureID",
    "file_name",
)
TAXA = (
    ("Pterostichus", "coracinus"),
    ("Carabus", "goryi"),
    ("Harpalus", "pensylvanicus"),
    ("Synuchus", "impunctatus"),
    ("Cyclotrachelus", "sodalis"),
    ("Calathus", "opaculus"),
)
SITES = (("BART", "Bartlett Experimental Forest"), ("HARV", "Harvard Forest"), ("CPER", "Central Plains"))
#: (picture id, number of beetles); the last two use NEON sample ids (no printed A-code)
PLATES = (
    ("A00000012427", 8),
    ("A00000012429", 6),
    ("A00000012430", 5),
    ("A00000032929", 7),
    ("A00000040712", 4),
    ("A00000046175", 8),
    ("A00000051179", 6),
    ("A00000069245", 7),
    ("BART_002.W.20180809.PTECORI.01", 5),
    ("HARV_010.N.20180712.CALOPA.01", 6),
)
CELLS = [(44 + 77 * c, 54 + 82 * r) for r in range(2) for c in range(4)]


def _line(x1, y1, x2, y2) -> str:
    return json.dumps({"x1": x1, "y1": y1, "x2": x2, "y2": y2})


def draw_label(img, code: str | None, rng) -> None:
    """A white specimen label with a barcode-like pattern and, for A-codes, the code printed under it."""
    d = ImageDraw.Draw(img)
    x0, y0, x1, y1 = 196, 196, 314, 236
    d.rectangle([x0, y0, x1, y1], fill=(250, 250, 250), outline=(120, 120, 120))
    x = x0 + 6
    bits = rng.integers(1, 4, 40)
    for i, b in enumerate(bits):
        if x + b > x1 - 6:
            break
        if i % 2 == 0:
            d.rectangle([x, y0 + 4, x + int(b) - 1, y0 + 20], fill=(0, 0, 0))
        x += int(b)
    text = code if code else "NEON"
    d.text((x0 + 8, y0 + 23), text, fill=(0, 0, 0), font=ImageFont.load_default(size=11))


def synth(out_root: Path, seed: int = 42) -> str:
    """Write ``BeetleMeasurements.csv``, ``individual_metadata.csv`` and ``group_images/``."""
    rng = rng_for("neon_beetles", seed)
    root = Path(out_root) / FOLDER
    rows, meta = [], []
    for p, (pic, n) in enumerate(PLATES):
        genus, species = TAXA[p % len(TAXA)]
        site, site_name = SITES[p % len(SITES)]
        cm_pix = float(rng.integers(34, 46))
        img = background(rng, SIZE, (232, 228, 218), spread=6)
        d = ImageDraw.Draw(img)
        sb = (12.0, 224.0, 12.0 + cm_pix, 224.0)
        d.line([(sb[0], sb[1]), (sb[2], sb[3])], fill=(0, 0, 0), width=3)
        for xx in (sb[0], sb[2]):
            d.line([(xx, sb[1] - 5), (xx, sb[1] + 5)], fill=(0, 0, 0), width=1)
        draw_label(img, pic if pic.startswith("A") else None, rng)
        cells = [CELLS[i] for i in sorted(rng.permutation(len(CELLS))[:n])]
        users = ["IsaFluck"] + (["rileywolcheski"] if p in (1, 4) else [])
        sample = f"{site}_{p:03d}.E.20180724.{genus[:3].upper()}{species[:3].upper()}.01"
        for ind, (cx, cy) in enumerate(cells, start=1):
            L = int(rng.integers(24, 56))  # elytra length (px)
            Wd = int(round(L * rng.uniform(0.38, 0.6)))
            cx += int(rng.integers(-6, 7))
            cy += int(rng.integers(-4, 5))
            top = cy - L // 2
            col = tuple(int(v) for v in rng.integers(20, 70, 3))
            d.ellipse([cx - Wd / 2, top, cx + Wd / 2, top + L], fill=col)  # elytra
            d.ellipse([cx - Wd * 0.35, top - Wd * 0.55, cx + Wd * 0.35, top + 2], fill=col)  # pronotum
            d.line([(cx, top), (cx, top + L)], fill=(10, 10, 10), width=1)  # elytral suture
            length = (float(cx), float(top), float(cx), float(top + L))
            width = (float(cx - Wd / 2), float(cy), float(cx + Wd / 2), float(cy))
            mids = {}
            for user in users:
                j = 0.0 if user == "IsaFluck" else 1.0
                for structure, ln in (("ElytraLength", length), ("ElytraWidth", width)):
                    ln = (ln[0] - j, ln[1], ln[2] + j, ln[3])
                    dist = math.hypot(ln[2] - ln[0], ln[3] - ln[1])
                    mid = det_uuid(rng)
                    if user == "IsaFluck":
                        mids[structure] = mid
                    rows.append(
                        {
                            "pictureID": f"{pic}.jpg",
                            "scalebar": _line(*sb),
                            "cm_pix": cm_pix,
                            "individual": ind,
                            "structure": structure,
                            "lying_flat": "Yes",
                            "coords_pix": _line(*ln),
                            "dist_pix": round(dist, 6),
                            "dist_cm": round(dist / cm_pix, 6),
                            "scientificName": f"{genus} {species}",
                            "NEON_sampleID": sample,
                            "siteID": site,
                            "site_name": site_name,
                            "plotID": f"{site}_{p:03d}",
                            "user_name": user,
                            "workflowID": 24861,
                            "genus": genus,
                            "species": species,
                            "combinedID": f"{pic}_{ind}",
                            "measureID": mid,
                            "file_name": f"group_images/{pic}.jpg",
                        }
                    )
            meta.append(
                {
                    "individualID": f"{mids['ElytraLength']}_{mids['ElytraWidth']}",
                    "combinedID": f"{pic}_{ind}",
                    "elytraLength": round(L / cm_pix, 6),
                    "elytraWidth": round(Wd / cm_pix, 6),
                    "measureID_length": mids["ElytraLength"],
                    "measureID_width": mids["ElytraWidth"],
                    "genus": genus,
                    "species": species,
                    "NEON_sampleID": sample,
                    "file_name": f"individual_images/{mids['ElytraLength']}_{mids['ElytraWidth']}.jpg",
                }
            )
        save_jpeg(img, root / "group_images" / f"{pic}.jpg")
    _write_csv(root / "BeetleMeasurements.csv", COLUMNS, rows)
    _write_csv(root / "individual_metadata.csv", tuple(meta[0]), meta)
    return FOLDER


def _write_csv(path: Path, cols, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(cols), lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue(), encoding="utf-8")
