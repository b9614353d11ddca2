"""``jurist bench``: compare judge models' throughput on your own rows, with a table and plots."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import IO, Annotated, Any

import typer

from jurist.bench.cascade_bench import CascadeBench, bench_cascade
from jurist.bench.cost import Prices, add_costs, parse_token_prices
from jurist.bench.report import summary_lines, write
from jurist.bench.runner import BenchSpec, bench_spec, run_bench
from jurist.cli.cascade import (
    CALIBRATION,
    AbstainOpt,
    CascadeOpt,
    DeltaOpt,
    OptionalConfigOpt,
    TargetOpt,
    ThresholdOpt,
    cascade_from_cli,
)
from jurist.cli.common import fail, overrides
from jurist.cli.console import run_console
from jurist.cli.options import EngineOpt, QuietOpt, VerboseOpt, label_options
from jurist.errors import ConfigError, JuristError
from jurist.labels.source import LabelSource
from jurist.models.resolve import prepare_models


@label_options()
@label_options(CALIBRATION)
def bench(
    ctx: typer.Context,
    input: Annotated[str, typer.Option("--input", "-i", help="Rows to judge (any dataset jurist reads).")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Folder for bench.json, bench.md, *.png.")],
    config: OptionalConfigOpt = None,
    model: Annotated[
        list[str] | None, typer.Option(help="A model to measure (repeat; loaded one after another).")
    ] = None,
    engine: EngineOpt = None,
    modes: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated: generation, logprobs, probe (give --judge_params.probe HEAD), reward "
            "(default generation).",
            show_default=False,
        ),
    ] = None,
    rows: Annotated[int, typer.Option(help="Rows to judge per run (the first N).")] = 200,
    repeat: Annotated[int, typer.Option(help="Warm runs per measurement (the fastest is kept).")] = 1,
    cold_rows: Annotated[int, typer.Option(help="Rows of the first (cold) batch.")] = 8,
    one_row: Annotated[
        bool,
        typer.Option("--one-row", help="Also judge the first rows one at a time (batched / one-row ratio)."),
    ] = False,
    one_row_rows: Annotated[int, typer.Option(help="Rows of the one-row loop.")] = 16,
    gpu_hour_price: Annotated[
        float | None,
        typer.Option(help="Dollars per hour of one GPU (or of the machine: --price-per machine)."),
    ] = None,
    price_per: Annotated[str, typer.Option(help="What --gpu-hour-price pays for: gpu or machine.")] = "gpu",
    gpus: Annotated[
        int | None, typer.Option(min=1, help="GPUs the price pays for (default: the machine's, at least 1).")
    ] = None,
    price_per_million: Annotated[
        str | None,
        typer.Option(help="Remote engines: dollars per million input,output tokens, e.g. 0.075,0.3."),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    cascade: CascadeOpt = None,
    threshold: ThresholdOpt = None,
    abstain: AbstainOpt = False,
    target_agreement: TargetOpt = None,
    delta: DeltaOpt = None,
    calibration_labels: LabelSource | None = None,
    baseline: Annotated[
        bool,
        typer.Option(
            "--baseline/--no-baseline",
            help="Cascade: also measure the last stage alone over the same rows (rows/s as a ratio).",
        ),
    ] = True,
    labels: LabelSource | None = None,
    by: Annotated[
        str | None, typer.Option(help="With labels: an input column whose values split the quality report.")
    ] = None,
) -> None:
    """Measure judge models: rows/s, tokens/s, parse rate, latency, load and cold time, memory.

    For every model (one after another), judge and mode. Writes OUTPUT/bench.json, bench.md and the plots
    rows_per_s.png and tokens_per_s.png (and cost_per_million.png with --gpu-hour-price or
    --price-per-million: dollars per million judgments); the libraries' logs go to OUTPUT/bench.log. Dotted
    options after the named ones override config keys (e.g. --inference_config.engine_params.data_parallel 2).
    With --cascade per stage (and --threshold or --calibration-labels): the cascade, run as `jurist judge`
    runs it, is one entry ("cascade: a -> b", with its shares per stage and compute saved; its results in
    OUTPUT/cascade.parquet), and its last stage alone over the same rows another (--no-baseline: not).

    With labels (--labels, --label-column or --verdicts, matched to the rows by their ids), the verdicts'
    accuracy with a 95 % interval beside the majority-label baseline (pairwise: also first shown, longer and
    shorter answer wins), and for pairwise judges order consistency, first-shown rate and both decisions.
    """
    if not config and not cascade:
        fail(JuristError("give a judge: --config (or --cascade per stage)"))
    measure: Callable[[IO[str] | None], dict[str, Any]]
    try:
        settings = overrides(ctx, None, engine)
        if price_per not in ("gpu", "machine"):
            raise ConfigError(f"--price-per takes gpu or machine, got {price_per!r}")
        token_prices = parse_token_prices(price_per_million) if price_per_million else (None, None)
        prices = Prices(gpu_hour_price, price_per, gpus, *token_prices)  # type: ignore[arg-type]
        found = cascade_from_cli(cascade, threshold, abstain, target_agreement, delta, calibration_labels)
        if found is not None:
            given = [name for name, value in (("--config", config), ("--model", model), ("--modes", modes),
                                               ("--one-row", one_row)) if value]  # fmt: skip
            if given:
                raise ConfigError(
                    "a cascade is measured as its stage configs say (model, scoring): "
                    f"drop {', '.join(given)}"
                )
            stages, cascading = found
            job = CascadeBench(
                stages,
                input,
                output,
                cascading,
                rows=rows,
                overrides=settings,
                repeat=repeat,
                cold_rows=cold_rows,
                baseline=baseline,
            )
            job.check()
            measure = partial(_cascade, job)
        else:
            spec = bench_spec(
                input,
                rows,
                judges=list(config or ()),
                models=list(model) if model else [None],
                modes=[m.strip().lower() for m in (modes or "generation").split(",") if m.strip()],
                repeat=repeat,
                cold_rows=cold_rows,
                one_row=one_row_rows if one_row else 0,
                overrides=settings,
                labels=labels,
                by=by,
            )
            prepare_models(model or [])  # GGUF files converted now, their progress on the terminal
            measure = partial(_judges, spec)
        output.mkdir(parents=True, exist_ok=True)
    except (JuristError, OSError) as exc:
        fail(exc)
    try:
        with run_console(output / "bench.log", verbose=verbose) as console:
            results = add_costs(measure(None if quiet else console.err), prices)
    except (JuristError, OSError) as exc:
        fail(exc)
    files = write(results, output)
    for line in summary_lines(results):
        typer.echo(line)
    typer.echo("wrote " + ", ".join(str(path) for path in files.values()))


def _cascade(job: CascadeBench, progress: IO[str] | None) -> dict[str, Any]:
    return bench_cascade(job, progress=progress)


def _judges(spec: BenchSpec, progress: IO[str] | None) -> dict[str, Any]:
    return run_bench(spec, progress=progress)
