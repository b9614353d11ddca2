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
    jurist filter RESULTS -o KEPT   keep rows by gates, predicates, quantiles, top-k
    jurist pairs RESULTS -o PAIRS   preference pairs for DPO
    jurist bench -c C -i F          throughput of judges on models (rows/s, tokens/s, latency, memory)
    jurist batch IN.jsonl -o OUT    an OpenAI batch file on a local engine, resumable
    jurist models list|fetch|path|convert   judge models by name, GGUF files, the model cache

Dotted options after the named ones override config keys, as in ``oumi judge dataset``. The commands
live in :mod:`.judging`, :mod:`.analysis`, :mod:`.evidence`, :mod:`.training`, :mod:`.bench` and
:mod:`.models`; they are registered here, explicitly.
"""

from __future__ import annotations

import typer

from jurist.cli import analysis, batch, bench, comparing, evidence, judging, models, training
from jurist.cli.common import EXTRA
from jurist.cli.label import label as label_command

app = typer.Typer(
    name="jurist",
    help="Score datasets with local judge models (Oumi-style judge configs, guided decoding, Arrow output).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
judge_app = typer.Typer(help="Judge a dataset.", no_args_is_help=True)
app.add_typer(judge_app, name="judge")
judge_app.command("dataset", context_settings=EXTRA)(judging.judge_dataset)
app.command("validate", context_settings=EXTRA)(judging.validate)
app.command("render", context_settings=EXTRA)(judging.render)
app.command("list")(judging.list_judges)
app.command("info")(analysis.info)
app.command("agree")(analysis.agree)
app.command("calibrate")(analysis.calibrate)
app.command("estimate")(evidence.estimate)
app.command("compare")(comparing.compare)
app.command("audit")(evidence.audit)
app.command("report")(evidence.report)
app.command("label")(label_command)
app.command("bench", context_settings=EXTRA)(bench.bench)
app.command("filter")(training.filter_command)
app.command("pairs")(training.pairs_command)
app.command("batch")(batch.batch)
app.add_typer(models.app, name="models")


def main() -> None:
    app()
