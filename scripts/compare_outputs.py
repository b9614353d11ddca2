"""Compare the results two checkouts of jurist write for the same job: the same columns, types and values.

    python scripts/compare_outputs.py OLD NEW -- judge dataset -c generic/truthfulness -i rows.jsonl
    python scripts/compare_outputs.py OLD NEW --scripted ANSWER -- JUDGE INPUT

OLD and NEW are checkouts (their ``src/`` goes first on ``PYTHONPATH``). The first form runs
``python -m jurist <args> -o <file>`` in each; the second judges INPUT with JUDGE on the scripted backend,
every request answered with ANSWER. The run metadata (times, versions) is not compared. Prints one JSON
object: rows, columns, and the columns whose type or values differ; exits 1 when any does.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

SCRIPTED = """
import sys
from jurist import Engine, ScriptedBackend
judge, source, output, answer = sys.argv[1:5]
Engine(judge, ScriptedBackend([answer], cycle=True, record=False)).run_file(source, output)
"""


def run(checkout: Path, args: list[str], output: Path, scripted: str | None) -> None:
    env = {**os.environ, "PYTHONPATH": str(checkout / "src")}
    if scripted is None:
        command = [sys.executable, "-m", "jurist", *args, "-o", str(output), "-q"]
    else:
        command = [sys.executable, "-c", SCRIPTED, *args, str(output), scripted]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if not output.exists():
        raise SystemExit(f"{checkout}: no output (exit {done.returncode})\n{done.stderr[-2000:]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--scripted", help="answer every request with this text (scripted backend)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    options = parser.parse_args(argv[:cut])
    job = argv[cut + 1 :]
    with tempfile.TemporaryDirectory() as folder:
        tables = {}
        for name in ("old", "new"):
            output = Path(folder) / f"{name}.parquet"
            run(getattr(options, name), job, output, options.scripted)
            tables[name] = pq.read_table(output)
    old, new = tables["old"], tables["new"]
    differ = []
    for column in sorted(set(old.column_names) | set(new.column_names)):
        same = (
            column in old.column_names
            and column in new.column_names
            and old.schema.field(column).type == new.schema.field(column).type
            and old.column(column).to_pylist() == new.column(column).to_pylist()
        )
        if not same:
            differ.append(column)
    report = {
        "job": job,
        "rows": [old.num_rows, new.num_rows],
        "columns": len(new.column_names),
        "same_column_order": old.column_names == new.column_names,
        "differ": differ,
    }
    print(json.dumps(report))
    raise SystemExit(1 if differ or not report["same_column_order"] or old.num_rows != new.num_rows else 0)


if __name__ == "__main__":
    main()
