"""What the commands share: option types, config overrides, errors and logging."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from jurist.config.loading import parse_cli_overrides

EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}

ConfigOpt = Annotated[
    list[str],
    typer.Option("--config", "-c", help="Judge config: a YAML path or a built-in name. Repeat for a panel."),
]
InputOpt = Annotated[
    Path, typer.Option("--input", "-i", help="Dataset: .jsonl, .json, .csv, .parquet, .arrow")
]


def overrides(ctx: typer.Context, model: str | None = None, engine: str | None = None) -> dict[str, Any]:
    """The dotted config overrides after the named options, plus ``--model`` and ``--engine``."""
    values = parse_cli_overrides(ctx.args)
    if model is not None:
        values["inference_config.model.model_name"] = model
    if engine is not None:
        values["inference_config.engine"] = engine
    return values


def fail(exc: Exception, code: int = 2) -> NoReturn:
    """Print ``error: ...`` on stderr and exit with ``code``."""
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(code=code)


def setup_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
