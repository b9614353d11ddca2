#!/usr/bin/env bash
# Training data from judgments, end to end, on the embedded default model: judge LLMBar's outputs (every
# instruction with each of its two outputs) with the built-in rubric, keep the well-rated ones, and build
# DPO preference pairs from the two outputs of each instruction.
#
#   examples/filter_pipeline.sh            # writes out/filter_pipeline/{rows.jsonl,scored.parquet,kept.parquet,pairs.jsonl}
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
venv="${JURIST_VENV:-.venv}"
out=out/filter_pipeline
mkdir -p "$out"

"$venv/bin/python" - "$out/rows.jsonl" <<'PY'
import json, sys
records = json.load(open("examples/llmbar/Natural.json", encoding="utf-8"))
with open(sys.argv[1], "w", encoding="utf-8") as handle:
    for number, record in enumerate(records):
        for key in ("output_1", "output_2"):
            row = {"id": f"{number}-{key[-1]}", "prompt_id": number, "request": record["input"], "response": record[key]}
            handle.write(json.dumps(row) + "\n")
PY

"$venv/bin/jurist" judge dataset -c rubric/response_quality -i "$out/rows.jsonl" -o "$out/scored.parquet" \
    --id-column id --overwrite --quiet
"$venv/bin/jurist" filter "$out/scored.parquet" -o "$out/kept.parquet" --where "response_quality.score >= 0.75"
"$venv/bin/jurist" pairs "$out/scored.parquet" -o "$out/pairs.jsonl" --group-by prompt_id --prompt-column request
