"""``jurist label``: label a judge's rows on a local web page (:mod:`jurist.labelling`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from jurist.cli.common import fail
from jurist.cli.options import ResultsArg
from jurist.errors import JuristError
from jurist.io.results import ResultTable

STRATEGIES = ("uniform", "stratified", "active")


def label(
    results: ResultsArg,
    labels: Annotated[
        Path,
        typer.Option(
            "--labels",
            help="The labels file (JSONL), appended to one line per label; created when absent, resumed "
            "when not.",
        ),
    ],
    judge: Annotated[
        str | None,
        typer.Option(help="The judge whose verdicts are labelled (default: the table's only one)."),
    ] = None,
    strategy: Annotated[
        str, typer.Option(help="How the rows to label are chosen: uniform, stratified or active.")
    ] = "uniform",
    budget: Annotated[int, typer.Option(help="How many rows to label (the sampling plan's size).")] = 100,
    seed: Annotated[int, typer.Option(help="Seed of the sampling plan (the same seed, the same rows).")] = 0,
    review: Annotated[
        bool,
        typer.Option(
            "--review",
            help="Review instead: rows whose label the judge disagrees with first, then pairwise rows whose "
            "two orders disagree, then the least confident; a corrected label is appended.",
        ),
    ] = False,
    show_judge: Annotated[
        bool, typer.Option("--show-judge", help="Show the judge's verdict before the label is given.")
    ] = False,
    labeller: Annotated[str | None, typer.Option(help="The labeller's name the page starts with.")] = None,
    port: Annotated[int, typer.Option(help="The port to serve on (0: a free one, printed).")] = 8765,
    host: Annotated[
        str, typer.Option(help="The address to listen on (0.0.0.0 to share the page on a network).")
    ] = "127.0.0.1",
) -> None:
    """Serve a page that shows one row at a time (its input fields and the judged response, or both of a
    pair, as text) with a button and a key per label, skip and undo. Rows come in the order of a sampling
    plan (--strategy, --budget, --seed); the judge's verdict stays hidden until a row is labelled. Each
    label is appended to --labels and synced to disk before the page says saved; a restart resumes at the
    first unlabelled row, and several labellers (or servers) can share one file. The page shows the labels
    given and the corrected (PPI++) estimate so far. Stop with Ctrl-C."""
    try:
        from jurist.labelling.app import create_app, serve
    except ImportError as exc:
        needed = "jurist label serves its page with starlette and uvicorn: pip install 'jurist[label]'"
        fail(JuristError(f"{needed} ({exc})"))
    from jurist.labelling.desk import Desk, DeskOptions
    from jurist.labels.file import Strategy

    try:
        if strategy not in STRATEGIES:
            raise JuristError(f"--strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
        if budget < 1:
            raise JuristError(f"--budget must be at least 1, not {budget}")
        if not 0 <= port <= 65535:
            raise JuristError(f"--port must lie between 0 and 65535, not {port}")
        table = ResultTable.open(results)
        name = judge if judge is not None else _only_judge(table)
        options = DeskOptions(
            judge=name,
            strategy=Strategy(strategy),
            budget=budget,
            seed=seed,
            review=review,
            blind=not show_judge,
            labeller=labeller,
        )
        desk = Desk(table, labels, options)
        progress = desk.progress()
        app = create_app(desk)
        given = f"{progress['given']} of {progress['budget']} rows labelled"
        typer.echo(f"labelling judge {name} into {labels}: {given}", err=True)
        serve(app, host, port, lambda url: typer.echo(f"open {url}  (Ctrl-C stops)"))
    except JuristError as exc:
        fail(exc)


def _only_judge(table: ResultTable) -> str:
    names = [j.name for j in table.judges if j.name not in table.cascade_stages]
    if len(names) == 1:
        return names[0]
    if not names:
        raise JuristError("the results hold no judge columns")
    raise JuristError(f"the results hold judges {', '.join(names)}: name one with --judge")
