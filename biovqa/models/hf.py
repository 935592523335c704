"""Hugging Face transformers backend: ``AutoModelForImageTextToText`` + ``AutoProcessor`` + chat template.

Greedy decoding, per-task ``max_new_tokens`` (the runner never mixes caps in one batch), left padding,
bf16 on GPU / fp32 on CPU. Images are passed as one list per sample (``[[img], [img], …]``), which is
what Gemma3/Idefics3/Mllama require and what Llava/LlavaNext/Qwen-VL processors flatten themselves.
Blind mode withholds the image: same words, the image part is removed from the messages and no pixels
are sent.

Weights are looked up locally first (a folder, or the Hub cache with ``local_files_only=True``);
when they are absent :class:`ModelNotAvailable` says where we looked and how to fetch them; nothing
retries the network. ``trust_remote_code`` is only passed when the user asks for it.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from biovqa.models.base import Generation, GenerationRequest, ModelNotAvailable


def resolve_model_path(model: str, revision: str | None = None) -> tuple[Path, str]:
    """``(local folder, revision)`` of a model given as a folder or a Hub id present in the local cache.

    The revision is the Hub snapshot commit, or for a plain folder a fingerprint of its config and
    weight files (name, size, first and last 64 KiB).
    """
    path = Path(model).expanduser()
    if path.is_dir():
        return path.resolve(), revision or folder_fingerprint(path)
    if path.is_absolute() or model.startswith((".", "~")) or model.count("/") != 1:
        raise ModelNotAvailable(f"{model}: no such model folder (and not a Hub id of the form owner/name)")
    from huggingface_hub import constants, snapshot_download

    try:
        local = snapshot_download(model, revision=revision, local_files_only=True)
    except Exception as exc:
        raise ModelNotAvailable(
            f"{model}{'@' + revision if revision else ''}: weights are not in the local Hugging Face cache "
            f"({constants.HF_HUB_CACHE}; {type(exc).__name__}). Fetch them first with "
            f"`hf download {model}{' --revision ' + revision if revision else ''}` on a machine with network "
            "access (set HF_HOME/HF_HUB_CACHE to share the cache), or pass a local folder to --model."
        ) from None
    local = Path(local)
    return local, local.name  # snapshots/<commit>


def folder_fingerprint(path: Path) -> str:
    """A cheap content fingerprint of a model folder (config + weights; size and head/tail bytes)."""
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if not f.is_file() or f.name.startswith("."):
            continue
        if f.suffix in (".json", ".jinja", ".txt", ".model"):
            h.update(f.name.encode() + b"\0" + f.read_bytes())
        elif f.suffix in (".safetensors", ".bin"):
            size = f.stat().st_size
            h.update(f"{f.name}\0{size}\0".encode())
            with open(f, "rb") as fh:
                h.update(fh.read(65536))
                if size > 65536:
                    fh.seek(max(size - 65536, 65536))
                    h.update(fh.read())
    return "local-" + h.hexdigest()[:16]


def _torch_dtype(name: str | None, on_gpu: bool):
    import torch

    if name in (None, "auto"):
        return torch.bfloat16 if on_gpu else torch.float32
    table = {
        "bfloat16": torch.bfloat16,
        "bf16": torch.bfloat16,
        "float16": torch.float16,
        "fp16": torch.float16,
    }
    table |= {"float32": torch.float32, "fp32": torch.float32}
    if name not in table:
        raise ValueError(f"unknown dtype {name!r}; use bfloat16, float16 or float32")
    return table[name]


class HFBackend:
    """A transformers VLM answering batches of requests greedily."""

    name = "hf"

    def __init__(
        self,
        model: str,
        revision: str | None = None,
        dtype: str | None = None,
        device: str | None = None,
        trust_remote_code: bool = False,
        processor_kwargs: dict | None = None,
        attn_implementation: str | None = None,
    ):
        import torch
        from transformers import AutoModelForImageTextToText, AutoProcessor

        self.model_id = model
        self.path, self.revision = resolve_model_path(model, revision)
        self.device = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
        self.dtype = _torch_dtype(dtype, self.device.type == "cuda")
        self.trust_remote_code = trust_remote_code
        common = {"trust_remote_code": trust_remote_code, "local_files_only": True}
        try:
            self.processor = AutoProcessor.from_pretrained(self.path, **common, **(processor_kwargs or {}))
        except OSError as exc:
            raise ModelNotAvailable(
                f"{model}: processor files could not be loaded from {self.path}: {exc}"
            ) from None
        except ValueError as exc:
            if "trust_remote_code" in str(exc) and not trust_remote_code:
                raise ModelNotAvailable(
                    f"{model}: this checkpoint ships custom code; rerun with --trust-remote-code if you trust it"
                ) from None
            raise
        if not hasattr(self.processor, "image_processor"):
            raise ModelNotAvailable(
                f"{model}: AutoProcessor returned {type(self.processor).__name__}, not a multimodal processor. "
                "The processor class in processor_config.json is not registered in this process (e.g. a custom "
                "image-only Qwen processor, or a stock one that needs torchvision)."
            )
        kwargs = dict(common, dtype=self.dtype)
        if attn_implementation:
            kwargs["attn_implementation"] = attn_implementation
        try:
            self.model = AutoModelForImageTextToText.from_pretrained(self.path, **kwargs)
        except ValueError as exc:
            if not (trust_remote_code and "Unrecognized configuration class" in str(exc)):
                raise
            from transformers import AutoModelForCausalLM  # custom-code VLMs such as Phi-3.5-vision

            self.model = AutoModelForCausalLM.from_pretrained(self.path, **kwargs)
        self._setup()

    def _setup(self) -> None:
        self.tokenizer = self.processor.tokenizer
        self.tokenizer.padding_side = "left"
        if self.tokenizer.pad_token_id is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.model.to(self.device).eval()
        self.eos_ids = self._eos_ids()

    @classmethod
    def from_objects(
        cls, model, processor, model_id: str = "in-memory", revision: str = "in-memory"
    ) -> HFBackend:
        """A backend around an already-built model and processor (benchmarks of random-init models)."""
        self = cls.__new__(cls)
        self.model_id, self.path, self.revision = model_id, None, revision
        self.model, self.processor, self.trust_remote_code = model, processor, False
        self.device = next(model.parameters()).device
        self.dtype = next(model.parameters()).dtype
        self._setup()
        return self

    def _eos_ids(self) -> set[int]:
        ids = self.model.generation_config.eos_token_id
        ids = ids if isinstance(ids, list) else [ids]
        out = {i for i in ids if i is not None}
        if self.tokenizer.eos_token_id is not None:
            out.add(self.tokenizer.eos_token_id)
        return out

    def describe(self) -> dict:
        """Settings that decide the outputs (recorded in run.json and in the cache key)."""
        return {
            "backend": self.name,
            "model": self.model_id,
            "revision": self.revision,
            "dtype": str(self.dtype).replace("torch.", ""),
            "device_type": self.device.type,
            "attn_implementation": getattr(self.model.config, "_attn_implementation", None),
            "model_type": self.model.config.model_type,
        }

    def _prompt(self, request: GenerationRequest) -> str:
        return self.processor.apply_chat_template(
            request.messages, add_generation_prompt=True, tokenize=False
        )

    def sort_key(self, request: GenerationRequest) -> tuple:
        """Length proxy for batching (prompt characters, then image area): similar lengths, less padding."""
        area = request.image.width * request.image.height if request.image is not None else 0
        return (len(self._prompt(request)), area)

    def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        """Greedy answers for a batch (all with the same ``max_new_tokens``); a failing item is isolated."""
        if not requests:
            return []
        try:
            return self._generate(requests)
        except Exception as exc:
            if len(requests) == 1:
                return [Generation(None, error=f"generation failed: {type(exc).__name__}: {exc}")]
            return [g for r in requests for g in self.generate([r])]

    def _generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        import torch

        caps = {r.max_new_tokens for r in requests}
        if len(caps) != 1:
            raise ValueError(f"one batch must share max_new_tokens, got {sorted(caps)}")
        texts = [self._prompt(r) for r in requests]
        with_images = [r.image is not None for r in requests]
        if any(with_images) and not all(with_images):
            raise ValueError("a batch mixes items with and without images")
        images = [[r.image] for r in requests] if all(with_images) else None
        inputs = self.processor(text=texts, images=images, return_tensors="pt", padding=True)
        inputs = {k: (v.to(self.device) if hasattr(v, "to") else v) for k, v in inputs.items()}
        for k, v in inputs.items():
            if hasattr(v, "is_floating_point") and v.is_floating_point():
                inputs[k] = v.to(self.dtype)
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = self.model.generate(
                **inputs,
                max_new_tokens=caps.pop(),
                do_sample=False,
                num_beams=1,
                temperature=None,
                top_p=None,
                top_k=None,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        elapsed = time.perf_counter() - t0
        prompt_len = inputs["input_ids"].shape[1]
        new = out[:, prompt_len:].tolist()
        mask = inputs["attention_mask"].sum(dim=1).tolist()
        gens = []
        for row, n_in in zip(new, mask, strict=True):
            cut = len(row)
            for i, tok in enumerate(row):
                if tok in self.eos_ids:
                    cut = i + 1
                    break
            text = self.tokenizer.decode(row[:cut], skip_special_tokens=True).strip()
            gens.append(Generation(text, tokens_in=int(n_in), tokens_out=cut, extra={"batch_s": elapsed}))
        return gens
