"""Stage outputs kept beside a cascade run until their chunk is committed: ``<output>.cascade/``.

A chunk's stage outputs are written (atomically) as soon as the stage has judged them, keyed by the run's
fingerprint, the chunk's first row and its size; a rerun after a crash reads them back instead of judging
those rows again, and they are removed once the chunk's results are committed. ``stats.json`` holds the
work each stage did (requests, tokens, seconds), added up across processes.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from jurist.judges.outputs import JudgeOutput

FINGERPRINT = "fingerprint"


def side_dir(output: Path) -> Path:
    return output.with_name(output.name + ".cascade")


class SideStore:
    """The stage outputs of a run's uncommitted chunks (a run with another fingerprint starts it afresh)."""

    def __init__(self, output: Path, fingerprint: str) -> None:
        self.dir = side_dir(output)
        marker = self.dir / FINGERPRINT
        if self.dir.exists() and (not marker.is_file() or marker.read_text().strip() != fingerprint):
            shutil.rmtree(self.dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        if not marker.is_file():
            _atomic(marker, fingerprint)

    def _path(self, start: int, rows: int, stage: int) -> Path:
        return self.dir / f"chunk-{start:012d}-{rows}-stage{stage + 1}.json"

    def load(self, start: int, rows: int, stage: int) -> dict[int, JudgeOutput] | None:
        """A chunk's outputs of one stage by row index in the chunk, or None when not kept."""
        path = self._path(start, rows, stage)
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return {int(index): JudgeOutput(**value) for index, value in data.items()}

    def save(self, start: int, rows: int, stage: int, outputs: Mapping[int, JudgeOutput]) -> None:
        text = json.dumps({str(index): asdict(output) for index, output in outputs.items()})
        _atomic(self._path(start, rows, stage), text)

    def drop(self, start: int) -> None:
        """Forget a committed chunk's stage outputs."""
        for path in self.dir.glob(f"chunk-{start:012d}-*"):
            path.unlink(missing_ok=True)

    def stats(self) -> dict[str, Any]:
        path = self.dir / "stats.json"
        try:
            value = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
        except (OSError, ValueError):
            value = {}
        return value if isinstance(value, dict) else {}

    def save_stats(self, stats: Mapping[str, Any]) -> None:
        _atomic(self.dir / "stats.json", json.dumps(stats))

    def remove(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


def _atomic(target: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as stream:
        stream.write(text)
        stream.flush()
        os.fsync(stream.fileno())
    Path(temporary).replace(target)
