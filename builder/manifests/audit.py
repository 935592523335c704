"""The verification contract (§L.2), generic over manifests: run before anything downstream.

A manifest row may exist only if its image is present and every field its generator needs is
populated. :func:`audit` scans every row for missing/null/empty required fields (with per-row
exemptions such as the reptiles' order), duplicate ids, malformed hashes and sizes, and (through a
caller-supplied check) a missing image. It returns an :class:`AuditResult`; :meth:`AuditResult.raise_if_failed`
turns violations into one error that names manifest, row, id and reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class AuditError(ValueError):
    """A manifest breaks the verification contract."""


@dataclass(frozen=True)
class AuditSpec:
    """What one manifest must satisfy."""

    id_column: str
    required: Sequence[str]
    #: column -> predicate(row) that exempts a row from needing that column (skip edges)
    exempt: Mapping[str, Callable[[dict], bool]] = field(default_factory=dict)
    sha_column: str | None = "sha256"
    size_columns: tuple[str, str] | None = ("width", "height")
    #: row -> None when the image is present, else the reason
    image_check: Callable[[dict], str | None] | None = None


@dataclass
class AuditResult:
    manifest: str
    rows: int
    violations: list[tuple[int, str, str]] = field(default_factory=list)  # (row, id, reason)

    @property
    def ok(self) -> bool:
        return not self.violations

    def summary(self) -> dict:
        reasons: dict[str, int] = {}
        for _, _, reason in self.violations:
            key = reason.split(":")[0]
            reasons[key] = reasons.get(key, 0) + 1
        return {
            "manifest": self.manifest,
            "rows": self.rows,
            "violations": len(self.violations),
            "by_reason": reasons,
        }

    def raise_if_failed(self) -> None:
        if self.violations:
            head = "; ".join(f"row {r} ({i}): {why}" for r, i, why in self.violations[:10])
            more = f" … and {len(self.violations) - 10} more" if len(self.violations) > 10 else ""
            raise AuditError(f"{self.manifest}: {len(self.violations)} contract violations: {head}{more}")


def _empty(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def audit(table: pa.Table | str | Path, spec: AuditSpec, name: str | None = None) -> AuditResult:
    """Check every row of a manifest (table or parquet path) against ``spec``."""
    if not isinstance(table, pa.Table):
        name = name or str(table)
        table = pq.read_table(table)
    name = name or "<manifest>"
    result = AuditResult(name, table.num_rows)
    missing_cols = [c for c in (spec.id_column, *spec.required) if c not in table.column_names]
    if missing_cols:
        result.violations.append((0, "", f"missing_column: {missing_cols}"))
        return result
    seen: dict[str, int] = {}
    for i, row in enumerate(table.to_pylist()):
        rid = row.get(spec.id_column)
        rid_s = "" if rid is None else str(rid)
        if _empty(rid):
            result.violations.append((i, rid_s, "empty_id"))
        elif rid_s in seen:
            result.violations.append((i, rid_s, f"duplicate_id: also row {seen[rid_s]}"))
        else:
            seen[rid_s] = i
        for col in spec.required:
            if _empty(row.get(col)):
                exempt = spec.exempt.get(col)
                if exempt is None or not exempt(row):
                    result.violations.append((i, rid_s, f"null_field: {col}"))
        if spec.sha_column and not _SHA256.match(str(row.get(spec.sha_column) or "")):
            result.violations.append((i, rid_s, f"bad_sha256: {row.get(spec.sha_column)!r}"))
        if spec.size_columns:
            w, h = (row.get(c) for c in spec.size_columns)
            if not (isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0):
                result.violations.append((i, rid_s, f"bad_size: {w}x{h}"))
        if spec.image_check is not None:
            why = spec.image_check(row)
            if why:
                result.violations.append((i, rid_s, f"image_missing: {why}"))
    return result
