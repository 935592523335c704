"""Builders of C2 question rows for the C2 tests (QUESTION_SCHEMA minus ``image``)."""

from __future__ import annotations

import pyarrow as pa

from biovqa.schema import QUESTION_SCHEMA, empty_record

LETTERS = "ABCDEFGH"
SCHEMA_NO_IMAGE = pa.schema([f for f in QUESTION_SCHEMA if f.name != "image"])


def c2_struct(**kw) -> dict:
    base = {f.name: None for f in QUESTION_SCHEMA.field("c2").type}
    base.update(kw)
    return base


def mcq_row(qid, task, family, question_stem, options, gold, **c2) -> dict:
    rec = empty_record()
    rec.pop("image")
    listed = ", ".join(f"({LETTERS[i]}) {o}" for i, o in enumerate(options))
    rec.update(
        qid=qid,
        component="c2",
        task=task,
        family=family,
        source="cub",
        question=f"{question_stem} Options: {listed}",
        instruction="[CRITICAL INSTRUCTIONS]",
        options=list(options),
        answer=f"({LETTERS[options.index(gold)]}) {gold}",
        answer_index=options.index(gold),
        answer_form="mcq_lettered",
        image_ref={"source": "cub", "id": "x.jpg", "sha256": "0" * 64, "width": 10, "height": 10},
        c2=c2_struct(**c2),
    )
    return rec


def open_row(qid, family, question, gold, **c2) -> dict:
    rec = empty_record()
    rec.pop("image")
    rec.update(
        qid=qid,
        component="c2",
        task="c2.naming",
        family=family,
        source="cub",
        question=question,
        instruction="Answer with ONLY the everyday English common name of the bird.",
        options=[],
        answer=gold,
        answer_index=-1,
        answer_form="open_text",
        image_ref={"source": "cub", "id": "x.jpg", "sha256": "0" * 64, "width": 10, "height": 10},
        c2=c2_struct(**c2),
    )
    return rec


def table(rows: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=SCHEMA_NO_IMAGE)
