"""Model backends: transformers (``hf``), vLLM (optional extra), image-blind baselines, and the registry."""

from biovqa.models.base import Generation, GenerationRequest, ModelNotAvailable

__all__ = ["Generation", "GenerationRequest", "ModelNotAvailable"]
