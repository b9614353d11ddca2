"""A remote engine that is busy, broken or hung: retries ride out a busy server with the defaults, and a
hung one ends the run within the retry budget instead of stalling it."""

from __future__ import annotations

import random
from pathlib import Path

from fault_runs import ids_once, judge_args, jurist, setup
from fault_servers import fault_server

from jurist import Engine, load_judge_config
from jurist.backends.remote.http_retry import RetryPolicy, retry_after_seconds
from jurist.backends.remote.openai import OpenAIBackend


def test_a_flaky_server_ends_with_every_row_ok_with_the_defaults(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 30)
    out = tmp_path / "out.parquet"
    with fault_server(busy_every=3, broken_every=5, retry_after="0.1") as server:
        done = jurist(*judge_args(config, data, out, "--inference_config.remote_params.api_url", server.url))
        sent, answered = server.count, server.answered
    assert done.returncode == 0, done.stderr
    table = ids_once(out, 30)
    assert {row["judge.status"] for row in table} == {"ok"}
    expected = ["good" in row["question"] for row in table]  # the server says Yes to good questions
    assert [row["judge.judgment"] for row in table] == expected
    # every third and fifth request failed (7 in 15) and was retried: about 30 * 15 / 8 = 56 sent
    assert answered == 30 and sent > 45


def test_connection_resets_are_retried(tmp_path: Path) -> None:
    cfg = load_judge_config(
        {
            "name": "j",
            "judge_params": {"prompt_template": "Q: {question}", "include_explanation": True},
            "inference_config": {"engine": "REMOTE_VLLM", "model": {"model_name": "fake"}},
        }
    )
    with fault_server(reset_every=2) as server:
        remote = cfg.inference_config.remote_params.model_copy(
            update={"api_url": server.url, "retry_backoff_base": 0.05, "retry_backoff_max": 0.1}
        )
        inference = cfg.inference_config.model_copy(update={"remote_params": remote})
        rows = [{"question": f"good {i}"} for i in range(10)]
        table = Engine(cfg, OpenAIBackend(inference)).run(rows)
        assert server.answered == 10 and server.count >= 15
    assert table["j.status"].to_pylist() == ["ok"] * 10
    assert table["j.judgment"].to_pylist() == [True] * 10


def test_a_hung_server_gives_timeout_rows_and_exit_3_within_the_budget(tmp_path: Path) -> None:
    config, data = setup(tmp_path, 12)
    out = tmp_path / "out.parquet"
    budget = [
        "--inference_config.remote_params.timeout_s",
        "1",
        "--inference_config.remote_params.max_retry_wait_s",
        "3",
    ]
    with fault_server(hold=120) as server:
        done = jurist(
            *judge_args(config, data, out, "--inference_config.remote_params.api_url", server.url, *budget),
            timeout=100,
        )
    assert done.returncode == 3, done.stderr
    assert "no output is ok" in done.stderr and "no answer within 1 s" in done.stderr
    table = ids_once(out, 12)
    assert {row["judge.status"] for row in table} == {"backend_error"}
    for row in table:
        assert "no answer within 1 s (remote_params.timeout_s)" in row["judge.error"]
        assert "gave up" in row["judge.error"] and "max_retry_wait_s" in row["judge.error"]


def test_request_timeout_is_another_name_for_timeout_s() -> None:
    cfg = load_judge_config(
        {
            "judge_params": {"prompt_template": "Q: {question}"},
            "inference_config": {
                "engine": "REMOTE_VLLM",
                "remote_params": {"api_url": "http://127.0.0.1:9/v1", "request_timeout": 7},
            },
        }
    )
    assert cfg.inference_config.remote_params.timeout_s == 7.0


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("3") == 3.0
    assert retry_after_seconds(None) is None and retry_after_seconds("soon") is None
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: go now


def test_backoff_doubles_within_its_jitter_up_to_the_longest() -> None:
    policy = RetryPolicy(max_retries=6, base=1.0, longest=8.0, budget=300.0)
    rng = random.Random(0)
    for retry, step in enumerate([1.0, 2.0, 4.0, 8.0, 8.0]):
        waits = [policy.backoff(retry, rng) for _ in range(2000)]
        assert min(waits) >= step / 2 and max(waits) <= step
        # equal jitter: the wait is uniform on [step/2, step], so its mean is 3/4 of the step
        assert abs(sum(waits) / len(waits) - 0.75 * step) < 0.02 * step
