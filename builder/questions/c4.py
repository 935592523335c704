"""C4 re-identification pairs (§3.4, §A.4, §H.9, §K.4), deterministic given the seed.

Per catalog, the usable photographs are those whose main subject (largest annotation) has a known
individual; they are grouped by the main subject's viewpoint (a missing viewpoint forms its own group,
"unknown") and retrieval stays inside a group (§H.9). Appearance similarity is the cosine of the
embedder's vectors of the whole photographs (what the model sees).

For each condition, same-individual pairs are drawn first (the scarce resource): every photo with a
same-individual partner in its group is an anchor (seeded order) and pairs with
* easy: its most similar same-individual photo; hard: its least similar; random: a random one.
Duplicate pairs are dropped and at most ``PAIRS_PER_CLASS`` kept. Then as many different-individual
pairs as same ones (balanced): anchors pair with
* easy: the least similar photo of another individual; hard: the most similar; random: a random one.
Left/right placement is a seeded coin flip. Each pair is rendered side by side on ``PAIR_CANVAS``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from biovqa import prompts, schema
from builder.manifests.c3 import load
from builder.render import canvas as cv
from builder.sources.wildme import CATALOGS as WILDME

CATALOGS = ("whaleshark", "beluga", "hyena", "leopard", "gzcd")
SPECIES = {**{k: v[1] for k, v in WILDME.items()}, "gzcd": "Grevy's zebra"}
CONDITIONS = ("easy", "random", "hard")
PAIRS_PER_CLASS = 500  # 500 same + 500 different per condition per catalog (§A.4)


def photos(rows: list[dict]) -> list[dict]:
    """Usable photos: ``{id, path, individual, viewpoint}`` of rows whose main subject is named."""
    out = []
    for r in rows:
        main = max(r["objects"], key=lambda o: (o["w"] * o["h"], o["ann_id"]))
        if main["individual"]:
            out.append(
                {
                    "id": r["id"],
                    "path": r["path"],
                    "individual": main["individual"],
                    "viewpoint": main["viewpoint"] or "unknown",
                }
            )
    return out


def select_pairs(
    photos_: list[dict],
    emb: np.ndarray,
    condition: str,
    rng: np.random.Generator,
    limit: int = PAIRS_PER_CLASS,
) -> list[tuple[int, int, bool, float]]:
    """``(i, j, same, similarity)`` pairs for one condition: same-individual first, then as many different."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(photos_):
        groups[p["viewpoint"]].append(i)
    ind = [p["individual"] for p in photos_]
    by_individual: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, p in enumerate(photos_):
        by_individual[(p["viewpoint"], p["individual"])].append(i)
    members = {g: np.array(m) for g, m in groups.items()}
    member_ind = {g: np.array([ind[j] for j in m]) for g, m in groups.items()}

    def sim(a: int, b) -> np.ndarray:  # row by row: no n×n matrix for catalogs of thousands of photos
        return emb[b] @ emb[a]

    def pick(anchor: int, cands: list[int], closest: bool | None) -> int:
        if closest is None:
            return cands[int(rng.integers(len(cands)))]
        vals = sim(anchor, cands)
        return cands[int(np.argmax(vals) if closest else np.argmin(vals))]

    same_mode = {"easy": True, "hard": False, "random": None}[condition]
    diff_mode = {"easy": False, "hard": True, "random": None}[condition]
    chosen: list[tuple[int, int, bool, float]] = []
    seen: set[tuple[int, int]] = set()
    for same, mode in ((True, same_mode), (False, diff_mode)):
        want = limit if same else sum(c[2] for c in chosen)
        anchors = rng.permutation(len(photos_)).tolist()
        got = 0
        for a in anchors:
            if got >= want:
                break
            g = photos_[a]["viewpoint"]
            if same:
                cands = [j for j in by_individual[(g, ind[a])] if j != a]
            else:
                cands = members[g][member_ind[g] != ind[a]].tolist()
            if not cands:
                continue
            b = pick(a, cands, mode)
            key = (min(a, b), max(a, b))
            if key in seen:
                continue
            seen.add(key)
            chosen.append((a, b, same, float(sim(a, b))))
            got += 1
    return chosen


def items(
    manifest_dir: Path, roots: dict[str, Path], seed: int = 42, embedder=None
) -> Iterator[tuple[dict, dict]]:
    """Every C4 (record, render spec) in a stable order: catalog, then condition, same pairs first."""
    from builder.embed import get_embedder

    embedder = embedder or get_embedder("auto")
    rng = np.random.default_rng(seed)
    for catalog in CATALOGS:
        if catalog not in roots:
            continue
        root = Path(roots[catalog])
        ph = photos(load(manifest_dir, catalog))
        if len(ph) < 2:
            continue
        emb = embedder.embed_paths([str(root / p["path"]) for p in ph])
        for condition in CONDITIONS:
            for a, b, same, s in select_pairs(ph, emb, condition, rng):
                if rng.integers(2):
                    a, b = b, a
                pa_, pb = ph[a], ph[b]
                rec = schema.empty_record()
                rec.update(
                    qid=f"c4.{condition}/{catalog}/{pa_['id'].replace('/', '__')}--{pb['id'].replace('/', '__')}",
                    component="c4",
                    task=f"c4.{condition}",
                    family=condition,
                    source=catalog,
                    question=prompts.C4_QUESTION,
                    instruction=prompts.C4_INSTRUCTION,
                    answer="Yes" if same else "No",
                    answer_form="yes_no",
                    difficulty=condition,
                )
                rec["c4"] = {
                    "catalog": catalog,
                    "species": SPECIES[catalog],
                    "condition": condition,
                    "same": same,
                    "individual_a": pa_["individual"],
                    "individual_b": pb["individual"],
                    "image_a": pa_["id"],
                    "image_b": pb["id"],
                    "viewpoint": pa_["viewpoint"],
                    "similarity": round(s, 6),
                    "embedder": embedder.name,
                }
                yield (
                    rec,
                    {
                        "canvas": list(cv.PAIR_CANVAS),
                        "layout": [1, 2],
                        "panels": [{"path": str(root / pa_["path"])}, {"path": str(root / pb["path"])}],
                    },
                )


def generate(
    manifest_dir: Path, roots: dict[str, Path], *, seed: int = 42, processes: int = 1, embedder=None
) -> Iterator[dict]:
    """All C4 question records, rendered and validated, in a stable order."""
    from builder.questions.c3 import attach_renders

    return attach_renders(items(manifest_dir, roots, seed, embedder), processes=processes)
