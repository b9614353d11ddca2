"""kill -9 in the middle of a batch run, then the same run again: every custom_id once in the output, in
order, and the rerun sends only the lines that were not committed, each once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lines import chat, write_lines

SRC = Path(__file__).resolve().parents[2] / "src"
SCRIPT = """
import os, sys, time
from pathlib import Path
from jurist.records import ALL_CONSTRAINT_KINDS, Completion
from jurist.backends.scripted import ScriptedStreamingBackend
from jurist.openai_batch import BatchRun, Served

source, output, sent, pause = sys.argv[1], Path(sys.argv[2]), sys.argv[3], float(sys.argv[4])
log = open(sent, "a", encoding="utf-8")

def answer(request):
    text = request.messages[0].content
    log.write(text + "\\n")  # what the engine was sent, on disk before the answer exists
    log.flush()
    os.fsync(log.fileno())
    time.sleep(pause)
    return Completion("answer to " + text, "stop", prompt_tokens=3, completion_tokens=3)

served = Served(None, {}, False, ALL_CONSTRAINT_KINDS)
backend = ScriptedStreamingBackend(answer, window=8)
BatchRun(lambda: backend, served, chunk_size=10, max_open=3).run(source, output)
"""


def test_kill_9_then_rerun_sends_no_committed_line_again(tmp_path: Path) -> None:
    ids = [f"req-{i:03d}" for i in range(120)]
    source = write_lines(tmp_path / "in.jsonl", [chat(i, i) for i in ids])
    output, manifest = tmp_path / "out.jsonl", tmp_path / "out.jsonl.parts" / "_manifest.json"
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(SRC)}

    def start(sent: Path, pause: float) -> subprocess.Popen[bytes]:
        command = [sys.executable, str(script), str(source), str(output), str(sent), str(pause)]
        return subprocess.Popen(command, env=env)

    first = start(tmp_path / "sent-1.txt", 0.02)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        rows = json.loads(manifest.read_text())["rows"] if manifest.exists() else 0
        if rows >= 40:
            break
        assert first.poll() is None, "the first run ended before it was killed"
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait()
    assert not output.exists()
    committed = json.loads(manifest.read_text())["rows"]
    assert 40 <= committed < len(ids)

    second = start(tmp_path / "sent-2.txt", 0.0)
    assert second.wait(timeout=120) == 0
    out = [json.loads(line) for line in output.read_text().splitlines()]
    assert [line["custom_id"] for line in out] == ids  # every custom_id once, in input order
    assert all(
        line["response"]["body"]["choices"][0]["message"]["content"] == f"answer to {i}"
        for i, line in zip(ids, out, strict=True)
    )
    sent_again = (tmp_path / "sent-2.txt").read_text().split()
    assert sorted(sent_again) == ids[committed:]  # only the uncommitted lines, each once
    assert not set(sent_again) & set(ids[:committed])
    sent_first = (tmp_path / "sent-1.txt").read_text().split()
    assert len(sent_first) == len(set(sent_first))
