"""Command-line options, each declared once: the ones several commands share, ``judge dataset``'s (its
function only lists them), and the label options of every command that reads labels
(:func:`label_options`)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import typer

from jurist.cli.common import fail
from jurist.errors import JuristError
from jurist.labels.source import LabelSource

# ------------------------------------------------------------------------------- shared by commands
ResultsArg = Annotated[
    str,
    typer.Argument(
        help="A result table written by `jurist judge dataset`: a results file, or a results dataset (a "
        "folder or URL prefix)."
    ),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="No progress line (the summary stays).")]
VerboseOpt = Annotated[
    bool, typer.Option("--verbose", "-v", help="Libraries' logs on the terminal too (else in the log file).")
]
OverwriteOpt = Annotated[bool, typer.Option(help="Replace an output that holds another run's results.")]
SummaryJsonOpt = Annotated[Path | None, typer.Option(help="Also write the run summary as JSON here.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON instead of the readable text.")]
InputFormatOpt = Annotated[str | None, typer.Option(help="The input's format, when its name does not say.")]
EngineOpt = Annotated[
    str | None,
    typer.Option(help="VLLM, NATIVE, REMOTE_VLLM or OPENAI (or an Oumi engine name: ANTHROPIC, ...)."),
]

# ------------------------------------------------------------------------------- judge dataset
DatasetOpt = Annotated[
    list[str],
    typer.Option(
        "--input",
        "-i",
        help="Dataset: .jsonl (also .gz/.zst/.bz2), .json, .csv/.tsv, .parquet, .arrow, a Hugging Face "
        "dataset folder, or - for JSONL on stdin; or a dataset of such files: a folder, a glob ('shards/*."
        "jsonl.gz'), a URL (s3://, gs://, hdfs://, abfs://; credentials from the environment), or -i "
        "repeated.",
    ),
]
ResultsOpt = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="Results: .parquet, .arrow/.feather, .jsonl; or a results dataset, one Parquet shard per input "
        "shard and a manifest: a folder or a URL prefix (ending in /). None: print them as a table.",
    ),
]
BadShardOpt = Annotated[
    str,
    typer.Option(
        help="Over a dataset: a shard that cannot be read is named and the others judged; 'fail' then exits "
        "4 (a rerun tries it again), 'skip' records it as skipped and exits 0."
    ),
]
UnitMbOpt = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Over a dataset: a Parquet file bigger than this (MiB) is judged in slices of "
        "its row groups, one unit of work each (default 512).",
    ),
]
ModelOpt = Annotated[str | None, typer.Option(help="Model for every judge (HF id or local folder).")]
RawOpt = Annotated[
    bool, typer.Option("--raw", help="Without --output: show each judge's raw answer in the table too.")
]
CriteriaOpt = Annotated[
    Path | None,
    typer.Option(
        help="Criteria (one per line, or a JSON/YAML list): judge each conversation of the input's "
        "messages column against each, one output row per pair (judge conversation/criterion)."
    ),
]
LimitOpt = Annotated[int | None, typer.Option(help="Judge only the first N rows.")]
SampleOpt = Annotated[int | None, typer.Option(help="Judge a uniform random sample of N rows.")]
SeedOpt = Annotated[int, typer.Option(help="Seed of --sample.")]
ChunkSizeOpt = Annotated[
    int | None, typer.Option(help="Rows per chunk (planned, written and resumed together).")
]
IdColumnOpt = Annotated[str | None, typer.Option(help="Input column that identifies rows.")]
CarryOpt = Annotated[bool, typer.Option(help="Copy the input columns into the output.")]
PanelOpt = Annotated[bool, typer.Option(help="Combine the judges as a panel (plurality, mean, agreement).")]
QuorumOpt = Annotated[int | None, typer.Option(help="Fewest usable verdicts for a panel row.")]
CalibrationOpt = Annotated[
    list[Path] | None,
    typer.Option(help="A calibration file from `jurist calibrate` (adds <judge>.calibrated)."),
]
RetryFailedOpt = Annotated[
    bool, typer.Option(help="Re-judge only the rows whose status is not ok, in a finished output.")
]
RepairOpt = Annotated[
    bool,
    typer.Option(help="On resume, judge again only the rows of damaged committed parts (see the error)."),
]
MaxFailureRateOpt = Annotated[
    float,
    typer.Option(help="Exit 3 when more than this share of outputs is not ok (default: only when none is)."),
]
MaxReasoningCutRateOpt = Annotated[
    float,
    typer.Option(
        help="Exit 3 when the reasoning budget cut more than this share of a thinking judge's rows "
        "(default: never)."
    ),
]
KeepOpt = Annotated[
    list[str] | None,
    typer.Option(help="Also write the rows that pass this predicate (and the gates of `jurist filter`)."),
]
KeptOpt = Annotated[Path | None, typer.Option(help="Where --keep writes (default <output>.kept.<ext>).")]
DataParallelOpt = Annotated[
    int | None,
    typer.Option(min=1, help="Engine processes, one per GPU (or share of the cores); with --ray, actors."),
]
RayOpt = Annotated[
    str | None,
    typer.Option(
        help="Run on Ray: 'local' starts a local instance, 'auto' joins this machine's cluster, or a "
        "cluster address (needs the ray extra)."
    ),
]
WorkerDeathOpt = Annotated[
    str,
    typer.Option(
        help="With --data-parallel: 'stop' the run when an engine process dies (committed results kept), "
        "or 'continue' with the engines left."
    ),
]
MaxRuntimeOpt = Annotated[
    str | None,
    typer.Option(
        help="Stop after this long (3h30m, 90m, 45s), keeping the committed chunks, and exit 124; a "
        "rerun resumes. Set it under a scheduler's time limit."
    ),
]
EmitBatchOpt = Annotated[
    Path | None,
    typer.Option(
        help="Write the requests as an OpenAI batch file (.jsonl) instead of judging. With "
        "--from-batch-results: the requests those results do not answer (a thinking judge's next round)."
    ),
]
FromBatchResultsOpt = Annotated[
    list[Path] | None,
    typer.Option(
        help="Answer from an OpenAI batch output file instead of a model. Repeat it for a judge that calls "
        "the model in rounds (a reasoning phase, RAG): one results file per round."
    ),
]

# ------------------------------------------------------------------------------- labels
LABEL_OPTIONS = (  # (option, LabelSource field, takes a path, help)
    ("labels", "file", True, "A labels file (`jurist label`'s, an LLMBar JSON file, a CSV, ...)."),
    ("label-column", "column", False, "The label column: of --labels (default 'label'), else of the rows."),
    ("labels-id-column", "id_column", False, "Id column of --labels (default: row_id, id, else positions)."),
    ("label-map", "label_map", False, "Map label values, e.g. '1=a,2=b'."),
    ("verdicts", "verdicts", True, "A results file whose verdicts are the labels (matched by row_id)."),
    ("verdict-judge", "verdict_judge", False, "The judge of --verdicts (default: its only one)."),
)
OptionalPath = Path | None
OptionalText = str | None
Command = TypeVar("Command", bound=Callable[..., Any])


def label_options(prefix: str = "", *, required: bool = False) -> Callable[[Command], Command]:
    """Declare the label options once: a command's parameter ``labels`` (``<prefix>_labels``) becomes
    ``--labels``, ``--label-column``, ``--labels-id-column``, ``--label-map``, ``--verdicts`` and
    ``--verdict-judge`` (``--<prefix>-labels``, ...) in the signature typer reads, and the command gets one
    :class:`~jurist.labels.source.LabelSource` built from them: None when none is given, unless
    ``required``. Options that do not go together exit 2, named."""
    flag = f"--{prefix}-" if prefix else "--"
    target = f"{prefix}_labels" if prefix else "labels"
    keys = [(flag + option)[2:].replace("-", "_") for option, *_ in LABEL_OPTIONS]
    lead = f"{prefix.capitalize()}: " if prefix else ""

    def spelled(text: str) -> str:
        return re.sub(r"--(?=label|verdict)", flag, text)

    def added(old: inspect.Parameter) -> list[inspect.Parameter]:
        out = []
        for key, (option, _, path, text) in zip(keys, LABEL_OPTIONS, strict=True):
            info = typer.Option(flag + option, help=lead + spelled(text))
            hint = Annotated[OptionalPath, info] if path else Annotated[OptionalText, info]
            out.append(old.replace(name=key, default=None, annotation=hint))
        return out

    def wrap(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        params = [
            new
            for old in signature.parameters.values()
            for new in (added(old) if old.name == target else [old])
        ]

        def run(*args: Any, **kwargs: Any) -> Any:
            given = {field: kwargs.pop(key) for key, (_, field, *_) in zip(keys, LABEL_OPTIONS, strict=True)}
            try:
                wanted = required or any(v is not None for v in given.values())
                kwargs[target] = LabelSource(**given) if wanted else None
            except JuristError as exc:
                fail(JuristError(spelled(str(exc))))
            return command(*args, **kwargs)

        for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(run, attribute, getattr(command, attribute))
        run.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        return cast(Command, run)

    return wrap
