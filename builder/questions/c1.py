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


def draw_options(
    row: dict, pools: dict[tuple[str, str], list[str]], tax: Taxonomy, vern: dict[str, str], seed: int
) -> tuple[list[str], int]:
    """Four options (answer + three distractors), shuffled; returns (options, answer index)."""
    answer = row["common_name"]
    gold = tax.index(vern[normalize_name(answer)])
    chosen: list[str] = []
    for level in ("class", "phylum", "kingdom", "all"):
        key = (level, row[level] if level != "all" else "")
        pool = []
        for name in pools.get(key, []):
            if normalize_name(name) == normalize_name(answer) or name in chosen:
                continue
            node = tax.index(vern[normalize_name(name)])
            if _related(tax, node, gold):
                continue
            pool.append(name)
        need = 3 - len(chosen)
        if len(pool) >= need:
            chosen += _rng(seed, row["id"], "mcq", level).sample(pool, need)
            break
        chosen += pool
    if len(chosen) < 3:
        raise ValueError(f"{row['id']}: fewer than three distractors available in the whole corpus")
    options = [answer, *chosen]
    _rng(seed, row["id"], "mcq-shuffle").shuffle(options)
    return options, options.index(answer)


def _pools(rows: Sequence[dict]) -> dict[tuple[str, str], list[str]]:
    """Distinct common names per class / phylum / kingdom / corpus (sorted: deterministic draws)."""
    pools: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        for level in ("class", "phylum", "kingdom", "all"):
            pools.setdefault((level, r[level] if level != "all" else ""), set()).add(r["common_name"])
    return {k: sorted(v, key=lambda n: (normalize_name(n), n)) for k, v in pools.items()}


def generate(rows: Sequence[dict], exposure: dict[str, int], seed: int = 42) -> tuple[list[dict], Taxonomy, dict, list[str]]:
    """All C1 records for the manifest rows; returns (records, tree, vernacular index, tier log)."""
    rows = list(rows)
    tax = build_tree(rows)
    vern = build_vernacular(rows, tax)
    pools = _pools(rows)
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
            if rec.keys() != _COLUMNS or rec["answer_form"] not in schema.ANSWER_FORMS or rec["component"] != "c1":
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
