"""The evaluatorq-style namespace of a row: ``input.*``, ``output.*`` and ``log.*``, derived from columns.

``{{dotted.path}}`` placeholders (:mod:`jurist.render.templates`) are looked up in this namespace.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

NAMESPACE_ROOTS = ("input", "output", "log")


def _first(row: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        value = row.get(key)
        if value is not None:
            return value
    return None


def build_namespace(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row plus evaluatorq's ``input.*`` / ``output.*`` / ``log.*`` families, derived from columns.

    A row that already has an ``input``/``output``/``log`` value keeps it (an object, or a plain text column
    such as LLMBar's ``input``). Otherwise the families are built from
    conventional columns: ``messages`` (or ``all_messages``), ``expected_output`` (or ``reference``),
    ``system_instructions``, ``response``, ``tools_called``, ``output_messages`` and ``error``. Values a
    row does not have stay absent (and a template that needs one marks the row ``missing_input``), except
    the ones documented as empty-when-absent: ``expected_output``, ``system_instructions``, ``error``.
    """
    ns: dict[str, Any] = dict(row)
    messages = _first(row, "messages", "all_messages")
    expected = _first(row, "expected_output", "reference")
    response = row.get("response")
    if row.get("input") is None:
        inp: dict[str, Any] = {
            "expected_output": "" if expected is None else expected,
            "system_instructions": row.get("system_instructions") or "",
            "all_messages": messages if messages is not None else [],
        }
        ns["input"] = inp
    if row.get("output") is None:
        out: dict[str, Any] = {"error": row.get("error") or "", "tools_called": row.get("tools_called") or []}
        if response is not None:
            out["response"] = response
            out["messages"] = row.get("output_messages") or [{"role": "assistant", "content": response}]
        ns["output"] = out
    if row.get("log") is None:
        inp_ns = ns["input"] if isinstance(ns["input"], Mapping) else {}
        out_ns = ns["output"] if isinstance(ns["output"], Mapping) else {}
        log: dict[str, Any] = {
            "reference": inp_ns.get("expected_output", ""),
            "expected_output": inp_ns.get("expected_output", ""),
            "messages": inp_ns.get("all_messages", []),
        }
        last_input = _last_content(inp_ns.get("all_messages"))
        if last_input is None:
            last_input = _first(row, "question", "request", "prompt")
        if last_input is None and isinstance(row.get("input"), str):
            last_input = row["input"]
        if last_input is not None:
            log["input"] = last_input
        if "response" in out_ns:
            log["output"] = out_ns["response"]
        ns["log"] = log
    return ns


def _last_content(messages: Any) -> Any:
    if isinstance(messages, list) and messages:
        last = messages[-1]
        if isinstance(last, Mapping):
            return last.get("content")
    return None
