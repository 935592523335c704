"""The prediction store: append-only, per-rank JSONL shards written atomically (Contract 7).

Layout of one run directory (one per cache key)::

    <run>/run.json
    <run>/predictions/rank-<r>/shard-<n>.jsonl     one shard per generated batch
    <run>/predictions.jsonl                        merged, sorted by qid (written at the end)

A shard is written to ``.shard-<n>.jsonl.tmp``, fsynced, then renamed, and the folder is fsynced: a
SIGKILL at any moment leaves either the whole shard or a dot-tmp file, which readers ignore (and the
next writer removes). So a killed run loses at most its in-flight batch and never duplicates: on
resume every qid found in a complete shard is skipped. ``predictions.jsonl`` drops ``latency_s`` (the
only field that differs between runs), so an interrupted-and-resumed run merges byte-identically to an
uninterrupted one.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterable
from pathlib import Path

_SHARD_RE = re.compile(r"^shard-(\d+)\.jsonl$")
MERGED_FIELDS = ("qid", "response", "prompt_hash", "tokens_in", "tokens_out", "error")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a dot-tmp sibling + fsync + rename (+ fsync of the folder)."""
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def dumps_line(record: dict) -> str:
    """One JSONL line with a fixed key order (deterministic bytes)."""
    return json.dumps(record, ensure_ascii=False, sort_keys=False, separators=(", ", ": ")) + "\n"


class PredictionStore:
    """Reads and appends the prediction shards of one run directory."""

    def __init__(self, run_dir: str | Path):
        self.run_dir = Path(run_dir)
        self.pred_dir = self.run_dir / "predictions"
        self.warnings: list[str] = []

    # ------------------------------------------------------------------------------------ reading
    def shard_files(self) -> list[Path]:
        """Every complete shard, in (rank, shard number) order; tmp files are never listed."""
        out = []
        for rank_dir in sorted(self.pred_dir.glob("rank-*")):
            if not rank_dir.is_dir():
                continue
            for f in rank_dir.iterdir():
                m = _SHARD_RE.match(f.name)
                if m:
                    out.append((rank_dir.name, int(m.group(1)), f))
        out.sort(key=lambda t: (int(t[0].split("-")[1]) if t[0].split("-")[1].isdigit() else -1, t[1]))
        return [f for _, _, f in out]

    def read(self) -> dict[str, dict]:
        """All stored predictions by qid (first occurrence wins; bad lines are reported and skipped)."""
        records: dict[str, dict] = {}
        for f in self.shard_files():
            try:
                lines = f.read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError) as exc:
                self._warn(f"{f}: unreadable shard skipped ({exc}); its items will be answered again")
                continue
            for ln, line in enumerate(lines, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                    qid = rec["qid"]
                    if not isinstance(qid, str):
                        raise TypeError("qid is not a string")
                except (json.JSONDecodeError, KeyError, TypeError) as exc:
                    self._warn(
                        f"{f}:{ln}: bad prediction line skipped ({exc}); that item will be answered again"
                    )
                    continue
                if qid in records:
                    self._warn(f"{f}:{ln}: duplicate prediction for {qid} ignored (first one kept)")
                    continue
                records[qid] = rec
        return records

    def _warn(self, msg: str) -> None:
        self.warnings.append(msg)
        print(f"warning: {msg}", file=sys.stderr)

    # ------------------------------------------------------------------------------------ writing
    def writer(self, rank: int) -> ShardWriter:
        """An appender for ``rank`` that continues after its highest existing shard number."""
        return ShardWriter(self.pred_dir / f"rank-{rank}")

    def write_merged(self, records: dict[str, dict], qids: Iterable[str] | None = None) -> Path:
        """Write ``predictions.jsonl`` (sorted by qid, deterministic fields only); ``qids`` restricts it."""
        keep = sorted(records) if qids is None else sorted(q for q in set(qids) if q in records)
        body = "".join(dumps_line({k: records[q].get(k) for k in MERGED_FIELDS}) for q in keep)
        path = self.run_dir / "predictions.jsonl"
        write_atomic(path, body.encode("utf-8"))
        return path


class ShardWriter:
    """Writes one shard file per call to :meth:`append` (atomically)."""

    def __init__(self, rank_dir: Path):
        self.rank_dir = rank_dir
        rank_dir.mkdir(parents=True, exist_ok=True)
        for stale in rank_dir.glob(".shard-*.tmp"):  # torn writes from a killed run
            stale.unlink(missing_ok=True)
        numbers = [int(m.group(1)) for f in rank_dir.iterdir() if (m := _SHARD_RE.match(f.name))]
        self.next_number = max(numbers, default=-1) + 1

    def append(self, records: list[dict]) -> Path | None:
        """Write ``records`` as the next shard; returns its path (None for an empty list)."""
        if not records:
            return None
        path = self.rank_dir / f"shard-{self.next_number:06d}.jsonl"
        write_atomic(path, "".join(dumps_line(r) for r in records).encode("utf-8"))
        self.next_number += 1
        return path


def resolve_run_dir(path: str | Path) -> Path:
    """A run directory from a path that is one (has run.json) or an ``--out`` folder holding exactly one."""
    path = Path(path)
    if (path / "run.json").is_file():
        return path
    subs = sorted(p for p in path.glob("*/run.json"))
    if len(subs) == 1:
        return subs[0].parent
    if not subs:
        raise FileNotFoundError(f"{path}: no run.json here or in a cache-key subfolder")
    names = ", ".join(p.parent.name for p in subs)
    raise ValueError(f"{path}: holds several runs (cache keys {names}); name one of them")
