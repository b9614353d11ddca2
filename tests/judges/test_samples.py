"""Repeated samples (``judge_params.samples``): the vote, its columns and seeds, the configs refused, and a
sampled generation judge as a cascade stage (its confidence is the samples' agreement)."""

from __future__ import annotations

import json
import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from jurist import Engine, ScriptedBackend, load_judge_config
from jurist.cli import app
from jurist.config.cascade import CascadeSettings, stage_configs
from jurist.engine.spec import RunOptions, RunSpec, Selection
from jurist.errors import ConfigError
from jurist.io.results import ResultTable
from jurist.launch import launch
from jurist.records import Completion, GenerationRequest, LabelRequest

SAMPLED = {
    "name": "j",
    "judge_params": {"prompt_template": "Is it true? {text}", "samples": 5},
    "inference_config": {"generation": {"temperature": 0.8, "seed": 3}},
}

# per row, the five samples' answers, in sample order (x: unparseable)
ANSWERS = {
    "r0": ["Yes", "Yes", "No", "Yes", "x"],  # Yes 3 of 5; 4 usable
    "r1": ["x", "x", "x", "x", "x"],  # nothing usable: a parse error, no verdict
    "r2": ["No", "Yes", "Yes", "No", "x"],  # a 2-2 tie: the verdict given first (No) wins, 2 of 5
    "r3": ["No", "No", "No", "No", "No"],  # unanimous
}


class BySample:
    """Answers each row's k-th request with ``ANSWERS[row][k]``, counting requests per row; records seeds."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = defaultdict(int)
        self.seeds: dict[str, list[int | None]] = defaultdict(list)

    def __call__(self, request: GenerationRequest) -> Completion:
        row = request.messages[-1].content.rsplit(" ", 1)[1]
        k = self.seen[row]
        self.seen[row] += 1
        self.seeds[row].append(request.seed)
        answer = ANSWERS[row][k]
        text = "not json" if answer == "x" else json.dumps({"judgment": answer})
        return Completion(text, "stop", prompt_tokens=10, completion_tokens=3 + k)


def test_samples_vote_and_their_columns() -> None:
    script = BySample()
    table = Engine(SAMPLED, ScriptedBackend(script)).run([{"text": r} for r in ANSWERS])
    rows = {r["text"]: r for r in table.to_pylist()}
    # what the vote must give, computed from the script by hand
    for name, answers in ANSWERS.items():
        row = rows[name]
        usable = [a for a in answers if a != "x"]
        assert row["j.samples_ok"] == len(usable)
        assert row["j.prompt_tokens"] == 50 and row["j.completion_tokens"] == sum(3 + k for k in range(5))
        if not usable:
            assert row["j.status"] == "parse_error" and row["j.judgment"] is None
            assert row["j.error"].startswith("none of 5 samples was usable")
            assert row["j.sample_agreement"] is None and row["j.samples_agreeing"] == 0
            continue
        top = max(usable.count(v) for v in set(usable))
        first_top = next(v for v in usable if usable.count(v) == top)
        assert row["j.status"] == "ok"
        assert row["j.judgment"] is (first_top == "Yes")
        assert row["j.samples_agreeing"] == top
        assert row["j.sample_agreement"] == pytest.approx(top / 5)
        assert row["j.sample_score_mean"] == pytest.approx(usable.count("Yes") / len(usable))
        assert json.loads(row["j.raw"])["judgment"] == first_top
    # five distinct seeds per row, and the same ones when the row is judged again
    again = BySample()
    Engine(SAMPLED, ScriptedBackend(again)).run([{"text": r} for r in ANSWERS])
    for name in ANSWERS:
        assert len(set(script.seeds[name])) == 5 and None not in script.seeds[name]
        assert again.seeds[name] == script.seeds[name]


def test_one_sample_keeps_the_request_and_columns_it_had() -> None:
    one = {**SAMPLED, "judge_params": {"prompt_template": "Is it true? {text}"}}
    backend = ScriptedBackend(['{"judgment": "Yes"}'], cycle=True)
    table = Engine(one, backend).run([{"text": "r0"}])
    assert not any("sample" in c for c in table.column_names)
    assert len(backend.requests) == 1


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"inference_config": {"generation": {"temperature": 0.0}}}, "temperature > 0"),
        ({"judge_params": {"scoring": "LOGPROBS"}}, "needs GENERATE scoring"),
        ({"judge_params": {"label_probabilities": True}}, "use one confidence"),
        ({"judge_params": {"judgment_type": "FLOAT"}}, "not FLOAT"),
        ({"judge_params": {"judgment_type": "TEXT"}}, "not TEXT"),
        ({"reward_judge_params": {}}, "not to a reward judge"),
    ],
)
def test_configs_samples_cannot_vote_on_are_refused(
    tmp_path: Path, change: dict[str, Any], message: str
) -> None:
    config: dict[str, Any] = json.loads(json.dumps(SAMPLED))
    for section, values in change.items():
        config.setdefault(section, {}).update(values)
    path = tmp_path / "judge.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match=message):
        load_judge_config(str(path))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and message in result.output


def test_validate_names_samples_as_the_stage_confidence(tmp_path: Path) -> None:
    path = tmp_path / "judge.yaml"
    path.write_text(yaml.safe_dump(SAMPLED))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "5 samples per row" in result.output
    assert "confidence = the share of the row's 5 samples that gave the verdict (sample_agreement)" in (
        result.output
    )
    single = tmp_path / "single.yaml"
    single.write_text(yaml.safe_dump({"judge_params": {"prompt_template": "{text}"}}))
    result = CliRunner().invoke(app, ["validate", str(single)])
    assert "no confidence" in result.output and "judge_params.samples" in result.output


def test_a_sampled_generation_stage_in_a_cascade(tmp_path: Path) -> None:
    """Stage 1 samples a yes/no judgment 5 times; a row goes on to the LOGPROBS stage 2 when fewer than 4
    of 5 samples agree."""
    rows = [{"id": f"n{i}", "text": f"claim {i}"} for i in range(40)]
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    counts: dict[str, int] = defaultdict(int)

    def sampled(request: GenerationRequest) -> str:
        number = int(request.messages[-1].content.rsplit(" ", 1)[1])
        k = counts[str(number)]
        counts[str(number)] += 1
        yes = k < number % 6  # row n: min(n % 6, 5) of its 5 samples say Yes
        return json.dumps({"judgment": "Yes" if yes else "No"})

    def labels(request: LabelRequest) -> dict[str, float]:
        return dict(zip(request.labels, (math.log(0.97), math.log(0.03)), strict=True))

    backends = {
        "small": ScriptedBackend(sampled, model_id="small"),
        "big": ScriptedBackend([], model_id="big", labels=labels),
    }
    small = {
        "name": "claim",
        "judge_params": {"prompt_template": "Is it true? {text}", "samples": 5},
        "inference_config": {"model": {"model_name": "small"}, "generation": {"temperature": 0.7}},
    }
    big = {
        "name": "claim",
        "judge_params": {"prompt_template": "Is it true? {text}", "scoring": "LOGPROBS"},
        "inference_config": {"model": {"model_name": "big"}},
    }
    configs = tuple(stage_configs([small, big]))
    spec = RunSpec(
        configs, Selection(str(data)), RunOptions(chunk_size=16), CascadeSettings(thresholds=(0.8,))
    )
    output = tmp_path / "out.parquet"
    launch(spec, backend_factory=lambda c: backends[c.model.model_name or ""]).run(output)
    table = ResultTable.open(output)
    assert table.metadata["cascade"]["stages"][0]["confidence"] == "sample_agreement"
    decided = Counter()
    for row in table.table.to_pylist():
        yes = min(int(row["id"][1:]) % 6, 5)
        agreement = max(yes, 5 - yes) / 5
        assert row["cascade.confidence_1"] == pytest.approx(agreement)
        assert row["claim_1.sample_agreement"] == pytest.approx(agreement)
        stage = 1 if agreement >= 0.8 else 2
        decided[stage] += 1
        assert row["cascade.stage"] == stage
        assert row["cascade.judgment"] is (yes >= 3 if stage == 1 else True)
    assert backends["big"].calls == [decided[2]]  # stage 2 saw only the unsure rows
    assert len(backends["small"].requests) == 5 * len(rows)


def test_samples_through_a_batch_file_vote_as_a_direct_run(tmp_path: Path) -> None:
    """--emit-batch writes one line per sample (their seeds differ); --from-batch-results votes on the
    answers as a direct run does."""
    import pyarrow.parquet as pq

    from jurist.openai_batch import BatchRun, Served
    from jurist.openai_batch.bodies import EMIT_KINDS
    from jurist.openai_batch.shapes import InputLine
    from jurist.records import ALL_CONSTRAINT_KINDS

    def by_seed(request: GenerationRequest) -> str:
        return json.dumps({"judgment": "Yes" if (request.seed or 0) % 3 else "No"})

    config = tmp_path / "judge.yaml"
    config.write_text(yaml.safe_dump(SAMPLED))
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"text": f"claim {i}"}) + "\n" for i in range(6)))
    direct = tmp_path / "direct.parquet"
    Engine(str(config), ScriptedBackend(by_seed, constraint_kinds=EMIT_KINDS)).run_file(str(data), direct)
    requests, results, via = tmp_path / "requests.jsonl", tmp_path / "results.jsonl", tmp_path / "via.parquet"
    args = ["judge", "dataset", "-c", str(config), "-i", str(data), "--emit-batch", str(requests)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    lines = [InputLine.model_validate_json(line) for line in requests.read_text().splitlines()]
    assert len(lines) == 6 * 5 and len({line.body["seed"] for line in lines}) == 30
    BatchRun(lambda: ScriptedBackend(by_seed), Served(None, {}, False, ALL_CONSTRAINT_KINDS)).run(
        str(requests), results
    )
    args = ["judge", "dataset", "-c", str(config), "-i", str(data), "-o", str(via), "--from-batch-results",
            str(results), "-q"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    expected, got = pq.read_table(direct), pq.read_table(via)
    assert got.column("j.sample_agreement").to_pylist() == expected.column("j.sample_agreement").to_pylist()
    assert got.column("j.judgment").to_pylist() == expected.column("j.judgment").to_pylist()
    assert set(got.column("j.status").to_pylist()) == {"ok"}
