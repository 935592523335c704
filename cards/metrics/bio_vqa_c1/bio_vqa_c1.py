"""Bio-VQA C1 (taxonomy): exact match, EM-soft, Wu-Palmer, Lin and severity, as a Hugging Face evaluate metric.

A thin wrapper over ``biovqa.metrics.c1`` (the scorer behind ``biovqa score``). EM-soft needs the GBIF
synonym map: pass ``resources_dir`` (a Bio-VQA dataset folder holding resources/ or that folder itself);
without it the scorer raises rather than silently falling back to strict matching.
"""

import datasets
import evaluate

from biovqa.metrics.bridge import parse_item_json, pooled, score_records

_CITATION = """\
@inproceedings{biovqa,
  title = {Bio-VQA: a benchmark of biological visual question answering},
  note = {Sections C.1-C.4 (taxonomic metrics)}
}
"""

_DESCRIPTION = """\
C1 asks for the taxon of an organism at one rank (phylum ... species, scientific name, common name).
A reply is normalized and compared with the gold name: exact match (EM), EM-soft (accepting GBIF
synonyms, set-valued and one-way), Wu-Palmer and Lin similarity of the named taxon to the gold taxon in the
taxonomy tree, and severity (how far up the tree the error reaches).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (list of str): raw model replies.
    references (list of str): gold names at the asked rank.
    rank (list of str): the asked rank of each item (phylum, class, order, family, genus, species,
        scientific_name, common_name, common_name_mcq).
    item (list of str): a JSON object per item with further question fields, at least the gold lineage:
        {"c1": {"kingdom": ..., "phylum": ..., ..., "species": ..., "scientific_name": ...}, "options": [...]}.
    resources_dir (str): folder with resources/taxonomy.parquet and resources/synonyms.parquet.
Returns:
    em, em_soft, wup, lin, severity, parse_rate, n and per_task (full metrics of each rank's task).
    With items of several ranks, the mean metrics are item-weighted over ranks (severity: see per_task).
"""

_KEYS = ("em", "em_soft", "wup", "lin", "severity", "parse_rate")


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class BioVqaC1(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "predictions": datasets.Value("string"),
                    "references": datasets.Value("string"),
                    "rank": datasets.Value("string"),
                    "item": datasets.Value("string"),
                }
            ),
            reference_urls=["https://github.com/imageomics/bio-vqa"],
        )

    def _compute(self, predictions, references, rank, item, resources_dir=None):
        from biovqa.taxonomy import load_resources

        if resources_dir is None:
            raise ValueError(
                "bio_vqa_c1 needs resources_dir (taxonomy + synonym map) for EM-soft, Wu-Palmer and Lin"
            )
        resources = load_resources(resources_dir)
        records = []
        for i, (ref, rk) in enumerate(zip(references, rank, strict=True)):
            rec = parse_item_json(item[i], i)
            rec.update({"answer": ref, "family": rk})
            rec.setdefault("task", f"c1.{rk}")
            records.append(rec)
        result = score_records("c1", records, list(predictions), resources)
        out = pooled(result, _KEYS)
        out["n"] = len(records)
        out["per_task"] = {task: ts.metrics for task, ts in result.tasks.items()}
        return out
