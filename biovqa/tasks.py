"""The 24 Bio-VQA tasks as declarative data (ids are stable; see the paper's Table 3 and §K).

A task says what is asked (families, answer form, prompt material via :mod:`biovqa.prompts`), how a
reply is parsed (``answer_form`` → :func:`biovqa.parse.parse`), how it is scored (the component's
scorer in :mod:`biovqa.metrics`), its image-blind floor rule and the headline metric Table 3 reports.
Nothing dispatches on substrings of the id: code reads these fields.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from biovqa import prompts


@dataclass(frozen=True)
class Task:
    id: str
    component: str
    name: str  # short column name in the Table 3 layout
    description: str
    answer_form: str  # the main answer form; rows carry their own (C2 naming mixes MCQ and open)
    headline_metric: str
    answer_forms: tuple[str, ...] = ()  # every answer form the task's rows may use
    families: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    extra_headlines: tuple[str, ...] = ()  # reported beside the Table 3 headline (§G, §H)
    max_new_tokens: int = 32
    floor_rule: str = ""
    sources: tuple[str, ...] = ()
    lite_strata: tuple[str, ...] = ("difficulty", "source")
    table3: bool = True  # whether Table 3 has a column for it

    @property
    def parsers(self) -> dict[str, str]:
        """The parser of each answer form (``biovqa.parse.parse`` dispatches to these)."""
        from biovqa.parse import FORM_MODULES

        return {form: f"biovqa.parse.{FORM_MODULES[form]}.parse_{form}" for form in self.answer_forms}

    @property
    def scorer(self) -> str:
        """The component scorer (Contract 4) that ``biovqa.metrics.score_task`` routes this task to."""
        return f"biovqa.metrics.{self.component}.score_task"

    @property
    def prompts(self) -> dict:
        """Every template, frame and instruction (§K) the task's questions are written with."""
        return prompts._task_prompt_material(self.id)

    @property
    def wrappers(self) -> dict[str, str]:
        """Per-model prompt wrappers (§K): what each does to this task's prompt."""
        gemma = (
            "system message: " + prompts.GEMMA_SYSTEM if self.component in ("c1", "c2") else "none (C3/C4)"
        )
        return {"gemma_system": gemma, "internvl_english": "user-text prefix: " + prompts.INTERNVL_PREFIX}

    @property
    def prompt_hash(self) -> str:
        """Content hash of every prompt string the task can use."""
        return prompts.prompt_hash(self.id)

    def __post_init__(self) -> None:
        if not self.answer_forms:
            object.__setattr__(self, "answer_forms", (self.answer_form,))

    def to_dict(self) -> dict:
        d = asdict(self)
        d.update(
            parsers=self.parsers,
            scorer=self.scorer,
            prompts=self.prompts,
            wrappers=self.wrappers,
            prompt_hash=self.prompt_hash,
        )
        return d


_C1_NAMES = {
    "phylum": "phy",
    "class": "cls",
    "order": "ord",
    "family": "fam",
    "genus": "gen",
    "species": "spc",
    "scientific_name": "sci",
    "common_name": "com",
}


def _c1_tasks() -> list[Task]:
    out = []
    for rank, short in _C1_NAMES.items():
        word = prompts.C1_RANK_WORDS[rank]
        out.append(
            Task(
                id=f"c1.{rank}",
                component="c1",
                name=short,
                description=f"Name the {word} of the organism in a TreeOfLife-200M photograph (open answer).",
                answer_form="open_text",
                headline_metric="em",
                families=(rank,),
                extra_headlines=("em_soft", "wup", "lin", "severity"),
                max_new_tokens=15,  # §K.1: generation is capped at 15 new tokens on C1
                floor_rule="most frequent gold taxon at this rank over the scored items",
                sources=("treeoflife",),
                lite_strata=("difficulty", "c1.group"),
            )
        )
    out.append(
        Task(
            id="c1.common_name_mcq",
            component="c1",
            name="mcq",
            description="Pick the common name among four options listed without letters.",
            answer_form="mcq_bare",
            headline_metric="em",
            families=("common_name_mcq",),
            extra_headlines=(),
            max_new_tokens=15,
            floor_rule="most frequent gold option text (chance 0.25 for a uniform guess)",
            sources=("treeoflife",),
            lite_strata=("difficulty", "c1.group"),
            table3=False,
        )
    )
    return out


_C2_TASKS = (
    ("salience", "sal", ("attr_group_value",), "Relative salience: the most prominently visible trait."),
    (
        "morphology",
        "mrp",
        ("attr_bare_value",),
        "Morphological attributes: a part's colour, shape, pattern, size.",
    ),
    (
        "localization",
        "loc",
        ("marker_localization", "visibility_partset", "visibility_side"),
        "Anatomical localization: the marked part, which parts / sides are visible.",
    ),
    (
        "naming",
        "nam",
        ("category_mcq", "open_common_name", "open_scientific_name", "open_genus", "open_kind_of"),
        "Naming at four levels of specificity (category MCQ and open names).",
    ),
)


def _c2_tasks() -> list[Task]:
    return [
        Task(
            id=f"c2.{name}",
            component="c2",
            name=short,
            description=desc + " (CUB-200-2011)",
            answer_form="mcq_lettered",
            answer_forms=("mcq_lettered", "open_text") if name == "naming" else ("mcq_lettered",),
            headline_metric="cags",
            families=fams,
            extra_headlines=("gs_raw", "em", "severity"),
            max_new_tokens=48,
            floor_rule="cags is chance-corrected: an image-blind guess scores 0 in expectation",
            sources=("cub",),
            lite_strata=("family", "difficulty"),
        )
        for name, short, fams, desc in _C2_TASKS
    ]


_C3_SPECS = (
    (
        "counting",
        "cnt",
        "integer",
        "cas",
        ("em",),
        prompts.COUNTING_TIERS,
        16,
        "modal count (per corpus or overall, whichever scores higher), macro-averaged over corpora",
    ),
    (
        "relative_counting",
        "rcnt",
        "choice_abcd",
        "balanced_accuracy",
        ("accuracy",),
        (),
        16,
        "most common gold letter",
    ),
    (
        "absolute_distance",
        "adst",
        "number_cm",
        "acc20",
        ("rho_within",),
        (),
        16,
        "per-type constant (object type × length/width) that maximizes acc@20",
    ),
    (
        "relative_distance",
        "rdst",
        "choice_abcd",
        "balanced_accuracy",
        ("accuracy",),
        (),
        16,
        "most common gold letter",
    ),
    (
        "localization",
        "lcl",
        "box",
        "mean_iou",
        ("acc50",),
        (),
        48,
        "mean normalized gold box or the whole-image box, whichever scores higher",
    ),
    (
        "relative_position",
        "rpos",
        "direction",
        "balanced_accuracy",
        ("accuracy", "angular_error"),
        (),
        16,
        "the offered direction most common among gold answers",
    ),
    (
        "viewpoint",
        "view",
        "viewpoint",
        "macro_vas",
        ("kappa_vas", "vas"),
        prompts.VIEWPOINT_TIERS,
        16,
        "majority viewpoint (a constant 'right' reaches macroVAS .170)",
    ),
    (
        "ocr",
        "ocr",
        "code",
        "exact_match",
        ("suffix_char_acc",),
        (),
        24,
        "most common character at each position",
    ),
)

_C3_SOURCES = {
    "counting": (
        "waid",
        "boxes_on_bees",
        "neon_beetles",
        "depondfi",
        "gzcd",
        "whaleshark",
        "hyena",
        "leopard",
    ),
    "relative_counting": ("waid", "boxes_on_bees", "neon_beetles", "depondfi", "gzcd", "whaleshark"),
    "absolute_distance": ("neon_beetles",),
    "relative_distance": ("neon_beetles",),
    "localization": ("whaleshark", "hyena", "leopard", "gzcd"),
    "relative_position": ("neon_beetles",),
    "viewpoint": ("whaleshark", "hyena", "leopard", "gzcd"),
    "ocr": ("neon_beetles",),
}


def _c3_tasks() -> list[Task]:
    return [
        Task(
            id=f"c3.{name}",
            component="c3",
            name=short,
            description=f"C3 spatial task: {name.replace('_', ' ')}.",
            answer_form=form,
            headline_metric=metric,
            families=(name,),
            tiers=tiers,
            extra_headlines=extra,
            max_new_tokens=tokens,
            floor_rule=floor,
            sources=_C3_SOURCES[name],
            lite_strata=("source", "tier", "difficulty"),
        )
        for name, short, form, metric, extra, tiers, tokens, floor in _C3_SPECS
    ]


def _c4_tasks() -> list[Task]:
    return [
        Task(
            id=f"c4.{cond}",
            component="c4",
            name={"easy": "d'e", "random": "d'", "hard": "d'h"}[cond],
            description=f"Same individual or not? Pairs under the {cond} condition.",
            answer_form="yes_no",
            headline_metric="dprime",
            families=(cond,),
            extra_headlines=("criterion_c", "accuracy"),
            max_new_tokens=16,
            floor_rule="image-blind constant answer: d' = 0, accuracy .5 on balanced pairs",
            sources=("whaleshark", "beluga", "hyena", "leopard", "gzcd"),
            lite_strata=("c4.catalog", "c4.same"),
            table3=cond == "random",
        )
        for cond in ("easy", "random", "hard")
    ]


TASKS: dict[str, Task] = {t.id: t for t in (*_c1_tasks(), *_c2_tasks(), *_c3_tasks(), *_c4_tasks())}
TASK_IDS: tuple[str, ...] = tuple(TASKS)


def get_task(task_id: str) -> Task:
    """The task with this id; a clear error lists the known ids otherwise."""
    try:
        return TASKS[task_id]
    except KeyError:
        raise KeyError(f"unknown task {task_id!r}; known tasks: {', '.join(TASK_IDS)}") from None


def tasks_of(component: str) -> list[Task]:
    """The tasks of one component (c1 … c4), in registry order."""
    return [t for t in TASKS.values() if t.component == component]


def select_tasks(patterns: list[str] | None) -> list[Task]:
    """Tasks named by exact ids or component prefixes (``c2`` or ``c3.counting``); all when None."""
    if not patterns:
        return list(TASKS.values())
    chosen: dict[str, Task] = {}
    for pat in patterns:
        pat = pat.strip()
        if pat in TASKS:
            chosen[pat] = TASKS[pat]
        elif pat in ("c1", "c2", "c3", "c4"):
            chosen.update({t.id: t for t in tasks_of(pat)})
        else:
            raise KeyError(f"unknown task or component {pat!r}; known tasks: {', '.join(TASK_IDS)}")
    return [TASKS[k] for k in TASKS if k in chosen]
