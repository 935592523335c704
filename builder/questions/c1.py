"""C1 question generator (§3.1, §A.1, §K.1): nine question types per image, eight for reptiles.

Per manifest row: phylum, class, order (skipped when the lineage has no order: reptiles, §M.2),
family, genus, species epithet, scientific name and common name as open questions, then the
common name again as a 4-way MCQ. The template of each item is drawn at random with seed 42 (a
per-item generator seeded by ``"<seed>:<uuid>:<rank>"``, so an item's draw does not depend on which
other items exist); ``{label}`` is animal / plant / organism by kingdom.

MCQ distractors (§3.1, §M.2): three common names drawn uniformly from the other taxa of the target's
class in the corpus, shuffled with the answer and listed without letters. Our additions where the
paper is silent: a name that resolves (vernacular index) to the target's node, an ancestor or a
descendant of it is not a distractor (it would also be right); a class with fewer than three other
names widens the pool to the phylum, then the kingdom, then the whole corpus.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from biovqa import prompts, schema
from biovqa.taxonomy import Taxonomy, build_vernacular_index, lineage_node_id, normalize_name
from builder.taxonomy.tiers import Item, difficulty_columns

SOURCE = "treeoflife"
OPEN_RANKS = ("phylum", "class", "order", "family", "genus", "species", "scientific_name", "common_name")
LINEAGE_KEYS = ("kingdom", "phylum", "class", "order", "family", "genus", "species")


def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(":".join([str(seed), *parts]))


def build_tree(rows: Sequence[dict]) -> Taxonomy:
    """The C1 tree over the manifest lineages (skip edges for missing ranks); conflicts raise."""
    tax = Taxonomy.from_lineages(rows)
    if tax.problems:
        raise ValueError("C1 lineages conflict: " + "; ".join(tax.problems[:10]))
    return tax


def build_vernacular(rows: Sequence[dict], tax: Taxonomy) -> dict[str, str]:
    """§E.7 index: each image's English common name with its species node; shared names go to the LCA."""
    return build_vernacular_index(((r["common_name"], lineage_node_id(r)) for r in rows), tax)


def answer_for(row: dict, rank: str) -> str | None:
    if rank == "common_name":
        return row["common_name"]
    if rank == "scientific_name":
        return row["scientific_name"]
    return row[rank]


def _related(tax: Taxonomy, a: int, b: int) -> bool:
    lca = tax.lca(a, b)
    return lca in (a, b)


Pool = list[tuple[str, str, int]]  # (name, normalized name, vernacular node index)


def draw_options(
    row: dict, pools: dict[tuple[str, str], Pool], tax: Taxonomy, vern: dict[str, str], seed: int
) -> tuple[list[str], int]:
    """Four options (answer + three distractors), shuffled; returns (options, answer index).

    Distractors are a uniform sample without replacement of the valid names of the pool (rejection
    sampling on large pools, a full filter on small ones), from a per-item generator.
    """
    answer = row["common_name"]
    answer_norm = normalize_name(answer)
    gold = tax.index(vern[answer_norm])
    chosen: list[str] = []
    chosen_norm: set[str] = set()

    def valid(entry: tuple[str, str, int]) -> bool:
        _, norm, node = entry
        return norm != answer_norm and norm not in chosen_norm and not _related(tax, node, gold)

    for level in ("class", "phylum", "kingdom", "all"):
        pool = pools.get((level, row[level] if level != "all" else ""), [])
        need = 3 - len(chosen)
        rng = _rng(seed, row["id"], "mcq", level)
        picked: list[tuple[str, str, int]] = []
        if len(pool) > 64:
            seen: set[int] = set()
            for _ in range(50 * need):
                i = rng.randrange(len(pool))
                if i not in seen and valid(pool[i]):
                    picked.append(pool[i])
                    if len(picked) == need:
                        break
                seen.add(i)
            else:
                picked = []  # too many rejections: fall back to the full filter
        if len(picked) < need:
            ok = [e for e in pool if valid(e)]
            picked = rng.sample(ok, need) if len(ok) >= need else ok
        chosen += [e[0] for e in picked]
        chosen_norm.update(e[1] for e in picked)
        if len(chosen) == 3:
            break
    if len(chosen) < 3:
        raise ValueError(f"{row['id']}: fewer than three distractors available in the whole corpus")
    options = [answer, *chosen]
    _rng(seed, row["id"], "mcq-shuffle").shuffle(options)
    return options, options.index(answer)


def _pools(rows: Sequence[dict], tax: Taxonomy, vern: dict[str, str]) -> dict[tuple[str, str], Pool]:
    """Distinct common names per class / phylum / kingdom / corpus, sorted (deterministic draws)."""
    pools: dict[tuple[str, str], dict[str, str]] = {}
    for r in rows:
        norm = normalize_name(r["common_name"])
        for level in ("class", "phylum", "kingdom", "all"):
            names = pools.setdefault((level, r[level] if level != "all" else ""), {})
            if norm not in names or r["common_name"] < names[norm]:
                names[norm] = r["common_name"]
    return {key: [(names[n], n, tax.index(vern[n])) for n in sorted(names)] for key, names in pools.items()}


def generate(
    rows: Sequence[dict], exposure: dict[str, int], seed: int = 42
) -> tuple[list[dict], Taxonomy, dict, list[str]]:
    """All C1 records for the manifest rows; returns (records, tree, vernacular index, tier log)."""
    rows = list(rows)
    tax = build_tree(rows)
    vern = build_vernacular(rows, tax)
    pools = _pools(rows, tax, vern)
    records: list[dict] = []
    items: list[Item] = []
    for row in rows:
        label = prompts.c1_label(row["kingdom"])
        lineage = {k: row[k] for k in LINEAGE_KEYS}
        for rank in (*OPEN_RANKS, "common_name_mcq"):
            if rank == "order" and not row["order"]:
                continue  # skip edge: no order question (reptiles)
            task = f"c1.{rank}"
            rec = schema.empty_record()
            rec.update(
                qid=f"{task}/{SOURCE}/{row['id']}",
                component="c1",
                task=task,
                family=rank,
                source=SOURCE,
                image_ref={
                    "source": SOURCE,
                    "id": row["id"],
                    "sha256": row["sha256"],
                    "width": row["width"],
                    "height": row["height"],
                },
            )
            distractors: list[str] = []
            if rank == "common_name_mcq":
                options, idx = draw_options(row, pools, tax, vern, seed)
                distractors = [o for i, o in enumerate(options) if i != idx]
                rec.update(
                    question=prompts.c1_mcq_question(label, options),
                    instruction=prompts.c1_instruction("multiple_choice"),
                    options=options,
                    answer=row["common_name"],
                    answer_index=idx,
                    answer_form="mcq_bare",
                )
                template_index = 0
            else:
                templates = prompts.c1_templates(rank)
                template_index = _rng(seed, row["id"], rank).randrange(len(templates))
                rec.update(
                    question=prompts.c1_question(rank, label, template_index),
                    instruction=prompts.c1_instruction(rank),
                    answer=answer_for(row, rank),
                    answer_form="open_text",
                )
            rec["c1"] = {
                "group": row["group"],
                "rank": rank,
                **lineage,
                "scientific_name": row["scientific_name"],
                "common_name": row["common_name"],
                "label": label,
                "template_index": template_index,
            }
            records.append(rec)
            items.append(Item(rec["qid"], row["group"], rank, lineage, rec["answer"], distractors))
    columns, log = difficulty_columns(items, tax, vern, exposure)
    for rec, cols in zip(records, columns, strict=True):
        rec["difficulty"] = cols.pop("difficulty") or ""
        rec["c1"].update(cols)
    validate_records(records)
    return records, tax, vern, log


def validate_records(records: Sequence[dict], chunk: int = 4096) -> None:
    """schema.validate_record for many records: cheap checks per record, the arrow check per chunk.

    A chunk that does not convert is re-checked record by record so the error names the qid.
    """
    import pyarrow as pa

    for start in range(0, len(records), chunk):
        part = records[start : start + chunk]
        for rec in part:
            if (
                rec.keys() != _COLUMNS
                or rec["answer_form"] not in schema.ANSWER_FORMS
                or rec["component"] != "c1"
            ):
                schema.validate_record(rec)  # raises with the reason
        try:
            pa.Table.from_pylist(list(part), schema=schema.QUESTION_SCHEMA)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
            for rec in part:
                schema.validate_record(rec)
            raise


_COLUMNS = set(schema.QUESTION_COLUMNS)


def iter_records(records: list[dict]) -> Iterator[dict]:
    yield from records
