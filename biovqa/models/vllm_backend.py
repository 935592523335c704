"""vLLM backend (optional extra ``bio-vqa[vllm]``, CUDA only): same prompts, greedy decoding.

Never imported unless ``--backend vllm`` is chosen. vLLM pins its own torch/transformers, so install it
in a separate environment (ecosystem-probe §5). Each data-parallel rank holds one engine; inside a rank
``tensor_parallel_size`` splits a large model over GPUs. Messages are the same HF chat messages the
transformers backend uses; the image goes in as a PNG data URL (accepted by every vLLM chat front end).
"""

from __future__ import annotations

import base64
import io

from biovqa.models.base import Generation, GenerationRequest, ModelNotAvailable


def _image_part(image) -> dict:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()},
    }


def to_vllm_messages(request: GenerationRequest) -> list[dict]:
    """The request's HF messages with the image placeholder replaced by the image itself (data URL)."""
    out = []
    for m in request.messages:
        content = []
        for part in m["content"]:
            if part.get("type") == "image":
                if request.image is not None:
                    content.append(_image_part(request.image))
            else:
                content.append(part)
        out.append({"role": m["role"], "content": content})
    return out


class VLLMBackend:
    """A vLLM engine answering batches greedily (temperature 0, one sample)."""

    name = "vllm"

    def __init__(
        self,
        model: str,
        revision: str | None = None,
        dtype: str | None = None,
        tensor_parallel_size: int = 1,
        trust_remote_code: bool = False,
        max_model_len: int | None = 8192,
    ):
        try:
            import vllm
        except ImportError:
            raise ModelNotAvailable(
                "backend 'vllm' needs the optional extra: pip install 'bio-vqa[vllm]' (CUDA only, own environment)"
            ) from None
        from biovqa.models.hf import resolve_model_path

        self.model_id = model
        self.path, self.revision = resolve_model_path(model, revision)
        self.dtype = dtype or "bfloat16"
        self.tensor_parallel_size = tensor_parallel_size
        self.vllm_version = vllm.__version__
        self.llm = vllm.LLM(
            model=str(self.path),
            dtype=self.dtype,
            tensor_parallel_size=tensor_parallel_size,
            trust_remote_code=trust_remote_code,
            limit_mm_per_prompt={"image": 1},
            max_model_len=max_model_len,
            seed=42,
        )
        self._sampling = vllm.SamplingParams

    def describe(self) -> dict:
        """Settings recorded in run.json and the cache key."""
        return {
            "backend": self.name,
            "model": self.model_id,
            "revision": self.revision,
            "dtype": self.dtype,
            "tensor_parallel_size": self.tensor_parallel_size,
            "vllm": self.vllm_version,
        }

    def sort_key(self, request: GenerationRequest) -> tuple:
        return (0,)  # vLLM schedules by itself

    def generate(self, requests: list[GenerationRequest]) -> list[Generation]:
        """Greedy answers for a batch sharing one ``max_new_tokens``."""
        if not requests:
            return []
        params = self._sampling(temperature=0.0, max_tokens=requests[0].max_new_tokens, n=1)
        try:
            outs = self.llm.chat([to_vllm_messages(r) for r in requests], params, use_tqdm=False)
        except Exception as exc:
            if len(requests) == 1:
                return [Generation(None, error=f"generation failed: {type(exc).__name__}: {exc}")]
            return [g for r in requests for g in self.generate([r])]
        gens = []
        for o in outs:
            c = o.outputs[0]
            gens.append(
                Generation(
                    c.text.strip(), tokens_in=len(o.prompt_token_ids or []), tokens_out=len(c.token_ids)
                )
            )
        return gens
