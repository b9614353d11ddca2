"""The dataset form: conversations x criteria, judged in batched engine calls, one output row per pair.

:class:`ConversationSource` turns a dataset with a chat-list column (``messages``, else ``conversation``)
into a long stream of rows, one per (conversation, criterion), with the values a conversation judge reads
(:func:`~jurist.conversation.transcript.judge_values`) and these columns:

=====================  ========================================================================
column                 meaning
=====================  ========================================================================
``row_id``             ``<conversation_id>:<criterion_index>`` (per-row criteria: the conversation id)
``conversation_index`` the conversation's position in the input (0-based)
``conversation_id``    the input's id column (``--id-column``, else ``row_id``, ``id`` or
                       ``conversation_id``), else the position
``criterion_index``    the criterion's position in the list of criteria
``criterion``          the criterion
``context``, ``reply`` the transcript before the reply, and the reply being judged (null when the
                       conversation is malformed or has no reply)
=====================  ========================================================================

The :class:`~jurist.engine.core.Engine` judges that stream like any other: every pair's prompt of a chunk
(4096 pairs by default) goes to the model in one call, constrained to yes / no / continue. A malformed
conversation (not a list of role/content messages; a malformed input line) gives each of its pairs status
``bad_input``, with the conversation and the problem named; a conversation with no assistant text after
its last user turn gives ``missing_input`` (field ``reply``). Criteria come from a list (each
conversation is judged against every one) or, when none is given, from each row's own ``criterion``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import yaml

from jurist.backends.base import Backend
from jurist.config.models import JudgeConfig
from jurist.conversation.judge import BUILTIN_JUDGE, conversation_judge
from jurist.conversation.models import ModelLike, conversation_backend
from jurist.conversation.transcript import ConversationError, Turn, judge_values, read_messages
from jurist.engine.core import Engine
from jurist.errors import InputError
from jurist.io.opening import open_source
from jurist.io.sources import Batch, RowSource

MESSAGE_FIELDS = ("messages", "conversation")
ID_FIELDS = ("row_id", "id", "conversation_id")
LONG_SCHEMA = pa.schema(
    [
        ("row_id", pa.string()),
        ("conversation_index", pa.int64()),
        ("conversation_id", pa.string()),
        ("criterion_index", pa.int64()),
        ("criterion", pa.string()),
        ("context", pa.string()),
        ("reply", pa.string()),
    ]
)


def _check_criteria(criteria: Sequence[str], source: str) -> tuple[str, ...]:
    if isinstance(criteria, str):
        raise InputError("criteria must be a list of texts, not one text", source=source)
    out = []
    for index, criterion in enumerate(criteria):
        if not isinstance(criterion, str) or not criterion.strip():
            raise InputError(f"criterion {index} is {criterion!r}, not non-empty text", source=source)
        out.append(criterion.strip())
    if not out:
        raise InputError("has no criteria", source=source)
    return tuple(out)


class ConversationSource(RowSource):
    """(conversation, criterion) rows from a dataset of conversations (see the module's docstring).

    ``criteria``: judged against every conversation; None reads each row's ``criterion`` column.
    ``messages_field``: the chat-list column (default ``messages``, else ``conversation``).
    ``id_column``: the column that identifies conversations (default ``row_id``, ``id``, ``conversation_id``).
    """

    def __init__(
        self,
        conversations: RowSource,
        criteria: Sequence[str] | None,
        *,
        messages_field: str | None = None,
        id_column: str | None = None,
    ) -> None:
        self.inner = conversations
        self.source = conversations.source
        columns = conversations.columns
        field = messages_field or next((name for name in MESSAGE_FIELDS if name in columns), None)
        if field is None or field not in columns:
            wanted = repr(messages_field) if messages_field else "'messages' (or 'conversation')"
            raise InputError(
                f"has no {wanted} column holding the conversations (columns: {', '.join(columns) or 'none'})",
                source=self.source,
            )
        if criteria is None and "criterion" not in columns:
            raise InputError(
                "no criteria were given, and the rows have no 'criterion' column", source=self.source
            )
        if id_column is not None and id_column not in columns:
            raise InputError(f"id column {id_column!r} is not in the dataset", source=self.source)
        self.field = field
        self.id_column = id_column or next((name for name in ID_FIELDS if name in columns), None)
        self.criteria = None if criteria is None else _check_criteria(criteria, "criteria")
        self.schema = LONG_SCHEMA
        self.replayable = conversations.replayable
        per_row = 1 if self.criteria is None else len(self.criteria)
        self.total = None if conversations.total is None else conversations.total * per_row

    def identity(self) -> dict[str, Any]:
        criteria = None if self.criteria is None else json.dumps(self.criteria, ensure_ascii=False)
        return {
            "conversations": self.inner.identity(),
            "messages_field": self.field,
            "id_column": self.id_column,
            "criteria": None if criteria is None else hashlib.sha256(criteria.encode()).hexdigest()[:16],
        }

    def batches(self) -> Iterator[Batch]:
        position = 0
        for batch in self.inner.batches():
            rows = batch.rows()
            numbers = list(batch.numbers) if batch.numbers is not None else None
            out: list[dict[str, Any]] = []
            errors: dict[int, str] = {}
            for index, row in enumerate(rows):
                number = numbers[index] if numbers is not None else position + index
                for values, error in self._pairs(row, number, batch.errors.get(index)):
                    if error is not None:
                        errors[len(out)] = error
                    out.append(values)
            position += len(rows)
            yield Batch(pa.Table.from_pylist(out, schema=LONG_SCHEMA), errors)

    def _pairs(
        self, row: Mapping[str, Any], number: int, row_error: str | None
    ) -> Iterator[tuple[dict[str, Any], str | None]]:
        """The long rows of one conversation, each with its error (None when it can be judged)."""
        given = row.get(self.id_column) if self.id_column is not None else None
        conversation_id = str(number) if given is None else str(given)
        named = f"conversation {number}" + ("" if given is None else f" (id {conversation_id!r})")
        problem = row_error
        turns: tuple[Turn, ...] = ()
        if problem is None:
            try:
                turns = read_messages(row.get(self.field))
            except ConversationError as exc:
                problem = f"{named}: field {self.field!r} {exc}"
        criteria: Sequence[Any] = self.criteria if self.criteria is not None else [row.get("criterion")]
        for index, criterion in enumerate(criteria):
            values: dict[str, Any] = {
                "row_id": conversation_id if self.criteria is None else f"{conversation_id}:{index}",
                "conversation_index": number,
                "conversation_id": conversation_id,
                "criterion_index": index,
                "criterion": criterion if isinstance(criterion, str) else None,
                "context": None,
                "reply": None,
            }
            if problem is not None:
                yield values, problem
            elif not isinstance(criterion, str) or not criterion.strip():
                yield values, f"{named}: field 'criterion' is {criterion!r}, not non-empty text"
            else:
                yield {**values, **judge_values(turns, criterion)}, None


def read_criteria(path: str | Path) -> tuple[str, ...]:
    """Criteria from a file: one per line (``.txt`` and anything else; blank lines and ``#`` comments
    skipped), or a list of texts (``.json``, ``.yaml``, ``.yml``)."""
    where = str(path)
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read the criteria: {exc}", source=where) from exc
    if file.suffix.lower() in (".json", ".yaml", ".yml"):
        try:
            data = json.loads(text) if file.suffix.lower() == ".json" else yaml.safe_load(text)
        except (ValueError, yaml.YAMLError) as exc:
            raise InputError(f"is not a readable list of criteria: {exc}", source=where) from exc
        if not isinstance(data, list):
            raise InputError(f"must hold a list of criteria, not a {type(data).__name__}", source=where)
        return _check_criteria(data, where)
    lines = [line.strip() for line in text.splitlines()]
    return _check_criteria([line for line in lines if line and not line.startswith("#")], where)


def conversation_source(
    data: Any,
    criteria: Sequence[str] | str | Path | None,
    *,
    input_format: str | None = None,
    messages_field: str | None = None,
    id_column: str | None = None,
) -> ConversationSource:
    """A :class:`ConversationSource` over any dataset :func:`~jurist.io.opening.open_source` reads;
    ``criteria`` is a list, a criteria file (:func:`read_criteria`), or None (each row's ``criterion``)."""
    if isinstance(criteria, str) and not Path(criteria).is_file():
        raise InputError(
            f"criteria must be a list of texts or a criteria file; {criteria!r} is one text that names no "
            "file"
        )
    if isinstance(criteria, str | Path):
        criteria = read_criteria(criteria)
    inner = open_source(data, input_format=input_format, id_columns=[id_column or "id"])
    return ConversationSource(inner, criteria, messages_field=messages_field, id_column=id_column)


def judge_conversations(
    rows: Any,
    criteria: Sequence[str] | str | Path | None = None,
    engine_or_backend: Engine | ModelLike | None = None,
    *,
    judge: str | Path | JudgeConfig | Mapping[str, Any] = BUILTIN_JUDGE,
    messages_field: str | None = None,
    id_column: str | None = None,
    chunk_size: int | None = None,
) -> pa.Table:
    """Judge every conversation of ``rows`` against every criterion: one output row per pair, with the
    columns of :class:`ConversationSource` and the judge's (``criterion.judgment``, ``criterion.explanation``,
    ``criterion.status``, ...).

    ``rows``: conversations (dicts with a ``messages`` list, a file, an Arrow table...). ``criteria``: a list,
    a criteria file, or None (each row's ``criterion``). ``engine_or_backend``: an :class:`Engine` (its own
    judges are used), a jurist Backend, an inference config (or its mapping or file) or a model name; None
    runs the judge's own ``inference_config``. Backends made here are closed before returning.
    """
    source = conversation_source(rows, criteria, messages_field=messages_field, id_column=id_column)
    if isinstance(engine_or_backend, Engine):
        return engine_or_backend.run(source)
    if engine_or_backend is None:
        with Engine([conversation_judge(judge)], chunk_size=chunk_size) as engine:
            return engine.run(source)
    resolved = conversation_backend(engine_or_backend)
    overrides = {}
    if resolved.config is not None:
        overrides["inference_config"] = resolved.config.model_dump(mode="json", exclude_unset=True)
    backend: Backend = resolved.backend
    engine = Engine([conversation_judge(judge, overrides)], backend, chunk_size=chunk_size)
    try:
        return engine.run(source)
    finally:
        if resolved.owned:
            backend.close()
