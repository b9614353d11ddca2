"""``jurist probe fit``: a probe head from labelled rows (maps its flags to a
:class:`~jurist.probe.job.ProbeFit`; the work is :func:`jurist.probe.job.fit_probe`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from jurist.cli.common import InputOpt, fail, overrides
from jurist.cli.options import JsonOpt, LabelColumnOpt, LabelsIdOpt, LabelsOpt, ModelOpt
from jurist.errors import JuristError

app = typer.Typer(help="Probe heads: judges that learn from labels.", no_args_is_help=True)


def fit(
    ctx: typer.Context,
    config: Annotated[
        str, typer.Option("--config", "-c", help="The judge config (YAML path or built-in name).")
    ],
    input: InputOpt,
    output: Annotated[Path, typer.Option("--output", "-o", help="The head file to write (JSON).")],
    model: ModelOpt = None,
    labels: LabelsOpt = None,
    label_column: LabelColumnOpt = None,
    labels_id_column: LabelsIdOpt = None,
    id_column: Annotated[str | None, typer.Option(help="Input column the labels file's ids match.")] = None,
    verdicts: Annotated[
        Path | None, typer.Option(help="Fit on a results file's verdicts instead (distil a bigger judge).")
    ] = None,
    verdict_judge: Annotated[str | None, typer.Option(help="The judge of --verdicts to learn from.")] = None,
    layers: Annotated[
        str | None, typer.Option(help="Layers to choose from, e.g. '8,12,16' (default: a grid).")
    ] = None,
    folds: Annotated[int, typer.Option(help="Outer folds of the nested cross-validation.")] = 10,
    seed: Annotated[int, typer.Option(help="Seed of the folds and the learning curve.")] = 0,
    batch_size: Annotated[int | None, typer.Option(help="Prompts per forward pass.")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Fit a probe head on the judge model's hidden states from labelled rows, and say how good it is.

    The head reads the prompt the judge reads in LOGPROBS scoring; judge with it by `--judge_params.scoring
    PROBE --judge_params.probe HEAD`. Every number printed is measured on rows the head did not see (nested
    cross-validation), beside the judge's own verdict and the baselines on the same rows.
    """
    from jurist.probe.fit import FitSettings
    from jurist.probe.job import ProbeFit, fit_probe
    from jurist.probe.text import format_fit

    try:
        chosen = tuple(int(x) for x in layers.split(",")) if layers else None
    except ValueError:
        fail(JuristError(f"--layers: comma-separated layer numbers, not {layers!r}"))
    job = ProbeFit(
        config=config,
        input=input,
        output=output,
        overrides=overrides(ctx, model),
        label_column=label_column,
        labels=labels,
        labels_id_column=labels_id_column,
        id_column=id_column,
        verdicts=verdicts,
        verdict_judge=verdict_judge,
        layers=chosen,
        settings=FitSettings(folds=folds, seed=seed),
        batch_size=batch_size,
    )
    try:
        _, report = fit_probe(job)
    except JuristError as exc:
        fail(exc)
    typer.echo(json.dumps(report, indent=1) if as_json else format_fit(report, str(output)))
