"""Exception types.

Errors that stop a run before any row is judged (a bad config, an unreadable input file, a dataset
without a column the template needs) are raised as exceptions whose message names the file, the field
and the value. Errors that concern one row never raise: they become that row's ``status``.
"""

from __future__ import annotations


class JuristError(Exception):
    """Base class of every error jurist raises on purpose."""


class ConfigError(JuristError, ValueError):
    """A judge config could not be loaded or is invalid.

    ``source`` names the file (or ``<python>`` for configs built in code), ``field`` the dotted path of the
    offending key when one is known.
    """

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None) -> None:
        self.source = source
        self.field = field
        where = ""
        if source:
            where += f"{source}"
        if field:
            where += f"{': ' if where else ''}{field}"
        super().__init__(f"{where}: {message}" if where else message)


class InputError(JuristError, ValueError):
    """An input dataset cannot be read at all (missing, empty, not UTF-8, unknown format, missing column)."""

    def __init__(self, message: str, *, source: str | None = None) -> None:
        self.source = source
        super().__init__(f"{source}: {message}" if source else message)


class BackendError(JuristError, RuntimeError):
    """A backend could not be created (engine not installed, unknown engine, model not loadable)."""
