"""The result every parser returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed reply: ``ok=False`` is a recorded failure (``status`` says why), never a guess."""

    value: Any
    ok: bool
    status: str = "ok"
    detail: str = ""

    @classmethod
    def fail(cls, status: str, detail: str = "") -> Parsed:
        return cls(None, False, status, detail)
