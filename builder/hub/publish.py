"""Publish a built Hub folder: a local dry run that loads every config, or a real upload."""

from __future__ import annotations

import os
import tempfile
from fnmatch import fnmatch
from pathlib import Path

IGNORE = [".git/*", ".cache/*", "**/.tmp-*", "*.tmp"]


class PublishError(RuntimeError):
    """A one-line, user-facing publishing failure (never contains the token)."""


def files_to_upload(hub_dir: Path) -> list[Path]:
    """The files ``upload_folder`` would send (same ignore patterns), relative to ``hub_dir``."""
    out = []
    for path in sorted(hub_dir.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(hub_dir).as_posix()
        if any(fnmatch(rel, pat) for pat in IGNORE) or "/." in f"/{rel}":
            continue
        out.append(Path(rel))
    return out


def dry_run(hub_dir: Path) -> dict:
    """Parse the card YAML, load every config with a fresh cache, and list the files to upload."""
    from datasets import disable_progress_bars, load_dataset
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    readme = hub_dir / "README.md"
    if not readme.is_file():
        raise PublishError(f"{readme}: missing dataset card (run `python -m builder build` first)")
    disable_progress_bars()
    card = DatasetCard.load(readme)
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    if not configs:
        raise PublishError(f"{readme}: the YAML front matter has no `configs:` block")
    loaded: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="biovqa-dryrun-") as cache:
        for name in configs:
            try:
                ds = load_dataset(str(hub_dir), name, split="test", cache_dir=cache)
            except Exception as exc:  # report which config failed and why, in one line
                raise PublishError(f"config {name!r} does not load: {type(exc).__name__}: {exc}") from None
            loaded[name] = len(ds)
            if len(ds) and "image" in ds.column_names:
                ds[0]  # decode the first row (image included) to prove it is readable
    files = files_to_upload(hub_dir)
    size = sum((hub_dir / f).stat().st_size for f in files)
    return {"configs": loaded, "files": [str(f) for f in files], "bytes": size}


def upload(hub_dir: Path, repo_id: str, *, private: bool = False, commit_message: str | None = None) -> str:
    """Create the dataset repo (if needed) and upload the folder (resumable). Token from the environment."""
    from huggingface_hub import HfApi

    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if not token:
        raise PublishError("no token: set HF_TOKEN in the environment (it is never printed or logged)")
    if "/" not in repo_id:
        raise PublishError(f"--repo must be OWNER/NAME, got {repo_id!r}")
    api = HfApi(token=token)
    try:
        api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private)
        info = api.upload_folder(
            repo_id=repo_id,
            folder_path=str(hub_dir),
            repo_type="dataset",
            ignore_patterns=IGNORE,
            commit_message=commit_message or "Upload Bio-VQA build",
        )
    except Exception as exc:  # httpx errors are not ConnectionError subclasses (ecosystem notes §6)
        msg = str(exc).replace(token, "***")
        raise PublishError(
            f"upload to {repo_id} failed: {type(exc).__name__}: {msg.splitlines()[0] if msg else ''}"
        ) from None
    return str(getattr(info, "commit_url", info))
