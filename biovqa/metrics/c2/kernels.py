"""The C2 similarity kernels (§C.5, eqs. 13-18) and their dispatch by family/property.

Every kernel takes two *normalised* answer strings (see :func:`biovqa.parse.mcq.normalize`) and
returns a similarity in [0, 1]. :class:`KernelSet` bundles them with caches, so scoring 824K items
computes each distinct (kernel, context, pair) only once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import lru_cache
from importlib import resources as _res

from .anatomy import AnatomyLayout, default_layout, norm_part
from .color import ColorKernel
from .naming import common_name_similarity, genus_similarity, scientific_similarity

#: Kernel names a row's ``c2.kernel`` may carry.
KERNELS = ("color", "ordinal", "pattern", "anatomy", "pair", "set", "naming", "scientific", "genus", "exact")

#: Family -> kernel, for families whose kernel does not depend on the property.
FAMILY_KERNEL = {
    "attr_group_value": "pair",
    "marker_localization": "anatomy",
    "visibility_partset": "set",
    "visibility_side": "set",
    "category_mcq": "naming",
    "open_common_name": "naming",
    "open_kind_of": "naming",
    "open_scientific_name": "scientific",
    "open_genus": "genus",
}

PAIR_ALPHA = 0.5
#: Weight of anatomy proximity inside the region term g of eq. 17 (the rest is the property match).
#: The paper says g "blends" the two without giving the weight; 0.5 is our choice.
REGION_ANATOMY_WEIGHT = 0.5

_PAREN = re.compile(r"\s*\([^)]*\)")


@lru_cache(maxsize=1)
def default_scales() -> dict:
    """The shipped ordinal scales and patterned values (``resources/c2/value_scales.json``)."""
    text = _res.files("biovqa").joinpath("resources/c2/value_scales.json").read_text(encoding="utf-8")
    return json.loads(text)


def attribute_key(part: str | None, prop: str | None) -> str:
    """``("bill", "length")`` -> ``"bill_length"``; ``(None, "size")`` -> ``"size"``."""
    return "_".join(x for x in (norm_part(part or ""), norm_part(prop or "")) if x)


def property_kernel(part: str | None, prop: str | None, scales: dict | None = None) -> str:
    """The value kernel of an attribute: colour, ordinal (size, bill length), pattern, else exact."""
    scales = scales or default_scales()
    p = norm_part(prop or "")
    if p == "color":
        return "color"
    if p == "pattern":
        return "pattern"
    if attribute_key(part, prop) in scales["ordinal"] or p in scales["ordinal"]:
        return "ordinal"
    return "exact"


def kernel_for(
    family: str, part: str | None = None, prop: str | None = None, declared: str | None = None
) -> str:
    """The kernel of an item: the row's declared ``c2.kernel`` if set, else from family + property."""
    if declared:
        if declared not in KERNELS:
            raise ValueError(f"unknown C2 kernel {declared!r} (known: {', '.join(KERNELS)})")
        return declared
    if family in FAMILY_KERNEL:
        return FAMILY_KERNEL[family]
    if family == "attr_bare_value":
        return property_kernel(part, prop)
    raise ValueError(f"unknown C2 family {family!r}")


@lru_cache(maxsize=65536)
def _strip_value(v: str) -> str:
    return " ".join(_PAREN.sub("", v).replace("_", " ").split()).lower()


class OrdinalScale:
    """Eq. 14: ``1 - |rank(v1) - rank(v2)| / rank_max`` on one ordered scale."""

    def __init__(self, ranks: list[list[str]]):
        self.rank_max = max(len(ranks) - 1, 1)
        self.rank = {alias: i for i, aliases in enumerate(ranks) for alias in aliases}

    def rank_of(self, value: str) -> int | None:
        return self.rank.get(_strip_value(value))

    def __call__(self, v1: str, v2: str) -> float:
        r1, r2 = self.rank_of(v1), self.rank_of(v2)
        if r1 is None or r2 is None:
            return float(_strip_value(v1) == _strip_value(v2))
        return 1.0 - abs(r1 - r2) / self.rank_max


def pattern_similarity(v1: str, v2: str, patterned: frozenset[str]) -> float:
    """Eq. 15: 1 if equal, 0.5 if both patterned (spotted/striped/multicolored), else 0."""
    a, b = _strip_value(v1).replace("-", ""), _strip_value(v2).replace("-", "")
    if a == b:
        return 1.0
    return 0.5 if a in patterned and b in patterned else 0.0


def soft_jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """Eq. 18 with the exact-match element kernel; two empty sets are identical (1.0)."""
    if a == b:
        return 1.0
    inter = len(a & b)
    denom = len(a) + len(b) - inter
    return inter / denom if denom else 0.0


SIDE_SETS = {
    "left": frozenset({"left"}),
    "right": frozenset({"right"}),
    "both": frozenset({"left", "right"}),
    "none": frozenset(),
}


def option_set(text: str, family: str, options: tuple[str, ...]) -> frozenset[str]:
    """The set an option stands for: side labels, ``None`` = {}, ``All three`` = the listed parts."""
    t = text.strip().lower()
    if family == "visibility_side" and t in SIDE_SETS:
        return SIDE_SETS[t]
    if t == "none":
        return frozenset()
    if t in ("all three", "all", "all of them", "all of the above"):
        return frozenset(o.strip().lower() for o in options if o.strip().lower() not in _SPECIAL_SET_OPTIONS)
    return frozenset({t})


_SPECIAL_SET_OPTIONS = frozenset({"none", "all three", "all", "all of them", "all of the above"})


@lru_cache(maxsize=65536)
def split_pair(text: str) -> tuple[str, str, str]:
    """``"bill color: black"`` -> (region ``"bill"``, property ``"color"``, value ``"black"``)."""
    left, _, value = text.partition(":")
    words = norm_part(left).split("_")
    prop = words[-1] if words and words[-1] else ""
    region = "_".join(words[:-1])
    return region, prop, value.strip()


class KernelSet:
    """All C2 kernels with their resources and per-pair caches."""

    def __init__(
        self,
        color: ColorKernel | None = None,
        layout: AnatomyLayout | None = None,
        scales: dict | None = None,
        genus_of: dict[str, str] | None = None,
    ):
        self.color = color or ColorKernel()
        self.layout = layout or default_layout()
        scales = scales or default_scales()
        self.ordinal = {k: OrdinalScale(v) for k, v in scales["ordinal"].items()}
        self.patterned = frozenset(p.replace("-", "") for p in scales["patterned"])
        self.genus_of = dict(genus_of or {})
        self._scorers: dict[tuple, Callable[[str, str], float]] = {}

    def value_similarity(self, part: str, prop: str, v1: str, v2: str) -> float:
        """Dispatch a value pair of one attribute to the colour, ordinal, pattern or exact kernel."""
        kind = property_kernel(part, prop, {"ordinal": self.ordinal})
        if kind == "color":
            return self.color(_strip_value(v1), _strip_value(v2))
        if kind == "pattern":
            return pattern_similarity(v1, v2, self.patterned)
        if kind == "ordinal":
            key = attribute_key(part, prop)
            scale = self.ordinal.get(key) or self.ordinal[norm_part(prop)]
            return scale(v1, v2)
        return float(_strip_value(v1) == _strip_value(v2))

    def pair(self, a: str, b: str) -> float:
        """Eq. 17: ``α·g(r1, r2) + (1-α)·v(v1, v2)`` on two ``"region property: value"`` options.

        ``g`` = 0.5·anatomy(r1, r2) + 0.5·[same property]; ``v`` uses the property's kernel when the
        properties agree and exact match of the value text when they differ (our choices).
        """
        r1, p1, v1 = split_pair(a)
        r2, p2, v2 = split_pair(b)
        same_prop = p1 == p2
        anat = self.layout.similarity(r1 or "body", r2 or "body")
        g = REGION_ANATOMY_WEIGHT * anat + (1.0 - REGION_ANATOMY_WEIGHT) * float(same_prop)
        v = (
            self.value_similarity(r1, p1, v1, v2)
            if same_prop
            else float(_strip_value(v1) == _strip_value(v2))
        )
        return PAIR_ALPHA * g + (1.0 - PAIR_ALPHA) * v

    def scorer(
        self,
        kernel: str,
        *,
        family: str = "",
        part: str | None = None,
        prop: str | None = None,
        options: tuple[str, ...] = (),
        gold_genus: str | None = None,
    ) -> Callable[[str, str], float]:
        """A cached ``(pred, gold) -> similarity`` function for one kernel and item context.

        The context is only what the kernel reads (the option set for set kernels, the attribute for
        value kernels, the gold genus for common names), so items share scorers and their caches.
        """
        if kernel == "set":
            ctx: tuple = (kernel, family, options)
        elif kernel in ("ordinal", "pattern"):
            ctx = (kernel, part, prop)
        elif kernel == "naming":
            ctx = (kernel, gold_genus)
        else:
            ctx = (kernel,)
        fn = self._scorers.get(ctx)
        if fn is not None:
            return fn
        compute = self._compute_fn(kernel, family, part, prop, options, gold_genus)
        cache: dict[tuple[str, str], float] = {}

        def score(pred: str, gold: str) -> float:
            key = (pred, gold)
            v = cache.get(key)
            if v is None:
                v = cache[key] = compute(pred, gold)
            return v

        self._scorers[ctx] = score
        return score

    def _compute_fn(self, kernel, family, part, prop, options, gold_genus) -> Callable[[str, str], float]:
        if kernel == "color":
            return lambda p, g: self.color(_strip_value(p), _strip_value(g))
        if kernel == "ordinal":
            return lambda p, g: self.value_similarity(part or "", prop or "size", p, g)
        if kernel == "pattern":
            return lambda p, g: pattern_similarity(p, g, self.patterned)
        if kernel == "anatomy":
            return self.layout.similarity
        if kernel == "pair":
            return self.pair
        if kernel == "set":
            return lambda p, g: soft_jaccard(option_set(p, family, options), option_set(g, family, options))
        if kernel == "naming":
            return lambda p, g: common_name_similarity(p, g, self.genus_of, gold_genus)
        if kernel == "scientific":
            return scientific_similarity
        if kernel == "genus":
            return genus_similarity
        if kernel == "exact":
            return lambda p, g: float(_strip_value(p) == _strip_value(g))
        raise ValueError(f"unknown C2 kernel {kernel!r}")

    def similarity(self, kernel: str, pred: str, gold: str, **context) -> float:
        """Kernel similarity of a predicted and a gold answer (both normalised), cached.

        ``context``: ``family``, ``part``, ``prop``, ``options``, ``gold_genus`` (see :meth:`scorer`).
        """
        return self.scorer(kernel, **context)(pred, gold)
