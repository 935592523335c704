"""The question record: one schema for every config (``c1`` … ``c4``, ``lite``).

Every Hub shard is parquet with exactly these top-level columns, so ``lite`` is a plain union and
one runner/scorer reads them all (DESIGN.md §3). The schema is defined in pyarrow terms so that
``import biovqa`` stays cheap; :func:`hf_features` builds the matching ``datasets.Features``.

Component structs are nullable: a C2 row has ``c1 = c3 = c4 = None``.
"""

from __future__ import annotations

import pyarrow as pa

COMPONENTS = ("c1", "c2", "c3", "c4")
CONFIGS = ("c1", "c2", "c3", "c4", "lite")

#: Answer forms (what the parser expects); each task declares exactly one.
ANSWER_FORMS = (
    "open_text",  # C1 ranks, C2 open naming
    "mcq_bare",  # C1 common-name MCQ: four options listed without letters
    "mcq_lettered",  # C2 multiple choice: "(A) text"
    "integer",  # C3 counting
    "number_cm",  # C3 absolute distance
    "choice_abcd",  # C3 relative counting / relative distance: "Image A" / "Beetle A" / "A"
    "box",  # C3 localization
    "direction",  # C3 relative position (four of eight directions offered)
    "viewpoint",  # C3 viewpoint (ten labels)
    "code",  # C3 OCR
    "yes_no",  # C4
)

IMAGE_REF = pa.struct(
    [
        ("source", pa.string()),  # SOURCES.toml key, e.g. "cub", "treeoflife", "waid"
        ("id", pa.string()),  # uuid / relative file name / catalog record id
        ("sha256", pa.string()),  # of the source image file bytes
        ("width", pa.int32()),
        ("height", pa.int32()),
    ]
)

#: Embedded image, exactly the storage of ``datasets.Image()``.
IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])

C1 = pa.struct(
    [
        ("group", pa.string()),  # one of the ten C1 groups (Table 5)
        ("rank", pa.string()),  # asked rank: phylum … species, scientific_name, common_name
        ("kingdom", pa.string()),
        ("phylum", pa.string()),
        ("class", pa.string()),
        ("order", pa.string()),  # null for reptiles (no order in the backbone: skip edge)
        ("family", pa.string()),
        ("genus", pa.string()),
        ("species", pa.string()),  # epithet only
        ("scientific_name", pa.string()),
        ("common_name", pa.string()),
        ("label", pa.string()),  # animal / plant / organism
        ("template_index", pa.int32()),
        # §E.7 difficulty columns
        ("target_taxon", pa.string()),
        ("target_rank", pa.string()),
        ("reference_cell", pa.string()),
        ("resolution_mechanism", pa.string()),
        ("exposure", pa.int64()),
        ("log10_exposure", pa.float64()),
        ("prevalence_percentile", pa.float64()),
        ("prevalence_tier", pa.string()),
        ("ndd", pa.int32()),
        ("ndd_rank", pa.string()),
        ("confusability", pa.float64()),
        ("mcq_tier", pa.string()),
    ]
)

C2 = pa.struct(
    [
        ("image_id", pa.int32()),  # CUB image id
        ("class_id", pa.int32()),
        ("class_name", pa.string()),  # e.g. "Indigo Bunting"
        ("category", pa.string()),  # coarse kind, e.g. "bunting" (open_kind_of)
        ("genus", pa.string()),
        ("scientific_name", pa.string()),
        ("common_name", pa.string()),
        ("part", pa.string()),  # e.g. "wing"
        ("property", pa.string()),  # e.g. "color"
        ("kernel", pa.string()),  # color|ordinal|pattern|anatomy|pair|set|naming|scientific|exact
        ("gold_values", pa.list_(pa.string())),  # every value true of the image (set families)
        ("certainty", pa.int32()),  # CUB certainty 1–4 of the gold attribute
        ("marker_color", pa.string()),
        ("marker_shape", pa.string()),
        ("side_part", pa.string()),  # eye|leg|wing for visibility_side
        ("chance_pool", pa.list_(pa.string())),  # open families: the 40 fixed-seed golds for b
    ]
)

C3 = pa.struct(
    [
        ("corpus", pa.string()),  # source subset, e.g. "waid", "bob", "neon_beetles"
        ("tier", pa.string()),  # counting: easy|medium|hard; viewpoint: box|species|three_panel; else ""
        ("counts", pa.list_(pa.int32())),  # per panel (counting / relative counting)
        ("target_panel", pa.int32()),  # which panel is asked (-1 when n/a)
        ("gold_value", pa.float64()),  # count or cm
        ("option_values", pa.list_(pa.float64())),  # per option (relative distance lengths …)
        ("measurement", pa.string()),  # length|width (beetles); most|least (relative counting)
        ("scale_px_per_cm", pa.float64()),
        ("gold_box", pa.list_(pa.float64())),  # [x, y, w, h] absolute pixels of the shown image
        ("image_width", pa.int32()),
        ("image_height", pa.int32()),
        ("plate_id", pa.string()),  # cluster id for bootstrap (plate / source photograph)
        ("species", pa.string()),
        ("viewpoint", pa.string()),
        ("direction", pa.string()),
        ("code", pa.string()),
        ("object_type", pa.string()),  # per-type floors (beetle/fish/bee/…)
    ]
)

C4 = pa.struct(
    [
        ("catalog", pa.string()),  # whaleshark|beluga|hyena|leopard|gzcd
        ("species", pa.string()),
        ("condition", pa.string()),  # easy|random|hard
        ("same", pa.bool_()),
        ("individual_a", pa.string()),
        ("individual_b", pa.string()),
        ("image_a", pa.string()),
        ("image_b", pa.string()),
        ("viewpoint", pa.string()),
        ("similarity", pa.float64()),  # embedder cosine similarity of the pair
        ("embedder", pa.string()),
    ]
)

QUESTION_SCHEMA = pa.schema(
    [
        ("qid", pa.string()),
        ("component", pa.string()),
        ("task", pa.string()),
        ("family", pa.string()),
        ("source", pa.string()),
        ("question", pa.string()),
        ("instruction", pa.string()),
        ("options", pa.list_(pa.string())),
        ("answer", pa.string()),
        ("answer_index", pa.int32()),
        ("answer_form", pa.string()),
        ("difficulty", pa.string()),
        ("image", IMAGE),
        ("image_ref", IMAGE_REF),
        ("c1", C1),
        ("c2", C2),
        ("c3", C3),
        ("c4", C4),
    ]
)

QUESTION_COLUMNS = tuple(QUESTION_SCHEMA.names)


def hf_features():
    """The ``datasets.Features`` matching :data:`QUESTION_SCHEMA` (``image`` as ``Image()``)."""
    import datasets

    feats = datasets.Features.from_arrow_schema(QUESTION_SCHEMA)
    feats["image"] = datasets.Image()
    return feats


def empty_record() -> dict:
    """A record with every top-level column present and set to its null/empty value."""
    rec = {name: None for name in QUESTION_COLUMNS}
    rec["options"] = []
    rec["answer_index"] = -1
    rec["difficulty"] = ""
    return rec


def validate_record(rec: dict) -> None:
    """Raise ``ValueError`` naming the field when a record does not fit the schema."""
    missing = [c for c in QUESTION_COLUMNS if c not in rec]
    if missing:
        raise ValueError(f"record {rec.get('qid')!r}: missing columns {missing}")
    if rec["answer_form"] not in ANSWER_FORMS:
        raise ValueError(f"record {rec['qid']!r}: unknown answer_form {rec['answer_form']!r}")
    if rec["component"] not in COMPONENTS:
        raise ValueError(f"record {rec['qid']!r}: unknown component {rec['component']!r}")
    if rec["image"] is None and rec["image_ref"] is None:
        raise ValueError(f"record {rec['qid']!r}: neither image nor image_ref is set")
    try:
        pa.Table.from_pylist([rec], schema=QUESTION_SCHEMA)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
        raise ValueError(f"record {rec['qid']!r}: does not fit the schema: {exc}") from exc
