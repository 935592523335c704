"""Write question records as Hub-shaped parquet shards: ``data/<config>/test-XXXXX-of-YYYYY.parquet``.

Records stream in (a generator per component); shards close when their estimated size reaches the
bound, so memory stays bounded at full scale. Output is byte-identical for identical input: rows keep
their arrival order, parquet options are fixed, and the only metadata is the ``huggingface`` features
key that makes ``load_dataset`` decode ``image`` as ``datasets.Image()``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from biovqa.schema import QUESTION_SCHEMA, validate_record

DEFAULT_SHARD_BYTES = 256 * 1024 * 1024
ROW_GROUP_ROWS = 1000


def hf_schema() -> pa.Schema:
    """QUESTION_SCHEMA with the ``huggingface`` metadata key that datasets reads back as features."""
    from biovqa.schema import hf_features

    meta = {"info": {"features": hf_features().to_dict()}}
    return QUESTION_SCHEMA.with_metadata({b"huggingface": json.dumps(meta, sort_keys=True).encode()})


def _estimate_bytes(rec: dict) -> int:
    img = rec.get("image") or {}
    return (
        600
        + len(img.get("bytes") or b"")
        + len(rec.get("question") or "")
        + len(rec.get("instruction") or "")
    )


@dataclass
class ConfigWriter:
    """Streams records of one config into bounded shards (temporary names until :meth:`close`)."""

    out_dir: Path
    config: str
    shard_bytes: int = DEFAULT_SHARD_BYTES
    schema: pa.Schema = field(default_factory=hf_schema)
    n_rows: int = 0
    tasks: dict[str, int] = field(default_factory=dict)
    _buffer: list[dict] = field(default_factory=list)
    _buffer_bytes: int = 0
    _writer: pq.ParquetWriter | None = None
    _shard_bytes_written: int = 0
    _tmp_paths: list[Path] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.dir = self.out_dir / "data" / self.config
        self.dir.mkdir(parents=True, exist_ok=True)
        for stale in self.dir.glob("*.parquet"):
            stale.unlink()

    def add(self, rec: dict) -> None:
        validate_record(rec)
        if rec["qid"] in self._seen:
            raise ValueError(f"config {self.config}: duplicate qid {rec['qid']!r}")
        self._seen.add(rec["qid"])
        self.tasks[rec["task"]] = self.tasks.get(rec["task"], 0) + 1
        self._buffer.append(rec)
        self._buffer_bytes += _estimate_bytes(rec)
        self.n_rows += 1
        if len(self._buffer) >= ROW_GROUP_ROWS or self._buffer_bytes >= 32 * 1024 * 1024:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        if self._writer is None:
            path = self.dir / f".tmp-{len(self._tmp_paths):05d}.parquet"
            self._tmp_paths.append(path)
            self._writer = pq.ParquetWriter(path, self.schema, compression="zstd", write_statistics=True)
            self._shard_bytes_written = 0
        table = pa.Table.from_pylist(self._buffer, schema=self.schema)
        self._writer.write_table(table, row_group_size=ROW_GROUP_ROWS)
        self._shard_bytes_written += self._buffer_bytes
        self._buffer, self._buffer_bytes = [], 0
        if self._shard_bytes_written >= self.shard_bytes:
            self._writer.close()
            self._writer = None

    def close(self) -> list[Path]:
        """Flush, close and rename shards to ``test-XXXXX-of-YYYYY.parquet``; returns the final paths."""
        self._flush()
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if not self._tmp_paths:  # an empty config gets no shard; the card leaves it out (it would not load)
            return []
        total = len(self._tmp_paths)
        final = []
        for i, tmp in enumerate(self._tmp_paths):
            dest = self.dir / f"test-{i:05d}-of-{total:05d}.parquet"
            tmp.replace(dest)
            final.append(dest)
        return final


def write_config(
    records: Iterable[dict], out_dir: Path, config: str, shard_bytes: int = DEFAULT_SHARD_BYTES
) -> ConfigWriter:
    """Write one config from an iterable of records; returns the closed writer (counts per task)."""
    writer = ConfigWriter(out_dir, config, shard_bytes=shard_bytes)
    for rec in records:
        writer.add(rec)
    writer.close()
    return writer


def iter_config(hub_dir: Path, config: str, columns: list[str] | None = None) -> Iterable[dict]:
    """Read back the records of one config, shard by shard, in stored order."""
    for path in sorted((hub_dir / "data" / config).glob("test-*.parquet")):
        pf = pq.ParquetFile(path)
        for batch in pf.iter_batches(batch_size=ROW_GROUP_ROWS, columns=columns):
            yield from batch.to_pylist()
