"""The ``jurist`` command line.

    jurist judge dataset --config generic/truthfulness --input rows.jsonl --output out.parquet \\
        [--judge_params.response_format XML ...]
    jurist validate CONFIG          load a config and explain it
    jurist render --config C --input F --limit N    print what the model would be sent
    jurist list                     the built-in judges
    jurist info RESULTS             where results came from (versions, models, options, statuses)
    jurist agree RESULTS ...        judges against human labels
    jurist calibrate RESULTS ...    fit a calibration map
    jurist estimate RESULTS --labels F    PPI++ corrected means with intervals
    jurist compare A B [--labels F]       two judges on the same rows: flips, agreement, which is better
    jurist audit RESULTS [--labels F]     position, length, lean, confidence, agreement
    jurist report RESULTS -o R.html       one self-contained HTML report
    jurist label RESULTS --labels F       label rows on a local web page (append-only, resumable)
    jurist probe fit -c C -i F -o HEAD    a probe head on the judge's hidden states, from labels
    jurist filter RESULTS -o KEPT   keep rows by gates, predicates, quantiles, top-k
    jurist pairs RESULTS -o PAIRS   preference pairs for DPO
    jurist bench -c C -i F          throughput of judges on models (rows/s, tokens/s, latency, memory)
    jurist batch IN.jsonl -o OUT    an OpenAI batch file on a local engine, resumable
    jurist models list|fetch|path|convert   judge models by name, GGUF files, the model cache

``jurist --help`` lists the commands in that order (:data:`ORDER`), one line each, in four panels;
each command's own ``--help`` gives its whole docstring. ``jurist --version`` prints jurist's and vLLM's
versions. Dotted options after the named ones override config keys, as in ``oumi judge dataset``. The
commands live in :mod:`.judging`, :mod:`.analysis`, :mod:`.evidence`, :mod:`.training`, :mod:`.bench` and
:mod:`.models`; they are registered here, explicitly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from jurist.cli import analysis, batch, bench, comparing, evidence, judging, models, probe, training
from jurist.cli.common import EXTRA, versions_line
from jurist.cli.label import label as label_command

JUDGE = "Judge"
USE = "Use the scores"
PEOPLE = "Check a judge against people's labels"
MODELS = "Models and speed"

ORDER = (
    "judge", "merge", "validate", "render", "list", "info",
    "filter", "pairs", "batch",
    "label", "agree", "estimate", "compare", "audit", "calibrate", "report", "probe",
    "models", "bench",
)  # fmt: skip
"""The commands in a user's order: judging first, then what uses the scores, then evidence, then models."""


class UsersOrder(TyperGroup):
    """Lists the commands in :data:`ORDER` (typer would put sub-apps like ``judge`` after the rest)."""

    def list_commands(self, ctx: Any) -> list[str]:
        names = list(super().list_commands(ctx))
        return sorted(names, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER))


app = typer.Typer(
    name="jurist",
    cls=UsersOrder,
    help="Score datasets with local judge models (Oumi-style judge configs, guided decoding, Arrow output).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(versions_line())
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print jurist's and vLLM's versions."
        ),
    ] = False,
) -> None:
    """The options that come before a command (``--version``)."""


judge_app = typer.Typer(help="Judge a dataset.", no_args_is_help=True)
app.add_typer(
    judge_app,
    name="judge",
    short_help="Judge a dataset: one typed output row per input row.",
    rich_help_panel=JUDGE,
)
judge_app.command(
    "dataset", short_help="Judge every row of a dataset; write one row per input row.", context_settings=EXTRA
)(judging.judge_dataset)


def _add(
    name: str,
    command: Callable[..., Any],
    short_help: str,
    panel: str,
    context_settings: dict[str, Any] | None = None,
) -> None:
    app.command(name, short_help=short_help, rich_help_panel=panel, context_settings=context_settings)(
        command
    )


_add("merge", judging.merge_command, "Merge a results dataset's shards into one results file.", JUDGE)
_add("validate", judging.validate, "Load a judge config and explain it.", JUDGE, context_settings=EXTRA)
_add("render", judging.render, "Print the prompts a model would be sent.", JUDGE, context_settings=EXTRA)
_add("list", judging.list_judges, "List the built-in judges.", JUDGE)
_add("info", analysis.info, "Provenance of a results file: versions, models, dtype, statuses.", JUDGE)
_add("filter", training.filter_command, "Keep the rows that pass gates, predicates or a top-k.", USE)
_add("pairs", training.pairs_command, "Preference pairs for DPO from scores or verdicts.", USE)
_add("batch", batch.batch, "Run an OpenAI batch file on a local engine.", USE)
_add("label", label_command, "Label rows on a local web page.", PEOPLE)
_add("agree", analysis.agree, "Agreement of judges with human labels.", PEOPLE)
_add("estimate", evidence.estimate, "PPI++ corrected means with intervals.", PEOPLE)
_add("compare", comparing.compare, "Two judges on the same rows: flips, agreement, which is better.", PEOPLE)
_add("audit", evidence.audit, "Position, length, lean and confidence biases of a judge.", PEOPLE)
_add("calibrate", analysis.calibrate, "Fit a calibration map from probabilities to labels.", PEOPLE)
_add("report", evidence.report, "One self-contained HTML report of a results file.", PEOPLE)
probe.app.command("fit", context_settings=EXTRA)(probe.fit)
app.add_typer(
    probe.app,
    name="probe",
    short_help="Fit a probe head: a judge that learns from labels.",
    rich_help_panel=PEOPLE,
)
app.add_typer(
    models.app,
    name="models",
    short_help="Fetch judge models by name, list the cache, convert GGUF files.",
    rich_help_panel=MODELS,
)
_add(
    "bench",
    bench.bench,
    "Throughput of judge models: rows/s, tokens/s, latency.",
    MODELS,
    context_settings=EXTRA,
)


def main() -> None:
    app()
