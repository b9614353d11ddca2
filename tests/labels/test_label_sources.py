"""One label source, one id rule: every command that reads labels picks the same rows with the same labels.

For one set of labels written in each of its forms (a ``jurist label`` JSONL file with row ids, corrected
and undone as the labelling page writes them; an LLMBar-style JSON file matched by position; a CSV with an
``id`` column), and for another run's verdicts (``--verdicts``), the evidence commands' join (result
rows), ``probe fit``'s labels (input rows), ``bench``'s labels, a cascade's calibration rows and the
bench's cascade agreement are held to the same rows. Real files throughout, and results written by jurist
on the scripted backend. Then ``jurist agree --verdicts`` and ``jurist bench --labels`` with a row-id
labels file, as a user runs them.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jurist import Engine, ScriptedBackend
from jurist.bench.cascaded import agreement
from jurist.bench.runner import bench_spec
from jurist.cascade.calibrate import _labelled_rows
from jurist.cascade.engine import CascadeEngine
from jurist.cli import app
from jurist.config.cascade import CalibrationSettings, CascadeSettings, stage_configs
from jurist.engine.plan import chunk_row_ids
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.errors import InputError
from jurist.io.readers import read_input
from jurist.io.results import ResultTable
from jurist.labels.file import LabelStore
from jurist.labels.source import LabelSource
from jurist.probe.job import ProbeFit, _labels
from jurist.records import LabelRequest

JUDGE: dict[str, Any] = {
    "name": "quality",
    "judge_params": {"prompt_template": "Q: {question}\nA: {response}", "judgment_type": "BOOL"},
}
POINT = {**JUDGE, "judge_params": {**JUDGE["judge_params"], "scoring": "LOGPROBS"}}
ROWS = 8
# the labels every form holds: row -> label (the other rows unlabelled)
EXPECTED = {1: "yes", 2: "no", 5: "yes", 6: "no"}


def says_yes(request: LabelRequest) -> dict[str, float]:
    """Yes for a response with 'good' in it (rows 0, 1, 2, 3), with probability 0.9."""
    p_yes = 0.9 if "good" in request.messages[-1].content.split("A: ", 1)[1] else 0.1
    return {label: math.log(p_yes if label == "Yes" else 1 - p_yes) for label in request.labels}


def rows(ids: str | None) -> list[dict[str, Any]]:
    out = [{"question": f"q{i}", "response": "good" if i < 4 else "bad"} for i in range(ROWS)]
    return [{ids: f"r{i}", **r} for i, r in enumerate(out)] if ids is not None else out


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def label_file(folder: Path) -> Path:
    """`jurist label`'s file: a correction of row 1 appended after its first label, row 3 undone."""
    store = LabelStore(folder / "labels.jsonl")
    lines = [(1, "no"), (2, "no"), (1, "yes"), (3, "yes"), (5, "yes"), (3, None), (6, "no")]
    for row, label in lines:
        record = {"row_id": f"r{row}", "label": label, "labeller": "ann", "time": "2025-01-01T00:00:00"}
        store.append({**record, **({"undo": True} if label is None else {})})
    return store.path


def llmbar_file(folder: Path) -> Path:
    """An LLMBar-style JSON array: one entry per row position (the last row has none)."""
    path = folder / "labels.json"
    path.write_text(json.dumps([{"label": EXPECTED.get(i)} for i in range(ROWS - 1)]))
    return path


def csv_file(folder: Path) -> Path:
    path = folder / "labels.csv"
    path.write_text("id,label\n" + "".join(f"r{i},{label}\n" for i, label in reversed(EXPECTED.items())))
    return path


def says_even(request: LabelRequest) -> dict[str, float]:
    """Yes on the even rows (question q0, q2, ...), with probability 0.8."""
    p_yes = 0.8 if int(request.messages[-1].content.split("Q: q", 1)[1].split("\n", 1)[0]) % 2 == 0 else 0.2
    return {label: math.log(p_yes if label == "Yes" else 1 - p_yes) for label in request.labels}


def verdicts_of(folder: Path, data: Path) -> LabelSource:
    """Another run's verdicts over the same rows (`--verdicts`): a judge that says yes on the even rows."""
    output = folder / "big.parquet"
    Engine({**POINT, "name": "big"}, ScriptedBackend([], labels=says_even)).run_file(data, output)
    return LabelSource(verdicts=output)


FORMS: dict[str, tuple[Any, str | None, dict[int, Any]]] = {
    # form -> (its source from (folder, input), the input's id column (None: by position), labels by row)
    "jurist label JSONL": (lambda folder, _: LabelSource(label_file(folder)), "id", EXPECTED),
    "LLMBar JSON by position": (lambda folder, _: LabelSource(llmbar_file(folder)), None, EXPECTED),
    "CSV with an id column": (lambda folder, _: LabelSource(csv_file(folder)), "id", EXPECTED),
    "another run's verdicts": (verdicts_of, "id", {i: i % 2 == 0 for i in range(ROWS)}),
}


def labelled(ids: list[str], labels: list[Any]) -> dict[str, Any]:
    return {row: label for row, label in zip(ids, labels, strict=True) if label is not None}


@pytest.mark.parametrize("form", list(FORMS))
def test_every_consumer_picks_the_same_rows_and_labels(form: str, tmp_path: Path) -> None:
    make, id_column, by_row = FORMS[form]
    data = write_jsonl(tmp_path / "rows.jsonl", rows(id_column))
    source = make(tmp_path, data)
    ids = [f"r{i}" if id_column else str(i) for i in range(ROWS)]
    expected = {ids[i]: label for i, label in by_row.items()}
    results_path = tmp_path / "results.parquet"
    Engine(POINT, ScriptedBackend([], labels=says_yes)).run_file(data, results_path)
    results = ResultTable.open(results_path)
    assert [str(v) for v in results.values("row_id")] == ids

    # the evidence commands (agree, estimate, audit, calibrate, compare, report): the result rows
    evidence = labelled(ids, source.for_results(results).labels)
    # probe fit: the input rows
    job = ProbeFit(config="unused", input=data, output=tmp_path / "head.json", labels=source)
    probe, where = _labels(job, read_input(data).rows())
    # bench --labels: the first rows of the input
    spec = bench_spec(str(data), 100, judges=[POINT], labels=source)
    assert spec.truth is not None
    bench = labelled(ids, spec.truth)
    # a cascade's calibration: the labelled rows of the input it judges before the run
    stages = tuple(stage_configs([POINT, POINT]))
    settings = CascadeSettings(calibration=CalibrationSettings(source))
    run = RunSpec(stages, Selection(str(data)), RunOptions(chunk_size=3), cascade=settings)
    engine = CascadeEngine.for_spec(run, backend_factory=lambda config: ScriptedBackend([], labels=says_yes))
    chunk, truth = _labelled_rows(engine, run.rows.open(engine.id_column), source)
    cascade = labelled(chunk_row_ids(chunk, engine.id_column), truth)

    assert evidence == bench == cascade == expected
    fitted = labelled(ids, probe)  # probe fit reads a judge's verdicts as its label probabilities (soft)
    assert fitted.keys() == expected.keys()
    for row, label in fitted.items():
        if isinstance(label, dict):
            assert sum(label.values()) == pytest.approx(1.0) and source.verdicts is not None
        else:
            assert label == expected[row]
    assert where == source.describe("the input")
    # the bench's cascade agreement, over the result rows: the same rows, the verdicts counted by hand
    verdicts = dict(zip(ids, results.values("quality.judgment"), strict=True))
    right = sum(verdicts[row] == (label in ("yes", True)) for row, label in expected.items())
    found = agreement(results, source, ["quality"])["quality"]
    assert found["labelled_rows"] == len(expected)
    assert (found["accuracy"]["successes"], found["accuracy"]["trials"]) == (right, len(expected))


def test_a_labelled_copy_of_the_input_matches_by_the_runs_id_column(tmp_path: Path) -> None:
    """A file keyed by the column the run's ids come from (``--id-column qid``) matches by it: for the
    results of that run, for the input, and for a cascade run with it."""
    data = write_jsonl(tmp_path / "rows.jsonl", rows("qid"))
    copy = write_jsonl(
        tmp_path / "copy.jsonl", [{"qid": f"r{i}", "label": label} for i, label in EXPECTED.items()]
    )
    source = LabelSource(copy)
    expected = {f"r{i}": label for i, label in EXPECTED.items()}
    output = tmp_path / "results.parquet"
    Engine(POINT, ScriptedBackend([], labels=says_yes), id_column="qid").run_file(data, output)
    results = ResultTable.open(output)
    ids = [str(v) for v in results.values("row_id")]
    assert labelled(ids, source.for_results(results).labels) == expected
    job = ProbeFit(config="unused", input=data, output=tmp_path / "h.json", labels=source, id_column="qid")
    assert labelled(ids, list(_labels(job, read_input(data).rows())[0])) == expected
    settings = CascadeSettings(calibration=CalibrationSettings(source))
    options = RunOptions(chunk_size=3, id_column="qid")
    run = RunSpec(tuple(stage_configs([POINT, POINT])), Selection(str(data)), options, cascade=settings)
    engine = CascadeEngine.for_spec(run, backend_factory=lambda config: ScriptedBackend([]))
    chunk, truth = _labelled_rows(engine, run.rows.open(engine.id_column), source)
    assert labelled(chunk_row_ids(chunk, "qid"), truth) == expected


def test_labels_that_match_no_row_fail_naming_the_file_the_rule_and_both_ids(tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "rows.jsonl", rows("id"))
    positions = llmbar_file(tmp_path)  # matched by position, while the input's rows have ids
    with pytest.raises(InputError) as caught:
        LabelSource(positions).for_rows(read_input(data).table.to_pylist())
    message = str(caught.value)
    assert f"no label of {positions} matches a row of the input (by its column 'id')" in message
    assert "its row positions" in message and "'0', '1', '2'" in message and "'r0', 'r1', 'r2'" in message


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({}, "give --labels FILE, --label-column or --verdicts RESULTS"),
        ({"file": Path("a.jsonl"), "verdicts": Path("b.parquet")}, "not both"),
        ({"verdicts": Path("b.parquet"), "column": "label"}, "--label-column names a column of --labels"),
        ({"column": "label", "verdict_judge": "big"}, "--verdict-judge names a judge of --verdicts"),
        ({"column": "label", "id_column": "id"}, "--labels-id-column names a column of --labels"),
        ({"column": "label", "label_map": "1"}, "label map item '1' is not KEY=VALUE"),
    ],
)
def test_options_that_do_not_go_together_are_refused_when_the_value_is_made(
    given: dict[str, Any], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        LabelSource(**given)


def judged(tmp_path: Path, name: str, probability: float | None, data: Path) -> Path:
    """Results of a BOOL judge called ``name``: Yes with ``probability`` (None: as :func:`says_yes`)."""

    def scores(request: LabelRequest) -> dict[str, float]:
        if probability is None:
            return says_yes(request)
        p_yes = probability
        return {label: math.log(p_yes if label == "Yes" else 1 - p_yes) for label in request.labels}

    output = tmp_path / f"{name}.parquet"
    Engine({**POINT, "name": name}, ScriptedBackend([], labels=scores)).run_file(data, output)
    return output


def test_jurist_agree_takes_another_runs_verdicts_as_labels(tmp_path: Path) -> None:
    """`jurist agree small.parquet --verdicts big.parquet`: the big judge's verdicts, matched by row_id,
    are the labels; the accuracy is the share of rows where the two judges agree."""
    data = write_jsonl(tmp_path / "rows.jsonl", rows("id"))
    small = judged(tmp_path, "small", None, data)  # yes on rows 0-3
    big = judged(tmp_path, "big", 0.8, data)  # yes on every row
    other = write_jsonl(tmp_path / "reordered.jsonl", list(reversed(rows("id"))))
    reordered = judged(tmp_path, "big_reordered", 0.8, other)  # the same verdicts, rows in another order
    runner = CliRunner()
    for labels in (big, reordered):
        done = runner.invoke(app, ["agree", str(small), "--verdicts", str(labels), "--json"])
        assert done.exit_code == 0, done.output
        accuracy = json.loads(done.stdout)["small"]["accuracy"]
        assert (accuracy["successes"], accuracy["trials"]) == (4, ROWS)
    text = runner.invoke(app, ["agree", str(small), "--verdicts", str(big)])
    assert text.exit_code == 0 and "small: accuracy 50.0 % (8 labelled, 8 decided)" in text.output
    # the labels options go together with --verdicts only as far as they mean something
    both = runner.invoke(app, ["agree", str(small), "--verdicts", str(big), "--labels", str(data)])
    assert both.exit_code == 2 and "give --labels or --verdicts, not both" in both.output
    none = runner.invoke(app, ["agree", str(small)])
    assert none.exit_code == 2 and "give --labels FILE, --label-column or --verdicts RESULTS" in none.output
    # a results file of several judges: --verdict-judge names the one whose verdicts are the labels
    both_judges = tmp_path / "both.parquet"
    configs = [{**POINT, "name": "big"}, {**POINT, "name": "other"}]
    Engine(configs, ScriptedBackend([], labels=says_yes)).run_file(data, both_judges)
    base = ["agree", str(small), "--verdicts", str(both_judges)]
    unnamed = runner.invoke(app, base)
    assert unnamed.exit_code == 2
    assert "holds judges big, other: name one with --verdict-judge" in unnamed.output
    named = runner.invoke(app, [*base, "--verdict-judge", "big"])
    assert named.exit_code == 0 and "small: accuracy 100.0 % (8 labelled, 8 decided)" in named.output


def test_jurist_bench_labels_from_a_row_id_file_match_an_input_with_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`jurist bench --labels` with the file `jurist label` writes: its row ids meet the input's ids, in
    whatever order the lines come (before, the bench matched by position and found nothing)."""
    data = write_jsonl(tmp_path / "rows.jsonl", rows("id"))
    labels = label_file(tmp_path)
    judge = tmp_path / "judge.yaml"
    judge.write_text(json.dumps(JUDGE))
    monkeypatch.setattr("jurist.backends.create_backend", lambda config: ScriptedBackend([], labels=says_yes))
    command = ["bench", "-c", str(judge), "-i", str(data), "-o", str(tmp_path / "out"), "--modes", "logprobs",
               "--quiet", "--cold-rows", "1", "--labels", str(labels)]  # fmt: skip
    done = CliRunner().invoke(app, command)
    assert done.exit_code == 0, done.output
    # rows 1 and 2 say yes (labels yes, no), rows 5 and 6 no (labels yes, no): right on rows 1 and 6
    assert "accuracy 0.500 [" in done.output and "on 4 labelled rows" in done.output
    saved = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert saved["results"][0]["quality"]["accuracy"]["trials"] == 4
