"""Backends that load their model when the first request needs it.

A run whose rows all fail before reaching the model (a placeholder no row fills, unreadable input, errored
targets) then never loads one. What planning needs before that (the constraint kinds, a model name for
provenance) is known from the config alone (:mod:`jurist.backends`); whether the engine streams is asked
of the backend once it is loaded (:func:`jurist.engine.stream.judge_chunks`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from jurist.backends import constraint_kinds
from jurist.backends.base import Backend, Forwarding, call, describe
from jurist.config.inference import InferenceConfig
from jurist.models.default_model import DEFAULT_MODEL_LABEL
from jurist.records import (
    ALL_CONSTRAINT_KINDS,
    Answer,
    Completion,
    ConstraintKind,
    GenerationRequest,
    Request,
)


class LazyBackend(Forwarding):
    """A backend made by ``factory(config)`` on first use; ``on_load(seconds)`` hears how long that took and
    ``check(backend)`` (when given) may refuse it once made. Every request type is forwarded to the real
    backend's method for it (:func:`~jurist.backends.base.call`: a backend without one answers each request
    with an error saying so)."""

    def __init__(
        self,
        factory: Callable[[InferenceConfig], Backend],
        config: InferenceConfig,
        on_load: Callable[[float], None],
        check: Callable[[Backend], None] | None = None,
    ) -> None:
        self._factory = factory
        self._config = config
        self._on_load = on_load
        self._check = check
        self._backend: Backend | None = None
        self._failure: Exception | None = None
        self.constraint_kinds: tuple[ConstraintKind, ...] = constraint_kinds(config)

    @property
    def loaded(self) -> Backend | None:
        return self._backend

    def real(self) -> Backend:
        """The backend, created on the first call (a failure to create or check it is raised again on later
        calls)."""
        if self._failure is not None:
            raise self._failure
        if self._backend is None:
            started = time.perf_counter()
            try:
                backend = self._factory(self._config)
            except Exception as exc:
                self._failure = exc
                raise
            self._on_load(time.perf_counter() - started)
            if self._check is not None:
                try:
                    self._check(backend)
                except Exception as exc:
                    self._failure = exc
                    backend.close()
                    raise
            self._backend = backend
        return self._backend

    @property
    def model_id(self) -> str:
        if self._backend is not None:
            return self._backend.model_id
        return self._config.model.model_name or DEFAULT_MODEL_LABEL

    def forward(self, kind: type[Request], requests: Sequence[Request]) -> list[Answer]:
        return call(self.real(), kind, requests)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        return self.real().generate(requests)

    def describe(self) -> dict[str, Any]:
        return describe(self._backend) if self._backend is not None else {"loaded": False}

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None


class NoModel:
    """The backend of judges that need no model (rule judges): it loads nothing and takes no request."""

    model_id = "rule"
    constraint_kinds: tuple[ConstraintKind, ...] = ALL_CONSTRAINT_KINDS

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        if requests:
            raise TypeError("a judge without a model sent a generation request")
        return []

    def describe(self) -> dict[str, Any]:
        return {"engine": "none (rule judge)"}

    def close(self) -> None:
        """Nothing to free."""


NO_MODEL = NoModel()


def lazy(
    factory: Callable[[InferenceConfig], Backend],
    config: InferenceConfig,
    on_load: Callable[[float], None],
    check: Callable[[Backend], None] | None = None,
) -> Backend:
    """A backend for ``config`` that ``factory`` creates on first use (and ``check`` may refuse)."""
    return LazyBackend(factory, config, on_load, check)
