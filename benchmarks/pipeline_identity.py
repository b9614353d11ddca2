"""Output identity of the host pipeline across code changes: every mode of ``pipeline_modes.py`` judges the
same 10k rows (with bad lines, missing values and failing answers among them) through the scripted backend
into Parquet, and the tables are compared exactly (column names, types and every value) with tables saved
from another version of the code.

    python benchmarks/pipeline_identity.py save DIR     # on the reference code
    python benchmarks/pipeline_identity.py check DIR    # on the changed code: exit 1 on any difference

``save`` also writes the input files into ``DIR/inputs``; ``check`` judges those same files.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from pipeline_modes import MODES, judge_and_backend, make_input, split

ROWS = 10_000


def judge_all(folder: Path, inputs: Path, rows: int, modes: list[str]) -> None:
    """Each mode's results over ``rows`` rows, as ``folder/<mode>.parquet``; the input files are read from
    ``inputs`` (written there first when absent), so that both versions judge the same files (their paths
    are in the errors of bad lines)."""
    from jurist import Engine

    folder.mkdir(parents=True, exist_ok=True)
    inputs.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        for mode in modes:
            _, kind = split(mode)
            source = inputs / f"{kind}-{rows}.jsonl"
            if not source.exists():
                make_input(source, rows, kind, faults=True)
            config, backend = judge_and_backend(mode, Path(scratch), faults=True)
            target = folder / f"{mode}.parquet"
            target.unlink(missing_ok=True)
            Engine(config, backend).run_file(source, target, overwrite=True)


def differences(reference: Path, candidate: Path) -> list[str]:
    """What differs between two result tables (empty: identical names, types and values)."""
    import pyarrow.parquet as pq

    old, new = pq.read_table(reference), pq.read_table(candidate)
    found = []
    if old.schema.names != new.schema.names:
        gone = [n for n in old.schema.names if n not in new.schema.names]
        added = [n for n in new.schema.names if n not in old.schema.names]
        found.append(f"columns differ: gone {gone}, added {added} (or reordered)")
    if old.num_rows != new.num_rows:
        found.append(f"{old.num_rows} rows before, {new.num_rows} now")
    for name in old.schema.names:
        if name not in new.schema.names or old.num_rows != new.num_rows:
            continue
        a, b = old.column(name), new.column(name)
        if a.type != b.type:
            found.append(f"{name}: type {a.type} before, {b.type} now")
        elif not a.equals(b):
            before, after = a.to_pylist(), b.to_pylist()
            pairs = enumerate(zip(before, after, strict=True))
            rows = [i for i, (x, y) in pairs if x != y or type(x) is not type(y)]
            first = rows[0] if rows else None
            where = f"row {first}: {before[first]!r} before, {after[first]!r} now" if rows else "nulls differ"
            found.append(f"{name}: {len(rows)} rows differ; {where}")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("action", choices=("save", "check"))
    parser.add_argument("folder", type=Path)
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    args = parser.parse_args()
    if args.action == "save":
        judge_all(args.folder, args.folder / "inputs", args.rows, args.modes)
        print(f"saved {len(args.modes)} tables in {args.folder}")
        return
    failed = False
    with tempfile.TemporaryDirectory() as scratch:
        judge_all(Path(scratch), args.folder / "inputs", args.rows, args.modes)
        for mode in args.modes:
            found = differences(args.folder / f"{mode}.parquet", Path(scratch) / f"{mode}.parquet")
            print(f"{mode}: {'identical' if not found else 'DIFFERENT'}")
            for line in found:
                print(f"  {line}")
            failed = failed or bool(found)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
