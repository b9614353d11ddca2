"""The labelling desk: which row each session is offered, what a label, a skip or an undo writes, and the
progress with the corrected estimate so far.

Everything that reads the labels file and then writes to it happens inside one transaction of the
:class:`~jurist.labels.file.LabelStore` (an exclusive lock shared by every thread and process on the
file), after taking in the lines other sessions or servers appended. So a row is offered to one session at
a time (its claim expires after ``claim_seconds`` untouched), a row is labelled once per queue (a second
label for a labelled row is refused, not written), and the answer that says saved comes after the line is
on disk.

The file is checked whole when the desk opens: a line that is not a label of a row of these results, in
this judge's labels, is an :class:`~jurist.errors.InputError` naming the line.

An undo appends a line that puts the row back as it was before the label it undoes (the earlier label of a
reviewed row, or none: ``label`` null), marked ``"undo": true``; the history stays append-only and the
latest line of a row counts.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from jurist.analysis.estimate import estimate_judge
from jurist.errors import InputError, JuristError
from jurist.io.results import ResultTable
from jurist.labelling.choices import LabelSet, LabelValue
from jurist.labelling.queue import Entry, Queue
from jurist.labelling.rows import Rows
from jurist.labels.file import Claim, LabelLine, LabelStore, Strategy
from jurist.labels.sampling import Draw, SamplingPlan
from jurist.stats.estimate import MIN_LABELS

CLAIM_SECONDS = 600.0


class Refused(JuristError):
    """A request the desk will not carry out; ``status`` is the HTTP status that says why (400 bad request,
    409 the row is another session's or already labelled)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class DeskOptions:
    """How rows are chosen and shown. ``budget``: the plan's size; ``review``: review order instead of a
    plan; ``blind``: hide the judge's verdict until the row is labelled; ``labeller``: the name the page
    starts with."""

    judge: str
    strategy: Strategy = Strategy.UNIFORM
    budget: int = 100
    seed: int = 0
    review: bool = False
    blind: bool = True
    labeller: str | None = None
    claim_seconds: float = CLAIM_SECONDS


class Desk:
    """One judge's rows, one labels file, any number of labelling sessions."""

    def __init__(self, results: ResultTable, labels_path: str | Path, options: DeskOptions) -> None:
        if options.budget < 1:
            raise InputError(f"the label budget must be at least 1, not {options.budget}")
        if results.id_column is None:
            raise InputError("the results have no row_id column: labels name their rows by it")
        self.results = results
        self.options = options
        self.labels = LabelSet.of(results, options.judge)
        self.rows = Rows(results, options.judge, self.labels)
        self.store = LabelStore(labels_path)
        self._history: dict[str, list[dict[str, Any]]] = {}
        self._lines = 0
        self._skipped: dict[str, set[str]] = {}
        self._estimate: tuple[int, dict[str, Any]] | None = None
        self.plan: SamplingPlan | None = None
        with self.store.transaction() as tx:
            self._take(tx.new_lines())
        if options.review:
            self.queue = Queue.of_review(self.rows, self.current())
        else:
            self.plan = SamplingPlan.build(
                results, options.judge, options.strategy, options.budget, seed=options.seed
            )
            self.queue = Queue.of_plan(self.plan.draws())

    # ------------------------------------------------------------------------------ the file
    def _take(self, lines: Iterable[tuple[int, dict[str, Any]]]) -> None:
        """Check and keep lines read from the file (an :class:`InputError` naming a bad one)."""
        for number, record in lines:
            where = f"line {number}"
            try:
                line = LabelLine.model_validate(record)
            except ValidationError as exc:
                error = exc.errors()[0]
                field = ".".join(str(p) for p in error["loc"]) or "the line"
                raise InputError(f"{where}: {field}: {error['msg']}", source=str(self.store.path)) from None
            if line.row_id not in self.rows:
                raise InputError(
                    f"{where}: row_id {line.row_id!r} is not a row of the results",
                    source=str(self.store.path),
                )
            value = self.labels.parse(line.label)
            if line.label is not None and value is None:
                raise InputError(
                    f"{where}: label {line.label!r} is not one of judge {self.labels.judge!r}'s labels "
                    f"({self.labels.describe()})",
                    source=str(self.store.path),
                )
            self._history.setdefault(line.row_id, []).append({**record, "label": value})
            self._lines += 1

    def current(self) -> dict[str, LabelValue]:
        """The label that counts for each labelled row: its latest line's (none where that is null)."""
        return {r: h[-1]["label"] for r, h in self._history.items() if h[-1]["label"] is not None}

    def _done(self, row_id: str) -> bool:
        history = self._history.get(row_id)
        if not history or history[-1]["label"] is None:
            return False
        return bool(history[-1].get("review")) if self.options.review else True

    def _done_rows(self) -> set[str]:
        return {r for r in self._history if self._done(r)}

    # --------------------------------------------------------------------------- the actions
    def next(self, session: str, labeller: str) -> dict[str, Any]:
        """The row the session holds, or the first free one of the queue (claimed for the session)."""
        _check_session(session)
        with self.store.transaction() as tx:
            self._take(tx.new_lines())
            claims = tx.claims()
            held = next(
                (c for c in claims.values() if c.session == session and not self._done(c.row_id)), None
            )
            entry = self.queue.entry(held.row_id) if held else None
            if entry is None:
                others = {r for r, c in claims.items() if c.session != session}
                entry = self.queue.first(self._done_rows(), others, self._skipped.get(session, set()))
            self._claim(tx, claims, session, labeller, entry)
        return self._offer(entry)

    def label(self, session: str, labeller: str, row_id: str, raw: Any) -> dict[str, Any]:
        """Append the label and say so once it is on disk; the judge's verdict on the row comes with it."""
        _check_session(session)
        if not labeller.strip():
            raise Refused("a label needs the labeller's name")
        value = self.labels.parse(raw)
        if value is None:
            raise Refused(
                f"{raw!r} is not one of judge {self.labels.judge!r}'s labels ({self.labels.describe()})"
            )
        entry = self.queue.entry(row_id)
        if entry is None:
            raise Refused(f"row {row_id!r} is not in this queue")
        with self.store.transaction() as tx:
            self._take(tx.new_lines())
            claims = tx.claims()
            claim = claims.get(row_id)
            if claim is not None and claim.session != session:
                raise Refused(f"row {row_id!r} is being labelled by {claim.labeller}", 409)
            if self._done(row_id):
                raise Refused(
                    f"row {row_id!r} is labelled already (by {self._history[row_id][-1]['labeller']})", 409
                )
            tx.append(self._line(entry, value, labeller.strip()))
            self._take(tx.new_lines())
            claims.pop(row_id, None)
            tx.save_claims(claims)
        return {"saved": True, "row_id": row_id, "label": value, "verdict": self.rows.verdict(row_id)}

    def skip(self, session: str, row_id: str) -> None:
        """Leave the row for someone else: this session is not offered it again (until a restart)."""
        _check_session(session)
        self._skipped.setdefault(session, set()).add(row_id)
        with self.store.transaction() as tx:
            claims = tx.claims()
            if (c := claims.get(row_id)) is not None and c.session == session:
                del claims[row_id]
                tx.save_claims(claims)

    def undo(self, session: str, labeller: str, row_id: str) -> dict[str, Any]:
        """Withdraw the row's latest label (appending a line that restores what came before it) and offer
        the row again to this session."""
        _check_session(session)
        entry = self.queue.entry(row_id)
        if entry is None:
            raise Refused(f"row {row_id!r} is not in this queue")
        with self.store.transaction() as tx:
            self._take(tx.new_lines())
            history = self._history.get(row_id) or []
            if not self._done(row_id):
                raise Refused(f"row {row_id!r} has no label to undo", 409)
            claims = tx.claims()
            if (c := claims.get(row_id)) is not None and c.session != session:
                raise Refused(f"row {row_id!r} is being labelled by {c.labeller}", 409)
            before = dict(history[-2]) if len(history) > 1 else {"row_id": row_id, "label": None}
            before.pop("undo", None)
            tx.append({**before, "labeller": labeller.strip(), "time": _now(), "undo": True})
            self._take(tx.new_lines())
            self._skipped.get(session, set()).discard(row_id)
            self._claim(tx, claims, session, labeller, entry)
        return self._offer(entry)

    def _claim(
        self, tx: Any, claims: dict[str, Claim], session: str, labeller: str, entry: Entry | None
    ) -> None:
        kept = {r: c for r, c in claims.items() if c.session != session}
        if entry is not None:
            until = time.time() + self.options.claim_seconds
            kept[entry.row_id] = Claim(entry.row_id, session, labeller, until)
        tx.save_claims(kept)

    def _line(self, entry: Entry, value: LabelValue, labeller: str) -> dict[str, Any]:
        if self.plan is not None and entry.probability is not None:
            draw = Draw(entry.row_id, entry.probability, entry.position)
            line: dict[str, Any] = self.plan.label_line(draw, value, labeller, _now()).model_dump(mode="json")
            return line
        # a review: the row keeps the design of the plan that drew it, if one did
        carried = {
            k: v for k, v in (self._history.get(entry.row_id) or [{}])[-1].items() if k not in ("undo",)
        }
        return {
            **carried,
            "row_id": entry.row_id,
            "label": value,
            "labeller": labeller,
            "time": _now(),
            "review": True,
        }

    # ------------------------------------------------------------------------- what is shown
    def _offer(self, entry: Entry | None) -> dict[str, Any]:
        out: dict[str, Any] = {"progress": self.progress()}
        if entry is None:
            out["done"] = True
            return out
        out["row"] = self.rows.view(entry.row_id)
        out["position"] = entry.position
        out["reason"] = entry.reason
        if self.options.review or not self.options.blind:
            out["verdict"] = self.rows.verdict(entry.row_id)
        history = self._history.get(entry.row_id)
        if self.options.review and history and history[-1]["label"] is not None:
            out["current"] = {"label": history[-1]["label"], "labeller": history[-1].get("labeller", "")}
        return out

    def progress(self) -> dict[str, Any]:
        """Labels given in this queue, its size, and the corrected estimate from the plan's labels so far
        (``needs``: how many more labels it wants first), with the lines other servers appended read
        first."""
        with self.store.transaction() as tx:
            self._take(tx.new_lines())
        done = sum(1 for e in self.queue.entries if self._done(e.row_id))
        return {"given": done, "budget": len(self.queue), "estimate": self._corrected()}

    def _corrected(self) -> dict[str, Any]:
        if self._estimate is not None and self._estimate[0] == self._lines:
            return self._estimate[1]
        sampled = {
            r: (h[-1]["label"], float(h[-1]["probability"]))
            for r, h in self._history.items()
            if h[-1]["label"] is not None and h[-1].get("probability") is not None
        }
        labels = [
            None if (v := sampled.get(r)) is None else self.labels.target(v[0]) for r in self.rows.row_ids
        ]
        chances = [None if (v := sampled.get(r)) is None else v[1] for r in self.rows.row_ids]
        counted = sum(v is not None for v in labels)
        out: dict[str, Any]
        if counted < MIN_LABELS:
            out = {"needs": MIN_LABELS - counted}
        else:
            try:
                report = estimate_judge(self.results, self.options.judge, labels, probabilities=chances)
                ppi = report["overall"]["ppi"]
                out = {k: ppi[k] for k in ("estimate", "low", "high", "confidence")}
                out["labelled"] = report["overall"]["labelled_rows"]
            except InputError as exc:
                out = {"error": str(exc)}
        self._estimate = (self._lines, out)
        return out

    def setup(self) -> dict[str, Any]:
        """What the page needs before its first row: the judge, its buttons, the mode and the preset name."""
        return {
            "judge": self.options.judge,
            "kind": self.labels.kind,
            "choices": [
                {"value": c.value, "text": c.text, "keys": list(c.keys)} for c in self.labels.choices
            ],
            "review": self.options.review,
            "blind": self.options.blind and not self.options.review,
            "labeller": self.options.labeller,
            "strategy": None if self.options.review else self.options.strategy.value,
            "labels_file": str(self.store.path),
        }


def _check_session(session: str) -> None:
    if not session or len(session) > 200:
        raise Refused("a request needs its session id")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
