"""``jurist probe fit``: a probe head from labelled rows (maps its flags to a
:class:`~jurist.probe.job.ProbeFit`; the work is :func:`jurist.probe.job.fit_probe`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, cast, get_args

import typer

from jurist.cli.common import ConfigOpt, InputOpt, fail, overrides
from jurist.cli.console import run_console
from jurist.cli.options import IdColumnOpt, JsonOpt, ModelOpt, VerboseOpt, label_options
from jurist.errors import JuristError
from jurist.labels.source import LabelSource
from jurist.records import Pooling

app = typer.Typer(help="Probe heads: judges that learn from labels.", no_args_is_help=True)


@label_options(required=True)
def fit(
    ctx: typer.Context,
    config: ConfigOpt,
    input: InputOpt,
    output: Annotated[Path, typer.Option("--output", "-o", help="The head file to write (JSON).")],
    labels: LabelSource,
    model: ModelOpt = None,
    id_column: IdColumnOpt = None,
    layers: Annotated[
        str | None, typer.Option(help="Layers to choose from, e.g. '8,12,16' (default: a grid).")
    ] = None,
    folds: Annotated[int, typer.Option(help="Outer folds of the nested cross-validation.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the folds and the learning curve.")] = 0,
    batch_size: Annotated[int | None, typer.Option(help="Prompts per forward pass.")] = None,
    pairs: Annotated[
        str | None,
        typer.Option(
            help="A column naming each row's preference pair: fit a reward head on the pairs (each row one "
            "response, its label whether people preferred it; Bradley-Terry), which scores one response."
        ),
    ] = None,
    pilot: Annotated[
        int | None,
        typer.Option(
            min=20,
            help="Choose the layer on this many rows (transformers, every layer), then read every row's "
            "state at that layer through the judge's engine (vLLM's pooling runner), chunked and cached.",
        ),
    ] = None,
    mlp: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Also fit an MLP head with one hidden layer of this many units; it is kept only where "
            "nested cross-validation scores it above the linear head (both scores are printed).",
        ),
    ] = None,
    max_cost: Annotated[
        float | None,
        typer.Option(
            min=0.01,
            help="An early-exit student: fit on the judge model's own layers that judge in PROBE (the model "
            "cut there) for at most this share of its LOGPROBS time per row, measured here first; every "
            "state then comes through the engine.",
        ),
    ] = None,
    cost_rows: Annotated[
        int, typer.Option(min=1, help="Rows each pass is timed on for --max-cost (after 4 warm-up rows).")
    ] = 32,
    pool: Annotated[
        str,
        typer.Option(
            help="The feature: 'last', the last token's state; 'mean', the mean of the states of one "
            "template field's tokens (--pool-field, default response); or 'last_mean', both. A pooled "
            "feature is read through the judge's engine (on vLLM, every token's state from its pooling "
            "runner).",
        ),
    ] = "last",
    pool_field: Annotated[
        str | None, typer.Option(help="The template field whose tokens --pool mean averages.")
    ] = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Fit a probe head on the judge model's hidden states from labelled rows, a bigger judge's verdicts
    (--verdicts: its label probabilities where it wrote them, distilled) or preference pairs (--pairs: a
    reward head), and say how good it is.

    The head reads the prompt the judge reads in LOGPROBS scoring; judge with it by `--judge_params.scoring
    PROBE --judge_params.probe HEAD`. Every number printed is measured on rows the head did not see (nested
    cross-validation), beside the judge's own verdict and the baselines on the same rows. The libraries'
    logs go to HEAD.log (--verbose: to the terminal too).
    """
    from jurist.probe.fit import FitSettings
    from jurist.probe.job import ProbeFit, fit_probe
    from jurist.probe.text import format_fit

    if len(config) != 1:
        fail(JuristError(f"a probe head is fitted for one judge: give one --config, not {len(config)}"))
    try:
        chosen = tuple(int(x) for x in layers.split(",")) if layers else None
    except ValueError:
        fail(JuristError(f"--layers: comma-separated layer numbers, not {layers!r}"))
    if pool not in get_args(Pooling):
        fail(JuristError(f"--pool: one of {', '.join(get_args(Pooling))}, not {pool!r}"))
    job = ProbeFit(
        config=config[0],
        input=input,
        output=output,
        overrides=overrides(ctx, model),
        labels=labels,
        id_column=id_column,
        layers=chosen,
        settings=FitSettings(folds=folds, seed=seed, mlp_units=mlp),
        batch_size=batch_size,
        pairs=pairs,
        pilot=pilot,
        max_cost=max_cost,
        cost_rows=cost_rows,
        pooling=cast(Pooling, pool),
        pooled_field=pool_field,
    )
    log = output.with_name(output.name + ".log")  # the libraries' logs, as a run keeps them beside its output
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with run_console(log, verbose=verbose):
            _, report = fit_probe(job)
    except (JuristError, OSError) as exc:
        fail(exc)
    typer.echo(json.dumps(report, indent=1) if as_json else format_fit(report, str(output)))
