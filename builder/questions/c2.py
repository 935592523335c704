"""C2 question generator: ten families over the CUB manifest (§3.2, §A.2 Tables 7-8, §K.2 Table 69).

Families -> tasks (Table 7, Table 32): ``attr_bare_value`` -> c2.morphology; ``attr_group_value`` ->
c2.salience; ``marker_localization``, ``visibility_partset``, ``visibility_side`` ->
c2.localization; ``category_mcq`` and the four open naming families -> c2.naming.

Construction (choices where the paper is silent are marked *choice*):

* attr_bare_value — one item per (image, attribute group) with a candidate label (certainty rule in
  :data:`builder.manifests.c2.CERTAINTY_RULE`); distractors are other values of the group attested
  as candidates somewhere in the manifest, minus every value present on this image; up to four
  distractors (*choice*: five options like Table 8), at least two or the item is skipped and
  counted ("two to five distractors", Table 7).
* attr_group_value — one item per candidate label; the four distractors are ``"<part> <property>:
  <value>"`` pairs from four *other* groups (as in Table 8), each value attested and not present on
  the image, so exactly one option is true of the bird.
* marker_localization — one item per image: the target marker (colour c, shape s) on one visible
  part, a colour control (c, s' != s) and a shape control (c' != c, s) on two other visible parts
  (§3.2); options are those three parts plus two other parts (*choice*: unmarked visible parts
  first); the marked image is rendered and embedded as JPEG.
* visibility_partset — ten items per image (117 880 = 10 x 11 788): triples of parts with 0, 1 or 3
  visible (a triple with two visible has no correct option), the three outcomes taking turns
  (*choice*, :meth:`C2Generator.partset_triples`); gold = the visible part, "None" or "All three".
* visibility_side — eye, leg, wing for every image: Left / Right / Both / None from CUB visibility.
* category_mcq / open_kind_of — classes whose common name has a head noun; category distractors
  are four other CUB categories. open_common_name / open_scientific_name / open_genus follow the
  curated name map (builder.taxonomy.cub_names); open items carry a chance pool of 40 golds of
  other items of the family (fixed seed, §C.4 eq. 11).

Every item draws from its own ``random.Random(f"{seed}:{qid}")``, so items do not depend on order.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from biovqa import prompts, schema
from builder.common import jpeg_bytes, open_image_checked, sha256_bytes
from builder.manifests.c2 import MIN_CANDIDATE_CERTAINTY
from builder.render.markers import (
    MARKER_COLORS,
    MARKER_SHAPES,
    Marker,
    marker_radius,
    min_separation,
    render_markers,
)
from builder.sources.cub import CUB_ATTRIBUTE_GROUPS, display_value, group_part_property

SOURCE = "cub"
MAX_DISTRACTORS = 4
MIN_DISTRACTORS = 2
PARTSET_PER_IMAGE = 10
CHANCE_POOL_SIZE = 40
SIDE_PARTS = ("eye", "leg", "wing")
MARKER_JPEG_QUALITY = 95

FAMILY_TASK = {
    "attr_bare_value": "c2.morphology",
    "attr_group_value": "c2.salience",
    "marker_localization": "c2.localization",
    "visibility_partset": "c2.localization",
    "visibility_side": "c2.localization",
    "category_mcq": "c2.naming",
    "open_common_name": "c2.naming",
    "open_scientific_name": "c2.naming",
    "open_genus": "c2.naming",
    "open_kind_of": "c2.naming",
}
GROUP_ORDER = {g: i for i, (g, _) in enumerate(CUB_ATTRIBUTE_GROUPS)}
VALUE_ORDER = {(g, v): i for g, vals in CUB_ATTRIBUTE_GROUPS for i, v in enumerate(vals)}


def kernel_for_group(group: str) -> str:
    """cags kernel of a bare attribute (§C.5): colour, ordinal (bill length, size), pattern, else exact.

    Head patterns use the pattern kernel too (spotted/striped keep half credit, the rest exact), as
    ``biovqa.metrics.c2.kernels.property_kernel`` does.
    """
    _, prop = group_part_property(group)
    if prop == "color":
        return "color"
    if prop == "pattern":
        return "pattern"
    if group in ("has_bill_length", "has_size"):
        return "ordinal"
    return "exact"


def pair_text(group: str, value: str) -> str:
    """Relative-salience option text: ``"bill color: black"``, ``"size: small (5 - 9 in)"``."""
    part, prop = group_part_property(group)
    return f"{(part + ' ' + prop).strip()}: {display_value(value)}"


def _item_rng(seed: int, qid: str) -> random.Random:
    return random.Random(f"{seed}:{qid}")


def _lettered(options: list[str], gold: str) -> tuple[str, int]:
    i = options.index(gold)
    return f"({prompts.LETTERS[i]}) {gold}", i


def _record(family: str, qid: str, question: str, options: list[str], answer: str, answer_index: int,
            c2: dict, *, image_ref: dict | None = None, image: dict | None = None) -> dict:  # fmt: skip
    rec = schema.empty_record()
    rec.update(
        qid=qid,
        component="c2",
        task=FAMILY_TASK[family],
        family=family,
        source=SOURCE,
        question=question,
        instruction=prompts.c2_instruction(family),
        options=options,
        answer=answer,
        answer_index=answer_index,
        answer_form="mcq_lettered" if family in prompts.C2_MCQ_FAMILIES else "open_text",
        image=image,
        image_ref=image_ref,
        c2=c2,
    )
    return rec


class C2Generator:
    """Holds the manifest-wide pools (attested values, categories, open golds) and yields items."""

    def __init__(self, images: list[dict], classes: dict[int, dict], images_dir: Path, *, seed: int = 42):
        self.images = sorted(images, key=lambda r: r["image_id"])
        self.classes = classes
        self.images_dir = Path(images_dir)
        self.seed = seed
        self.skipped: dict[str, int] = {}
        attested: dict[str, set[str]] = {}
        for row in self.images:
            for lab in row["attributes"]:
                if lab["certainty"] >= MIN_CANDIDATE_CERTAINTY:
                    attested.setdefault(lab["group"], set()).add(lab["value"])
        self.attested = {
            g: sorted(vs, key=lambda v: VALUE_ORDER.get((g, v), 99)) for g, vs in attested.items()
        }
        self.categories = sorted({c["category"] for c in classes.values() if c["category"]})
        self.open_golds = {fam: self._open_golds(fam) for fam in prompts.C2_OPEN_FAMILIES}
        self.open_gold_counts = {
            fam: Counter(g.casefold() for g in golds) for fam, golds in self.open_golds.items()
        }

    # ------------------------------------------------------------------ helpers
    def _skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1

    def _base_c2(self, row: dict) -> dict:
        cls = self.classes[row["class_id"]]
        return {
            "image_id": row["image_id"],
            "class_id": row["class_id"],
            "class_name": cls["class_folder"].split(".", 1)[-1].replace("_", " "),
            "category": cls["category"] or None,
            "genus": cls["genus"] or None,
            "scientific_name": cls["scientific_name"] or None,
            "common_name": cls["common_name"],
            "part": None,
            "property": None,
            "kernel": None,
            "gold_values": [],
            "certainty": None,
            "marker_color": None,
            "marker_shape": None,
            "side_part": None,
            "chance_pool": [],
        }

    @staticmethod
    def _image_ref(row: dict) -> dict:
        return {
            "source": SOURCE,
            "id": row["path"],
            "sha256": row["sha256"],
            "width": row["width"],
            "height": row["height"],
        }

    def _open_gold(self, family: str, row: dict) -> str:
        cls = self.classes[row["class_id"]]
        return {
            "open_common_name": cls["common_name"],
            "open_scientific_name": cls["scientific_name"] if cls["status"] == "species" else "",
            "open_genus": cls["genus"],
            "open_kind_of": cls["kind"],
        }[family]

    def _open_golds(self, family: str) -> list[str]:
        return [g for row in self.images if (g := self._open_gold(family, row))]

    def _chance_pool(self, family: str, gold: str, rng: random.Random) -> list[str]:
        """40 golds of other items of the family whose gold differs (all of them when fewer)."""
        golds = self.open_golds[family]
        key = gold.casefold()
        if len(golds) - self.open_gold_counts[family][key] <= CHANCE_POOL_SIZE:
            return [g for g in golds if g.casefold() != key]
        picked: set[int] = set()
        while len(picked) < CHANCE_POOL_SIZE:
            i = rng.randrange(len(golds))
            if i not in picked and golds[i].casefold() != key:
                picked.add(i)
        return [golds[i] for i in sorted(picked)]

    # ------------------------------------------------------------------ families
    def items(self) -> Iterator[dict]:
        """Every C2 item, image by image, families in Table 7 order."""
        for row in self.images:
            yield from self.attr_bare_value(row)
            yield from self.attr_group_value(row)
            yield from self.marker_localization(row)
            yield from self.visibility_partset(row)
            yield from self.visibility_side(row)
            yield from self.naming(row)

    def _present(self, row: dict) -> dict[str, list[dict]]:
        by_group: dict[str, list[dict]] = {}
        for lab in row["attributes"]:
            by_group.setdefault(lab["group"], []).append(lab)
        return by_group

    @staticmethod
    def _gold_label(cands: list[dict]) -> dict:
        return max(
            cands, key=lambda lab: (lab["certainty"], lab["class_percent"] or -1.0, -lab["attribute_id"])
        )

    def attr_bare_value(self, row: dict) -> Iterator[dict]:
        present = self._present(row)
        for group in sorted(present, key=lambda g: GROUP_ORDER.get(g, 99)):
            cands = [lab for lab in present[group] if lab["certainty"] >= MIN_CANDIDATE_CERTAINTY]
            if not cands:
                continue
            gold = self._gold_label(cands)
            true_values = {lab["value"] for lab in present[group]}
            pool = [v for v in self.attested.get(group, []) if v not in true_values]
            if len(pool) < MIN_DISTRACTORS:
                self._skip("attr_bare_value: fewer than two distractors")
                continue
            qid = f"c2.morphology/cub/{row['image_id']:06d}-{group.removeprefix('has_')}"
            rng = _item_rng(self.seed, qid)
            values = [gold["value"], *rng.sample(pool, min(MAX_DISTRACTORS, len(pool)))]
            rng.shuffle(values)
            options = [display_value(v) for v in values]
            part, prop = group_part_property(group)
            question = prompts.c2_question("attr_bare_value", part=part, property=prop, options=options)
            question = re.sub(r" {2,}", " ", question)  # has_size / has_shape have no part
            answer, idx = _lettered(options, display_value(gold["value"]))
            ordered = sorted(cands, key=lambda lab: lab is not gold)
            c2 = self._base_c2(row) | {
                "part": part or None,
                "property": prop,
                "kernel": kernel_for_group(group),
                "gold_values": [display_value(lab["value"]) for lab in ordered],
                "certainty": gold["certainty"],
            }
            yield _record(
                "attr_bare_value", qid, question, options, answer, idx, c2, image_ref=self._image_ref(row)
            )

    def attr_group_value(self, row: dict) -> Iterator[dict]:
        true_pairs = {(lab["group"], lab["value"]) for lab in row["attributes"]}
        for gold in sorted(row["attributes"], key=lambda lab: lab["attribute_id"]):
            if gold["certainty"] < MIN_CANDIDATE_CERTAINTY:
                continue
            eligible = [
                g
                for g in sorted(self.attested, key=lambda g: GROUP_ORDER.get(g, 99))
                if g != gold["group"] and any((g, v) not in true_pairs for v in self.attested[g])
            ]
            if len(eligible) < MIN_DISTRACTORS:
                self._skip("attr_group_value: fewer than two distractor groups")
                continue
            qid = f"c2.salience/cub/{row['image_id']:06d}-{gold['attribute_id']:03d}"
            rng = _item_rng(self.seed, qid)
            options = [pair_text(gold["group"], gold["value"])]
            for g in rng.sample(eligible, min(MAX_DISTRACTORS, len(eligible))):
                options.append(
                    pair_text(g, rng.choice([v for v in self.attested[g] if (g, v) not in true_pairs]))
                )
            gold_text = options[0]
            rng.shuffle(options)
            question = prompts.c2_question("attr_group_value", options=options)
            answer, idx = _lettered(options, gold_text)
            part, prop = group_part_property(gold["group"])
            c2 = self._base_c2(row) | {
                "part": part or None,
                "property": prop,
                "kernel": "pair",
                "gold_values": [gold_text],
                "certainty": gold["certainty"],
            }
            yield _record(
                "attr_group_value", qid, question, options, answer, idx, c2, image_ref=self._image_ref(row)
            )

    def marker_placement(self, row: dict, rng: random.Random) -> tuple[list[Marker], list[str], float] | None:
        """Target, colour-control and shape-control markers on three well-separated visible parts."""
        radius = marker_radius(row["bbox"])
        sep = min_separation(radius)
        visible = [p for p in row["parts"] if p["visible"]]
        rng.shuffle(visible)

        def far(a, b):
            return (a["x"] - b["x"]) ** 2 + (a["y"] - b["y"]) ** 2 >= sep * sep

        for t, a, b in itertools.permutations(visible, 3):
            if far(t, a) and far(t, b) and far(a, b):
                break
        else:
            return None
        color, shape = rng.choice(sorted(MARKER_COLORS)), rng.choice(MARKER_SHAPES)
        other_color = rng.choice([c for c in sorted(MARKER_COLORS) if c != color])
        other_shape = rng.choice([s for s in MARKER_SHAPES if s != shape])
        markers = [
            Marker(a["x"], a["y"], color, other_shape),  # shares the colour, not the shape
            Marker(b["x"], b["y"], other_color, shape),  # shares the shape, not the colour
            Marker(t["x"], t["y"], color, shape),  # the target, drawn last (on top)
        ]
        return markers, [t["part"], a["part"], b["part"]], radius

    def marker_localization(self, row: dict) -> Iterator[dict]:
        qid = f"c2.localization/cub/{row['image_id']:06d}-marker"
        rng = _item_rng(self.seed, qid)
        placed = self.marker_placement(row, rng)
        if placed is None:
            self._skip("marker_localization: fewer than three separable visible parts")
            return
        markers, marked_parts, radius = placed
        unmarked = [p for p in row["parts"] if p["part"] not in marked_parts]
        fill = [p["part"] for p in unmarked if p["visible"]]
        fill = rng.sample(fill, min(2, len(fill)))
        if len(fill) < 2:
            fill += rng.sample([p["part"] for p in unmarked if not p["visible"]], 2 - len(fill))
        options = [*marked_parts, *fill]
        rng.shuffle(options)
        src = self.images_dir / row["path"]
        data = src.read_bytes() if src.is_file() else b""
        if sha256_bytes(data) != row["sha256"]:  # the manifest pins the bytes; never render others
            self._skip("marker_localization: source image missing or changed since the manifest")
            return
        img = open_image_checked(data, str(src))
        rendered = render_markers(img, markers, radius)
        target = markers[-1]
        question = prompts.c2_question(
            "marker_localization", color=target.color, shape=target.shape, options=options
        )
        answer, idx = _lettered(options, marked_parts[0])
        c2 = self._base_c2(row) | {
            "part": marked_parts[0],
            "property": "location",
            "kernel": "anatomy",
            "gold_values": [marked_parts[0]],
            "marker_color": target.color,
            "marker_shape": target.shape,
        }
        image = {"bytes": jpeg_bytes(rendered, quality=MARKER_JPEG_QUALITY), "path": None}
        yield _record("marker_localization", qid, question, options, answer, idx, c2, image=image)

    @staticmethod
    def partset_triples(vis: dict[str, bool], rng: random.Random) -> list[tuple[str, ...]]:
        """Up to ten distinct triples with 0, 1 or 3 visible parts, outcomes balanced (*choice*).

        A typical CUB bird shows 10-14 of its 15 parts, so uniform triples would be mostly "All
        three"; instead the outcomes (None / one part / All three) take turns as far as the image
        has triples of each kind, so no constant answer does well.
        """
        by_outcome: dict[int, list[tuple[str, ...]]] = {0: [], 1: [], 3: []}
        for t in itertools.combinations(list(vis), 3):
            n = sum(vis[p] for p in t)
            if n in by_outcome:
                by_outcome[n].append(t)
        pools = [rng.sample(ts, len(ts)) for n, ts in sorted(by_outcome.items()) if ts]
        rng.shuffle(pools)
        chosen: list[tuple[str, ...]] = []
        while len(chosen) < PARTSET_PER_IMAGE and any(pools):
            for pool in pools:
                if pool and len(chosen) < PARTSET_PER_IMAGE:
                    chosen.append(pool.pop())
        return chosen

    def visibility_partset(self, row: dict) -> Iterator[dict]:
        vis = {p["part"]: p["visible"] for p in row["parts"]}
        base_qid = f"c2.localization/cub/{row['image_id']:06d}-partset"
        rng = _item_rng(self.seed, base_qid)
        for k, triple in enumerate(self.partset_triples(vis, rng)):
            parts = list(triple)
            rng.shuffle(parts)
            options = prompts.visibility_partset_options(parts)
            seen = [p for p in parts if vis[p]]
            gold = "None" if not seen else seen[0] if len(seen) == 1 else "All three"
            answer, idx = _lettered(options, gold)
            c2 = self._base_c2(row) | {"property": "visibility", "kernel": "set", "gold_values": seen}
            question = prompts.c2_question("visibility_partset", options=options)
            qid = f"{base_qid}-{k}"
            yield _record(
                "visibility_partset", qid, question, options, answer, idx, c2, image_ref=self._image_ref(row)
            )

    def visibility_side(self, row: dict) -> Iterator[dict]:
        vis = {p["part"]: p["visible"] for p in row["parts"]}
        options = list(prompts.VISIBILITY_SIDE_OPTIONS)
        for side_part in SIDE_PARTS:
            left, right = vis.get(f"left {side_part}", False), vis.get(f"right {side_part}", False)
            gold = "Both" if left and right else "Left" if left else "Right" if right else "None"
            answer, idx = _lettered(options, gold)
            c2 = self._base_c2(row) | {
                "part": side_part,
                "property": "visibility",
                "kernel": "set",
                "gold_values": [s for s, v in (("Left", left), ("Right", right)) if v],
                "side_part": side_part,
            }
            question = prompts.c2_question("visibility_side", side_part=side_part, options=options)
            qid = f"c2.localization/cub/{row['image_id']:06d}-side-{side_part}"
            yield _record(
                "visibility_side", qid, question, options, answer, idx, c2, image_ref=self._image_ref(row)
            )

    def naming(self, row: dict) -> Iterator[dict]:
        cls = self.classes[row["class_id"]]
        ref = self._image_ref(row)
        stem = f"c2.naming/cub/{row['image_id']:06d}"
        if cls["category"]:
            qid = f"{stem}-category"
            rng = _item_rng(self.seed, qid)
            pool = [c for c in self.categories if c != cls["category"]]
            if len(pool) >= MIN_DISTRACTORS:
                options = [cls["category"], *rng.sample(pool, min(MAX_DISTRACTORS, len(pool)))]
                rng.shuffle(options)
                answer, idx = _lettered(options, cls["category"])
                c2 = self._base_c2(row) | {
                    "property": "category",
                    "kernel": "naming",
                    "gold_values": [cls["category"]],
                }
                question = prompts.c2_question("category_mcq", options=options)
                yield _record("category_mcq", qid, question, options, answer, idx, c2, image_ref=ref)
            else:
                self._skip("category_mcq: fewer than two other categories")
        for family, prop, kernel in (
            ("open_common_name", "common_name", "naming"),
            ("open_scientific_name", "scientific_name", "scientific"),
            ("open_genus", "genus", "genus"),
            ("open_kind_of", "kind", "naming"),
        ):
            gold = self._open_gold(family, row)
            if not gold:
                continue  # no name at this level (genus-only / mixed class, no category): counted by the map
            qid = f"{stem}-{family.removeprefix('open_')}"
            rng = _item_rng(self.seed, qid)
            fields = {"category": cls["category"].lower()} if family == "open_kind_of" else {}
            c2 = self._base_c2(row) | {
                "property": prop,
                "kernel": kernel,
                "gold_values": [gold],
                "chance_pool": self._chance_pool(family, gold, rng),
            }
            yield _record(family, qid, prompts.c2_question(family, **fields), [], gold, -1, c2, image_ref=ref)


def generate(
    images: list[dict], classes: dict[int, dict], images_dir: Path, *, seed: int = 42
) -> Iterator[dict]:
    """Yield every C2 record for the manifest rows ``images`` (see :class:`C2Generator`)."""
    yield from C2Generator(images, classes, images_dir, seed=seed).items()
