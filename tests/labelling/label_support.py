"""What the labelling tests share beside their fixtures: a `jurist label` server as a real process, the
browser's flags, hostile inputs and reading a labels file."""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HOSTILE = "<script>alert(1)</script>"
MARKDOWN = "**bold** <img src=x onerror=alert(2)> [a link](http://example.com)"


class Server:
    """A `jurist label` process; :attr:`url` is the address it printed."""

    def __init__(self, results: Path, labels: Path, *args: str, port: int = 0) -> None:
        command = [sys.executable, "-m", "jurist", "label", str(results), "--labels", str(labels)]
        command += ["--port", str(port), *args]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.url = self._address(timeout=60)
        self.port = int(self.url.rstrip("/").rsplit(":", 1)[1])

    def _address(self, timeout: float) -> str:
        assert self.process.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if selector.select(timeout=0.5):
                line = self.process.stdout.readline().decode()
                if match := re.search(r"http://\S+", line):
                    return match.group(0)
                if not line:
                    break
        self.process.kill()
        _, err = self.process.communicate(timeout=10)
        raise AssertionError(
            f"jurist label printed no address (exit {self.process.returncode}): {err.decode()}"
        )

    def kill(self) -> None:
        """kill -9: no cleanup of any kind."""
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def append_many(path: str, tag: str, count: int) -> None:
    """Append ``count`` lines of varied length (a worker process of the store's test)."""
    from jurist.labels.file import LabelStore

    store = LabelStore(path)
    for i in range(count):
        store.append({"row_id": f"{tag}{i}", "label": "x" * (i * 97 % 3000)})
