"""Bio-VQA C4 (re-identification): d′ and criterion c from yes/no verdicts, as a Hugging Face evaluate metric.

A thin wrapper over ``biovqa.metrics.c4`` (the scorer behind ``biovqa score``): same parser, same pooling
over species, same fixed-seed bootstrap, so both give the same numbers on the same items.
"""

import datasets
import evaluate

from biovqa.metrics.bridge import score_records
from biovqa.metrics.c4 import gold_verdict

_CITATION = """\
@inproceedings{biovqa,
  title = {Bio-VQA: a benchmark of biological visual question answering},
  note = {Section 3.4, C.7 and H (re-identification)}
}
"""

_DESCRIPTION = """\
C4 asks whether two photographs, placed side by side, show the same individual animal. Replies are
parsed by a tiered yes/no parser (bare Yes/No, then a yes or no word inside a longer reply; echoes of
"Yes or No" and refusals are failures, never answers). Hits, misses, false alarms and correct rejections
are summed over species; the log-linear correction (x + 0.5) / (n + 1) is applied to both rates and
d′ = z(H) − z(F), c = −(z(H) + z(F)) / 2. Accuracy carries a 2000-resample percentile interval drawn
within each species (seed 42).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): raw model replies (None for an unanswered pair).
    references (list of str): gold verdicts, "Yes" (same individual) or "No".
    species (list of str): the stratum of each pair (catalog / species); pooling sums over it.
    condition (str, optional): "easy", "random" (default) or "hard"; only labels the task.
Returns:
    dprime, criterion, accuracy, accuracy_ci, balanced_accuracy, mcc, kappa, hit_rate,
    false_alarm_rate, parse_rate, n, counts (hits, misses, false_alarms, correct_rejections,
    unparsed_same, unparsed_different) and per_species.
Examples:
    >>> m = evaluate.load("bio_vqa_c4")
    >>> r = m.compute(predictions=["Yes", "No", "Yes", "No"], references=["Yes", "Yes", "No", "No"],
    ...               species=["zebra"] * 4)
    >>> round(r["dprime"], 3), r["accuracy"]
    (0.0, 0.5)
"""

_COUNT_KEYS = ("hits", "misses", "false_alarms", "correct_rejections", "unparsed_same", "unparsed_different")
_OUTPUT_KEYS = (
    "dprime",
    "criterion",
    "accuracy",
    "accuracy_ci",
    "dprime_ci",
    "balanced_accuracy",
    "mcc",
    "kappa",
    "hit_rate",
    "false_alarm_rate",
    "parse_rate",
    "n",
)


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BioVqaC4(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Value("string"),
                    "species": datasets.Value("string"),
                }
            ),
            reference_urls=["https://github.com/imageomics/bio-vqa"],
        )

    def _compute(self, predictions, references, species, condition="random"):
        records = []
        for i, (ref, sp) in enumerate(zip(references, species, strict=True)):
            same = gold_verdict(None, ref)
            if same is None:
                raise ValueError(f"item {i}: reference {ref!r} is not Yes or No")
            records.append(
                {
                    "task": f"c4.{condition}",
                    "family": condition,
                    "answer": "Yes" if same else "No",
                    "source": sp,
                    "c4": {"catalog": sp, "species": sp, "condition": condition, "same": same},
                }
            )
        result = score_records("c4", records, list(predictions))
        metrics = result.tasks[f"c4.{condition}"].metrics
        out = {key: metrics[key] for key in _OUTPUT_KEYS}
        out["counts"] = {key: metrics[key] for key in _COUNT_KEYS}
        out["per_species"] = metrics["per_species"]
        return out
