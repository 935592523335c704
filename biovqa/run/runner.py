"""The evaluation runner: questions -> backend -> atomic prediction shards -> merged predictions -> scorecard.

One call of :func:`run_eval` per process. Under a multi-process launcher each rank answers its strided
share of the still-unanswered items and rank 0 merges. Batches never mix ``max_new_tokens`` values and
are formed from items sorted by (prompt length, image area) to reduce padding.

The run directory is ``<out>/<cache key>``; the key hashes every setting that can change an answer
(model + revision, backend, dtype, batch size, blind, wrapper, image cap, processor settings, every
task's prompt hash and token cap, package version, git commit). Same key: resume; any change: a new
folder, never mixed answers.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa

from biovqa import __version__
from biovqa.models.base import Generation, GenerationRequest
from biovqa.run.distributed import DistContext, init_distributed
from biovqa.run.store import PredictionStore, dumps_line, write_atomic


@dataclass
class EvalSettings:
    """Everything ``biovqa eval`` takes."""

    model: str
    dataset: str
    out: str
    config: str = "lite"
    split: str = "test"
    tasks: list[str] | None = None
    limit: int | None = None
    batch_size: int = 8
    backend: str = "hf"
    blind: bool = False
    sources: str | None = None
    skip_missing: bool = False
    verify_sha256: bool = False
    trust_remote_code: bool = False
    revision: str | None = None
    dtype: str | None = None
    max_image_side: int | None = None
    tensor_parallel_size: int = 1
    max_new_tokens: int | None = None  # caps every task's own limit (smoke runs); recorded in the cache key
    score: bool = True
    progress: bool = True
    label: str | None = None  # display name in scorecards and reports (not part of the cache key)


@dataclass
class RunResult:
    """What a finished run reports (rank 0 holds the merged numbers)."""

    run_dir: Path
    cache_key: str
    n_items: int
    n_answered_now: int
    n_resumed: int
    n_errors: int
    excluded: list[dict]
    generation_s: float
    predictions_path: Path | None = None
    scorecard: dict | None = None
    score_message: str | None = None
    meta: dict = field(default_factory=dict)


def git_commit() -> str | None:
    """The commit of the checkout the package runs from (None when not a git checkout)."""
    root = Path(__file__).resolve().parents[2]
    if not (root / ".git").exists():
        return None
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _task_info(task_ids: list[str]) -> tuple[dict[str, int], dict[str, str]]:
    from biovqa import prompts
    from biovqa.tasks import TASKS, get_task

    caps = {t.id: t.max_new_tokens for t in TASKS.values()}
    hashes = {t.id: prompts.prompt_hash(t.id) for t in TASKS.values()}
    for t in task_ids:  # tasks in the data must be known
        get_task(t)
    return caps, hashes


def run_settings(settings: EvalSettings, backend_desc: dict, wrapper: str | None, extra: dict) -> dict:
    """The answer-deciding settings written to run.json; the cache key hashes exactly these."""
    caps, hashes = _task_info([])
    from biovqa import prompts

    return {
        **backend_desc,
        "batch_size": settings.batch_size,
        "blind": settings.blind,
        "wrapper": wrapper,
        **extra,
        "decoding": "greedy",
        "max_new_tokens": caps
        if not settings.max_new_tokens
        else {k: min(v, settings.max_new_tokens) for k, v in caps.items()},
        "prompts_version": prompts.PROMPTS_VERSION,
        "prompt_hashes": hashes,
        "package_version": __version__,
        "git_commit": git_commit(),
    }


def cache_key(run_meta: dict) -> str:
    """12 hex digits of sha256 over the canonical JSON of the answer-deciding settings."""
    blob = json.dumps(run_meta, sort_keys=True, ensure_ascii=False, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:12]


def _image_size(data: bytes | None) -> tuple[int, int]:
    if not data:
        return (0, 0)
    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as im:
            return im.size
    except Exception:
        return (0, 0)  # decoded (and reported) later


def _build_backend(settings: EvalSettings, table: pa.Table, ctx: DistContext, spec):
    if settings.model == "floor":
        from biovqa.models.baselines import FloorBackend

        return FloorBackend(table)
    checkpoint = spec.checkpoint if spec else settings.model
    if settings.backend == "hf":
        from biovqa.models.hf import HFBackend

        return HFBackend(
            checkpoint,
            revision=settings.revision,
            dtype=settings.dtype,
            device=ctx.device,
            trust_remote_code=settings.trust_remote_code,
            processor_kwargs=spec.processor_kwargs if spec else None,
        )
    if settings.backend == "vllm":
        if ctx.world_size > 1:
            raise ValueError(
                "--backend vllm runs as one process (it places its own workers); use --tensor-parallel-size "
                "for several GPUs instead of accelerate/torchrun"
            )
        from biovqa.models.vllm_backend import VLLMBackend

        return VLLMBackend(
            checkpoint,
            revision=settings.revision,
            dtype=settings.dtype,
            tensor_parallel_size=settings.tensor_parallel_size,
            trust_remote_code=settings.trust_remote_code,
        )
    raise ValueError(f"unknown backend {settings.backend!r}; use hf or vllm")


def _batches(items: list[dict], caps: dict[str, int], batch_size: int, blind: bool) -> list[list[dict]]:
    """Group by token cap, sort by (prompt length, image area, qid), cut into batches.

    Prompt length leads: it varies most across tasks (the C2 instruction is long, C1's short), and
    mixing them pads the short prompts (measured: 2x slower prefill at batch 8 when sorted by area).
    """
    groups: dict[int, list[dict]] = {}
    for it in items:
        groups.setdefault(caps[it["task"]], []).append(it)
    out = []
    for cap in sorted(groups):

        def key(it: dict) -> tuple:
            w, h = (0, 0) if blind else _image_size((it.get("image") or {}).get("bytes"))
            return (len(it.get("question") or "") + len(it.get("instruction") or ""), w * h, it["qid"])

        group = sorted(groups[cap], key=key)
        out += [group[i : i + batch_size] for i in range(0, len(group), batch_size)]
    return out


def _answer_batch(backend, batch: list[dict], caps, hashes, wrapper, settings, max_side) -> list[dict]:
    from biovqa import prompts
    from biovqa.data import decode_image

    needs_images = getattr(backend, "needs_images", True) and not settings.blind
    records: dict[str, dict] = {}
    requests = []
    for row in batch:
        image = None
        if needs_images:
            data = (row.get("image") or {}).get("bytes")
            try:
                if not data:
                    raise ValueError("row has no image bytes")
                image = decode_image(data, max_side)
            except Exception as exc:
                records[row["qid"]] = _record(
                    row, hashes, Generation(None, error=f"image could not be decoded: {exc}"), 0.0
                )
                continue
        messages = prompts.build_messages(row, wrapper, with_image=not settings.blind)
        requests.append(GenerationRequest(row["qid"], row, messages, image, caps[row["task"]]))
    t0 = time.perf_counter()
    gens = backend.generate(requests) if requests else []
    per_item = (time.perf_counter() - t0) / max(len(requests), 1)
    for req, gen in zip(requests, gens, strict=True):
        records[req.qid] = _record(req.row, hashes, gen, per_item)
    return [records[row["qid"]] for row in batch]


def _record(row: dict, hashes: dict, gen: Generation, latency: float) -> dict:
    rec = {
        "qid": row["qid"],
        "response": gen.text,
        "prompt_hash": hashes[row["task"]],
        "tokens_in": gen.tokens_in,
        "tokens_out": gen.tokens_out,
        "latency_s": round(latency, 4),
    }
    if gen.error:
        rec["error"] = gen.error
    return rec


def run_eval(settings: EvalSettings, ctx: DistContext | None = None) -> RunResult:
    """Evaluate one model on one config; resumable; returns where the predictions (and scores) are."""
    from biovqa.data import attach_images, load_questions
    from biovqa.models.registry import find_model

    ctx = ctx or init_distributed()
    started = time.time()
    if settings.batch_size < 1:
        raise ValueError(f"batch size must be >= 1, got {settings.batch_size}")
    table = load_questions(settings.dataset, settings.config, settings.tasks, settings.limit, settings.split)
    spec = None if settings.model == "floor" else find_model(settings.model)
    wrapper = spec.wrapper if spec else None
    max_side = settings.max_image_side or (spec.max_image_side if spec else None)
    excluded: list[dict] = []
    if settings.model != "floor" and not settings.blind:
        attached = attach_images(table, settings.sources, settings.verify_sha256, settings.skip_missing)
        table, excluded = attached.table, attached.excluded
    backend = _build_backend(settings, table, ctx, spec)
    extra = {
        "max_image_side": max_side,
        "processor_kwargs": spec.processor_kwargs if spec else {},
        "trust_remote_code": settings.trust_remote_code,
    }
    if settings.model == "floor":
        extra = {"floor_scope": "the evaluated items"}
    meta = run_settings(settings, backend.describe(), wrapper, extra)
    key = cache_key(meta)
    run_dir = Path(settings.out) / key
    store = PredictionStore(run_dir)
    caps, hashes = meta["max_new_tokens"], meta["prompt_hashes"]
    _task_info(sorted(set(table.column("task").to_pylist())))

    done = store.read()
    rows = table.to_pylist()
    pending = [r for r in rows if r["qid"] not in done]
    n_resumed = len(rows) - len(pending)
    mine = ctx.shard(pending)
    run_json = run_dir / "run.json"
    info = {
        "cache_key": key,
        "dataset": str(settings.dataset),
        "config": settings.config,
        "split": settings.split,
        "tasks": settings.tasks,
        "limit": settings.limit,
        "world_size": ctx.world_size,
        "model_spec": spec.name if spec else None,
        "model_label": settings.label or (spec.name if spec else Path(settings.model).name),
        **meta,
    }
    if ctx.is_main:
        run_dir.mkdir(parents=True, exist_ok=True)
        write_atomic(run_json, json.dumps({**info, "status": "running"}, indent=2).encode())
        if n_resumed:
            print(f"resuming {run_dir}: {n_resumed} of {len(rows)} items already answered", file=sys.stderr)
    ctx.barrier()

    writer = store.writer(ctx.rank)
    batches = _batches(mine, caps, settings.batch_size, settings.blind)
    progress = None
    if settings.progress and ctx.is_main:
        from tqdm import tqdm

        progress = tqdm(
            total=len(mine), unit="item", desc=f"eval rank 0/{ctx.world_size}", dynamic_ncols=True
        )
    n_now, n_err, n_ok, gen_s = 0, 0, 0, 0.0
    if "torch" in sys.modules:  # seed only when a backend already imported torch (the floor never does)
        sys.modules["torch"].manual_seed(42)
    for batch in batches:
        t0 = time.perf_counter()
        records = _answer_batch(backend, batch, caps, hashes, wrapper, settings, max_side)
        gen_s += time.perf_counter() - t0
        failed = [r for r in records if (r.get("error") or "").startswith("generation failed")]
        if n_ok == 0 and failed and len(failed) == len(records):
            # a systematic failure (wrong processor, bad settings): stop before writing error records
            # that a resume would treat as answered
            raise RuntimeError(
                f"every item of the first batch failed, nothing was written: {failed[0]['error']}"
            )
        n_ok += sum(1 for r in records if not r.get("error"))
        writer.append(records)
        n_now += len(records)
        n_err += sum(1 for r in records if r.get("error"))
        if progress is not None:
            progress.update(len(records))
    if progress is not None:
        progress.close()

    ctx.barrier()
    counts = ctx.gather({"n": n_now, "errors": n_err, "gen_s": gen_s})
    result = RunResult(
        run_dir,
        key,
        len(rows),
        sum(c["n"] for c in counts),
        n_resumed,
        0,
        excluded,
        max(c["gen_s"] for c in counts),
    )
    if not ctx.is_main:
        return result
    merged = store.read()
    missing = [r["qid"] for r in rows if r["qid"] not in merged]
    if missing:
        raise RuntimeError(f"{len(missing)} item(s) have no prediction after the run, e.g. {missing[:5]}")
    result.predictions_path = store.write_merged(merged)
    result.n_errors = sum(1 for r in rows if merged[r["qid"]].get("error"))
    summary = {
        "status": "complete",
        "n_items": len(rows),
        "n_answered_this_session": result.n_answered_now,
        "n_resumed": n_resumed,
        "n_errors": result.n_errors,
        "errors": [
            {"qid": r["qid"], "error": merged[r["qid"]]["error"]}
            for r in rows
            if merged[r["qid"]].get("error")
        ][:100],
        "n_excluded": len(excluded),
        "excluded": excluded,
        "generation_s": round(result.generation_s, 3),
        "wall_s": round(time.time() - started, 3),
        "items_per_s": round(result.n_answered_now / result.generation_s, 3) if result.generation_s else None,
        "store_warnings": store.warnings[:100],
    }
    result.meta = {**info, **summary}
    write_atomic(run_json, json.dumps(result.meta, indent=2, default=str).encode())
    if settings.score:
        result.scorecard, result.score_message = _score(settings, run_dir, [r["qid"] for r in rows])
    return result


def _score(settings: EvalSettings, run_dir: Path, qids: list[str]) -> tuple[dict | None, str]:
    """Score the run with ``biovqa.scoring`` on exactly the evaluated questions (None + message on failure)."""
    try:
        from biovqa import scoring
    except ImportError as exc:
        return None, f"scoring skipped: biovqa.scoring is not available ({exc})"
    try:
        import pyarrow.compute as pc

        folder = scoring.resolve_dataset(settings.dataset, settings.config)
        questions = scoring.read_questions(folder, settings.config, settings.split)
        questions = questions.filter(pc.is_in(questions.column("qid"), value_set=pa.array(qids, pa.string())))
        preds = scoring.read_predictions(run_dir)
        result = scoring.score_tables(questions, preds, folder, settings.tasks)
        scoring.write_outputs(result, run_dir / "scores", settings.label or settings.model)
        md = (
            (run_dir / "scores" / "scorecard.md").read_text()
            if (run_dir / "scores" / "scorecard.md").is_file()
            else ""
        )
        return result.scorecard, md or f"scores written to {run_dir / 'scores'}"
    except Exception as exc:
        return None, f"scoring failed: {type(exc).__name__}: {exc}"


def settings_dict(settings: EvalSettings) -> dict:
    """The settings as a plain dict (for logs)."""
    return asdict(settings)


__all__ = ["EvalSettings", "RunResult", "run_eval", "cache_key", "dumps_line"]
