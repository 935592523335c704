"""What every backend takes and returns (kept free of torch so ``import biovqa`` stays cheap)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


class ModelNotAvailable(RuntimeError):
    """The weights are not on this machine (offline); the message says where we looked and how to fetch them."""


@dataclass
class GenerationRequest:
    """One item to answer: its row, chat messages (image part included unless blind) and decoded image."""

    qid: str
    row: dict
    messages: list[dict]
    image: Any  # PIL.Image.Image | None (None in blind mode)
    max_new_tokens: int


@dataclass
class Generation:
    """A backend's reply to one request."""

    text: str | None
    tokens_in: int = 0
    tokens_out: int = 0
    error: str | None = None
    extra: dict = field(default_factory=dict)


class Backend(Protocol):
    """A model that answers batches of requests greedily (same output whatever the batch composition)."""

    name: str

    def describe(self) -> dict: ...

    def prompt_length(self, request: GenerationRequest) -> int: ...

    def generate(self, requests: list[GenerationRequest]) -> list[Generation]: ...
