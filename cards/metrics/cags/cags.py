"""cags, the chance-adjusted graded score of Bio-VQA C2, as a Hugging Face evaluate metric.

A thin wrapper over ``biovqa.metrics.c2`` (the scorer behind ``biovqa score``): same parser, kernels and
chance baselines, so both give the same numbers on the same items.
"""

import datasets
import evaluate

from biovqa.metrics.bridge import parse_item_json, pooled, score_records

_CITATION = """\
@inproceedings{biovqa,
  title = {Bio-VQA: a benchmark of biological visual question answering},
  note = {Section C.5 (graded similarity and the chance adjustment)}
}
"""

_DESCRIPTION = """\
cags grades an answer about a bird's attribute by how close it is to the gold value under a kernel of the
attribute's kind (colour by CIEDE2000 distance between colour anchors, ordinal scales, patterns,
anatomy layout distance, soft Jaccard for sets, naming similarity), then removes what guessing earns:
cags = (s − b) / (1 − b), where s is the graded similarity of the reply and b the expected similarity of
a chance reply (the mean over the item's options, or over a fixed-seed pool of 40 golds for open
questions). 0 is chance, 1 is exact, negatives are worse than guessing.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): raw model replies.
    references (list of str): gold answers (option text, or "(B) text").
    options (list of list of str): the options shown (empty for open questions).
    family (list of str): the C2 question family (attr_bare_value, attr_group_value, marker_localization,
        visibility_partset, visibility_side, category_mcq, open_common_name, open_scientific_name,
        open_genus, open_kind_of).
    item (list of str, only with ``evaluate.load(..., "items")``): a JSON object per item with further
        question fields, e.g. {"c2": {"part": "wing", "property": "color", "kernel": "color"}, "question": "..."}.
Returns:
    cags, gs_raw, exact_match, severity, parse_rate, n and per_task (the full metrics of each C2 task).
    With items of several tasks, cags / gs_raw / exact_match are item-weighted means over tasks and
    severity is None (see per_task).
"""

_KEYS = {"cags": "headline", "gs_raw": "gs_raw", "exact_match": "em", "severity": "severity"}


def _features(with_item):
    cols = {
        "predictions": datasets.Value("string"),
        "references": datasets.Value("string"),
        "options": datasets.Sequence(datasets.Value("string")),
        "family": datasets.Value("string"),
    }
    if with_item:
        cols["item"] = datasets.Value("string")
    return datasets.Features(cols)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Cags(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_features(self.config_name == "items"),
            reference_urls=["https://github.com/imageomics/bio-vqa"],
        )

    def _compute(self, predictions, references, options, family, item=None):
        records = []
        for i, (ref, opts, fam) in enumerate(zip(references, options, family, strict=True)):
            rec = parse_item_json(None if item is None else item[i], i)
            rec.update({"answer": ref, "options": list(opts or []), "family": fam})
            if "answer_index" not in rec and opts and ref in opts:
                rec["answer_index"] = list(opts).index(ref)
            if "answer_form" not in rec:
                rec["answer_form"] = "mcq_lettered" if opts else "open_text"
            records.append(rec)
        result = score_records("c2", records, list(predictions))
        agg = pooled(result, tuple(_KEYS.values()) + ("parse_rate",))
        out = {name: agg[key] for name, key in _KEYS.items()}
        out["parse_rate"] = agg["parse_rate"]
        out["n"] = len(records)
        out["per_task"] = {task: ts.metrics for task, ts in result.tasks.items()}
        return out
