"""Image-blind baselines: the ``floor`` model (per-task floor rule, no weights) and blind mode helpers.

Floor rules (Table 3 floor rows; computed over the items being evaluated, so a ``--limit`` run has the
floor of its own subset):

- C1 open ranks: the most frequent gold answer of the task (ties: alphabetically first);
  C1 common-name MCQ: of the row's four options, the one most often gold across the task (first option
  on ties), so the reply is always a valid option.
- C2 (cags is chance-corrected, floor 0 in expectation): lettered MCQ families answer option (A) with
  its text (a fixed position carries no image information); open naming families answer the modal
  gold value of the (task, family). Our choice; the paper gives no C2 floor predictor.
- C3: ``biovqa.metrics.c3.floor_prediction(task_id, table)`` when the C3 scorer provides it (the exact
  floor the C3 scorer reports); otherwise the rules of ``tasks.py``: per-object-type mean measurement
  for absolute distance, the mean normalised gold box scaled to each image for localization, and the
  modal gold answer (majority class / modal count / constant string) elsewhere.
- C4: always "Yes" (d' = 0; accuracy = share of same pairs, .5 on balanced pairs).

Blind mode for a real model lives in the backends (``with_image=False`` messages, no pixels).
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow as pa

from biovqa.models.base import Generation, GenerationRequest

#: The floor's "revision": a hash of this module, so an edited rule never resumes old answers.
_RULES_REVISION = "rules-" + hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def _mode(values: list) -> str | None:
    values = [v for v in values if v not in (None, "")]
    if not values:
        return None
    counts = Counter(values)
    best = max(counts.values())
    return sorted(str(v) for v, n in counts.items() if n == best)[0]


def _c3_fallback(task_id: str, rows: list[dict]) -> list[str | None]:
    name = task_id.split(".", 1)[1]
    if name == "absolute_distance":
        by_type: dict[str, list[float]] = defaultdict(list)
        for r in rows:
            c3 = r.get("c3") or {}
            if c3.get("gold_value") is not None:
                by_type[c3.get("object_type") or ""].append(float(c3["gold_value"]))
        means = {k: sum(v) / len(v) for k, v in by_type.items()}
        return [
            f"{means[(r.get('c3') or {}).get('object_type') or '']:.2f} cm"
            if ((r.get("c3") or {}).get("object_type") or "") in means
            else None
            for r in rows
        ]
    if name == "localization":
        norm = []
        for r in rows:
            c3 = r.get("c3") or {}
            box, w, h = c3.get("gold_box"), c3.get("image_width"), c3.get("image_height")
            if box and w and h:
                norm.append((box[0] / w, box[1] / h, box[2] / w, box[3] / h))
        if not norm:
            return [None] * len(rows)
        mean = [sum(b[i] for b in norm) / len(norm) for i in range(4)]
        out = []
        for r in rows:
            c3 = r.get("c3") or {}
            w, h = c3.get("image_width"), c3.get("image_height")
            if not (w and h):
                out.append(None)
                continue
            x, y, bw, bh = mean[0] * w, mean[1] * h, mean[2] * w, mean[3] * h
            out.append(f"[{round(x)}, {round(y)}, {round(bw)}, {round(bh)}]")
        return out
    answer = _mode([r.get("answer") for r in rows])
    return [answer] * len(rows)


def floor_responses(task_id: str, rows: list[dict], schema: pa.Schema | None = None) -> list[str | None]:
    """The floor model's reply for each row of one task (same order); ``schema`` types the rows for C3."""
    component = task_id.split(".", 1)[0]
    if component == "c1":
        if any(r.get("answer_form") == "mcq_bare" for r in rows):
            gold = Counter(r.get("answer") for r in rows)
            # the row's own option that is most often gold across the task (first option on ties):
            # always a valid option, so the reply parses, and it carries no image information
            return [max(r.get("options") or [None], key=lambda o: gold.get(o, 0)) for r in rows]
        answer = _mode([r.get("answer") for r in rows])
        return [answer] * len(rows)
    if component == "c2":
        out: list[str | None] = [None] * len(rows)
        by_family: dict[str, list[int]] = defaultdict(list)
        for i, r in enumerate(rows):
            if r.get("answer_form") == "mcq_lettered" and r.get("options"):
                out[i] = f"(A) {r['options'][0]}"
            else:
                by_family[r.get("family") or ""].append(i)
        for idx in by_family.values():
            answer = _mode([rows[i].get("answer") for i in idx])
            for i in idx:
                out[i] = answer
        return out
    if component == "c3":
        try:
            from biovqa.metrics.c3 import floor_prediction
        except ImportError:
            return _c3_fallback(task_id, rows)
        got = floor_prediction(task_id, pa.Table.from_pylist(rows, schema=schema))
        return (
            [got] * len(rows)
            if isinstance(got, str) or got is None
            else [None if g is None else str(g) for g in got]
        )
    if component == "c4":
        return ["Yes"] * len(rows)
    raise KeyError(f"no floor rule for task {task_id!r}")


class FloorBackend:
    """The ``floor`` model: answers every item with its task's image-blind floor rule; needs no weights."""

    name = "floor"
    needs_images = False

    def __init__(self, table: pa.Table):
        if "image" in table.column_names:
            table = table.drop_columns(["image"])
        rows = table.to_pylist()
        by_task: dict[str, list[dict]] = defaultdict(list)
        for r in rows:
            by_task[r["task"]].append(r)
        self.answers: dict[str, str | None] = {}
        for task_id, task_rows in by_task.items():
            for r, a in zip(task_rows, floor_responses(task_id, task_rows, table.schema), strict=True):
                self.answers[r["qid"]] = a

    def describe(self) -> dict:
        """Settings recorded in run.json (the floor has no weights, dtype or device)."""
        return {"backend": "floor", "model": "floor", "revision": _RULES_REVISION, "dtype": None}

    def sort_key(self, request: GenerationRequest) -> tuple:
        return (0,)

    def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        """Look up the precomputed floor reply of each request."""
        return [Generation(self.answers.get(r.qid), tokens_in=0, tokens_out=0) for r in requests]
