"""Writing results: Parquet, Arrow IPC / Feather or JSONL (by extension), atomically; reading them back."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import pyarrow as pa

from jurist.errors import InputError
from jurist.io.formats import output_format
from jurist.io.sources import JsonlSource


def _json_default(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return str(value)


class OutputWriter:
    """Writes record batches to Parquet, Arrow IPC or JSONL (by extension), atomically on close.

    Batches go to ``<output>.partial`` and the file is renamed into place by :meth:`close`, so a crashed
    run never leaves a half-written file under the final name.
    """

    def __init__(
        self, path: str | Path, schema: pa.Schema, metadata: Mapping[str, str] | None = None
    ) -> None:
        self.path = Path(path)
        self.format = output_format(self.path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._tmp = self.path.with_name(self.path.name + ".partial")
        meta = {k.encode(): v.encode() for k, v in (metadata or {}).items()}
        self.schema = schema.with_metadata({**(schema.metadata or {}), **meta})
        self.rows = 0
        self._writer: Any
        if self.format == "parquet":
            import pyarrow.parquet as pq

            self._writer = pq.ParquetWriter(self._tmp, self.schema, compression="zstd")
        elif self.format == "arrow":
            self._writer = pa.ipc.new_file(str(self._tmp), self.schema)
        else:
            self._writer = self._tmp.open("w", encoding="utf-8")

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        if batch.num_rows == 0:
            return
        table = batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
        table = table.cast(self.schema) if table.schema != self.schema else table
        if self.format == "jsonl":
            for row in table.to_pylist():
                self._writer.write(json.dumps(row, ensure_ascii=False, default=_json_default) + "\n")
        else:
            self._writer.write_table(table)
        self.rows += table.num_rows

    def close(self) -> None:
        self._writer.close()
        self._tmp.replace(self.path)

    def abort(self) -> None:
        try:
            self._writer.close()
        finally:
            self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> OutputWriter:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def read_output(path: str | Path) -> pa.Table:
    """Read a results file written by :class:`OutputWriter`; a JSONL line that is not a row (a file cut
    short mid-line) is an :class:`InputError` naming its row."""
    path = Path(path)
    fmt = output_format(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path)
    if fmt == "arrow":
        import pyarrow.feather as feather

        return feather.read_table(path)
    table, errors = JsonlSource(path).read_all()
    if errors:
        position, reason = min(errors.items())
        raise InputError(f"row {position} is not a result row ({reason})", source=str(path))
    return table
