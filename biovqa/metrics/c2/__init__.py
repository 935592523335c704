"""C2 (bird attributes) scoring: cags over six similarity kernels plus naming (§C.4-C.5, §F, §K.5).

``score_task`` follows Contract 4; ``score_items`` + ``reduce`` are the additive halves (statistics of
shards merge with :func:`biovqa.metrics.common.merge_stats`).
"""

from __future__ import annotations

from .score import (
    CATEGORY_OF_FAMILY,
    build_kernels,
    category_of,
    open_answer,
    reduce,
    score_items,
    score_task,
)

__all__ = [
    "CATEGORY_OF_FAMILY",
    "build_kernels",
    "category_of",
    "open_answer",
    "reduce",
    "score_items",
    "score_task",
]
