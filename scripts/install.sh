#!/usr/bin/env bash
# Create .venv and install Bio-VQA with everything its tests and the quickstart need (CPU only).
# torch is installed first, pinned to the CPU build, so no later requirement pulls a CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q torch==2.13.0
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/python -c "import torch, transformers, datasets, evaluate; print('installed: torch', torch.__version__, '| transformers', transformers.__version__, '| datasets', datasets.__version__)"
