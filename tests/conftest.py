"""Test-wide settings: never touch the network or the user's caches."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

_HF_HOME = tempfile.mkdtemp(prefix="biovqa-hf-home-")
os.environ["HF_HOME"] = _HF_HOME
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_EVALUATE_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SHARED_SOURCES = SHARED / "sources"
PAPER = SHARED / "reference" / "bio-vqa-paper.txt"


@pytest.fixture
def shared_sources() -> Path:
    """The real source excerpts beside the checkout; skips when absent (e.g. outside this workplace)."""
    if not SHARED_SOURCES.is_dir():
        pytest.skip("../shared/sources is not present")
    return SHARED_SOURCES
