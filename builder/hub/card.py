"""The dataset card: README.md with the ``configs:`` YAML for all five configs and ``dataset_info``."""

from __future__ import annotations

from pathlib import Path
from string import Template

import yaml

from biovqa import __version__
from biovqa.schema import CONFIGS
from biovqa.tasks import TASK_IDS


class _NoAliasDumper(yaml.SafeDumper):
    """Write repeated blocks (the features of each config) in full instead of YAML anchors."""

    def ignore_aliases(self, data) -> bool:
        return True


CARD_TEMPLATE = Path(__file__).resolve().parents[2] / "cards" / "dataset_card.md"


def card_yaml(counts: dict[str, int], nbytes: dict[str, int]) -> dict:
    """Front matter: license, task categories, ``configs`` (mandatory for several configs), ``dataset_info``."""
    from biovqa.schema import hf_features

    features = hf_features()._to_yaml_list()
    return {
        "pretty_name": "Bio-VQA",
        "license": "other",
        "license_name": "mixed-per-source",
        "language": ["en"],
        "task_categories": ["visual-question-answering"],
        "tags": ["biology", "biodiversity", "taxonomy", "vlm-evaluation", "benchmark"],
        "configs": [
            {
                "config_name": cfg,
                "data_files": [{"split": "test", "path": f"data/{cfg}/test-*.parquet"}],
                **({"default": True} if cfg == "lite" else {}),
            }
            for cfg in CONFIGS
            if counts.get(cfg, 0) > 0
        ],
        "dataset_info": [
            {
                "config_name": cfg,
                "features": features,
                "splits": [
                    {"name": "test", "num_bytes": nbytes.get(cfg, 0), "num_examples": counts.get(cfg, 0)}
                ],
            }
            for cfg in CONFIGS
            if counts.get(cfg, 0) > 0
        ],
    }


def render_card(
    *,
    counts: dict[str, int],
    nbytes: dict[str, int],
    task_counts: dict[str, int],
    lite_counts: dict[str, int],
    info: dict,
    repo_id: str = "imageomics/Bio-VQA",
) -> str:
    """The full README.md text (YAML front matter + body) for a built Hub folder."""
    front = yaml.dump(
        card_yaml(counts, nbytes), Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True, width=120
    )
    what = {
        "c1": "taxonomy at eight ranks + common-name MCQ (TreeOfLife-200M)",
        "c2": "bird attribute grounding, ten families (CUB-200-2011)",
        "c3": "eight spatial tasks (beetles, drones, hives, ponds, wildlife catalogs)",
        "c4": "individual re-identification pairs (easy / random / hard)",
        "lite": "500 questions per task, stratified (12,000 at full scale)",
    }
    config_rows = "\n".join(
        f"| `{c}` | {counts.get(c, 0):,} | {what[c] if counts.get(c, 0) else 'not built: none of its sources was named'} |"
        for c in CONFIGS
    )
    task_rows = "\n".join(
        f"| `{t}` | {task_counts.get(t, 0):,} | {lite_counts.get(t, 0):,} |" for t in TASK_IDS
    )
    body = Template(CARD_TEMPLATE.read_text(encoding="utf-8")).substitute(
        package_version=__version__,
        seed=info.get("seed", 42),
        scale=info.get("scale", "full"),
        repo_id=repo_id,
        config_rows=config_rows,
        task_rows=task_rows,
        sources_used=", ".join(info.get("sources_used", [])) or "none",
        c2_certainty=info.get("c2_certainty", "not built in this build"),
        embedder=info.get("embedder", "not built in this build"),
        vernacular=info.get("vernacular", "not built in this build"),
        lite_rule=info.get("lite_rule", ""),
        build_notes=info.get("build_notes", ""),
    )
    return f"---\n{front}---\n\n{body}"
