"""Command-line options, each declared once: the ones several commands share, and ``judge dataset``'s (its
function only lists them)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

# ------------------------------------------------------------------------------- shared by commands
ResultsArg = Annotated[Path, typer.Argument(help="A result table written by `jurist judge dataset`.")]
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
    str,
    typer.Option(
        "--input",
        "-i",
        help="Dataset: .jsonl (also .gz/.zst/.bz2), .json, .csv/.tsv, .parquet, .arrow, a Hugging Face "
        "dataset folder, or - for JSONL on stdin.",
    ),
]
ResultsOpt = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", help="Results: .parquet, .arrow/.feather, .jsonl (none: print them as a table)"
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
        help="With --data-parallel: 'stop' the run when an engine process dies (committed chunks kept), "
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
LabelsOpt = Annotated[
    Path | None,
    typer.Option(help="A file with human labels (e.g. an LLMBar JSON file), by row id or position."),
]
LabelColumnOpt = Annotated[
    str | None, typer.Option(help="The label column (in the results, or in --labels; default 'label').")
]
LabelsIdOpt = Annotated[
    str | None,
    typer.Option(
        help="Row-id column of the labels file (default: its row_id column, as `jurist label` writes, or "
        "else its row positions 0, 1, ...)."
    ),
]
LabelMapOpt = Annotated[str | None, typer.Option(help="Map label values, e.g. '1=a,2=b'.")]
