#!/usr/bin/env bash
# The documentation site (MkDocs with Material, from the dev extra; nothing is fetched from the network).
#   scripts/docs.sh              serve it at http://127.0.0.1:8000, rebuilt on every change
#   scripts/docs.sh build        build it into site/ with warnings as errors (broken links, missing pages)
#   scripts/docs.sh reference    regenerate docs/reference/ (config keys, commands) from the code
# Extra arguments go to `mkdocs serve` / `mkdocs build`.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${JURIST_VENV:-.venv}"
python="$venv/bin/python"
[ -x "$python" ] || python="$(command -v python || command -v python3)"
case "${1:-serve}" in
    serve) shift || true; exec "$python" -m mkdocs serve "$@" ;;
    build) shift; exec "$python" -m mkdocs build --strict "$@" ;;
    reference) shift; exec "$python" scripts/docs_reference.py "$@" ;;
    *) echo "usage: scripts/docs.sh [serve|build|reference] [mkdocs options]" >&2; exit 2 ;;
esac
