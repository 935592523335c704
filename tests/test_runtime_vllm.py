"""vLLM backend: message conversion runs everywhere; the engine itself only where vllm is installed (CUDA)."""

from __future__ import annotations

import importlib.util

import pytest
from PIL import Image

from biovqa import prompts
from biovqa.models.base import GenerationRequest, ModelNotAvailable
from biovqa.models.vllm_backend import VLLMBackend, to_vllm_messages

ROW = {
    "qid": "c4.random/x/1",
    "task": "c4.random",
    "component": "c4",
    "question": "Same?",
    "instruction": "Yes or No.",
}


def test_messages_carry_the_image_as_a_data_url_in_place_of_the_placeholder():
    msgs = prompts.build_messages(ROW, "gemma_system")
    req = GenerationRequest(ROW["qid"], ROW, msgs, Image.new("RGB", (8, 8)), 16)
    out = to_vllm_messages(req)
    parts = out[-1]["content"]
    assert parts[0]["type"] == "image_url" and parts[0]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )
    assert parts[1] == {"type": "text", "text": "Same?\nYes or No."}
    blind = to_vllm_messages(
        GenerationRequest(ROW["qid"], ROW, prompts.build_messages(ROW, None, with_image=False), None, 16)
    )
    assert [p["type"] for p in blind[-1]["content"]] == ["text"]


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed")
def test_missing_vllm_is_a_clear_error():
    with pytest.raises(ModelNotAvailable, match=r"bio-vqa\[vllm\]"):
        VLLMBackend("someowner/model")
