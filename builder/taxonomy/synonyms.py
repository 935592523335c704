"""The GBIF synonym map for EM-soft (§C.2): set-valued (pro parte) and one-way.

Built from Taxon.tsv: every usage whose ``acceptedNameUsageID`` points at another row maps its
canonical name onto that accepted taxon's canonical name. A name with several accepted targets
(``Reptilia`` -> Squamata, Testudines, Crocodylia, Sphenodontia) keeps all of them. The map
is one-way: nothing links two accepted names to each other. Accepted names are implicit
self-targets (Contract 5), so only synonym -> accepted rows are written.
"""

from __future__ import annotations

from collections.abc import Iterable

import pyarrow as pa

from builder.common import Report
from builder.taxonomy.names import normalize_name

SYNONYM_SCHEMA = pa.schema([("name_norm", pa.string()), ("accepted_norm", pa.string())])


def synonym_pairs(
    taxa: pa.Table, report: Report | None = None, source: str = "Taxon.tsv"
) -> set[tuple[str, str]]:
    """All (synonym name, accepted name) pairs of the backbone, canonical (authorless) names."""
    report = report or Report()
    ids = taxa["taxonID"].to_pylist()
    names = taxa["canonicalName"].to_pylist()
    accepted = taxa["acceptedNameUsageID"].to_pylist()
    name_of = {}
    for tid, name in zip(ids, names, strict=True):
        if tid and name:
            name_of.setdefault(tid, name)
    pairs: set[tuple[str, str]] = set()
    for row, (tid, name, acc) in enumerate(zip(ids, names, accepted, strict=True)):
        if not acc or acc == tid:
            continue
        target = name_of.get(acc)
        if target is None:
            # 1-based data row + header line; the reader keeps file order
            report.error(
                source, row + 2, f"taxon {tid} ({name!r}): acceptedNameUsageID {acc} not in the archive"
            )
            continue
        if name and target and name != target:
            pairs.add((name, target))
    return pairs


def synonym_table(pairs: Iterable[tuple[str, str]], keep_accepted: set[str] | None = None) -> pa.Table:
    """Normalized, sorted (name_norm, accepted_norm) rows; optionally only targets in ``keep_accepted``.

    Restricting targets to the names the C1 answer keys use keeps the file small: a synonym whose
    targets are all outside the benchmark can never turn a wrong answer right.
    """
    rows = set()
    for name, target in pairs:
        n, a = normalize_name(name), normalize_name(target)
        if not n or not a or n == a:
            continue
        if keep_accepted is not None and a not in keep_accepted:
            continue
        rows.add((n, a))
    ordered = sorted(rows)
    return pa.table(
        {"name_norm": [r[0] for r in ordered], "accepted_norm": [r[1] for r in ordered]},
        schema=SYNONYM_SCHEMA,
    )
