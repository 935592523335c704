"""Bio-VQA C3 (spatial reasoning): each task's headline metric, floor and lift, as a Hugging Face evaluate metric.

A thin wrapper over ``biovqa.metrics.c3`` (the scorer behind ``biovqa score``).
"""

import datasets
import evaluate

from biovqa.metrics.bridge import parse_item_json, score_records

_CITATION = """\
@inproceedings{biovqa,
  title = {Bio-VQA: a benchmark of biological visual question answering},
  note = {Sections 3.3, C.6 and G (spatial tasks)}
}
"""

_DESCRIPTION = """\
C3 asks eight spatial questions about wildlife, insect and fish images: counting (cas), relative counting
and relative distance and relative position (balanced accuracy), absolute distance (share within 20%),
localization (mean IoU, unparsed boxes scored 0), viewpoint (agreement over gold labels) and OCR as a
control (exact match). Each task also reports the floor an image-blind rule reaches on the same items,
and lift = (S - floor) / (1 - floor).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): raw model replies.
    references (list of str): gold answers as text (count, cm, option, box, direction, viewpoint, code).
    task (list of str): the C3 task id of each item, e.g. "c3.counting".
    item (list of str): a JSON object per item with further question fields, at least the "c3" struct
        (counts, gold_value, gold_box, image_width/height, plate_id, object_type ...) and "options".
Returns:
    per_task: the full metrics of each task (headline, headline_metric, floor, lift, parse_rate, n, ...);
    headline / floor / lift / parse_rate at top level when the items hold one task; n.
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BioVqaC3(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Value("string"),
                    "task": datasets.Value("string"),
                    "item": datasets.Value("string"),
                }
            ),
            reference_urls=["https://github.com/imageomics/bio-vqa"],
        )

    def _compute(self, predictions, references, task, item):
        records = []
        for i, (ref, tk) in enumerate(zip(references, task, strict=True)):
            rec = parse_item_json(item[i], i)
            rec.update({"answer": ref, "task": tk})
            records.append(rec)
        result = score_records("c3", records, list(predictions))
        out = {"n": len(records), "per_task": {t: ts.metrics for t, ts in result.tasks.items()}}
        if len(result.tasks) == 1:
            (only,) = result.tasks.values()
            for key in ("headline", "headline_metric", "floor", "lift", "parse_rate"):
                out[key] = only.metrics.get(key)
        return out
