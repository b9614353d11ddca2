"""The evaluatorq-style namespace of a row: ``input.*``, ``output.*`` and ``log.*``, derived from columns,
and the same namespace for each side of a pairwise row (``response_a.*``, ``response_b.*``).

``{{dotted.path}}`` placeholders (:mod:`jurist.config.templates`) are looked up in this namespace. Every
documented variable always has a value once the row has the data it comes from:

==========================  ============================================================================
``input.all_messages``      ``messages`` / ``all_messages`` column; a text ``input`` column becomes one
                            user message; ``[]`` when the row has none
``input.expected_output``   ``expected_output`` / ``reference`` column, else ``""``
``input.system_instructions`` ``system_instructions`` column, else ``""``
``output.response``         ``response`` column, or a text ``output`` column (absent otherwise)
``output.tools_called``     ``tools_called`` column, else ``[]``
``output.messages``         ``output_messages`` column, else the response as one assistant message
``output.error``            ``error`` column, else ``""``
``log.input``               content of the last input message (or ``question``/``request``/``prompt``)
``log.output``              ``output.response``
``log.reference``           ``input.expected_output`` (``log.expected_output`` is the same value)
``log.messages``            ``input.all_messages``
==========================  ============================================================================

A row whose ``input``/``output``/``log`` value is an object keeps its own keys (they win over the derived
ones). A text value stays text for the Oumi form (``{input}`` is the column as it is) while its dotted
paths reach the derived family (:class:`~jurist.config.templates.TextWithFields`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from jurist.config.templates import MissingValue, TextWithFields

NAMESPACE_ROOTS = ("input", "output", "log")


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = row.get(key)
        if value is not None:
            return value
    return None


def _input_family(row: Mapping[str, Any]) -> dict[str, Any]:
    given = row.get("input")
    messages = _first(row, "messages", "all_messages")
    if messages is None and isinstance(given, str):
        messages = [{"role": "user", "content": given}]
    expected = _first(row, "expected_output", "reference")
    family: dict[str, Any] = {
        "all_messages": [] if messages is None else messages,
        "expected_output": "" if expected is None else expected,
        "system_instructions": row.get("system_instructions") or "",
    }
    if isinstance(given, Mapping):
        family.update(given)
    return family


def _output_family(row: Mapping[str, Any]) -> dict[str, Any]:
    given = row.get("output")
    response = row.get("response")
    if response is None and isinstance(given, str):
        response = given
    family: dict[str, Any] = {"error": row.get("error") or "", "tools_called": row.get("tools_called") or []}
    if response is not None:
        family["response"] = response
        if row.get("output_messages"):
            family["messages"] = row["output_messages"]
    if isinstance(given, Mapping):
        family.update({k: v for k, v in given.items() if v is not None})
    if "response" in family and "messages" not in family:
        family["messages"] = [{"role": "assistant", "content": family["response"]}]
    return family


def _log_family(row: Mapping[str, Any], inp: Mapping[str, Any], out: Mapping[str, Any]) -> dict[str, Any]:
    family: dict[str, Any] = {
        "reference": inp.get("expected_output", ""),
        "expected_output": inp.get("expected_output", ""),
        "messages": inp.get("all_messages", []),
    }
    last_input = _last_content(inp.get("all_messages"))
    if last_input is None:
        last_input = _first(row, "question", "request", "prompt")
    if last_input is not None:
        family["input"] = last_input
    if "response" in out:
        family["output"] = out["response"]
    given = row.get("log")
    if isinstance(given, Mapping):
        family.update(given)
    return family


def _attach(given: Any, family: dict[str, Any]) -> Any:
    """What a namespace root holds: the family, or a text column that also reaches the family."""
    if isinstance(given, str):
        return TextWithFields(given, family)
    if given is None or isinstance(given, Mapping):
        return family
    return given  # another kind of column (a list, a number) stays what it is


def build_namespace(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row plus evaluatorq's ``input.*`` / ``output.*`` / ``log.*`` families (see the module table).

    Values a row does not have stay absent (a template that needs one marks the row ``missing_input``),
    except those documented as empty when absent.
    """
    ns: dict[str, Any] = dict(row)
    inp = _input_family(row)
    out = _output_family(row)
    log = _log_family(row, inp, out)
    ns["input"] = _attach(row.get("input"), inp)
    ns["output"] = _attach(row.get("output"), out)
    ns["log"] = _attach(row.get("log"), log)
    return ns


def side_object(value: Any) -> Mapping[str, Any] | None:
    """The object form of a pairwise side (evaluatorq's response: ``{"response": ..., "error": ...}``, or
    the same under ``output``), or None for a plain text side."""
    if not isinstance(value, Mapping):
        return None
    nested = value.get("output")
    return nested if isinstance(nested, Mapping) else value


def side_error(value: Any) -> str | None:
    """The error a pairwise side object carries, or None."""
    obj = side_object(value)
    error = obj.get("error") if obj is not None else None
    return None if error in (None, "") else str(error)


def side_namespace(value: Any, error: Any = None, name: str = "response_a") -> TextWithFields:
    """One side of a pairwise row: its response text (``{response_a}``) that also holds the full pointwise
    namespace (``{{response_a.output.response}}``, ``.output.tools_called``, ``.log.output`` ...).

    A side carries an answer only: its ``input.*`` is empty (``all_messages`` is ``[]``) and ``log.input``
    is blank. ``value`` is the response text or a side object (:func:`side_object`); an object with
    neither a response nor an error is a missing value (``name`` names the side in the message).
    """
    obj = side_object(value)
    err = error if error not in (None, "") else side_error(value)
    text = value if obj is None else obj.get("response", obj.get("content"))
    if text is None and err is None:
        raise MissingValue(f"{name}.output.response")
    text = "" if text is None else str(text)
    out: dict[str, Any] = {
        "response": text,
        "tools_called": (obj or {}).get("tools_called") or [],
        "messages": (obj or {}).get("messages") or [{"role": "assistant", "content": text}],
        "error": "" if err is None else str(err),
    }
    inp: dict[str, Any] = {"all_messages": [], "expected_output": "", "system_instructions": ""}
    log: dict[str, Any] = {
        "input": "",
        "output": text,
        "reference": "",
        "expected_output": "",
        "messages": [],
    }
    return TextWithFields(text, {"input": inp, "output": out, "log": log})


def _last_content(messages: Any) -> Any:
    if isinstance(messages, list) and messages:
        last = messages[-1]
        if isinstance(last, Mapping):
            return last.get("content")
    return None
