"""Prompts exactly as the paper's §K lists them, the per-model wrappers, and prompt version hashes.

Every model receives the same question and the same answer-format instruction within a question
family; the instruction is appended to the question in the user turn (§K). Where the paper's
main-text tables (Table 8, Table 10) and §K differ in wording, §K wins: it reproduces the released
question files.

The builder uses these functions to write ``question``/``instruction`` into every row; the runtime
sends ``question + "\\n" + instruction`` (:func:`user_text`) wrapped by :func:`build_messages`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

PROMPTS_VERSION = "k-2026.1"

# --------------------------------------------------------------------------------------------- C1 (§K.1)

C1_RANKS = ("phylum", "class", "order", "family", "genus", "species", "scientific_name", "common_name")

#: The word used for ``{rank}`` in the templates.
C1_RANK_WORDS = {
    "phylum": "phylum",
    "class": "class",
    "order": "order",
    "family": "family",
    "genus": "genus",
    "species": "species epithet",
    "scientific_name": "scientific name",
    "common_name": "common name",
}

C1_TEMPLATES_RANK = (
    "What is the {rank} of the {label} shown in this image?",
    "Which {rank} does the {label} in this image belong to?",
    "Identify the {rank} of the {label} shown in this image.",
    "Name the {rank} of the {label} in this image.",
    "What is the correct {rank} label for the {label} in this image?",
)

C1_TEMPLATES_NAME = (
    "What is the {rank} of the {label} shown in this image?",
    "Identify the {rank} of the {label} shown in this image.",
    "Name the {rank} of the {label} shown in this image.",
)

C1_MCQ_TEMPLATE = "Among the four options, what is the common name of the {label} shown in this image? {o1}, {o2}, {o3}, {o4}"

C1_INSTRUCTIONS = {
    "phylum": (
        "Answer with ONLY the Phylum name (e.g., Arthropoda). Do not include class, order, or any other "
        "taxonomic ranks. Do not write full sentences."
    ),
    "class": (
        "Answer with ONLY the Class name (e.g., Arachnida, Insecta). Do not include order, family, or any "
        "other taxonomic ranks. Do not write full sentences."
    ),
    "order": (
        "Answer with ONLY the Order name (e.g., Araneae). Do not include family, genus, or any other "
        "taxonomic ranks. Do not write full sentences."
    ),
    "family": (
        "Answer with ONLY the Family name (e.g., Araneidae). Do not include genus, species, or any other "
        "taxonomic ranks. Do not write full sentences."
    ),
    "genus": (
        "Answer with ONLY the Genus name (capitalized, e.g., Argiope). Do not include the species epithet "
        "or family name. Do not write full sentences."
    ),
    "species": (
        "Answer with ONLY the species epithet (the single, lowercase second word of the scientific name, "
        "e.g., aurantia). Absolutely DO NOT include the capitalized Genus name. Do not write full sentences."
    ),
    "scientific_name": (
        "Answer with ONLY the full binomial scientific name (Genus and species, e.g., Argiope aurantia). "
        "Do not include the common name or higher taxonomic ranks. Do not write full sentences."
    ),
    "multiple_choice": (
        "Answer with ONLY the exact correct option from the four choices provided in the question. "
        "Absolutely DO NOT write full sentences, and do not provide any extra context or scientific names."
    ),
    "common_name": (
        "Answer with ONLY the everyday English common name (e.g., Orb weavers). Absolutely DO NOT provide "
        "the Latin scientific name. Do not write full sentences."
    ),
}


def c1_label(kingdom: str | None) -> str:
    """The ``{label}`` word by kingdom: animal, plant, or organism for everything else."""
    k = (kingdom or "").strip().lower()
    if k == "animalia":
        return "animal"
    if k == "plantae":
        return "plant"
    return "organism"


def c1_templates(rank: str) -> tuple[str, ...]:
    """The question templates for a C1 rank (five for phylum…species epithet, three for names)."""
    if rank not in C1_RANKS:
        raise KeyError(f"unknown C1 rank {rank!r}; expected one of {C1_RANKS}")
    return C1_TEMPLATES_NAME if rank in ("scientific_name", "common_name") else C1_TEMPLATES_RANK


def c1_question(rank: str, label: str, template_index: int) -> str:
    """The C1 open question for ``rank`` using template ``template_index``."""
    templates = c1_templates(rank)
    return templates[template_index].format(rank=C1_RANK_WORDS[rank], label=label)


def c1_mcq_question(label: str, options: Sequence[str]) -> str:
    """The 4-way common-name question; options are listed without letters, in the given order."""
    if len(options) != 4:
        raise ValueError(f"the common-name MCQ takes exactly four options, got {len(options)}")
    o1, o2, o3, o4 = options
    return C1_MCQ_TEMPLATE.format(label=label, o1=o1, o2=o2, o3=o3, o4=o4)


def c1_instruction(rank: str) -> str:
    """The answer-format instruction appended by rank (``multiple_choice`` for the MCQ)."""
    try:
        return C1_INSTRUCTIONS[rank]
    except KeyError:
        raise KeyError(f"no C1 instruction for {rank!r}") from None


# --------------------------------------------------------------------------------------------- C2 (§K.2)

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

C2_FAMILIES = (
    "attr_bare_value",
    "attr_group_value",
    "marker_localization",
    "visibility_partset",
    "visibility_side",
    "category_mcq",
    "open_common_name",
    "open_scientific_name",
    "open_genus",
    "open_kind_of",
)

C2_MCQ_FAMILIES = C2_FAMILIES[:6]
C2_OPEN_FAMILIES = C2_FAMILIES[6:]

C2_TEMPLATES = {
    "attr_bare_value": "What is the {part} {property} of this bird? Options: {options}",
    "attr_group_value": (
        "Which of the following is the most prominently visible physical trait of the bird in this image? "
        "Options: {options}"
    ),
    "marker_localization": "What is the body part of this bird marked with the {color} {shape}? Options: {options}",
    "visibility_partset": "Which of the following parts of the bird are visible in this image? Options: {options}",
    "visibility_side": "Which of the {side_part}s of the bird are visible in this image? Options: {options}",
    "category_mcq": "What type of bird is this in the image? Options: {options}",
    "open_common_name": "What is the common name of the bird?",
    "open_scientific_name": "What is the scientific name of the bird?",
    "open_genus": "What is the genus of the bird?",
    "open_kind_of": "What kind of {category} is the bird in this image?",
}

C2_MCQ_INSTRUCTION = """[CRITICAL INSTRUCTIONS - NO VIOLATIONS ALLOWED]:
1. Locate the 'Options:' section in the question above.
2. Identify the single correct choice from that list.
3. Output ONLY the matching option letter in parentheses and its exact trailing text string. For example, if the correct option is '(X) alpha bravo charlie', your entire response must be exactly: (X) alpha bravo charlie
4. DO NOT truncate the response to just the option letter (e.g., do not output just '(X)').
5. DO NOT invent, hallucinate, or insert any placeholder words from external examples. Absolutely DO NOT output any word unless it is explicitly written inside the chosen option string above.
6. Output exactly zero extra words, zero markdown formatting, and zero punctuation outside the option string."""

C2_OPEN_INSTRUCTIONS = {
    "open_scientific_name": "Answer with ONLY the scientific name of the bird. Do not write full sentences.",
    "open_genus": "Answer with ONLY the capitalized Genus name of the bird. Do not write full sentences.",
    "open_common_name": "Answer with ONLY the everyday English common name of the bird. Do not write full sentences.",
    "open_kind_of": "Answer with ONLY the everyday English common name of the bird. Do not write full sentences.",
}

C2_OTHER_INSTRUCTION = (
    "Answer directly and concisely with only the exact terms requested. Do not write full sentences."
)

#: Fixed options of the visibility families (Table 69).
VISIBILITY_SIDE_OPTIONS = ("Left", "Right", "Both", "None")


def format_lettered(options: Sequence[str]) -> str:
    """``(A) x, (B) y, …`` as the C2 questions list their options."""
    if len(options) > len(LETTERS):
        raise ValueError(f"too many options: {len(options)}")
    return ", ".join(f"({LETTERS[i]}) {opt}" for i, opt in enumerate(options))


def visibility_partset_options(parts: Sequence[str]) -> list[str]:
    """Three parts, then ``None`` and ``All three`` (Table 69)."""
    if len(parts) != 3:
        raise ValueError(f"visibility_partset takes three parts, got {len(parts)}")
    return [*parts, "None", "All three"]


def c2_question(family: str, **fields) -> str:
    """The C2 question text for ``family``; MCQ families take ``options`` (a list, lettered here)."""
    if family not in C2_TEMPLATES:
        raise KeyError(f"unknown C2 family {family!r}; expected one of {C2_FAMILIES}")
    if family in C2_MCQ_FAMILIES:
        options = fields.pop("options", None)
        if not options:
            raise ValueError(f"C2 family {family!r} needs options")
        fields["options"] = format_lettered(options)
    try:
        return C2_TEMPLATES[family].format(**fields)
    except KeyError as exc:
        raise ValueError(f"C2 family {family!r} needs field {exc.args[0]!r}") from None


def c2_instruction(family: str) -> str:
    """The MCQ instruction for lettered families; the family's open instruction otherwise."""
    if family in C2_MCQ_FAMILIES:
        return C2_MCQ_INSTRUCTION
    return C2_OPEN_INSTRUCTIONS.get(family, C2_OTHER_INSTRUCTION)


# --------------------------------------------------------------------------------------------- C3 (§K.3)

C3_TASKS = (
    "counting",
    "relative_counting",
    "absolute_distance",
    "relative_distance",
    "localization",
    "relative_position",
    "viewpoint",
    "ocr",
)

VIEWPOINTS = (
    "front",
    "back",
    "left",
    "right",
    "frontleft",
    "frontright",
    "backleft",
    "backright",
    "up",
    "down",
)
DIRECTIONS = ("top", "bottom", "left", "right", "top-left", "top-right", "bottom-left", "bottom-right")

C3_FRAMES = {
    "counting_two_panel": (
        "This image consists of two separate photographs placed side by side. Count only within the "
        "photograph named in the question and ignore the other one."
    ),
    "relative_counting": (
        "This image is a 2x2 grid of four separate photographs: Image A - top-left, Image B - top-right, "
        "Image C - bottom-left, Image D - bottom-right."
    ),
    "absolute_distance": (
        "This image shows a plate of pinned beetle specimens, photographed at a single scale. A BLUE line "
        "marks the scale bar. The scale bar is exactly 1 cm long. A RED line marks the measurement asked "
        "about below."
    ),
    "relative_distance": (
        "This image shows a single plate of pinned beetle specimens, photographed at one magnification. "
        "Four specimens are marked, each with a dotted box and a coloured line drawn along its elytra: "
        "Beetle A - red, Beetle B - blue, Beetle C - green, Beetle D - white."
    ),
    "localization": "The whole image is {width} pixels wide and {height} pixels tall.",
    "viewpoint_three_panel": "This image consists of three separate photographs placed side by side.",
    "ocr": "This image shows a specimen label with a barcode and a printed accession code beneath it.",
}

C3_QUESTIONS = {
    "counting": "How many {animals} are there in this image?",
    "counting_two_panel": "How many {animals} are there in the {panel} photograph?",
    "relative_counting": (
        "Which of these 4 images contains {extreme} number of {animals}: Image A (top-left), Image B "
        "(top-right), Image C (bottom-left), Image D (bottom-right)?"
    ),
    "absolute_distance": (
        "What is the measurement of the elytra {measurement} (marked with red line with white border) with "
        "respect to the scalebar (marked with blue line with green border) in cm?"
    ),
    "relative_distance": (
        "Among the four highlighted beetle specimens, which one has the largest elytral {measurement}? "
        "Beetle A (red dotted box/line), Beetle B (blue dotted box/line), Beetle C (green dotted box/line), "
        "and Beetle D (white dotted box/line)"
    ),
    "localization": "Provide bounding box coordinates for the subject animal ({species}) in this image.",
    "relative_position": (
        "This image is marked with six boxes: two red, two blue, one green and one cyan. Exactly one red "
        "box and exactly one blue box contain a specimen; the other red box and the other blue box are "
        "empty. The green and cyan boxes are irrelevant to the question. Where is the specimen inside the "
        "red box located with respect to the specimen inside the blue box? Options: {directions}"
    ),
    "viewpoint_box": "What is the viewpoint of the animal (red bounding box) shown in this image?",
    "viewpoint_species": "What is the viewpoint of the {species} in this image?",
    "viewpoint_three_panel": "What is the viewpoint of the {species} marked in the {position} bounding box?",
    "ocr": "What is the text under the barcode (starting with A0...) shown in this image?",
}

C3_INSTRUCTIONS = {
    "counting": (
        "Count every individual, including any that are partially visible or cut off at the edge of the "
        "photograph. Give a single best estimate even if you are uncertain. Respond with one integer and "
        "nothing else: no words, no units, no ranges. If you count seven, respond: 7"
    ),
    "relative_counting": (
        "Count the animals in each of the four photographs and compare the totals. The photographs are "
        "shown at different scales, so compare how many animals there are, not how large they appear. "
        "Exactly one photograph is the answer. Choose it even if the difference is small. Answer "
        "immediately with the letter. Do not describe the photographs and do not explain your reasoning. "
        "Respond with one letter and nothing else: A, B, C or D."
    ),
    "absolute_distance": (
        "Compare the pixel length of the red line to the pixel length of the blue scale bar. Because the "
        "scale bar is exactly 1 cm long, the red line's length in centimetres equals that ratio: if the red "
        "line is half as long as the blue line the answer is 0.50 cm, and if it is twice as long the answer "
        "is 2.00 cm. Measure the two lines as they appear in this image. Do not answer from what you know "
        "about typical beetle sizes. Respond with one number rounded to two decimal places followed by cm, "
        "and nothing else. No explanation, no range, no other units. Example: 0.87 cm"
    ),
    "relative_distance": (
        "Compare the lengths of the four coloured lines as they appear in this image. Because all four "
        "specimens are in the same photograph at the same magnification, the line drawn on screen is "
        "directly proportional to the real measurement - no scale conversion is needed. Exactly one of the "
        "four is the largest. Choose it even if the difference is small. Respond with one letter and "
        "nothing else: A, B, C or D."
    ),
    "localization": (
        "Respond with four numbers in this exact format and nothing else: [x, y, width, height] where x and "
        "y are the pixel coordinates of the top-left corner of the box, measured from the top-left corner "
        "of the WHOLE image described above, and width and height are the size of the box in pixels. Do "
        "not use fractions, percentages or normalised coordinates. Do not explain. Example: [1240, 88, 540, 410]"
    ),
    "relative_position": (
        "Answer with one of the four options exactly as written above, in lower case, and nothing else. Do "
        "not describe the boxes, do not explain your reasoning, do not restate the question. For example, "
        "if the answer is the option bottom-left, reply: bottom-left"
    ),
    "viewpoint": (
        "Answer with the direction the animal is facing, relative to the camera. Choose exactly one of these "
        "accepted answers: front, back, left, right, frontleft, frontright, backleft, backright, up, down. "
        "Reply with one of those options, written exactly as above in lower case, and nothing else. No "
        "explanation, no punctuation. For example, if the animal faces away from the camera and to the "
        "left, reply: backleft"
    ),
    "ocr": (
        "Read the printed characters underneath the barcode. The code is always the letter A followed by "
        "eleven digits, twelve characters in total, with no spaces or punctuation. Transcribe exactly what "
        "is printed. Do not guess a plausible code and do not correct what you see. Respond with the "
        "twelve-character code and nothing else. Example: A00000012345"
    ),
}

#: Counting tiers (§A.3): easy = one image; medium = two panels from different datasets; hard = two
#: panels from the same dataset. Viewpoint tiers: one panel (box or species) or three panels.
COUNTING_TIERS = ("easy", "medium", "hard")
VIEWPOINT_TIERS = ("box", "species", "three_panel")


def c3_question(task: str, tier: str = "", **fields) -> str:
    """Frame + question for a C3 task exactly as §K.3 gives them (frame first, then the question)."""
    if task not in C3_TASKS:
        raise KeyError(f"unknown C3 task {task!r}; expected one of {C3_TASKS}")
    frame_key, question_key = None, task
    if task == "counting" and tier in ("medium", "hard"):
        frame_key = question_key = "counting_two_panel"
    elif task == "viewpoint":
        tier = tier or "box"
        if tier not in VIEWPOINT_TIERS:
            raise ValueError(f"unknown viewpoint tier {tier!r}; expected one of {VIEWPOINT_TIERS}")
        question_key = f"viewpoint_{tier}"
        frame_key = "viewpoint_three_panel" if tier == "three_panel" else None
    elif task in C3_FRAMES:
        frame_key = task
    if task == "relative_position" and "directions" in fields:
        dirs = fields["directions"]
        if not isinstance(dirs, str):
            fields["directions"] = ", ".join(dirs)
    try:
        question = C3_QUESTIONS[question_key].format(**fields)
        frame = C3_FRAMES[frame_key].format(**fields) if frame_key else ""
    except KeyError as exc:
        raise ValueError(f"C3 task {task!r} (tier {tier!r}) needs field {exc.args[0]!r}") from None
    return f"{frame} {question}" if frame else question


def c3_instruction(task: str) -> str:
    """The answer-format instruction of a C3 task."""
    try:
        return C3_INSTRUCTIONS[task]
    except KeyError:
        raise KeyError(f"unknown C3 task {task!r}") from None


# --------------------------------------------------------------------------------------------- C4 (§K.4)

C4_QUESTION = (
    "This image shows two images placed side by side. Is the main subject in the left image the very same "
    "individual animal as the main subject in the right image?"
)

C4_INSTRUCTION = (
    "- The image shows two photographs placed side by side.\n"
    "- Each photograph may contain more than one animal - consider only the main subject in the foreground.\n"
    "- Judge only from what is visible in the two photographs.\n"
    "- Answer with one word: Yes or No. Do not explain."
)

# ------------------------------------------------------------------------------------ model wrappers (§K)

GEMMA_SYSTEM = "You are a precise taxonomy expert. Reply with only the requested term."
INTERNVL_PREFIX = "Please answer in English."

#: Wrapper names used by the model registry.
WRAPPERS = ("gemma_system", "internvl_english")


def user_text(row: dict) -> str:
    """The user-turn text: question, then the answer-format instruction."""
    question = row.get("question") or ""
    instruction = row.get("instruction") or ""
    return f"{question}\n{instruction}" if instruction else question


def wrap(row: dict, wrapper: str | None) -> tuple[str | None, str]:
    """Apply a per-model wrapper: returns ``(system message or None, user text)``.

    Gemma-3/Gemma-4 get the system message on C1 and C2 only; InternVL3-8B/38B and InternVL3.5-38B get
    the English prefix; C4 uses no system message for any model.
    """
    text = user_text(row)
    component = row.get("component") or str(row.get("task", "")).split(".")[0]
    if wrapper is None:
        return None, text
    if wrapper == "gemma_system":
        return (GEMMA_SYSTEM if component in ("c1", "c2") else None), text
    if wrapper == "internvl_english":
        return None, f"{INTERNVL_PREFIX} {text}"
    raise KeyError(f"unknown prompt wrapper {wrapper!r}; expected one of {WRAPPERS} or None")


def build_messages(row: dict, wrapper: str | None = None, *, with_image: bool = True) -> list[dict]:
    """HF chat messages for a row: optional system turn, then one user turn with an image part + text.

    ``with_image=False`` gives the text-only *blind* prompt (same words, image withheld).
    """
    system, text = wrap(row, wrapper)
    messages: list[dict] = []
    if system:
        messages.append({"role": "system", "content": [{"type": "text", "text": system}]})
    content: list[dict] = [{"type": "image"}] if with_image else []
    content.append({"type": "text", "text": text})
    messages.append({"role": "user", "content": content})
    return messages


def _task_prompt_material(task_id: str) -> dict:
    component, _, name = task_id.partition(".")
    if component == "c1":
        rank = "multiple_choice" if name == "common_name_mcq" else name
        templates = C1_MCQ_TEMPLATE if rank == "multiple_choice" else list(c1_templates(rank))
        return {"templates": templates, "instruction": C1_INSTRUCTIONS[rank]}
    if component == "c2":
        return {
            "templates": C2_TEMPLATES,
            "instructions": {
                "mcq": C2_MCQ_INSTRUCTION,
                **C2_OPEN_INSTRUCTIONS,
                "other": C2_OTHER_INSTRUCTION,
            },
        }
    if component == "c3":
        keys = [k for k in C3_QUESTIONS if k == name or k.startswith(name + "_")]
        frames = [k for k in C3_FRAMES if k == name or k.startswith(name + "_")]
        return {
            "questions": {k: C3_QUESTIONS[k] for k in keys},
            "frames": {k: C3_FRAMES[k] for k in frames},
            "instruction": C3_INSTRUCTIONS[name],
        }
    if component == "c4":
        return {"question": C4_QUESTION, "instruction": C4_INSTRUCTION}
    raise KeyError(f"unknown task {task_id!r}")


def prompt_hash(task_id: str) -> str:
    """A short content hash of every template/instruction/wrapper string a task can use.

    Recorded with each prediction: a changed prompt changes the hash and so the run's cache key.
    """
    material = {
        "task": task_id,
        "prompts": _task_prompt_material(task_id),
        "wrappers": {"gemma_system": GEMMA_SYSTEM, "internvl_english": INTERNVL_PREFIX},
    }
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]
