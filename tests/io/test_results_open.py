"""A results file that cannot be read (truncated Parquet, a foreign Arrow file, a JSONL line that is not
JSON) is an input error naming the file, for Python users and for every command that reads results."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from jurist.cli import app
from jurist.errors import InputError
from jurist.io.results import ResultTable


def broken_files(folder: Path) -> list[Path]:
    whole = folder / "whole.parquet"
    pq.write_table(pa.table({"row_id": list(range(50)), "x": [str(i) for i in range(50)]}), whole)
    data = whole.read_bytes()
    truncated = folder / "truncated.parquet"
    truncated.write_bytes(data[: len(data) // 2])
    garbage = folder / "garbage.arrow"
    garbage.write_bytes(b"not an arrow file at all")
    lines = folder / "lines.jsonl"
    lines.write_text('{"row_id": 0}\n{"row_id": \n')
    return [truncated, garbage, lines]


def test_an_unreadable_results_file_is_an_input_error_naming_it(tmp_path: Path) -> None:
    for path in broken_files(tmp_path):
        with pytest.raises(InputError, match=r"not a readable results file|is not a result row") as caught:
            ResultTable.open(path)
        assert str(path) in str(caught.value)
        with pytest.raises(InputError, match=r"not a readable results file|is not a result row"):
            ResultTable.open(path, columns=["row_id"])


@pytest.mark.parametrize("command", [["estimate"], ["audit"], ["info"], ["report", "-o", "out.html"]])
def test_commands_exit_2_on_a_truncated_parquet_file(tmp_path: Path, command: list[str]) -> None:
    truncated = broken_files(tmp_path)[0]
    args = [command[0], str(truncated), *(["--label-column", "x"] if command[0] == "estimate" else [])]
    args += [a if a != "out.html" else str(tmp_path / a) for a in command[1:]]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, (result.output, result.exception)
    assert "truncated.parquet" in result.output
