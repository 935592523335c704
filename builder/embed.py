"""Pluggable image embedder for C4 pair difficulty (§3.4: DINOv2 similarity).

``get_embedder("auto")`` uses DINOv2 through transformers (``AutoModel`` + ``AutoImageProcessor``,
``facebook/dinov2-base``, CLS token) when its weights are already in the local Hugging Face cache,
and otherwise the deterministic fallback :class:`ThumbHistEmbedder`. The chosen embedder's ``name``
is recorded in every C4 row (``c4.embedder``) so the dataset card can say which one set difficulty.
Embeddings are L2-normalised; similarity is the dot product (cosine).
"""

from __future__ import annotations

import numpy as np
from PIL import Image

DINOV2 = "facebook/dinov2-base"


class ThumbHistEmbedder:
    """Fallback: a 16×16 RGB thumbnail (768 values, centred) + a 4×4×4 RGB colour histogram (64), L2-normalised.

    Crude but deterministic and appearance-based (layout + colour), which is what the easy/hard
    conditions need; it is NOT DINOv2 and the card must say so.
    """

    name = "fallback:thumb16-rgbhist64-v1"

    def embed_image(self, img: Image.Image) -> np.ndarray:
        """One L2-normalised float64 vector."""
        img = img.convert("RGB")
        thumb = np.asarray(img.resize((16, 16), Image.Resampling.BILINEAR), dtype=np.float64).ravel() / 255.0
        thumb -= thumb.mean()
        q = np.asarray(img.resize((64, 64), Image.Resampling.BILINEAR), dtype=np.int64) // 64
        hist = np.bincount((q[..., 0] * 16 + q[..., 1] * 4 + q[..., 2]).ravel(), minlength=64).astype(
            np.float64
        )
        hist /= hist.sum()
        vec = np.concatenate(
            [thumb / max(np.linalg.norm(thumb), 1e-12), hist / max(np.linalg.norm(hist), 1e-12)]
        )
        return vec / np.linalg.norm(vec)

    def embed_paths(self, paths: list[str]) -> np.ndarray:
        """``(n, d)`` embeddings of image files."""
        from builder.render.canvas import load_rgb

        return (
            np.stack([self.embed_image(load_rgb(p, (64, 64))) for p in paths])
            if paths
            else np.zeros((0, 832))
        )


class DinoV2Embedder:
    """DINOv2 CLS embeddings through transformers, from local files only."""

    def __init__(self, model_id: str = DINOV2, batch_size: int = 16):
        from transformers import AutoImageProcessor, AutoModel

        self.name = model_id
        self.processor = AutoImageProcessor.from_pretrained(model_id, local_files_only=True)
        self.model = AutoModel.from_pretrained(model_id, local_files_only=True).eval()
        self.batch_size = batch_size

    def embed_paths(self, paths: list[str]) -> np.ndarray:
        import torch

        from builder.render.canvas import load_rgb

        out = []
        for i in range(0, len(paths), self.batch_size):
            imgs = [load_rgb(p, (256, 256)) for p in paths[i : i + self.batch_size]]
            with torch.no_grad():
                inputs = self.processor(images=imgs, return_tensors="pt")
                cls = self.model(**inputs).last_hidden_state[:, 0].double().numpy()
            out.append(cls / np.linalg.norm(cls, axis=1, keepdims=True))
        return np.concatenate(out) if out else np.zeros((0, 768))


def dinov2_available(model_id: str = DINOV2) -> bool:
    """Whether DINOv2 weights are in the local HF cache (cheap: no transformers import)."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(model_id, "config.json"), str)
    except Exception:
        return False


def get_embedder(kind: str = "auto"):
    """``"auto"`` (DINOv2 if cached locally, else fallback), ``"dinov2"`` (must load) or ``"fallback"``."""
    if kind == "fallback":
        return ThumbHistEmbedder()
    if kind == "dinov2" or (kind == "auto" and dinov2_available()):
        try:
            return DinoV2Embedder()
        except Exception:
            if kind == "dinov2":
                raise
    if kind not in ("auto", "dinov2"):
        raise ValueError(f"unknown embedder {kind!r}: use auto, dinov2 or fallback")
    return ThumbHistEmbedder()
