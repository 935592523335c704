"""C3 question generators (§3.3, §A.3, Tables 9–10, §K.3), deterministic given the seed.

Choices where the paper is silent or ambiguous (also in the report to the lead):
* The "ten 500-image subsets" for counting and relative counting are read as the five counting
  datasets of Table 2 with WAID split by class: six WAID subsets (sheep, cattle, seals, camels,
  kiangs, zebras) + Boxes on Bees + NEON beetles + DePondFi + GZCD. GZCD's "three nested questions per
  image" are Grevy's zebras ⊂ zebras ⊂ animals. The corpus name goes to ``c3.corpus``.
* Subsets: up to ``SUBSET_SIZE`` images, stratified by count into ``N_STRATA`` strata over the
  distinct count values, taken round-robin (balanced sparse/dense mix).
* Counting: every subset image is asked once in the easy tier (GZCD three times), once as the target
  of a medium item (partner panel from another dataset) and once of a hard item (partner from the same
  subset); the target side alternates by seeded choice.
* Relative counting: grids of four subset images with pairwise distinct counts (so most and least are
  unique); each grid is asked "most" and "least", panels permuted so gold positions are balanced.
* Absolute distance: every measured beetle × {length, width}. Relative distance: disjoint groups of four
  beetles of one plate whose largest value is unique; gold positions balanced. Relative position: up to
  ``REL_POSITION_PER_PLATE`` pairs per plate whose direction lies within 15° of a sector centre (no
  ambiguous diagonals); empty red/blue boxes are placed where no specimen is; green and cyan boxes go
  around other specimens (or empty places).
* Localization and the "species" viewpoint tier use images with exactly one annotation (a single
  dominant subject) and ship ``image_ref`` (the unmodified source photo); the "box" tier draws a red
  box on one animal of a multi-animal photo; the three-panel tier puts three single-subject photos
  side by side with a red box each. OCR ships ``image_ref`` of the tray photograph.
* Tier names follow ``biovqa.prompts`` (counting easy/medium/hard, viewpoint box/species/three_panel).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from biovqa import prompts, schema
from builder.manifests.c3 import load
from builder.render import canvas as cv
from builder.sources.boxes_on_bees import is_bee
from builder.sources.gzcd import NESTED_TARGETS
from builder.sources.wildme import CATALOGS as WILDME

SUBSET_SIZE = 500
N_STRATA = 5
REL_POSITION_PER_PLATE = 2
LOCALIZATION_PER_CATALOG = 1000
VIEWPOINT_PER_TIER_PER_CATALOG = 1000
ANGLE_MARGIN_DEG = 15.0
WAID_WORDS = {
    "sheep": "sheep",
    "cattle": "cattle",
    "seal": "seals",
    "camelus": "camels",
    "kiang": "kiangs",
    "zebra": "zebras",
}
SPECIES = {**{k: v[1] for k, v in WILDME.items()}, "gzcd": "Grevy's zebra"}
VIEW_SOURCES = ("whaleshark", "hyena", "leopard", "gzcd")
PANEL_POS = ("left", "right")
GRID_OPTIONS = [
    "Image A (top-left)",
    "Image B (top-right)",
    "Image C (bottom-left)",
    "Image D (bottom-right)",
]
BEETLE_OPTIONS = [
    "Beetle A (red dotted box/line)",
    "Beetle B (blue dotted box/line)",
    "Beetle C (green dotted box/line)",
    "Beetle D (white dotted box/line)",
]
BEETLE_COLORS = ("red", "blue", "green", "white")
#: sector k (angle 45°·k counter-clockwise from "right") -> direction name
SECTORS = ("right", "top-right", "top", "top-left", "left", "bottom-left", "bottom", "bottom-right")


def sid(x: str) -> str:
    """An id safe inside a qid (no slashes)."""
    return x.replace("/", "__")


def c3_struct(**kw) -> dict:
    """A full ``c3`` struct with defaults for the fields a task does not use."""
    base = {f.name: None for f in schema.C3}
    base.update({"tier": "", "counts": [], "target_panel": -1, "option_values": [], "gold_box": []})
    base.update(kw)
    return base


def record(task: str, source: str, stable_id: str, **kw) -> dict:
    """A C3 question record (image/image_ref filled later or by the caller)."""
    rec = schema.empty_record()
    name = task.split(".", 1)[1]
    rec.update(
        qid=f"{task}/{source}/{stable_id}",
        component="c3",
        task=task,
        family=name,
        source=source,
        instruction=prompts.c3_instruction(name),
        answer_form=_FORMS[name],
    )
    rec.update(kw)
    return rec


_FORMS = {
    "counting": "integer",
    "relative_counting": "choice_abcd",
    "absolute_distance": "number_cm",
    "relative_distance": "choice_abcd",
    "localization": "box",
    "relative_position": "direction",
    "viewpoint": "viewpoint",
    "ocr": "code",
}


def image_ref(source: str, row: dict) -> dict:
    """The ``image_ref`` of a manifest row (id = path relative to the source root)."""
    return {
        "source": source,
        "id": row["path"],
        "sha256": row["sha256"],
        "width": row["width"],
        "height": row["height"],
    }


def _shuffled(xs: list, rng: np.random.Generator) -> list:
    """``xs`` in a random order (one ``rng.permutation`` draw)."""
    return [xs[i] for i in rng.permutation(len(xs))]


def _subsample(xs: list, cap: int, rng: np.random.Generator) -> list:
    """Up to ``cap`` items of ``xs`` drawn at random, kept in input order (no draw when all fit)."""
    return xs if len(xs) <= cap else [xs[i] for i in sorted(rng.permutation(len(xs))[:cap])]


def _chunks(xs: list, n: int) -> list[list]:
    """The consecutive full groups of ``n`` items of ``xs`` (a short tail is dropped)."""
    return [xs[n * g : n * g + n] for g in range(len(xs) // n)]


def stratified(items: list, counts: list[int], n: int, rng: np.random.Generator) -> list:
    """Up to ``n`` items balanced over ``N_STRATA`` count strata, in a stable (input) order.

    Strata split the *distinct* count values into equal parts, so a bulk of sparse scenes with tied
    counts cannot fill every stratum; strata are drawn round-robin, an exhausted one yields its turn.
    """
    if len(items) <= n:
        return list(items)
    values = sorted(set(counts))
    rank = {v: i * N_STRATA // len(values) for i, v in enumerate(values)}
    strata: list[list[int]] = [[] for _ in range(N_STRATA)]
    for i, c in enumerate(counts):
        strata[rank[c]].append(i)
    strata = [_shuffled(s, rng) for s in strata]
    picked: list[int] = []
    while len(picked) < n:
        for s in strata:
            if s and len(picked) < n:
                picked.append(s.pop())
    return [items[i] for i in sorted(picked)]


# ------------------------------------------------------------------------------------------ subsets


def _top_count(targets: dict[str, tuple[str, int]]) -> int:
    """The largest count among an image's targets (for GZCD's nested ones: all animals)."""
    return max(n for _, n in targets.values())


def _bee_targets(r: dict) -> dict[str, tuple[str, int]]:
    n = sum(is_bee(o["category"]) for o in r["objects"])
    return {"bee": ("bees", n)} if n else {}


def _beetle_targets(r: dict) -> dict[str, tuple[str, int]]:
    return {"beetle": ("beetles", r["n_individuals"])} if r["count_verified"] else {}


def _fish_targets(r: dict) -> dict[str, tuple[str, int]]:
    return {"fish": ("fish", r["n_objects"])}


def _gzcd_targets(r: dict) -> dict[str, tuple[str, int]]:
    """The nested targets (Grevy's zebras ⊂ zebras ⊂ animals) present in the image, in nesting order."""
    counts = {
        key: (word, sum(cats is None or o["category"] in cats for o in r["objects"]))
        for key, word, cats in NESTED_TARGETS
    }
    return {key: t for key, t in counts.items() if t[1]}


#: counting source (one subset each; WAID is split by class) -> manifest row -> ``{target key: (word,
#: count)}``; an empty dict leaves the image out
COUNT_TARGETS = {
    "boxes_on_bees": _bee_targets,
    "neon_beetles": _beetle_targets,
    "depondfi": _fish_targets,
    "gzcd": _gzcd_targets,
}


def counting_subsets(manifest_dir: Path, roots: dict[str, Path], rng) -> list[dict]:
    """The counting subsets: ``{corpus, source, items: [(row, {target: (word, count)})], root}``."""
    subsets = []

    def add(corpus, source, entries):
        if not entries:
            return
        keep = stratified(entries, [_top_count(t) for _, t in entries], SUBSET_SIZE, rng)
        subsets.append({"corpus": corpus, "source": source, "items": keep, "root": str(roots[source])})

    waid = load(manifest_dir, "waid") if "waid" in roots else []
    for cls, word in WAID_WORDS.items():
        add(
            f"waid_{cls}",
            "waid",
            [(r, {cls: (word, n)}) for r in waid if (n := sum(o["category"] == cls for o in r["objects"]))],
        )
    for source, targets_of in COUNT_TARGETS.items():
        if source in roots:
            add(source, source, [(r, t) for r in load(manifest_dir, source) if (t := targets_of(r))])
    return subsets


# ------------------------------------------------------------------------------------------ counting


def _subset_image(sub: dict, row: dict) -> dict:
    """The render panel of one subset image."""
    return {"path": str(Path(sub["root"]) / row["path"])}


def _counting_item(
    tier: str,
    sub: dict,
    row: dict,
    key: str,
    target: tuple[str, int],
    partner: tuple | None = None,
    side: int = 0,
) -> tuple[dict, dict]:
    """Count ``key`` (``target`` = (word, count)) in ``row`` of subset ``sub``: alone (easy) or beside a
    ``partner`` = (subset, row, count) photo, the asked one being panel ``side`` (medium, hard)."""
    word, n = target
    panels, counts, stable_id = [(sub, row)], [n], f"{tier}-{sid(row['id'])}-{key}"
    if partner is not None:
        other, prow, pn = partner
        panels = [(sub, row), (other, prow)] if side == 0 else [(other, prow), (sub, row)]
        counts = [n, pn] if side == 0 else [pn, n]
        stable_id += f"-vs-{other['corpus']}-{sid(prow['id'])}"
    rec = record(
        "c3.counting",
        sub["source"],
        stable_id,
        question=prompts.c3_question(
            "counting", tier, animals=word, panel=PANEL_POS[side]
        ),  # easy: no {panel}
        answer=str(n),
        difficulty=tier,
    )
    rec["c3"] = c3_struct(
        corpus=sub["corpus"],
        tier=tier,
        counts=counts,
        target_panel=side,
        gold_value=float(n),
        plate_id=f"{sub['source']}:{row['id']}",
        object_type=key,
        image_width=cv.COUNT_CANVAS[0],
        image_height=cv.COUNT_CANVAS[1],
    )
    spec = {
        "canvas": list(cv.COUNT_CANVAS),
        "layout": [1, len(panels)],
        "panels": [_subset_image(s, r) for s, r in panels],
    }
    return rec, spec


def counting(subsets: list[dict], rng) -> Iterator[tuple[dict, dict]]:
    """Easy, medium and hard counting items with their render specs."""
    for sub in subsets:
        for row, targets in sub["items"]:
            for key, target in targets.items():
                yield _counting_item("easy", sub, row, key, target)
    for tier in ("medium", "hard"):
        for sub in subsets:
            others = [s for s in subsets if s["source"] != sub["source"]] if tier == "medium" else [sub]
            if not others or (tier == "hard" and len(sub["items"]) < 2):
                continue
            for ii, (row, targets) in enumerate(sub["items"]):
                keys = sorted(targets)
                key = keys[int(rng.integers(len(keys)))]
                other = others[int(rng.integers(len(others)))]
                j = int(rng.integers(len(other["items"])))
                if tier == "hard" and j == ii:
                    j = (j + 1) % len(other["items"])
                prow, ptargets = other["items"][j]
                side = int(rng.integers(2))
                yield _counting_item(
                    tier, sub, row, key, targets[key], (other, prow, _top_count(ptargets)), side
                )


def relative_counting(subsets: list[dict], rng) -> Iterator[tuple[dict, dict]]:
    """2×2 grids of four images with distinct counts, asked for the most and the least."""
    task = "c3.relative_counting"
    gold_positions = itertools.cycle(range(4))
    for sub in subsets:
        # (row, target key, (word, n)) — one target per image: the largest nested one for GZCD
        items = [(row, *max(t.items(), key=lambda kv: (kv[1][1], kv[0]))) for row, t in sub["items"]]
        groups, cur = [], []
        for it in _shuffled(items, rng):
            if all(it[2][1] != c[2][1] for c in cur):
                cur.append(it)
            if len(cur) == 4:
                groups.append(cur)
                cur = []
        for g in groups:
            ns = [n for _, _, (_, n) in g]
            for extreme, pick in (("most", np.argmax), ("least", np.argmin)):
                gold = g[int(pick(ns))]
                rest = _shuffled([it for it in g if it is not gold], rng)
                pos = next(gold_positions)
                grid = rest[:pos] + [gold] + rest[pos:]
                gold_row, gold_key, (word, gold_n) = gold
                ids = "+".join(sid(row["id"]) for row, _, _ in grid)
                rec = record(
                    task,
                    sub["source"],
                    f"{extreme}-{sub['corpus']}-{ids}",
                    question=prompts.c3_question("relative_counting", extreme=extreme, animals=word),
                    options=list(GRID_OPTIONS),
                    answer=GRID_OPTIONS[pos].split(" (")[0],
                    answer_index=pos,
                )
                rec["c3"] = c3_struct(
                    corpus=sub["corpus"],
                    counts=[n for _, _, (_, n) in grid],
                    target_panel=pos,
                    gold_value=float(gold_n),
                    measurement=extreme,
                    plate_id=f"{sub['source']}:{gold_row['id']}",
                    object_type=gold_key,
                    image_width=cv.GRID_CANVAS[0],
                    image_height=cv.GRID_CANVAS[1],
                )
                yield (
                    rec,
                    {
                        "canvas": list(cv.GRID_CANVAS),
                        "layout": [2, 2],
                        "panels": [_subset_image(sub, row) for row, _, _ in grid],
                    },
                )


# ------------------------------------------------------------------------------------------ beetles


def _tray(root: Path, row: dict) -> tuple[str, float, tuple[int, int]]:
    s = cv.max_side_scale(row["width"], row["height"], cv.TRAY_MAX_SIDE)
    size = (max(1, round(row["width"] * s)), max(1, round(row["height"] * s)))
    return str(root / row["path"]), size[0] / row["width"], size


def _tray_spec(path: str, **marks) -> dict:
    """Render spec of one photo scaled to ``TRAY_MAX_SIDE`` with ``marks`` (``boxes``, ``lines``) drawn on it."""
    return {"canvas": None, "max_side": cv.TRAY_MAX_SIDE, "panels": [{"path": path, **marks}]}


def _species(row: dict) -> str:
    return row["scientific_name"] or " ".join(x for x in (row["genus"], row["species"]) if x)


def _plate_struct(row: dict, size: tuple[int, int], **kw) -> dict:
    """The ``c3`` struct of a beetle-plate item: the plate fields every beetle task shares, plus ``kw``."""
    return c3_struct(
        corpus="neon_beetles",
        plate_id=row["id"],
        species=_species(row),
        object_type="beetle",
        image_width=size[0],
        image_height=size[1],
        **kw,
    )


def absolute_distance(plates: list[dict], root: Path) -> Iterator[tuple[dict, dict]]:
    """Every measured beetle × {length, width}: red line (white border) + blue scale bar (green border)."""
    task = "c3.absolute_distance"
    for row in plates:
        path, scale, size = _tray(root, row)
        for b in row["beetles"]:
            for m in ("length", "width"):
                cm = b[f"{m}_cm"]
                rec = record(
                    task,
                    "neon_beetles",
                    f"{row['id']}-{b['individual']}-{m}",
                    question=prompts.c3_question("absolute_distance", measurement=m),
                    answer=f"{cm:.3f}",
                )
                rec["c3"] = _plate_struct(
                    row, size, gold_value=float(cm), measurement=m, scale_px_per_cm=row["cm_pix"] * scale
                )
                yield (
                    rec,
                    _tray_spec(
                        path,
                        lines=[
                            {"xyxy": list(row["scalebar"]), "color": "blue", "border": "green"},
                            {"xyxy": list(b[m]), "color": "red", "border": "white"},
                        ],
                    ),
                )


def relative_distance(plates: list[dict], root: Path, rng) -> Iterator[tuple[dict, dict]]:
    """Four beetles of one plate in dotted boxes with coloured lines; which has the largest length/width."""
    task = "c3.relative_distance"
    gold_positions = itertools.cycle(range(4))
    for row in plates:
        beetles = row["beetles"]
        if len(beetles) < 4:
            continue
        path, scale, size = _tray(root, row)
        for m in ("length", "width"):
            for group in _chunks(_shuffled(beetles, rng), 4):
                vals = [b[f"{m}_cm"] for b in group]
                top = max(vals)
                if sum(math.isclose(v, top, rel_tol=1e-9) for v in vals) != 1:
                    continue  # no unique largest
                gold = group[vals.index(top)]
                rest = [b for b in group if b is not gold]
                pos = next(gold_positions)
                shown = rest[:pos] + [gold] + rest[pos:]
                ids = "+".join(str(b["individual"]) for b in shown)
                rec = record(
                    task,
                    "neon_beetles",
                    f"{row['id']}-{m}-{ids}",
                    question=prompts.c3_question("relative_distance", measurement=m),
                    options=list(BEETLE_OPTIONS),
                    answer=f"Beetle {'ABCD'[pos]}",
                    answer_index=pos,
                )
                rec["c3"] = _plate_struct(
                    row,
                    size,
                    target_panel=pos,
                    gold_value=float(top),
                    option_values=[float(b[f"{m}_cm"]) for b in shown],
                    measurement=m,
                    scale_px_per_cm=row["cm_pix"] * scale,
                )
                colored = list(zip(shown, BEETLE_COLORS, strict=True))
                yield (
                    rec,
                    _tray_spec(
                        path,
                        boxes=[{"xywh": beetle_box(b), "color": c, "dotted": True} for b, c in colored],
                        lines=[{"xyxy": list(b[m]), "color": c} for b, c in colored],
                    ),
                )


def beetle_box(b: dict, pad: float = 0.35) -> list[float]:
    """``[x, y, w, h]`` around a beetle's two elytra lines, padded by ``pad`` × its elytra length."""
    xs = [b["length"][0], b["length"][2], b["width"][0], b["width"][2]]
    ys = [b["length"][1], b["length"][3], b["width"][1], b["width"][3]]
    m = pad * math.hypot(b["length"][2] - b["length"][0], b["length"][3] - b["length"][1])
    return [min(xs) - m, min(ys) - m, max(xs) - min(xs) + 2 * m, max(ys) - min(ys) + 2 * m]


def _center(box) -> tuple[float, float]:
    return box[0] + box[2] / 2, box[1] + box[3] / 2


def direction_of(dx: float, dy: float) -> tuple[str, float]:
    """Direction name of an image-space displacement (y down) and its distance in degrees from the sector centre."""
    ang = math.degrees(math.atan2(-dy, dx)) % 360
    k = round(ang / 45) % 8
    off = abs((ang - 45 * k + 180) % 360 - 180)
    return SECTORS[k], off


def _overlaps(a, b, gap=2.0) -> bool:
    return (
        a[0] < b[0] + b[2] + gap
        and b[0] < a[0] + a[2] + gap
        and a[1] < b[1] + b[3] + gap
        and b[1] < a[1] + a[3] + gap
    )


def _add_empty_box(like: list[float], size: tuple[int, int], taken: list, rng) -> list[float] | None:
    """A box of ``like``'s size placed on a ``size`` plate clear of every box in ``taken`` (and added to it);
    None if none fits."""
    W, H = size
    w, h = like[2], like[3]
    if w >= W or h >= H:
        return None
    for _ in range(400):
        cand = [float(rng.uniform(0, W - w)), float(rng.uniform(0, H - h)), w, h]
        if not any(_overlaps(cand, t) for t in taken):
            taken.append(cand)
            return cand
    return None


def _position_boxes(boxes: list, i: int, j: int, size: tuple[int, int], rng) -> list[tuple] | None:
    """The six ``(box, colour)`` of a relative-position item in a fixed order: red specimen ``i`` and an
    empty red box its size, blue specimen ``j`` and an empty blue box its size, then green and cyan boxes
    around other specimens (or empty places of the red size); None when the plate has no room."""
    taken = list(boxes)
    red_empty = _add_empty_box(boxes[i], size, taken, rng)
    if red_empty is None:
        return None
    blue_empty = _add_empty_box(boxes[j], size, taken, rng)
    if blue_empty is None:
        return None
    spare = [b for t, b in enumerate(boxes) if t not in (i, j)]
    extra = []
    for _ in range(2):
        e = spare.pop(int(rng.integers(len(spare)))) if spare else _add_empty_box(boxes[i], size, taken, rng)
        if e is None:
            return None
        extra.append(e)
    return [
        (boxes[i], "red"),
        (red_empty, "red"),
        (boxes[j], "blue"),
        (blue_empty, "blue"),
        (extra[0], "green"),
        (extra[1], "cyan"),
    ]


def relative_position(plates: list[dict], root: Path, rng) -> Iterator[tuple[dict, dict]]:
    """Six boxes (red ×2, blue ×2, green, cyan); direction of the red specimen from the blue one."""
    task = "c3.relative_position"
    gold_positions = itertools.cycle(range(4))
    for row in plates:
        beetles = row["beetles"]
        if len(beetles) < 2:
            continue
        path, _, size = _tray(root, row)
        boxes = [beetle_box(b) for b in beetles]
        pairs = _shuffled([(i, j) for i in range(len(beetles)) for j in range(len(beetles)) if i != j], rng)
        used: set[frozenset] = set()  # unordered pairs already asked
        for i, j in pairs:  # i: red specimen, j: blue specimen
            if len(used) == REL_POSITION_PER_PLATE:
                break
            if frozenset((i, j)) in used:
                continue
            (rx, ry), (bx, by) = _center(boxes[i]), _center(boxes[j])
            gold, off = direction_of(rx - bx, ry - by)
            if off > ANGLE_MARGIN_DEG:
                continue
            six = _position_boxes(boxes, i, j, (row["width"], row["height"]), rng)
            if six is None:
                continue
            used.add(frozenset((i, j)))
            distract = _shuffled([d for d in prompts.DIRECTIONS if d != gold], rng)[:3]
            pos = next(gold_positions)
            options = distract[:pos] + [gold] + distract[pos:]
            rec = record(
                task,
                "neon_beetles",
                f"{row['id']}-{beetles[i]['individual']}-from-{beetles[j]['individual']}",
                question=prompts.c3_question("relative_position", directions=options),
                options=options,
                answer=gold,
                answer_index=pos,
            )
            rec["c3"] = _plate_struct(row, size, direction=gold, target_panel=pos)
            six = _shuffled(six, rng)  # drawing order carries no hint
            yield rec, _tray_spec(path, boxes=[{"xywh": list(b), "color": c} for b, c in six])


def ocr(plates: list[dict]) -> Iterator[tuple[dict, None]]:
    """OCR control on every tray whose picture id is a printed accession code (image_ref)."""
    for row in plates:
        if not row["code"]:
            continue
        rec = record(
            "c3.ocr",
            "neon_beetles",
            row["id"],
            question=prompts.c3_question("ocr"),
            answer=row["code"],
            image_ref=image_ref("neon_beetles", row),
        )
        rec["c3"] = c3_struct(
            corpus="neon_beetles",
            code=row["code"],
            plate_id=row["id"],
            species=_species(row),
            object_type="label",
            image_width=row["width"],
            image_height=row["height"],
        )
        yield rec, None


# ------------------------------------------------------------------------------------------ wildlife


def _box(o: dict) -> list[float]:
    return [o["x"], o["y"], o["w"], o["h"]]


def _wildlife_struct(source: str, row: dict, **kw) -> dict:
    """The ``c3`` struct of a wildlife-photo item: the fields its tasks share, plus ``kw``."""
    return c3_struct(
        corpus=source, species=SPECIES[source], plate_id=f"{source}:{row['id']}", object_type=source, **kw
    )


def localization(source: str, rows: list[dict], rng) -> Iterator[tuple[dict, None]]:
    """Single-subject photos: gold box in absolute pixels of the source image (image_ref)."""
    single = [r for r in rows if r["n_objects"] == 1]
    for r in _subsample(single, LOCALIZATION_PER_CATALOG, rng):
        box = _box(r["objects"][0])
        rec = record(
            "c3.localization",
            source,
            sid(r["id"]),
            image_ref=image_ref(source, r),
            question=prompts.c3_question(
                "localization", width=r["width"], height=r["height"], species=SPECIES[source]
            ),
            answer="[" + ", ".join(str(round(v)) for v in box) + "]",
        )
        rec["c3"] = _wildlife_struct(
            source, r, gold_box=box, image_width=r["width"], image_height=r["height"]
        )
        yield rec, None


def viewpoint(source: str, root: Path, rows: list[dict], rng) -> Iterator[tuple[dict, dict | None]]:
    """Viewpoint in three tiers: species (plain single-subject photo), box (red box on one animal of a
    multi-animal photo) and three_panel (three single-subject photos, ask about one box)."""
    task, species = "c3.viewpoint", SPECIES[source]
    single = [r for r in rows if r["n_objects"] == 1 and r["objects"][0]["viewpoint"]]
    cap = VIEWPOINT_PER_TIER_PER_CATALOG
    for r in _subsample(single, cap, rng):
        vp = r["objects"][0]["viewpoint"]
        rec = record(
            task,
            source,
            f"species-{sid(r['id'])}",
            image_ref=image_ref(source, r),
            difficulty="species",
            question=prompts.c3_question("viewpoint", "species", species=species),
            answer=vp,
        )
        rec["c3"] = _wildlife_struct(
            source,
            r,
            tier="species",
            viewpoint=vp,
            target_panel=0,
            image_width=r["width"],
            image_height=r["height"],
        )
        yield rec, None
    multi = [(r, o) for r in rows if r["n_objects"] > 1 for o in r["objects"] if o["viewpoint"]]
    for r, o in _subsample(multi, cap, rng):
        s = cv.max_side_scale(r["width"], r["height"], cv.TRAY_MAX_SIDE)
        rec = record(
            task,
            source,
            f"box-{sid(r['id'])}-{o['ann_id']}",
            difficulty="box",
            question=prompts.c3_question("viewpoint", "box"),
            answer=o["viewpoint"],
        )
        rec["c3"] = _wildlife_struct(
            source,
            r,
            tier="box",
            viewpoint=o["viewpoint"],
            target_panel=0,
            gold_box=[v * s for v in _box(o)],
            image_width=round(r["width"] * s),
            image_height=round(r["height"] * s),
        )
        yield rec, _tray_spec(str(root / r["path"]), boxes=[{"xywh": _box(o), "color": "red"}])
    for t, trio in enumerate(_chunks(_shuffled(single, rng), 3)[:cap]):
        pos = t % 3
        target = trio[pos]
        vp = target["objects"][0]["viewpoint"]
        ids = "+".join(sid(r["id"]) for r in trio)
        rec = record(
            task,
            source,
            f"three-{ids}-{pos}",
            difficulty="three_panel",
            answer=vp,
            question=prompts.c3_question(
                "viewpoint", "three_panel", species=species, position=("left", "middle", "right")[pos]
            ),
        )
        rec["c3"] = _wildlife_struct(
            source,
            target,
            tier="three_panel",
            viewpoint=vp,
            target_panel=pos,
            image_width=cv.VIEWPOINT_CANVAS[0],
            image_height=cv.VIEWPOINT_CANVAS[1],
        )
        yield (
            rec,
            {
                "canvas": list(cv.VIEWPOINT_CANVAS),
                "layout": [1, 3],
                "panels": [
                    {
                        "path": str(root / r["path"]),
                        "boxes": [{"xywh": _box(r["objects"][0]), "color": "red"}],
                    }
                    for r in trio
                ],
            },
        )


# ------------------------------------------------------------------------------------------ driver


def items(manifest_dir: Path, roots: dict[str, Path], seed: int = 42) -> Iterator[tuple[dict, dict | None]]:
    """Every C3 (record, render spec) pair in a stable order; spec None = the record has image_ref."""
    manifest_dir = Path(manifest_dir)
    roots = {k: Path(v) for k, v in roots.items()}
    rng = np.random.default_rng(seed)
    subsets = counting_subsets(manifest_dir, roots, rng)
    yield from counting(subsets, rng)
    yield from relative_counting(subsets, rng)
    if "neon_beetles" in roots:
        plates = load(manifest_dir, "neon_beetles")
        root = roots["neon_beetles"]
        yield from absolute_distance(plates, root)
        yield from relative_distance(plates, root, rng)
        yield from relative_position(plates, root, rng)
        yield from ocr(plates)
    for source in VIEW_SOURCES:
        if source in roots:
            rows = load(manifest_dir, source)
            yield from localization(source, rows, rng)
            yield from viewpoint(source, roots[source], rows, rng)


def attach_renders(
    pairs: Iterator[tuple[dict, dict | None]], processes: int = 1, chunk: int = 256
) -> Iterator[dict]:
    """Render the specs in chunks (``render_many``) and yield validated records in the same order."""
    from builder.render.pairs import render_many

    buf: list[tuple[dict, dict | None]] = []

    def flush():
        specs = [s for _, s in buf if s is not None]
        images = iter(render_many(specs, processes=processes))
        for rec, spec in buf:
            if spec is not None:
                rec["image"] = {"bytes": next(images), "path": None}
            schema.validate_record(rec)
            yield rec
        buf.clear()

    for pair in pairs:
        buf.append(pair)
        if len(buf) >= chunk:
            yield from flush()
    yield from flush()


def generate(
    manifest_dir: Path, roots: dict[str, Path], *, seed: int = 42, processes: int = 1
) -> Iterator[dict]:
    """All C3 question records, rendered, validated, in a stable order."""
    return attach_renders(items(manifest_dir, roots, seed), processes=processes)
