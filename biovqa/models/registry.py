"""The 18 open-weight checkpoints of the paper (Table 13, §B.1) with their prompt wrappers (§K) and load notes.

Wrappers (§K intro): Gemma-3/Gemma-4 add the system message on C1 and C2; InternVL3-8B, InternVL3-38B
and InternVL3.5-38B prefix "Please answer in English."; the others use none (InternVL keeps its
checkpoint's default system message, which the chat template adds by itself).

Checkpoint ids are Table 13's. The PDF renders ``InternVL3_5`` with a struck-through 5; the Hub ids use an
underscore (``OpenGVLab/InternVL3_5-8B-Instruct``). The ``-Instruct`` InternVL checkpoints ship custom code
(``trust_remote_code``); their transformers-native twins end in ``-hf`` and are given in ``hf_native``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass(frozen=True)
class ModelSpec:
    name: str  # display name used in the paper's tables
    checkpoint: str  # Hub id from Table 13
    params: str
    llm: str
    vision: str
    wrapper: str | None = None  # biovqa.prompts wrapper name
    trust_remote_code: bool = False  # the checkpoint needs custom code
    hf_native: str | None = None  # a transformers-native checkpoint of the same weights, when one exists
    processor_kwargs: dict = field(default_factory=dict)  # passed to AutoProcessor.from_pretrained
    max_image_side: int | None = None  # longest image side before preprocessing (None: keep)
    notes: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


_QWEN25_PIXELS = {"min_pixels": 256 * 28 * 28, "max_pixels": 1280 * 28 * 28}

MODELS: tuple[ModelSpec, ...] = (
    ModelSpec(
        "Qwen2.5-VL-3B",
        "Qwen/Qwen2.5-VL-3B-Instruct",
        "3.75B",
        "Qwen2.5-3B",
        "native-resolution ViT (0.67B), window attention",
        processor_kwargs=_QWEN25_PIXELS,
        notes="min/max pixels 256*28*28 .. 1280*28*28 (the model card's recommended range); needs torchvision "
        "for the stock processor",
    ),
    ModelSpec(
        "Qwen2.5-VL-7B",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        "8.29B",
        "Qwen2.5-7B",
        "native-resolution ViT (0.67B), window attention",
        processor_kwargs=_QWEN25_PIXELS,
        notes="as Qwen2.5-VL-3B",
    ),
    ModelSpec(
        "Qwen3-VL-8B", "Qwen/Qwen3-VL-8B-Instruct", "8.8B", "Qwen3-8B", "Qwen3-VL ViT, DeepStack fusion"
    ),
    ModelSpec(
        "Qwen3-VL-30B-A3B",
        "Qwen/Qwen3-VL-30B-A3B-Instruct",
        "30.5B / 3B active",
        "Qwen3-30B-A3B",
        "Qwen3-VL ViT, DeepStack fusion",
        notes="mixture of experts; one H200 holds it in bf16",
    ),
    ModelSpec(
        "Qwen3-VL-32B", "Qwen/Qwen3-VL-32B-Instruct", "32B", "Qwen3-32B", "Qwen3-VL ViT, DeepStack fusion"
    ),
    ModelSpec(
        "InternVL3-8B",
        "OpenGVLab/InternVL3-8B-Instruct",
        "8B",
        "Qwen2.5-7B",
        "InternViT-300M-448px-V2.5",
        wrapper="internvl_english",
        trust_remote_code=True,
        hf_native="OpenGVLab/InternVL3-8B-hf",
        notes="custom code; the -hf twin loads with AutoModelForImageTextToText",
    ),
    ModelSpec(
        "InternVL3-38B",
        "OpenGVLab/InternVL3-38B-Instruct",
        "38B",
        "Qwen2.5-32B",
        "InternViT-6B-448px-V2.5",
        wrapper="internvl_english",
        trust_remote_code=True,
        hf_native="OpenGVLab/InternVL3-38B-hf",
        notes="custom code; ~77 GB in bf16",
    ),
    ModelSpec(
        "InternVL3.5-8B",
        "OpenGVLab/InternVL3_5-8B-Instruct",
        "8B",
        "Qwen3-8B",
        "InternViT-300M-448px-V2.5",
        trust_remote_code=True,
        hf_native="OpenGVLab/InternVL3_5-8B-HF",
        notes="custom code; no English prefix (§K names only InternVL3-8B/38B and InternVL3.5-38B)",
    ),
    ModelSpec(
        "InternVL3.5-30B-A3B",
        "OpenGVLab/InternVL3_5-30B-A3B-Instruct",
        "31B / 3B active",
        "Qwen3-30B-A3B",
        "InternViT-300M-448px-V2.5",
        trust_remote_code=True,
        hf_native="OpenGVLab/InternVL3_5-30B-A3B-HF",
        notes="custom code; mixture of experts",
    ),
    ModelSpec(
        "InternVL3.5-38B",
        "OpenGVLab/InternVL3_5-38B-Instruct",
        "38.4B",
        "Qwen3-32B",
        "InternViT-6B-448px-V2.5",
        wrapper="internvl_english",
        trust_remote_code=True,
        hf_native="OpenGVLab/InternVL3_5-38B-HF",
        notes="custom code",
    ),
    ModelSpec(
        "Gemma-3-12B",
        "google/gemma-3-12b-it",
        "12B",
        "Gemma 3 12B",
        "SigLIP-So400m/14-896, pan-and-scan",
        wrapper="gemma_system",
        notes="gated on the Hub; images passed as nested lists [[img]]",
    ),
    ModelSpec(
        "Gemma-4-12B",
        "google/gemma-4-12B-it",
        "12B",
        "Gemma 4 12B",
        "encoder-free: a 35M embedder projects raw 48x48x3 patches",
        wrapper="gemma_system",
        notes="gated; needs a transformers release that knows the gemma4 architecture",
    ),
    ModelSpec(
        "Molmo2-8B",
        "allenai/Molmo2-8B",
        "8.66B",
        "Qwen3-8B",
        "SigLIP 2",
        trust_remote_code=True,
        notes="custom code pinned to transformers 4.57.1 (§B.2): run it from its own environment",
    ),
    ModelSpec(
        "Pixtral-12B",
        "mistral-community/pixtral-12b",
        "12.4B",
        "Mistral NeMo 12B",
        "Pixtral-ViT (0.4B), variable resolution",
        max_image_side=1024,
        notes="LlavaForConditionalGeneration; long sides capped at 1024 px to bound image tokens",
    ),
    ModelSpec(
        "Phi-3.5-Vision",
        "microsoft/Phi-3.5-vision-instruct",
        "4.2B",
        "Phi-3.5-mini (3.8B)",
        "CLIP ViT-L/14-336, multi-crop",
        trust_remote_code=True,
        processor_kwargs={"num_crops": 4},
        notes="custom code (AutoModelForCausalLM + its own processor); num_crops=4 as the card recommends for "
        "single images",
    ),
    ModelSpec(
        "Llama-3.2-Vision",
        "meta-llama/Llama-3.2-11B-Vision-Instruct",
        "10.6B",
        "Llama 3.1 8B",
        "frozen ViT-H/14 (0.63B) with a cross-attention adapter",
        notes="gated; MllamaForConditionalGeneration, nested images",
    ),
    ModelSpec(
        "LLaVA-NeXT-Vicuna",
        "llava-hf/llava-v1.6-vicuna-7b-hf",
        "7.06B",
        "Vicuna-7B-v1.5",
        "CLIP ViT-L/14-336, AnyRes tiling",
    ),
    ModelSpec(
        "LLaVA-NeXT-Mistral",
        "llava-hf/llava-v1.6-mistral-7b-hf",
        "7.57B",
        "Mistral-7B-Instruct-v0.2",
        "CLIP ViT-L/14-336, AnyRes tiling",
    ),
)

_BY_KEY = {m.name.lower(): m for m in MODELS} | {m.checkpoint.lower(): m for m in MODELS}
_BY_KEY |= {m.hf_native.lower(): m for m in MODELS if m.hf_native}


def find_model(name: str) -> ModelSpec | None:
    """The registry entry for a display name or checkpoint id (case-insensitive), else None."""
    return _BY_KEY.get(str(name).strip().lower())


def list_models() -> list[dict]:
    """The registry as plain dicts (for ``biovqa models --json``)."""
    return [m.to_dict() for m in MODELS]
