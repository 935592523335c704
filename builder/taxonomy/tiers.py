"""C1 difficulty tiers (§E): target resolution, prevalence tertiles, reference cells, confusability.

* Target resolution (§E.6, Table 29), first step that succeeds: ``exact`` (the answer names a node at
  the asked rank; among homonyms the one on the image's lineage), ``vernacular`` (a common name through
  the corpus vernacular index, §E.7), ``lineage`` (the asked rank read off the image's lineage: the
  species epithet), ``anchor`` (the lowest node of the lineage that resolves).
* Prevalence (§E.3): exposure c(t) = catalog images whose lineage passes through t, x = log10(c + 1);
  within a reference cell (group × rank class; epithet, scientific name and common name share the
  ``species`` class) distinct targets are sorted by (exposure, node id) and get the item-weighted
  mid-rank percentile p = (cum + n/2) / N_cell; p < 1/3 Hard, p < 2/3 Medium, else Easy.
* Thin cells (§E.4): fewer than six distinct targets escalate to the rank class pooled over all groups;
  a pooled cell that is still thin is ``degenerate`` (tier "degenerate", percentile null).
* Confusability (§E.5): d_j = d(g) − d(LCA(g, j)), NDD = min d_j (≤1 Hard, 2 Medium, ≥3 Easy),
  confusability = mean 2^(−d_j); ``ndd_rank`` is the rank of the LCA where the nearest distractor meets g.
* Open items take the prevalence tier as their ``difficulty``, MCQ items the MCQ tier (the unified
  column). MCQ items also carry their target's prevalence fields (computed over open items only, so a
  common-name target is not counted twice).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from biovqa.taxonomy import Taxonomy, lineage_node_id, normalize_name

MIN_CELL_TAXA = 6
RANK_CLASS = {
    "phylum": "phylum",
    "class": "class",
    "order": "order",
    "family": "family",
    "genus": "genus",
    "species": "species",
    "scientific_name": "species",
    "common_name": "species",
    "common_name_mcq": "species",
}
_LINEAGE_RANK = {"scientific_name": "species", "common_name": "species", "common_name_mcq": "species"}


@dataclass
class Item:
    """What the tiers need of one question."""

    key: str  # qid
    group: str
    rank: str  # asked rank (phylum … species, scientific_name, common_name, common_name_mcq)
    lineage: Mapping
    answer: str
    distractors: Sequence[str] = ()  # MCQ option texts other than the answer


def resolve_target(tax: Taxonomy, vernacular: Mapping[str, str], item: Item) -> tuple[int | None, str]:
    """(node index, mechanism) for an item by the four-step protocol of Table 29."""
    name = normalize_name(item.answer)
    tree_rank = _LINEAGE_RANK.get(item.rank, item.rank)
    if item.rank not in ("common_name", "common_name_mcq") and item.rank != "species":
        hits = tax.find(name, tree_rank)
        if hits:
            own = tax.lineage_index(item.lineage, tree_rank)
            return (own if own in hits else min(hits, key=lambda i: tax.ids[i])), "exact"
    if item.rank in ("common_name", "common_name_mcq"):
        node = vernacular.get(name)
        if node is not None and tax.index(node) is not None:
            return tax.index(node), "vernacular"
    own = tax.lineage_index(item.lineage, tree_rank)
    if own is not None:
        return own, "lineage"
    for rank in ("species", "genus", "family", "order", "class", "phylum", "kingdom"):
        node = lineage_node_id(item.lineage, rank)
        if node is not None and tax.index(node) is not None:
            return tax.index(node), "anchor"
    return None, "unresolved"


def tier_of_percentile(p: float) -> str:
    return "hard" if p < 1 / 3 else "medium" if p < 2 / 3 else "easy"


def percentiles(targets: Mapping[str, int], exposure: Mapping[str, int]) -> dict[str, float]:
    """Item-weighted mid-rank percentile per target node id; ``targets`` = {node: item count}."""
    total = sum(targets.values())
    order = sorted(targets, key=lambda t: (exposure.get(t, 0), t))
    out, cum = {}, 0
    for t in order:
        out[t] = (cum + targets[t] / 2) / total
        cum += targets[t]
    return out


def confusability(tax: Taxonomy, gold: int, distractors: Sequence[int]) -> tuple[int, str, float, str]:
    """(NDD, rank where the nearest distractor meets the gold, confusability, MCQ tier)."""
    dists = []
    for j in distractors:
        lca = tax.lca(gold, j)
        dists.append((tax.depths[gold] - tax.depths[lca], lca))
    ndd, lca = min(dists, key=lambda x: (x[0], tax.depths[x[1]]))
    conf = sum(2.0 ** (-d) for d, _ in dists) / len(dists)
    rank = "root" if lca == tax.root else tax.ranks[lca]
    tier = "hard" if ndd <= 1 else "medium" if ndd == 2 else "easy"
    return ndd, rank, conf, tier


def difficulty_columns(
    items: Sequence[Item], tax: Taxonomy, vernacular: Mapping[str, str], exposure: Mapping[str, int]
) -> tuple[list[dict], list[str]]:
    """The §E.7 columns per item (c1 struct names + ``difficulty``) and a log of escalations."""
    resolved = [resolve_target(tax, vernacular, it) for it in items]
    targets = [tax.ids[i] if i is not None and i != tax.root else None for i, _ in resolved]
    open_idx = [k for k, it in enumerate(items) if it.rank != "common_name_mcq" and targets[k] is not None]

    cells: dict[tuple[str, str], dict[str, int]] = {}
    pooled: dict[str, dict[str, int]] = {}
    for k in open_idx:
        rc = RANK_CLASS[items[k].rank]
        cell = cells.setdefault((items[k].group, rc), {})
        cell[targets[k]] = cell.get(targets[k], 0) + 1
        pool = pooled.setdefault(rc, {})
        pool[targets[k]] = pool.get(targets[k], 0) + 1
    log: list[str] = []
    cell_pct: dict[tuple[str, str], tuple[str, dict[str, float] | None]] = {}
    pooled_pct = {rc: percentiles(t, exposure) for rc, t in pooled.items() if len(t) >= MIN_CELL_TAXA}
    for (group, rc), tcounts in sorted(cells.items()):
        if len(tcounts) >= MIN_CELL_TAXA:
            cell_pct[(group, rc)] = (f"{group}/{rc}", percentiles(tcounts, exposure))
        elif rc in pooled_pct:
            cell_pct[(group, rc)] = (f"all/{rc}", pooled_pct[rc])
            log.append(f"escalate ({group}, {rc}): {len(tcounts)} distinct taxa -> pooled cell all/{rc}")
        else:
            cell_pct[(group, rc)] = (f"all/{rc}", None)
            log.append(
                f"degenerate ({group}, {rc}): {len(tcounts)} taxa; pooled all/{rc} has {len(pooled.get(rc, {}))}"
            )

    out = []
    for k, it in enumerate(items):
        node, mechanism = resolved[k]
        target = targets[k]
        rc = RANK_CLASS[it.rank]
        ref, pct = cell_pct.get((it.group, rc), (f"{it.group}/{rc}", None))
        c = exposure.get(target, 0) if target else 0
        p = pct.get(target) if (pct is not None and target is not None) else None
        row = {
            "target_taxon": target,
            "target_rank": tax.ranks[node] if node is not None and node != tax.root else None,
            "reference_cell": ref if pct is not None else f"{ref} (degenerate)",
            "resolution_mechanism": mechanism,
            "exposure": c,
            "log10_exposure": math.log10(c + 1),
            "prevalence_percentile": p,
            "prevalence_tier": tier_of_percentile(p) if p is not None else "degenerate",
            "ndd": None,
            "ndd_rank": None,
            "confusability": None,
            "mcq_tier": None,
        }
        if it.rank == "common_name_mcq" and node is not None:
            dnodes = []
            for d in it.distractors:
                hit = vernacular.get(normalize_name(d))
                if hit is not None and tax.index(hit) is not None:
                    dnodes.append(tax.index(hit))
            if len(dnodes) == len(it.distractors) and dnodes:
                ndd, ndd_rank, conf, tier = confusability(tax, node, dnodes)
                row.update(ndd=ndd, ndd_rank=ndd_rank, confusability=conf, mcq_tier=tier)
            else:
                log.append(f"{it.key}: a distractor does not resolve through the vernacular index")
        row["difficulty"] = row["mcq_tier"] if it.rank == "common_name_mcq" else row["prevalence_tier"]
        out.append(row)
    return out, log
