"""Telling an engine that died from a request that failed.

A request that fails is that row's ``backend_error``, and the run goes on. An engine that died fails every
request after it: recording that row by row would turn the rest of a long run into failures. So the places
that isolate failing requests (:mod:`jurist.engine.dispatch`, :mod:`jurist.engine.stream`) ask
:func:`stop_if_dead` first; a dead engine becomes a :class:`~jurist.errors.BackendError` naming it, which
stops the run (exit 2 on the command line) with its committed chunks kept, so a rerun resumes.

Recognised: vLLM's ``EngineDeadError`` (its engine-core process exited: killed, out of memory, a crashed
kernel), matched by name so that nothing here imports vLLM.
"""

from __future__ import annotations

from jurist.errors import BackendError

_DEAD = {
    "EngineDeadError": "vLLM's engine process (EngineCore) died",
}


def stop_if_dead(exc: BaseException) -> None:
    """Raise :class:`BackendError` when ``exc`` says the engine itself is gone (nothing otherwise)."""
    for kind in type(exc).__mro__:
        what = _DEAD.get(kind.__name__)
        if what is not None:
            raise BackendError(
                f"{what} ({' '.join(str(exc).split())[:300]}); the chunks committed so far are kept: "
                "rerun the same command to resume (the engine's own log, beside the output, says why it died)"
            ) from exc
