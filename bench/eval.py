"""Throughput of the HF backend: batch 1 vs batched (same outputs), and Lite-scale throughput on a GPU.

CPU part (always): a random Llava built offline (text hidden 256, 4 layers: a bit larger than the
test model so that batching matters), N Bio-VQA-shaped items, generation time only (prompt building and
image decoding excluded), items/s at batch 1 and at the batched sizes, and whether every output is
identical to batch 1.

GPU part (when CUDA is present): a random-initialised model with the published Qwen2.5-VL-7B config
values (hidden 3584, 28 layers, 28 heads, 4 KV heads, intermediate 18944, vocab 152064; vision depth 32,
hidden 1280, …) in bf16, CUB-sized 500x375 images, the Lite token-cap mix, items/s at batch 1 (on a
subset) and batched, and the implied wall time of the 12,000-item Lite run. Random weights rarely emit
EOS, so every item generates its full cap: an upper bound on decode time.

    python bench/eval.py [--items 64] [--batch-sizes 8,16] [--threads 2] [--gpu-items 512]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

# run from a checkout: the repo root (not bench/) goes on the import path
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from biovqa import prompts  # noqa: E402
from biovqa.data import decode_image, load_questions  # noqa: E402
from biovqa.models.base import GenerationRequest  # noqa: E402
from builder import tiny_vlms  # noqa: E402

# Lite: 500 items per task; caps from the task registry
LITE_PER_TASK = 500


def _requests(rows, cap=None):
    from biovqa.tasks import get_task

    out = []
    for r in rows:
        img = decode_image(r["image"]["bytes"]) if r.get("image") and r["image"].get("bytes") else None
        messages = prompts.build_messages(r, None, with_image=img is not None)
        out.append(GenerationRequest(r["qid"], r, messages, img, cap or get_task(r["task"]).max_new_tokens))
    return out


def _timed(backend, requests, batch_size):
    """Answers in request order and the pure generate() seconds, batching as the runner does."""
    groups: dict[int, list[int]] = {}
    for i, r in enumerate(requests):
        groups.setdefault(r.max_new_tokens, []).append(i)
    texts: list[str | None] = [None] * len(requests)
    total = cpu = 0.0
    for cap in sorted(groups):
        idx = sorted(groups[cap], key=lambda i: backend.sort_key(requests[i]) + (requests[i].qid,))
        for s in range(0, len(idx), batch_size):
            chunk = idx[s : s + batch_size]
            t0, c0 = time.perf_counter(), time.process_time()
            gens = backend.generate([requests[i] for i in chunk])
            _sync()
            total += time.perf_counter() - t0
            cpu += time.process_time() - c0
            for i, g in zip(chunk, gens, strict=True):
                texts[i] = g.text
    _timed.cpu_s = cpu  # CPU seconds of this process: robust to other load on a shared machine
    return texts, total


def _sync():
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()


def cpu_bench(
    n_items: int,
    batch_sizes: list[int],
    threads: int | None,
    hidden: int = 256,
    layers: int = 4,
    new_tokens: int = 16,
) -> None:
    import torch

    from biovqa.models.hf import HFBackend

    if threads:
        torch.set_num_threads(threads)
    tmp = Path(tempfile.mkdtemp(prefix="biovqa-bench-eval-"))
    folder, _ = tiny_vlms.make_question_folder(tmp, per_task=max(1, n_items // 4), with_refs=False)
    rows = load_questions(folder, "lite").to_pylist()[:n_items]
    model = tiny_vlms.build_llava(
        tmp / f"llava-{hidden}", hidden=hidden, layers=layers, realistic_tokenizer=True
    )
    backend = HFBackend(str(model), device="cpu")
    requests = _requests(rows, cap=new_tokens)
    _timed(backend, requests[: min(4, len(requests))], 4)  # warm-up
    ref, t1 = _timed(backend, requests, 1)
    c1 = _timed.cpu_s
    lens = [len(backend.tokenizer(backend._prompt(r))["input_ids"]) for r in requests]
    print(
        f"CPU tiny Llava (text hidden {hidden}, {layers} layers), {len(requests)} items, {new_tokens} new tokens, "
        f"torch threads {torch.get_num_threads()}, "
        f"prompt tokens {min(lens)}-{max(lens)} (mean {sum(lens) / len(lens):.0f}, image tokens excluded)"
    )
    n = len(requests)
    print(f"  batch  1: {n / t1:7.2f} items/s wall ({t1:.2f} s), {n / c1:7.2f} items per CPU-second")
    for bs in batch_sizes:
        texts, tb = _timed(backend, requests, bs)
        cb = _timed.cpu_s
        same = sum(a == b for a, b in zip(ref, texts, strict=True))
        print(
            f"  batch {bs:2d}: {n / tb:7.2f} items/s wall ({tb:.2f} s), {n / cb:7.2f} items per CPU-second;  "
            f"speed-up wall {t1 / tb:4.2f}x, CPU {c1 / cb:4.2f}x;  identical to batch 1: {same}/{n}"
        )


#: Published Qwen/Qwen2.5-VL-7B-Instruct config values (config.json).
QWEN25_VL_7B_TEXT = dict(
    vocab_size=152064,
    hidden_size=3584,
    intermediate_size=18944,
    num_hidden_layers=28,
    num_attention_heads=28,
    num_key_value_heads=4,
    max_position_embeddings=128000,
    rms_norm_eps=1e-6,
    rope_parameters={"rope_type": "default", "mrope_section": [16, 24, 24], "rope_theta": 1e6},
)
QWEN25_VL_7B_VISION = dict(
    depth=32,
    hidden_size=1280,
    intermediate_size=3420,
    num_heads=16,
    out_hidden_size=3584,
    patch_size=14,
    spatial_merge_size=2,
    temporal_patch_size=2,
    window_size=112,
    fullatt_block_indexes=[7, 15, 23, 31],
    in_chans=3,
    hidden_act="silu",
)


def qwen25_vl_7b(device: str = "cuda"):
    """Random-init Qwen2.5-VL-7B (published config values) in bf16, plus a processor with our small tokenizer."""
    import torch
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    tok = tiny_vlms._tokenizer(["<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>"])
    ids = {
        t: tok.convert_tokens_to_ids(t)
        for t in ("<|vision_start|>", "<|vision_end|>", "<|image_pad|>", "<|video_pad|>")
    }
    config = Qwen2_5_VLConfig(
        text_config=dict(
            QWEN25_VL_7B_TEXT,
            bos_token_id=tok.bos_token_id,
            eos_token_id=tok.eos_token_id,
            pad_token_id=tok.pad_token_id,
        ),
        vision_config=dict(QWEN25_VL_7B_VISION),
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    with torch.device(device):
        model = Qwen2_5_VLForConditionalGeneration._from_config(config, dtype=torch.bfloat16)
    model.generation_config.pad_token_id = tok.pad_token_id
    model.generation_config.eos_token_id = tok.eos_token_id
    try:
        from transformers import Qwen2_5_VLProcessor
        from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor

        ip = Qwen2VLImageProcessor(min_pixels=256 * 28 * 28, max_pixels=1280 * 28 * 28)
        proc = Qwen2_5_VLProcessor(
            image_processor=ip,
            tokenizer=tok,
            video_processor=None,
            chat_template=tiny_vlms._template("<|vision_start|><|image_pad|><|vision_end|>"),
        )
    except Exception:  # no torchvision: the image-only shim with the PIL image processor
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import Qwen2VLImageProcessorPil

        shim = tiny_vlms._qwen_shim()
        ip = Qwen2VLImageProcessorPil(min_pixels=256 * 28 * 28, max_pixels=1280 * 28 * 28)
        proc = shim(
            image_processor=ip,
            tokenizer=tok,
            chat_template=tiny_vlms._template("<|vision_start|><|image_pad|><|vision_end|>"),
        )
    return model, proc


def gpu_bench(n_items: int, batch_sizes: list[int], device: str = "cuda") -> None:
    import numpy as np
    from PIL import Image

    from biovqa.models.hf import HFBackend
    from biovqa.tasks import TASKS

    t0 = time.perf_counter()
    model, proc = qwen25_vl_7b(device)
    print(f"GPU: random Qwen2.5-VL-7B config, bf16, built in {time.perf_counter() - t0:.1f} s")
    backend = HFBackend.from_objects(model, proc, "qwen2.5-vl-7b-random")
    rng = np.random.default_rng(42)
    tasks = list(TASKS.values())
    requests = []
    for i in range(n_items):
        task = tasks[i % len(tasks)]
        img = Image.fromarray(rng.integers(0, 255, (375, 500, 3), dtype=np.uint8))
        row = {
            "qid": f"{task.id}/bench/{i:05d}",
            "task": task.id,
            "component": task.component,
            "question": "What is the family of the animal shown in this image?" + " x" * (i % 7),
            "instruction": "Answer with ONLY the Family name (e.g., Araneidae).",
        }
        requests.append(
            GenerationRequest(row["qid"], row, prompts.build_messages(row), img, task.max_new_tokens)
        )
    _timed(backend, requests[:8], 8)  # warm-up (kernels, allocator)
    sub = requests[: min(48, n_items)]
    _, t1 = _timed(backend, sub, 1)
    rate1 = len(sub) / t1
    print(
        f"  batch  1: {rate1:7.2f} items/s on {len(sub)} items  -> Lite (12,000) in {12000 / rate1 / 60:6.1f} min"
    )
    for bs in batch_sizes:
        _, tb = _timed(backend, requests, bs)
        rate = len(requests) / tb
        print(
            f"  batch {bs:2d}: {rate:7.2f} items/s on {len(requests)} items -> Lite in {12000 / rate / 60:6.1f} min"
        )
    try:
        import vllm  # noqa: F401

        print("  vLLM is installed: run `biovqa eval --backend vllm` on a saved checkpoint to compare")
    except ImportError:
        print("  vLLM: not installed (optional extra), skipped")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=64)
    ap.add_argument("--batch-sizes", default="8,16")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--new-tokens", type=int, default=16)
    ap.add_argument("--gpu-items", type=int, default=512)
    ap.add_argument("--gpu-batch-sizes", default="16,32,64")
    ap.add_argument("--skip-cpu", action="store_true")
    args = ap.parse_args()
    import torch

    if not args.skip_cpu:
        cpu_bench(
            args.items,
            [int(x) for x in args.batch_sizes.split(",")],
            args.threads,
            args.hidden,
            args.layers,
            args.new_tokens,
        )
    if torch.cuda.is_available():
        gpu_bench(args.gpu_items, [int(x) for x in args.gpu_batch_sizes.split(",")])
    else:
        print("GPU: none here, Lite throughput of the Qwen2.5-VL-7B-sized model not measured")


if __name__ == "__main__":
    main()
