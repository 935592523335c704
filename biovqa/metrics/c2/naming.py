"""Naming kernels (§C.5, eqs. 19-21, Table 17): token F1, head noun, genus lift, scientific names."""

from __future__ import annotations

from rapidfuzz.fuzz import ratio as _fuzz_ratio

#: Weights of eq. 20 and the fallback of eq. 21.
F1_WEIGHT = 0.6
HEAD_WEIGHT = 0.4
GENUS_LIFT = 0.75
FALLBACK_WEIGHT = 0.3


def tokens(name: str) -> list[str]:
    """Lower-cased whitespace tokens of an already normalised name."""
    return name.lower().split()


def token_f1(pred: str, gold: str) -> float:
    """Harmonic mean of token precision and recall over the token sets ``T(p)``, ``T(g)`` (eq. 19)."""
    tp, tg = set(tokens(pred)), set(tokens(gold))
    if not tp or not tg:
        return 0.0
    return 2.0 * len(tp & tg) / (len(tp) + len(tg))


def head(name: str) -> str:
    """The last token of a common name (the noun the name ends on)."""
    t = tokens(name)
    return t[-1] if t else ""


def seq_ratio(a: str, b: str) -> float:
    """Sequence-matching ratio in [0, 1] (rapidfuzz ``fuzz.ratio`` / 100)."""
    return _fuzz_ratio(a, b) / 100.0


def component_agreement(pred: str, gold: str) -> float:
    """Eq. 21: 1 when the two components agree, else ``0.3 · ratio``."""
    if pred == gold:
        return 1.0
    return FALLBACK_WEIGHT * seq_ratio(pred, gold)


def common_name_similarity(
    pred: str, gold: str, genus_of: dict[str, str] | None = None, gold_genus: str | None = None
) -> float:
    """``0.6·F1 + 0.4·[head(p) = head(g)]``, lifted to at least 0.75 when both names share a genus.

    The lift needs the genus of the predicted name: ``genus_of`` maps normalised common names to
    genera (the CUB classes); a name it does not know gets no lift.
    """
    p, g = pred.lower().strip(), gold.lower().strip()
    if not p or not g:
        return 0.0
    if p == g:
        return 1.0
    hp, hg = head(p), head(g)
    sim = F1_WEIGHT * token_f1(p, g) + HEAD_WEIGHT * float(hp == hg and hp != "")
    if genus_of:
        gp = genus_of.get(p)
        gg = gold_genus.lower() if gold_genus else genus_of.get(g)
        if gp and gg and gp.lower() == gg:
            sim = max(sim, GENUS_LIFT)
    return sim


def split_binomial(name: str) -> tuple[str, str]:
    """(genus, epithet) of a normalised scientific name; missing parts are ``""``; extra tokens ignored."""
    t = tokens(name)
    return (t[0] if t else "", t[1] if len(t) > 1 else "")


def scientific_similarity(pred: str, gold: str) -> float:
    """``0.5·a_gen + 0.5·a_epi`` (eq. 20) with the fallback of eq. 21 per component."""
    pg, pe = split_binomial(pred)
    gg, ge = split_binomial(gold)
    if not pg:
        return 0.0
    return 0.5 * component_agreement(pg, gg) + 0.5 * (component_agreement(pe, ge) if pe else 0.0)


def genus_similarity(pred: str, gold: str) -> float:
    """``a_gen``: the first token of the reply against the gold genus (eq. 20 / 21)."""
    pg, _ = split_binomial(pred)
    gg, _ = split_binomial(gold)
    if not pg:
        return 0.0
    return component_agreement(pg, gg)
