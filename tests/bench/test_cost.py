"""Dollars per million judgments in ``jurist bench``: the arithmetic against hand computations, the
measurements it is added to, the table, the plot and the command on a remote engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from fake_server import chat_server, completion
from jurist.backends.scripted import ScriptedBackend
from jurist.bench import BenchSpec, run_bench, write
from jurist.bench.cost import Prices, add_costs, cost, parse_token_prices
from jurist.bench.report import markdown, summary_lines
from jurist.cli import app
from jurist.config.inference import InferenceConfig
from jurist.errors import ConfigError

JUDGE = {"name": "j", "judge_params": {"prompt_template": "Q: {question}", "judgment_type": "BOOL"}}


def measured(
    rows_per_s: float, rows: int = 100, prompt: int = 0, output: int = 0, engine: str = "vllm"
) -> dict[str, Any]:
    warm = {"rows": rows, "rows_per_s": rows_per_s, "prompt_tokens": prompt, "output_tokens": output}
    return {"model": "m", "judge": "j", "mode": "generation", "engine": engine, "warm": warm}


def test_hourly_price_by_hand() -> None:
    # 2.5 rows/s is 9,000 judgments an hour; at $3.29 an hour one judgment costs 3.29 / 9,000 dollars,
    # so a million cost 3.29 / 9,000 * 1,000,000 = $365.56 (and twice that for two GPUs at $3.29 each).
    entry = measured(2.5)
    assert cost(entry, Prices(gpu_hour=3.29), machine_gpus=0)["usd_per_million_judgments"] == pytest.approx(
        365.5556
    )
    assert cost(entry, Prices(gpu_hour=3.29), machine_gpus=2)["usd_per_million_judgments"] == pytest.approx(
        731.1111
    )
    assert cost(entry, Prices(gpu_hour=3.29, gpus=8), 2)["priced_units"] == 8
    machine = cost(entry, Prices(gpu_hour=3.29, per="machine"), machine_gpus=8)
    assert machine["usd_per_million_judgments"] == pytest.approx(365.5556) and machine["priced_units"] == 1


def test_token_prices_by_hand() -> None:
    # 100 judgments of 700 prompt and 50 output tokens each, at $0.075 / $0.30 per million tokens:
    # a million judgments read 700M tokens ($52.50) and write 50M ($15.00): $67.50.
    entry = measured(4.0, rows=100, prompt=70_000, output=5_000, engine="openai")
    priced = cost(entry, Prices(per_million_in=0.075, per_million_out=0.30), 0)
    assert priced["usd_per_million_judgments"] == pytest.approx(67.5)
    assert priced["basis"] == "tokens" and priced["prompt_tokens_per_judgment"] == 700
    assert cost(entry, Prices(gpu_hour=3.29), 0) is None  # a remote engine is not paid by the hour
    assert (
        cost(measured(4.0), Prices(per_million_in=1.0, per_million_out=1.0), 0) is None
    )  # nor local by token
    assert cost(measured(0.0), Prices(gpu_hour=1.0), 0) is None


def test_price_options_are_checked() -> None:
    assert parse_token_prices("0.075, 0.3") == (0.075, 0.3)
    for bad in ("1", "a,b", "1,2,3"):
        with pytest.raises(ConfigError, match="IN,OUT"):
            parse_token_prices(bad)
    with pytest.raises(ConfigError, match="negative"):
        Prices(gpu_hour=-1.0)


def test_a_scripted_bench_gets_its_cost_in_the_json_table_and_plot(tmp_path: Path) -> None:
    def factory(config: InferenceConfig) -> Any:
        return ScriptedBackend(lambda r: json.dumps({"judgment": "Yes"}), model_id="scripted")

    rows = [{"question": f"q{i}"} for i in range(10)]
    bench = add_costs(run_bench(BenchSpec(judges=[JUDGE], rows=rows), factory, progress=None), Prices(3.29))
    (entry,) = bench["results"]
    rate = entry["warm"]["rows_per_s"]
    assert entry["cost"]["usd_per_million_judgments"] == pytest.approx(3.29 / (rate * 3600) * 1e6, rel=1e-4)
    assert bench["settings"]["prices"]["gpu_hour"] == 3.29
    table = markdown(bench)
    header = next(line for line in table.splitlines() if line.startswith("| model"))
    assert "| rows/s | $/M judgments |" in header
    assert "Cost: $3.29/h per GPU" in table
    assert "per million judgments" in summary_lines(bench)[0]
    files = write(bench, tmp_path)
    assert files["cost_per_million"].read_bytes()[:4] == b"\x89PNG"


def test_bench_command_prices_a_remote_engine_by_its_tokens(tmp_path: Path) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text(
        json.dumps({**JUDGE, "inference_config": {"engine": "REMOTE_VLLM", "model": {"model_name": "fake"}}})
    )
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps({"question": f"q{i}"}) + "\n" for i in range(6)))
    with chat_server(lambda body: (200, completion(json.dumps({"judgment": "Yes"})))) as server:
        result = CliRunner().invoke(
            app,
            [
                "bench", "-c", str(config), "-i", str(data), "-o", str(tmp_path / "out"), "--rows", "6", "-q",
                "--gpu-hour-price", "3.29", "--price-per-million", "0.15,0.6",
                "--inference_config.remote_params.api_url", server.url,
            ],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    # the fake server counts 12 prompt and 7 output tokens per answer: 12 x 0.15 + 7 x 0.6 = $6.00
    assert "$6.00 per million judgments" in result.output
    saved = json.loads((tmp_path / "out" / "bench.json").read_text())
    assert saved["results"][0]["cost"]["usd_per_million_judgments"] == pytest.approx(6.0)
