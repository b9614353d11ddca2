"""The evaluatorq namespace of a row: ``input.*``, ``output.*`` and ``log.*``, derived from columns as
evaluatorq 1.82's jury derives them (:mod:`jurist.render.evaluatorq`), and the same namespace for each side
of a pairwise row (``response_a.*``, ``response_b.*``).

``{{dotted.path}}`` placeholders (:mod:`jurist.config.templates`) are looked up in this namespace. Every
documented variable always has a value, as in evaluatorq (an empty one when the row has no data for it):

==========================  ============================================================================
``input.all_messages``      the conversation, each message only ``role`` and flattened ``content``: a
                            dumped data point's ``inputs`` (its ``messages``, its ``input`` as one user
                            message, else the whole object as JSON), else a ``messages`` /
                            ``all_messages`` column, else a text ``input`` column as one user message;
                            ``[]`` when the row has none
``input.expected_output``   ``expected_output`` / ``reference`` column as text (an object as indented
                            JSON), else ``""``
``input.system_instructions`` ``system_instructions`` column, else ``""``
``output.response``         the answer's text: the ``output`` column (text, a static ``{"response",
                            "tool_calls"}`` object, an OpenResponses object), else the ``response``
                            column; ``""`` when there is none (a tool-call-only or null output)
``output.tools_called``     its tool calls (``{"name", "arguments", "result", "id"}``), from the output's
                            ``tool_calls`` or a ``tools_called`` column, else ``[]``
``output.messages``         its transcript (text, tool-call turns, reasoning items); an
                            ``output_messages`` column replaces it
``output.error``            the output's ``error``, else an ``error`` column, else ``""``
``log.input``               content of the last input message (jurist: else a ``question`` /
                            ``request`` / ``prompt`` column), else ``""``
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

from jurist.config.templates import MissingValue, TextWithFields, ValueWithFields, lookup
from jurist.render.evaluatorq import (
    Item,
    answer_parts,
    clean_messages,
    inputs_messages,
    output_items,
    text_of,
    tool_item,
)

NAMESPACE_ROOTS = ("input", "output", "log")


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = row.get(key)
        if value is not None:
            return value
    return None


def _messages(row: Mapping[str, Any]) -> list[dict[str, str]]:
    inputs = row.get("inputs")
    if isinstance(inputs, Mapping):
        return inputs_messages(inputs)
    messages = _first(row, "messages", "all_messages")
    if isinstance(messages, list | tuple):
        return clean_messages(messages)
    given = row.get("input")
    if isinstance(given, str):
        return inputs_messages({"input": given})
    return []


def _input_family(row: Mapping[str, Any]) -> dict[str, Any]:
    given = row.get("input")
    family: dict[str, Any] = {
        "all_messages": _messages(row),
        "expected_output": text_of(_first(row, "expected_output", "reference")),
        "system_instructions": row.get("system_instructions") or "",
    }
    if isinstance(given, Mapping):
        family.update(given)
    return family


def _target_error(output: Any) -> str | None:
    if not isinstance(output, Mapping) or output.get("error") is None:
        return None
    error = output["error"]
    if isinstance(error, Mapping):
        return str(error["message"]) if error.get("message") is not None else str(dict(error))
    return str(error)


def _output_error(row: Mapping[str, Any]) -> Any:
    """``output.error``: the target's own error (an output object's), else the row's ``error`` column."""
    error = _target_error(row.get("output"))
    return error if error is not None else row.get("error") or ""


def _output_family(row: Mapping[str, Any]) -> dict[str, Any]:
    given = row.get("output")
    if given is None:  # the answer from columns: a response text, tool calls
        items: list[Item] = [("text", str(row["response"]), {})] if row.get("response") else []
        items += [tool_item(call) for call in row.get("tools_called") or [] if isinstance(call, Mapping)]
    else:
        items = output_items(given)
    response, tools, transcript = answer_parts(items)
    family: dict[str, Any] = {
        "response": response,
        "tools_called": tools,
        "messages": row.get("output_messages") or transcript,
        "error": _output_error(row),
    }
    own = row.get("output")
    if isinstance(own, Mapping):  # the object's own keys win (but its text and error are read above)
        family.update({k: v for k, v in own.items() if v is not None and k not in ("response", "error")})
    return family


def _log_family(row: Mapping[str, Any], inp: Mapping[str, Any], out: Mapping[str, Any]) -> dict[str, Any]:
    messages = inp.get("all_messages") or []
    last = messages[-1].get("content", "") if messages and isinstance(messages[-1], Mapping) else None
    if last is None:
        last = _first(row, "question", "request", "prompt")
    family: dict[str, Any] = {
        "input": "" if last is None else last,
        "output": out.get("response", ""),
        "reference": inp.get("expected_output", ""),
        "expected_output": inp.get("expected_output", ""),
        "messages": inp.get("all_messages", []),
    }
    given = row.get("log")
    if isinstance(given, Mapping):
        family.update(given)
    return family


def _attach(given: Any, family: dict[str, Any]) -> Any:
    """What a namespace root holds: the family, or the column's own value (text, a number, a list) for the
    Oumi form ``{output}`` that also reaches the family through dotted paths."""
    if isinstance(given, str):
        return TextWithFields(given, family)
    if given is None or isinstance(given, Mapping):
        return family
    return ValueWithFields(given, family)


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


def namespace_value(row: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    """The value at ``path`` (under one of :data:`NAMESPACE_ROOTS`) of :func:`build_namespace`'s namespace,
    building only that root's family; ``output.error`` (what a judge's ``target_error_field`` reads by
    default, on every row) is read without building one."""
    if path == ("output", "error"):
        return _output_error(row)
    return lookup({path[0]: root_namespace(row, path[0])}, path)


def root_namespace(row: Mapping[str, Any], root: str) -> Any:
    """What :func:`build_namespace` gives ``root`` (one of :data:`NAMESPACE_ROOTS`), building that family
    alone (``log``'s is built from the other two)."""
    if root == "input":
        return _attach(row.get("input"), _input_family(row))
    if root == "output":
        return _attach(row.get("output"), _output_family(row))
    inp = _input_family(row)
    return _attach(row.get("log"), _log_family(row, inp, _output_family(row)))


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
    text_given = obj is None or obj.get("response", obj.get("content")) is not None
    calls_given = obj is not None and bool(obj.get("tool_calls") or obj.get("tools_called"))
    if not text_given and not calls_given and err is None:
        raise MissingValue(f"{name}.output.response")
    tools: list[dict[str, Any]] = []
    if type(value) is str:  # a plain text side (most rows): what output_items and answer_parts give it
        text, transcript = value, [{"role": "assistant", "content": value}] if value else []
    else:
        if obj is None:
            items = output_items("" if value is None else str(value))
        else:
            calls = obj.get("tool_calls") or obj.get("tools_called") or []
            items = output_items({**obj, "tool_calls": calls})
        text, tools, transcript = answer_parts(items)
    out: dict[str, Any] = {
        "response": text,
        "tools_called": tools,
        "messages": (obj or {}).get("messages") or transcript,
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
