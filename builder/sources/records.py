"""Normalised records the C3/C4 source readers yield (one image with its annotated objects)."""

from __future__ import annotations

from dataclasses import dataclass, field

from biovqa.prompts import VIEWPOINTS  # the ten labels of the C3 viewpoint task (§K.3)


@dataclass(frozen=True)
class Obj:
    """One annotated object. ``box`` is ``[x, y, w, h]`` (top-left), absolute pixels unless ``normalized``."""

    category: str
    box: tuple[float, float, float, float]
    normalized: bool = False
    individual: str | None = None  # re-ID name; None when unknown ("____")
    viewpoint: str | None = None  # one of VIEWPOINTS, or None when absent / outside the ten
    ann_id: str = ""


@dataclass(frozen=True)
class ImageRecord:
    """One source image: stable id, path relative to the source root, its objects (complete list)."""

    source: str
    id: str
    path: str
    objects: tuple[Obj, ...]
    width: int | None = None  # as declared by the annotation file (checked against the pixels)
    height: int | None = None


@dataclass
class ReadResult:
    """What a reader returns: usable records plus exclusions (id, reason) it decided on itself."""

    records: list[ImageRecord] = field(default_factory=list)
    excluded: list[tuple[str, str]] = field(default_factory=list)


_VIEWPOINT_ALIASES = {"top": "up", "bottom": "down"}


def normalize_viewpoint(value: object) -> str | None:
    """Map a source viewpoint string to one of :data:`VIEWPOINTS`; ``None`` when absent or outside them.

    Separators are dropped (``front_left`` → ``frontleft``); ``top``/``bottom`` map to ``up``/``down``
    as in WildlifeDatasets. Compound labels such as ``upleft`` have no place among the ten and give None.
    """
    if not isinstance(value, str):
        return None
    v = value.strip().lower().replace("_", "").replace("-", "").replace(" ", "")
    v = _VIEWPOINT_ALIASES.get(v, v)
    return v if v in VIEWPOINTS else None
