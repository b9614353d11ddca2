#!/usr/bin/env bash
# Set up (if needed) and run jurist's test suite: ruff, mypy and pytest (the real vLLM CPU engine on a
# tiny model built in the test session, and the embedded SmolLM2 model). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
venv="${JURIST_VENV:-.venv}"
"$venv/bin/ruff" check src tests benchmarks scripts
"$venv/bin/mypy"
# Where PYTHONDONTWRITEBYTECODE is set (as on this project's machines), Python never writes the bytecode
# of jurist's modules, and every jurist process the tests start compiles them all again (half a second
# each); compileall writes it regardless, and only for files that changed.
"$venv/bin/python" -m compileall -q src tests >/dev/null
# Two pytest-xdist workers (JURIST_TEST_WORKERS; 0 runs in this process): one runs every module that may load
# a model, in order, the other the rest (tests/one_engine.py), so that the box runs one engine at a time.
workers="${JURIST_TEST_WORKERS:-2}"
exec "$venv/bin/python" -m pytest -n "$workers" --dist loadscope --no-loadscope-reorder "$@"
