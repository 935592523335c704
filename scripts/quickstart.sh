#!/usr/bin/env bash
# Install Bio-VQA into .venv (CPU only) and run the main job on the embedded synthetic miniature:
# sources -> Hub folder (c1..c4, lite) -> floor / blind / tiny-VLM evaluations -> scores -> report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
export HF_HUB_OFFLINE=1 HF_EVALUATE_OFFLINE=1
.venv/bin/python -m builder demo --out "${1:-out/demo}"
