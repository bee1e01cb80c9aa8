"""A :class:`~.record.Trace` as plain JSON values: what the store keeps, ``tooluse logs
--json`` prints and the trace page shows.

Besides the recorded facts, each turn gets:

- ``raw``: the text the model was continuing and wrote, pass after pass (each pass's prefill,
  which is not the model's, then the model's text), and ``prefill_spans``, where the
  prefills lie in it;
- ``calls``: each call of the response with its origin (``source`` ``model``/``edited``/
  ``added`` and the rules), its validation against the request's schema for that tool
  (``valid``, ``problems``), and ``span``: where in ``raw`` the model wrote it (an added
  call has none);
- ``spans``: every ``<invoke>`` block of ``raw``, with the call it became (``call``: its
  id, or None when no call of the response came from it, e.g. a repeated call dropped).

Long texts are cut at ``max_text`` characters and say so in the text itself (never
silently): ``"...[cut: 12345 more characters]"``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..messages import Request, Response, ToolSpec, ToolUseBlock
from .record import Trace, Turn, redact_secrets

__all__ = ["MAX_TEXT", "cut", "trace_dict", "turn_dict"]

#: The most characters of one text (a body, a prompt, a raw output) a trace keeps.
MAX_TEXT = 200_000

_INVOKE = re.compile(r"<invoke>\s*<tool_name>(.*?)</tool_name>.*?(?:</invoke>|$)", re.DOTALL)


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """``text``, or its first ``limit`` characters and a note of how many more there were."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}...[cut: {len(text) - limit} more characters]"


def _body(raw: bytes | None, limit: int) -> Any:
    """A body as JSON when it is a JSON document, else as text (a stream's SSE lines)."""
    if raw is None:
        return None
    text = raw.decode("utf-8", errors="replace")
    if len(text) <= limit:
        try:
            return json.loads(text)
        except ValueError:
            pass
    return cut(text, limit)


def _problems(call: ToolUseBlock, tools: list[ToolSpec]) -> list[str]:
    from ..tools.validation import compile_validator, input_problems

    for spec in tools:
        if spec.name == call.name:
            try:
                return input_problems(compile_validator(spec.input_schema), call.input)
            except Exception as exc:  # noqa: BLE001 - a schema jsonschema cannot compile
                return [f"the tool's schema could not be checked: {exc}"]
    return [f"the request has no tool named {call.name!r}"]


def _raw(turn: Turn) -> tuple[str, list[list[int]]]:
    raw, prefills = "", []
    for text_pass in turn.passes:
        if text_pass.prefill:
            prefills.append([len(raw), len(raw) + len(text_pass.prefill)])
        raw += text_pass.prefill + text_pass.text
    return raw, prefills


def _calls(turn: Turn, raw: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    calls = turn.response.tool_uses if turn.response is not None else []
    spans: list[dict[str, Any]] = [
        {"start": m.start(), "end": m.end(), "name": m.group(1).strip(), "call": None}
        for m in _INVOKE.finditer(raw)]
    out = []
    free = list(spans)
    for call in calls:
        span = None
        if call.source != "added":
            # The model's blocks in order: the first unclaimed one naming this tool.
            span = next((s for s in free if s["name"] == call.name), None)
            if span is not None:
                free.remove(span)
                span["call"] = call.id
        problems = _problems(call, turn.request.tools)
        origin = call.origin.model_dump(mode="json") if call.origin is not None else None
        out.append({
            "id": call.id, "name": call.name, "input": call.input, "source": call.source,
            "origin": origin,
            "origin_text": call.origin.describe() if call.origin is not None else "model",
            "valid": not problems, "problems": problems,
            "span": [span["start"], span["end"]] if span is not None else None,
        })
    return out, spans


def _response(response: Response | None) -> Any:
    return response.model_dump(mode="json", exclude_none=True) if response is not None else None


def _request(request: Request) -> dict[str, Any]:
    """The neutral request as JSON: its passthrough holds a client's MCP credentials as
    sent (for an upstream of the same API), redacted here."""
    data: dict[str, Any] = request.model_dump(mode="json", exclude_none=True)
    passthrough = data.get("passthrough")
    if isinstance(passthrough, dict):
        for key in ("fields", "tools"):
            if key in passthrough:
                passthrough[key] = redact_secrets(passthrough[key])
    return data


def turn_dict(turn: Turn, max_text: int = MAX_TEXT) -> dict[str, Any]:
    """One backend call as JSON values (see the module docstring)."""
    raw, prefills = _raw(turn)
    calls, spans = _calls(turn, raw)
    return {
        "request": _request(turn.request),
        "response": _response(turn.response),
        "error": turn.error,
        "duration_ms": None if turn.duration_s is None else turn.duration_s * 1000.0,
        "prompt": None if turn.prompt is None else [
            {**m, "content": cut(m.get("content", ""), max_text)} for m in turn.prompt],
        "rendered_prompt": None if turn.rendered_prompt is None
        else cut(turn.rendered_prompt, max_text),
        "passes": [{
            "purpose": p.purpose, "prefill": p.prefill, "text": cut(p.text, max_text),
            "reason": p.reason, "stop_sequence": p.stop_sequence,
            "input_tokens": p.input_tokens, "output_tokens": p.output_tokens,
            "cached_tokens": p.cached_tokens, "counts": p.counts,
        } for p in turn.passes],
        "raw": cut(raw, max_text) if turn.passes else None,
        "prefill_spans": prefills,
        "diagnostics": turn.diagnostics,
        "tools_left_out": turn.tools_left_out,
        "attempts": turn.attempts,
        "calls": calls,
        "spans": spans,
    }


def _status(trace: Trace) -> str:
    if trace.error is not None or any(t.error for t in trace.turns):
        return "error"
    if trace.status is not None and trace.status >= 400:
        return "error"
    return "ok"


def _phases(trace: Trace) -> dict[str, float]:
    """The recorded phases, plus the time in the backend (``model``) and around it
    (``gateway`` for a request, ``tools and loop`` for a run), in milliseconds."""
    phases = dict(trace.phases)
    spent = [t.duration_s for t in trace.turns if t.duration_s is not None]
    if spent:
        phases["model"] = sum(spent) * 1000.0
        if trace.duration_s is not None:
            around = "gateway" if trace.source == "gateway" else "tools and loop"
            phases[around] = max(0.0, trace.duration_s * 1000.0 - phases["model"])
    return phases


def trace_dict(trace: Trace, max_text: int = MAX_TEXT) -> dict[str, Any]:
    """The whole trace as JSON values, with a ``summary`` for listings."""
    turns = [turn_dict(t, max_text) for t in trace.turns]
    first = trace.turns[0].request if trace.turns else None
    model = next((t.response.model for t in reversed(trace.turns)
                  if t.response is not None and t.response.model), None)
    usage = [t.response.usage for t in trace.turns if t.response is not None]
    return {
        "id": trace.id,
        "source": trace.source,
        "api": trace.api,
        "time": trace.started_at,
        "duration_ms": None if trace.duration_s is None else trace.duration_s * 1000.0,
        "backend": trace.backend,
        "request": {"method": trace.method, "path": trace.path, "headers": trace.headers,
                    "body": _body(trace.body, max_text)},
        "status": trace.status,
        "error": trace.error,
        "response": _body(trace.sent_body, max_text),
        "phases": _phases(trace),
        "turns": turns,
        "summary": {
            "model": model or (first.model if first is not None else None),
            "tools": [t.name for t in first.tools] if first is not None else [],
            "calls": sum(len(t["calls"]) for t in turns),
            "status": _status(trace),
            "input_tokens": sum(u.prompt_tokens for u in usage),  # the whole prompts, cached too
            "output_tokens": sum(u.output_tokens for u in usage),
        },
    }
