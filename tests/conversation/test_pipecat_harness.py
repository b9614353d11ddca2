"""pipecat's own harness (1.7's EvalSession, 1.14's ExpectationMatcher) drives jurist's EvalJudge, and
pipecat's own EvalJudge runs on a jurist backend; a pipecat LLM service (or a factory returning one) runs
jurist's EvalJudge.

pipecat-ai 1.14.0 is installed in the venv (the ``parity`` extra); 1.7.0 cannot share a venv with it, so
scripts/setup.sh installs it with ``pip install --no-deps --target <venv>/pipecat-1.7.0`` and its run is a
subprocess with that folder first on the path. Each release's test is skipped, saying why, without it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import answer

from jurist import EvalJudge, ScriptedBackend

DRIVER = Path(__file__).with_name("pipecat_harness.py")
PIPECAT_17 = Path(sys.prefix) / "pipecat-1.7.0"
SRC = Path(__file__).resolve().parents[2] / "src"


def _has_pipecat() -> bool:
    return importlib.util.find_spec("pipecat") is not None


def drive(extra_path: Path | None) -> dict[str, Any]:
    paths = [str(p) for p in (extra_path, SRC) if p is not None]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*paths, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, str(DRIVER)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def check_common(results: dict[str, Any]) -> None:
    assert results["passing"] == {"outcome": "pass", "model_calls": 1}
    assert results["failing"]["outcome"].startswith("fail: judge said no")
    assert results["continue_then_pass"] == {"outcome": "pass", "model_calls": 2}
    # a judgment that failed (twice: it is asked once more) fails the assertion, naming the failure
    failed = results["failed_judgment"]
    assert failed["outcome"].startswith("fail: judge said no: judge call failed: ")
    assert "JSON" in failed["outcome"] and failed["model_calls"] == 2
    assert results["failed_once_then_yes"] == {"outcome": "pass", "model_calls": 2}
    # pipecat's own judge on a jurist backend
    assert results["own_judge_passing"]["outcome"] == "pass"
    assert results["own_judge_failing"]["outcome"].startswith("fail: judge said no")


@pytest.mark.skipif(not PIPECAT_17.is_dir(), reason=f"pipecat-ai 1.7.0 is not installed at {PIPECAT_17}")
def test_pipecat_1_7_eval_session() -> None:
    results = drive(PIPECAT_17)
    assert results["version"] == "1.7.0"
    check_common(results)
    assert results["own_judge_passing"]["asked"] == ["system", "user", "assistant", "user"]


@pytest.mark.skipif(
    not _has_pipecat(), reason="pipecat-ai (1.14) is not installed: pip install 'jurist[parity]'"
)
def test_pipecat_1_14_expectation_matcher() -> None:
    results = drive(None)
    assert results["version"] == "1.14.0"
    check_common(results)
    assert results["call_passing"]["outcome"] == "pass"
    assert "judge said no" in results["call_failing"]["outcome"]
    assert "judge call failed" in results["call_failed"]["outcome"]


# ------------------------------------------------------------------ pipecat services in jurist's judge

needs_pipecat = pytest.mark.skipif(not _has_pipecat(), reason="pipecat-ai is not installed")


@needs_pipecat
def test_a_pipecat_service_runs_jurists_eval_judge() -> None:
    from jurist.conversation.pipecat import JuristLLMService

    backend = ScriptedBackend([answer("yes", "It lists what the bot can do.")])
    service = JuristLLMService(backend)  # a pipecat-style service with run_inference()
    judge = EvalJudge(service, cache=None)
    judge.add_user_message("What can you help me with?")
    judge.add_assistant_message("I can set reminders.")
    verdict = asyncio.run(judge.evaluate("describes the bot's capabilities"))
    assert verdict.passed and verdict.reason == "It lists what the bot can do."
    sent = backend.requests[0]
    assert sent.messages[0].role == "system" and "[REPLY BEING JUDGED]" in sent.messages[-1].content
    assert sent.max_tokens == 200 and sent.constraint is None  # the service enforces nothing
    assert judge.model_id == "pipecat:scripted"


@needs_pipecat
def test_a_factory_returning_a_service_is_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "judge_factory.py").write_text(
        "from jurist import ScriptedBackend\n"
        "from jurist.conversation.pipecat import JuristLLMService\n"
        "import json\n"
        "def make(config=None):\n"
        "    verdict = (config or {}).get('model', 'no')\n"
        "    answer = json.dumps({'explanation': 'e', 'judgment': verdict})\n"
        "    return JuristLLMService(ScriptedBackend([answer]))\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from judge_factory import make  # type: ignore[import-not-found]

    for judge in (
        EvalJudge.from_config({"factory": "judge_factory.make", "model": "yes"}, cache=None),
        EvalJudge(make, cache=None),
    ):
        judge.add_user_message("Hi")
        judge.add_assistant_message("Hello.")
        assert judge.evaluate_sync("greets").verdict in ("yes", "no")


def test_something_without_run_inference_is_refused() -> None:
    with pytest.raises(TypeError, match="pipecat LLM service"):
        EvalJudge(object(), cache=None)  # type: ignore[arg-type]
