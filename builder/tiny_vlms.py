"""Tiny random-weight VLMs built offline from a config (no downloads), shared by tests, bench and README.

Each builder writes a folder that loads with ``AutoModelForImageTextToText`` + ``AutoProcessor`` exactly
like a Hub checkpoint: ``config.json``, ``model.safetensors``, a byte-level BPE tokenizer trained on a
few strings, a PIL image processor and a short chat template that emits the model's image placeholder.
Recipes follow ``notes/ecosystem-probe.md`` §3 (transformers 5.x). Weights are random (seeded), so the
generated text is gibberish, but it is deterministic and exercises the real preprocessing/generation.

Qwen2.5-VL needs :class:`ImageOnlyQwen2_5_VLProcessor` (no torchvision here, so the stock processor
cannot build its video processor); importing this module registers it with ``AutoProcessor``.

Usage: ``python -m builder.tiny_vlms llava /tmp/tiny-llava`` (kinds: see :data:`BUILDERS`).
"""

from __future__ import annotations

import sys
from pathlib import Path

_CHAT_TEMPLATE = (
    "{%- for m in messages -%}"
    "{{ '<|' + m['role'] + '|>' }}"
    "{%- if m['content'] is string -%}{{ m['content'] }}{%- else -%}"
    "{%- for c in m['content'] -%}"
    "{%- if c['type'] == 'image' -%}{{ '@IMAGE@' }}{%- elif c['type'] == 'text' -%}{{ c['text'] }}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{ '<|end|>\\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<|assistant|>' }}{%- endif -%}"
)

_BASE_SPECIALS = ["<pad>", "<s>", "</s>", "<|user|>", "<|system|>", "<|assistant|>", "<|end|>"]
_CORPUS = [
    "What is the phylum of the animal shown in this image? Answer with ONLY the Phylum name.",
    "Arthropoda Chordata Insecta Aves Passeriformes Cardinalidae Passerina cyanea Indigo Bunting",
    "(A) brown (B) black (C) blue (D) white. Output ONLY the matching option letter.",
    "How many animals are there in this image? Respond with one integer: 7 12 0 3",
    "Is the main subject in the left image the very same individual? Yes No",
    "Provide bounding box coordinates [x, y, width, height] 1240 88 540 410 frontleft backright cm",
]

_TEXT = dict(
    hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, intermediate_size=128
)


def _tokenizer(
    extra_specials: list[str],
    extra_attrs: dict | None = None,
    vocab_size: int = 400,
    corpus: list[str] | None = None,
):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    specials = _BASE_SPECIALS + [t for t in extra_specials if t not in _BASE_SPECIALS]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, special_tokens=specials, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    tok.train_from_iterator(_CORPUS + list(corpus or []), trainer=trainer)
    kwargs = {"extra_special_tokens": extra_attrs} if extra_attrs else {}
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        padding_side="left",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
        additional_special_tokens=[t for t in specials if t not in ("<pad>", "<s>", "</s>")],
        **kwargs,
    )
    return fast


def _template(image_placeholder: str) -> str:
    return _CHAT_TEMPLATE.replace("@IMAGE@", image_placeholder)


def _finish(model, processor, tok, out: Path, seed: int) -> Path:
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    model.generation_config.bos_token_id = tok.bos_token_id
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    processor.save_pretrained(out)
    return out


def _seeded(seed: int):
    import torch

    torch.manual_seed(seed)


def prompt_corpus() -> list[str]:
    """Every §K prompt string: training the tokenizer on them gives realistic token counts (~4-5 chars/token)."""
    from biovqa import prompts

    return [
        prompts.C2_MCQ_INSTRUCTION,
        prompts.C4_QUESTION,
        prompts.C4_INSTRUCTION,
        *prompts.C1_INSTRUCTIONS.values(),
        *prompts.C1_TEMPLATES_RANK,
        *prompts.C2_TEMPLATES.values(),
        *prompts.C2_OPEN_INSTRUCTIONS.values(),
        *prompts.C3_FRAMES.values(),
        *prompts.C3_QUESTIONS.values(),
        *prompts.C3_INSTRUCTIONS.values(),
    ]


def _clip_vision():
    """The tiny CLIP vision tower shared by the Llava and LlavaNext builders (30 px images, 6 px patches)."""
    from transformers import CLIPVisionConfig

    return CLIPVisionConfig(
        hidden_size=32,
        image_size=30,
        patch_size=6,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        projection_dim=32,
    )


def build_llava(
    out: str | Path, seed: int = 0, hidden: int = 64, layers: int = 2, realistic_tokenizer: bool = False
) -> Path:
    """Tiny Llava (CLIP vision tower + llama text), stock classes.

    ``realistic_tokenizer`` trains a ~1,400-token BPE on the §K prompts (real-tokenizer prompt lengths).
    """
    from transformers import LlavaConfig, LlavaForConditionalGeneration, LlavaProcessor
    from transformers.models.llava.image_processing_pil_llava import LlavaImageProcessorPil

    tok = (
        _tokenizer(["<image>"], vocab_size=2000, corpus=prompt_corpus())
        if realistic_tokenizer
        else _tokenizer(["<image>"])
    )
    text = dict(_TEXT, hidden_size=hidden, num_hidden_layers=layers, intermediate_size=2 * hidden)
    config = LlavaConfig(
        vision_config=_clip_vision(),
        text_config=dict(model_type="llama", vocab_size=len(tok), **text),
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    _seeded(seed)
    model = LlavaForConditionalGeneration(config).eval()
    ip = LlavaImageProcessorPil(size={"shortest_edge": 30}, crop_size={"height": 30, "width": 30})
    proc = LlavaProcessor(
        image_processor=ip,
        tokenizer=tok,
        patch_size=6,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=_template("<image>"),
    )
    return _finish(model, proc, tok, Path(out), seed)


def build_llava_next(out: str | Path, seed: int = 0) -> Path:
    """Tiny LlavaNext (AnyRes tiling over small pinpoints), stock classes."""
    from transformers import (
        LlavaNextConfig,
        LlavaNextForConditionalGeneration,
        LlavaNextProcessor,
    )
    from transformers.models.llava_next.image_processing_pil_llava_next import LlavaNextImageProcessorPil

    tok = _tokenizer(["<image>"])
    pinpoints = [[30, 30], [30, 60], [60, 30], [60, 60]]
    config = LlavaNextConfig(
        vision_config=_clip_vision(),
        text_config=dict(model_type="llama", vocab_size=len(tok), **_TEXT),
        image_token_id=tok.convert_tokens_to_ids("<image>"),
        image_grid_pinpoints=pinpoints,
        vision_feature_select_strategy="default",
        vision_feature_layer=-1,
    )
    _seeded(seed)
    model = LlavaNextForConditionalGeneration(config).eval()
    ip = LlavaNextImageProcessorPil(
        size={"shortest_edge": 30}, crop_size={"height": 30, "width": 30}, image_grid_pinpoints=pinpoints
    )
    proc = LlavaNextProcessor(
        image_processor=ip,
        tokenizer=tok,
        patch_size=6,
        vision_feature_select_strategy="default",
        num_additional_image_tokens=1,
        chat_template=_template("<image>"),
    )
    return _finish(model, proc, tok, Path(out), seed)


def build_gemma3(out: str | Path, seed: int = 0) -> Path:
    """Tiny Gemma3 (SigLIP vision; the processor wants nested image lists), stock classes."""
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration, Gemma3Processor, SiglipVisionConfig
    from transformers.models.gemma3.image_processing_pil_gemma3 import Gemma3ImageProcessorPil

    specials = {
        "image_token": "<image_soft_token>",
        "boi_token": "<start_of_image>",
        "eoi_token": "<end_of_image>",
    }
    tok = _tokenizer(list(specials.values()), extra_attrs=specials)
    config = Gemma3Config(
        text_config=dict(
            vocab_size=len(tok), head_dim=16, query_pre_attn_scalar=16, sliding_window=64, **_TEXT
        ),
        vision_config=SiglipVisionConfig(
            hidden_size=32,
            image_size=32,
            patch_size=8,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
        ),
        mm_tokens_per_image=4,
        boi_token_index=tok.convert_tokens_to_ids("<start_of_image>"),
        eoi_token_index=tok.convert_tokens_to_ids("<end_of_image>"),
        image_token_index=tok.convert_tokens_to_ids("<image_soft_token>"),
    )
    _seeded(seed)
    model = Gemma3ForConditionalGeneration(config).eval()
    ip = Gemma3ImageProcessorPil(size={"height": 32, "width": 32})
    proc = Gemma3Processor(
        image_processor=ip, tokenizer=tok, image_seq_length=4, chat_template=_template("<start_of_image>")
    )
    return _finish(model, proc, tok, Path(out), seed)


def build_idefics3(out: str | Path, seed: int = 0) -> Path:
    """Tiny Idefics3 (no image splitting; nested image lists), stock classes."""
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration, Idefics3Processor
    from transformers.models.idefics3.configuration_idefics3 import Idefics3VisionConfig
    from transformers.models.idefics3.image_processing_pil_idefics3 import Idefics3ImageProcessorPil

    tok = _tokenizer(["<image>", "<fake_token_around_image>", "<global-img>", "<end_of_utterance>"])
    config = Idefics3Config(
        vision_config=Idefics3VisionConfig(
            hidden_size=32,
            image_size=32,
            patch_size=8,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
        ),
        text_config=dict(model_type="llama", vocab_size=len(tok), **_TEXT),
        scale_factor=2,
        image_token_id=tok.convert_tokens_to_ids("<image>"),
    )
    _seeded(seed)
    model = Idefics3ForConditionalGeneration(config).eval()
    ip = Idefics3ImageProcessorPil(
        size={"longest_edge": 32}, max_image_size={"longest_edge": 32}, do_image_splitting=False
    )
    proc = Idefics3Processor(
        image_processor=ip, tokenizer=tok, image_seq_len=4, chat_template=_template("<image>")
    )
    return _finish(model, proc, tok, Path(out), seed)


def _qwen_shim():
    from transformers import AutoProcessor, Qwen2_5_VLConfig, Qwen2_5_VLProcessor

    class ImageOnlyQwen2_5_VLProcessor(Qwen2_5_VLProcessor):
        """Qwen2.5-VL processor without the video processor (torchvision is not importable here)."""

        def __init__(self, image_processor=None, tokenizer=None, chat_template=None, **kwargs):
            kwargs.pop("video_processor", None)
            super().__init__(
                image_processor=image_processor,
                tokenizer=tokenizer,
                video_processor=None,
                chat_template=chat_template,
                **kwargs,
            )

    AutoProcessor.register(Qwen2_5_VLConfig, ImageOnlyQwen2_5_VLProcessor, exist_ok=True)
    return ImageOnlyQwen2_5_VLProcessor


def register_qwen_shim() -> None:
    """Register the image-only Qwen2.5-VL processor with ``AutoProcessor`` (needed to reload the folder)."""
    _qwen_shim()


def build_qwen2_5_vl(
    out: str | Path, seed: int = 0, text: dict | None = None, vision: dict | None = None
) -> Path:
    """Tiny Qwen2.5-VL with the image-only processor shim (``text``/``vision`` override config values)."""
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration
    from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

    shim = _qwen_shim()
    specials = ["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"]
    tok = _tokenizer(specials, extra_attrs=None)
    text_cfg = dict(
        vocab_size=len(tok),
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3], "rope_theta": 1e4},
        **_TEXT,
    )
    text_cfg.update(text or {})
    vision_cfg = dict(
        depth=2,
        hidden_size=32,
        out_hidden_size=text_cfg["hidden_size"],
        intermediate_size=64,
        num_heads=2,
        window_size=56,
        fullatt_block_indexes=[1],
        patch_size=14,
        spatial_merge_size=2,
        temporal_patch_size=2,
    )
    vision_cfg.update(vision or {})
    config = Qwen2_5_VLConfig(
        text_config=text_cfg,
        vision_config=vision_cfg,
        image_token_id=tok.convert_tokens_to_ids("<|image_pad|>"),
        video_token_id=tok.convert_tokens_to_ids("<|video_pad|>"),
        vision_start_token_id=tok.convert_tokens_to_ids("<|vision_start|>"),
        vision_end_token_id=tok.convert_tokens_to_ids("<|vision_end|>"),
    )
    _seeded(seed)
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    ip = Qwen2VLImageProcessorPil(min_pixels=28 * 28 * 4, max_pixels=28 * 28 * 16)
    proc = shim(
        image_processor=ip,
        tokenizer=tok,
        chat_template=_template("<|vision_start|><|image_pad|><|vision_end|>"),
    )
    return _finish(model, proc, tok, Path(out), seed)


BUILDERS = {
    "llava": build_llava,
    "llava_next": build_llava_next,
    "gemma3": build_gemma3,
    "idefics3": build_idefics3,
    "qwen2_5_vl": build_qwen2_5_vl,
}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in BUILDERS:
        sys.exit(f"usage: python -m builder.tiny_vlms {{{','.join(BUILDERS)}}} OUT_DIR")
    print(BUILDERS[sys.argv[1]](sys.argv[2]))


# ------------------------------------------------------------------------- a tiny Hub-shaped dataset


def _png(size: tuple[int, int], color: tuple[int, int, int]) -> bytes:
    import io

    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, color)
    ImageDraw.Draw(img).rectangle(
        [size[0] // 4, size[1] // 4, size[0] // 2, size[1] // 2], fill=(255 - color[0], 90, 30)
    )
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def make_question_folder(
    root: str | Path, per_task: int = 3, with_refs: bool = True, corrupt_qids: tuple[str, ...] = ()
) -> tuple[Path, Path | None]:
    """Write ``root/ds/data/lite/test-00000-of-00001.parquet`` with QUESTION_SCHEMA rows (several answer forms)
    and, with ``with_refs``, source roots + ``SOURCES.toml`` for ``image_ref`` rows (a CUB file, a TreeOfLife
    image file and a TreeOfLife BGR parquet shard). Returns ``(dataset folder, SOURCES.toml or None)``."""
    import hashlib

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from biovqa import prompts
    from biovqa.schema import QUESTION_SCHEMA, empty_record

    root = Path(root)
    rows = []

    def add(task, form, question, instruction, answer, i, options=(), image=None, ref=None, family=""):
        rec = empty_record()
        component = task.split(".")[0]
        rec.update(
            qid=f"{task}/synth/{i:04d}",
            component=component,
            task=task,
            family=family or task.split(".")[1],
            source="synth",
            question=question,
            instruction=instruction,
            options=list(options),
            answer=answer,
            answer_form=form,
        )
        if image is not None:
            rec["image"] = {"bytes": image, "path": None}
        rec["image_ref"] = ref
        if component == "c3":
            rec["c3"] = {
                "corpus": "synth",
                "counts": [i % 5],
                "gold_value": float(i % 5),
                "object_type": "blob",
            }
        if component == "c4":
            rec["c4"] = {"catalog": "synth", "same": bool(i % 2), "condition": "random"}
        rows.append(rec)

    colors = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (200, 200, 30), (90, 90, 90)]
    for i in range(per_task):
        c = colors[i % len(colors)]
        add(
            "c2.morphology",
            "mcq_lettered",
            prompts.c2_question(
                "attr_bare_value", part="wing", property="color", options=["red", "green", "blue"]
            ),
            prompts.c2_instruction("attr_bare_value"),
            "red",
            i,
            options=["red", "green", "blue"],
            image=_png((40 + 8 * i, 32 + 4 * i), c),
            family="attr_bare_value",
        )
        add(
            "c3.counting",
            "integer",
            prompts.c3_question("counting", animals="blobs"),
            prompts.c3_instruction("counting"),
            str(i % 5),
            i,
            image=_png((48, 48 + 6 * i), c),
        )
        add(
            "c4.random",
            "yes_no",
            prompts.C4_QUESTION,
            prompts.C4_INSTRUCTION,
            "Yes" if i % 2 else "No",
            i,
            image=_png((64, 32), c),
        )
        add(
            "c1.phylum",
            "open_text",
            prompts.c1_question("phylum", "animal", i % 5),
            prompts.c1_instruction("phylum"),
            ["Chordata", "Arthropoda", "Chordata"][i % 3],
            i,
            image=_png((36, 36), c),
        )
    for qid in corrupt_qids:
        for r in rows:
            if r["qid"] == qid:
                r["image"] = {"bytes": b"\x89PNG not really an image", "path": None}

    sources_toml = None
    if with_refs:
        src = root / "sources"
        cub_file = src / "cub" / "CUB_200_2011" / "images" / "001.Bird" / "Bird_0001.jpg"
        cub_file.parent.mkdir(parents=True, exist_ok=True)
        from PIL import Image

        Image.new("RGB", (50, 40), (120, 60, 10)).save(cub_file, format="JPEG")
        tol_file = src / "treeoflife" / "images" / "uuid-file-1.png"
        tol_file.parent.mkdir(parents=True, exist_ok=True)
        tol_file.write_bytes(_png((44, 30), (10, 120, 60)))
        bgr = np.full((20, 30, 3), (40, 80, 160), dtype=np.uint8).tobytes()
        shard_dir = src / "treeoflife" / "shards"
        shard_dir.mkdir(parents=True, exist_ok=True)
        pq.write_table(
            pa.table({"uuid": ["uuid-shard-1"], "image": [bgr], "resized_size": [[20, 30]]}),
            shard_dir / "data_0.parquet",
        )

        def ref(source, rid, data):
            return {
                "source": source,
                "id": rid,
                "sha256": hashlib.sha256(data).hexdigest(),
                "width": 0,
                "height": 0,
            }

        add(
            "c2.morphology",
            "mcq_lettered",
            prompts.c2_question(
                "attr_bare_value", part="wing", property="color", options=["brown", "green", "blue"]
            ),
            prompts.c2_instruction("attr_bare_value"),
            "brown",
            900,
            options=["brown", "green", "blue"],
            ref=ref("cub", "001.Bird/Bird_0001.jpg", cub_file.read_bytes()),
            family="attr_bare_value",
        )
        add(
            "c1.phylum",
            "open_text",
            prompts.c1_question("phylum", "plant", 1),
            prompts.c1_instruction("phylum"),
            "Tracheophyta",
            900,
            ref=ref("treeoflife", "uuid-file-1", tol_file.read_bytes()),
        )
        add(
            "c1.phylum",
            "open_text",
            prompts.c1_question("phylum", "animal", 2),
            prompts.c1_instruction("phylum"),
            "Chordata",
            901,
            ref=ref("treeoflife", "uuid-shard-1", bgr),
        )
        sources_toml = src / "SOURCES.toml"
        sources_toml.write_text('[sources]\ncub = "cub"\ntreeoflife = "treeoflife"\n')

    folder = root / "ds"
    (folder / "data" / "lite").mkdir(parents=True, exist_ok=True)
    pq.write_table(
        pa.Table.from_pylist(rows, schema=QUESTION_SCHEMA),
        folder / "data" / "lite" / "test-00000-of-00001.parquet",
    )
    return folder, sources_toml
