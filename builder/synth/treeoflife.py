"""Synthetic miniature of TreeOfLife-200M: a catalog parquet plus BGR image shards (or files by uuid).

Real taxon names from :mod:`builder.synth.c1_taxa`, a long-tailed number of images per species,
and deliberate defects the selection must count: rows outside the ten groups, incomplete lineage,
a missing common name, a duplicated uuid, images below the resolution threshold, a missing image
and a corrupt one. Images are small deterministic drawings (the content does not show the species).
"""

from __future__ import annotations

import hashlib
import random
import uuid as uuidlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image, ImageDraw

from builder.common import jpeg_bytes
from builder.synth.c1_taxa import TAXA, Taxon

FOLDER = "treeoflife"
CATALOG_SCHEMA = pa.schema(
    [
        ("uuid", pa.string()),
        ("kingdom", pa.string()),
        ("phylum", pa.string()),
        ("class", pa.string()),
        ("order", pa.string()),
        ("family", pa.string()),
        ("genus", pa.string()),
        ("species", pa.string()),
        ("scientific_name", pa.string()),
        ("common_name", pa.string()),
        ("source", pa.string()),
        ("resolution_status", pa.string()),
    ]
)
SHARD_SCHEMA = pa.schema(
    [("uuid", pa.string()), ("image", pa.binary()), ("resized_size", pa.list_(pa.int64()))]
)
#: Non-C1 taxa in the catalog (fungi): they count toward exposure but belong to no group.
_OTHER = (
    Taxon(
        "",
        "Fungi",
        "Basidiomycota",
        "Agaricomycetes",
        "Agaricales",
        "Amanitaceae",
        "Amanita",
        "muscaria",
        "Fly agaric",
    ),
)


def _uuid(rng: random.Random) -> str:
    return str(uuidlib.UUID(int=rng.getrandbits(128), version=4))


def draw_image(seed: str, width: int, height: int) -> Image.Image:
    """A deterministic picture: coloured background, an ellipse 'body' and a few spots."""
    h = hashlib.sha256(seed.encode()).digest()
    img = Image.new("RGB", (width, height), (h[0], h[1], h[2]))
    d = ImageDraw.Draw(img)
    d.ellipse(
        [width * 0.2, height * 0.3, width * 0.8, height * 0.7], fill=(h[3], h[4], h[5]), outline=(0, 0, 0)
    )
    for i in range(4):
        x, y = h[6 + i] / 255 * width, h[10 + i] / 255 * height
        r = max(2, min(width, height) // 16)
        d.ellipse([x - r, y - r, x + r, y + r], fill=(h[14 + i], h[18 + i], h[22 + i]))
    return img


def catalog_rows(seed: int = 42) -> tuple[list[dict], dict[str, tuple[int, int]], dict[str, str]]:
    """Catalog rows, {uuid: (width, height)} and {uuid: defect} ('missing' | 'corrupt') for the images."""
    rng = random.Random(seed)
    rows: list[dict] = []
    sizes: dict[str, tuple[int, int]] = {}
    defects: dict[str, str] = {}

    def add(t: Taxon, **override) -> dict:
        common = t.catalog_name[0] if t.catalog_name else t.english
        row = {
            "uuid": _uuid(rng),
            "kingdom": t.kingdom,
            "phylum": t.phylum,
            "class": t.klass,
            "order": t.order or None,
            "family": t.family,
            "genus": t.genus,
            "species": t.binomial,
            "scientific_name": t.binomial,
            "common_name": common,
            "source": rng.choice(("gbif", "eol", "bioscan")),
            "resolution_status": "EXACT_MATCH_PRIMARY_SOURCE_ACCEPTED",
        }
        row.update(override)
        rows.append(row)
        w, h = rng.randrange(112, 161, 8), rng.randrange(112, 161, 8)
        sizes[row["uuid"]] = (w, h)
        return row

    for t in (*TAXA, *_OTHER):
        # long tail: a few abundant species, many rare ones
        n = 1 + int(12 * rng.random() ** 2)
        for _ in range(n):
            add(t)
    # defects the selection and the audit must report
    t_bird, t_mammal, t_fish = TAXA[24], TAXA[61], TAXA[38]
    add(t_bird, family=None)  # incomplete lineage
    add(t_mammal, genus="")  # empty string counts as missing
    add(t_fish, common_name=None)  # no common name
    # image defects go to the rarest species of the two smallest groups, so that the miniature's walk
    # (budget 24, cap 3-4) examines every one of them
    per_taxon = {t.binomial: 0 for t in TAXA}
    for r in rows:
        if r["species"] in per_taxon:
            per_taxon[r["species"]] += 1
    rare = sorted((t for t in TAXA if t.group in ("Bryophytes", "Gymnosperms") and t.english),
                  key=lambda t: (per_taxon[t.binomial], t.binomial))  # fmt: skip
    dup = add(rare[0])
    rows.append(dict(dup))  # duplicated uuid
    for t in rare[1:3]:
        sizes[add(t)["uuid"]] = (64, 72)  # below the resolution threshold
    defects[add(rare[3])["uuid"]] = "missing"
    defects[add(rare[4])["uuid"]] = "corrupt"
    return rows, sizes, defects


def write(out_root: Path, seed: int = 42, layout: str = "shards", rows_per_shard: int = 64) -> Path:
    """Write catalog.parquet and images (``shards`` or ``files``) under ``out_root/treeoflife``."""
    if layout not in ("shards", "files"):
        raise ValueError(f"layout must be 'shards' or 'files', got {layout!r}")
    folder = Path(out_root) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    rows, sizes, defects = catalog_rows(seed)
    pq.write_table(pa.Table.from_pylist(rows, schema=CATALOG_SCHEMA), folder / "catalog.parquet")
    seen: set[str] = set()
    images: list[tuple[str, str, Image.Image | None]] = []  # (uuid, source, image)
    for r in rows:
        u = r["uuid"]
        if u in seen or defects.get(u) == "missing":
            continue
        seen.add(u)
        w, h = sizes[u]
        images.append((u, r["source"], draw_image(u, w, h)))
    if layout == "files":
        (folder / "images").mkdir(exist_ok=True)
        for u, _, img in images:
            data = jpeg_bytes(img)
            if defects.get(u) == "corrupt":
                data = data[: len(data) // 3]
            (folder / "images" / f"{u}.jpg").write_bytes(data)
        return folder
    by_source: dict[str, list] = {}
    for item in images:
        by_source.setdefault(item[1], []).append(item)
    for source in sorted(by_source):
        items = by_source[source]
        for start in range(0, len(items), rows_per_shard):
            chunk = items[start : start + rows_per_shard]
            cols: dict[str, list] = {"uuid": [], "image": [], "resized_size": []}
            for u, _, img in chunk:
                bgr = np.asarray(img)[:, :, ::-1].tobytes()
                if defects.get(u) == "corrupt":
                    bgr = bgr[: len(bgr) // 2]  # truncated pixel buffer
                cols["uuid"].append(u)
                cols["image"].append(bgr)
                cols["resized_size"].append([img.height, img.width])
            shard = (
                folder
                / "shards"
                / f"source={source}"
                / "server=synthetic"
                / f"data_{start // rows_per_shard:05d}.parquet"
            )
            shard.parent.mkdir(parents=True, exist_ok=True)
            pq.write_table(pa.Table.from_pydict(cols, schema=SHARD_SCHEMA), shard)
    return folder
