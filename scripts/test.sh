#!/usr/bin/env bash
# Set up (if needed) and run jurist's test suite: ruff, mypy and pytest (the real vLLM CPU engine on a
# tiny model built in the test session, and the embedded SmolLM2 model). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
venv="${JURIST_VENV:-.venv}"
"$venv/bin/ruff" check src tests benchmarks scripts
"$venv/bin/mypy"
exec "$venv/bin/python" -m pytest "$@"
