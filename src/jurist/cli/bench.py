"""``jurist bench``: compare judge models' throughput on your own rows, with a table and plots."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurist.bench.report import summary_lines, write
from jurist.bench.runner import BenchSpec, run_bench
from jurist.cli.cascade import (
    AbstainOpt,
    CascadeOpt,
    DeltaOpt,
    LabelsOpt,
    OptionalConfigOpt,
    TargetOpt,
    ThresholdOpt,
    bench_cascade,
    cascade_settings,
)
from jurist.cli.common import fail, overrides
from jurist.cli.console import run_console
from jurist.errors import JuristError
from jurist.io.opening import open_source


def bench(
    ctx: typer.Context,
    input: Annotated[str, typer.Option("--input", "-i", help="Rows to judge (any dataset jurist reads).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for bench.json, bench.md, *.png.")],
    config: OptionalConfigOpt = None,
    model: Annotated[
        list[str] | None, typer.Option(help="A model to measure (repeat; loaded one after another).")
    ] = None,
    engine: Annotated[str | None, typer.Option(help="VLLM or NATIVE (or a remote engine).")] = None,
    modes: Annotated[str, typer.Option(help="Comma-separated: generation, logprobs, reward.")] = "generation",
    rows: Annotated[int, typer.Option(help="Rows to judge per run (the first N).")] = 200,
    repeat: Annotated[int, typer.Option(help="Warm runs per measurement (the fastest is kept).")] = 1,
    cold_rows: Annotated[int, typer.Option(help="Rows of the first (cold) batch.")] = 8,
    one_row: Annotated[
        bool,
        typer.Option("--one-row", help="Also judge the first rows one at a time (batched / one-row ratio)."),
    ] = False,
    one_row_rows: Annotated[int, typer.Option(help="Rows of the one-row loop.")] = 16,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress lines.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Libraries' logs on the terminal (else OUTPUT/bench.log).")
    ] = False,
    cascade: CascadeOpt = None,
    threshold: ThresholdOpt = None,
    abstain: AbstainOpt = False,
    target_agreement: TargetOpt = 0.9,
    delta: DeltaOpt = 0.1,
    calibration_labels: LabelsOpt = None,
) -> None:
    """Measure judge models: rows/s, tokens/s, parse rate, latency, load and cold time, memory.

    For every model (one after another), judge and mode. Writes OUTPUT/bench.json, bench.md and the plots
    rows_per_s.png and tokens_per_s.png; the libraries' logs go to OUTPUT/bench.log. Dotted options after
    the named ones override config keys (e.g. --inference_config.engine_params.data_parallel 2).
    """
    if cascade:  # time a cascade: its stages, shares and compute saved (OUTPUT/cascade_bench.json)
        try:
            cascading = cascade_settings(threshold, abstain, target_agreement, delta, calibration_labels)
            lines = bench_cascade(cascade, overrides(ctx, None, engine), input, rows, output, cascading)
        except (JuristError, OSError) as exc:
            fail(exc)
        typer.echo("\n".join(lines))
        return
    if not config:
        fail(JuristError("give a judge: --config (or --cascade per stage)"))
    try:
        settings = overrides(ctx, None, engine)
        table, _ = open_source(input).read_all()
        spec = BenchSpec(
            judges=list(config),
            rows=table.slice(0, rows).to_pylist(),
            models=list(model) if model else [None],
            modes=[m.strip().lower() for m in modes.split(",") if m.strip()],
            repeat=repeat,
            cold_rows=cold_rows,
            one_row=one_row_rows if one_row else 0,
            overrides=settings,
        )
        spec.check()
        output.mkdir(parents=True, exist_ok=True)
    except (JuristError, OSError) as exc:
        fail(exc)
    try:
        with run_console(output / "bench.log", verbose=verbose) as console:
            results = run_bench(spec, progress=None if quiet else console.err)
    except JuristError as exc:
        fail(exc)
    files = write(results, output)
    for line in summary_lines(results):
        typer.echo(line)
    typer.echo("wrote " + ", ".join(str(path) for path in files.values()))
