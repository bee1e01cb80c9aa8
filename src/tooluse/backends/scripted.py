"""A backend that answers from a script: for tests, demos and users' own tests.

It replays a list of responses in order, or calls a function of the request, and records
the last requests it received (``backend.requests``, the newest ``history`` of them, 100 by
default, so a long-running ``tooluse serve --backend scripted`` stays flat in memory) so a
test can check what the model saw. Its stream cuts text and tool-input JSON into small
pieces, so code consuming the stream is exercised on partial JSON exactly as a real
streaming API would make it.

Spec strings (``tooluse serve --backend SPEC``; see docs/backends.md):

- ``scripted``: echoes the last user text;
- ``scripted:TEXT``: always answers TEXT;
- ``scripted:call:NAME {JSON}``: calls tool NAME with that input (``scripted:call`` alone:
  the tool the request forces, else its first tool, with an input made from the schema);
- ``scripted:[STEP, ...]``: a JSON list of steps, one per turn of the agent's loop. Each
  step is a string (a text answer) or an object ``{"text": ..., "call": NAME or true,
  "input": {...}}``. Which step answers is the number of assistant turns already in the
  conversation (so it needs no state and serves any number of clients); past the end, the
  last step repeats. A call step whose tool the request does not offer answers with its
  ``text`` (or, without one, the last text step), so side requests without tools get text.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from ..backend import Backend
from ..errors import ToolUseError
from ..messages import Request, Response, TextBlock, ToolSpec, ToolUseBlock
from ..stream import StreamEvent, events_from_response

__all__ = ["ScriptExhausted", "ScriptedBackend", "from_spec"]

Script = Callable[[Request], "Response | str"]


class ScriptExhausted(ToolUseError, RuntimeError):
    """The backend was asked for more responses than its script holds."""


class ScriptedBackend(Backend):
    """Answer requests from ``script``.

    ``script`` is either an iterable of responses (a :class:`Response`, a plain string for a
    text answer, or an ``Exception`` to raise) replayed in order, or a function taking the
    :class:`Request` and returning one of those.
    """

    name = "scripted"

    def __init__(
        self,
        script: Iterable[Response | str | BaseException] | Script | None = None,
        *,
        model: str = "scripted",
        chunk_size: int = 7,
        history: int = 100,
    ) -> None:
        if history < 0:
            raise ValueError(f"history must be >= 0, not {history!r}")
        self.model = model
        self.chunk_size = chunk_size
        self.history = history
        #: Copies of the last ``history`` requests, oldest first.
        self.requests: list[Request] = []
        #: How many requests were answered in all.
        self.served = 0
        self._ids = itertools.count(1)
        if script is None:
            script = [Response(content=[TextBlock(text="")], stop_reason="end_turn")]
        if callable(script):
            self._function: Script | None = script
            self._queue: Iterator[Response | str | BaseException] | None = None
        else:
            self._function = None
            self._queue = iter(list(script))

    def _next(self, request: Request) -> Response:
        self.served += 1
        if self.history:
            self.requests.append(request.model_copy(deep=True))
            if len(self.requests) > self.history:
                del self.requests[0]
        if self._function is not None:
            item: Any = self._function(request)
        else:
            assert self._queue is not None
            try:
                item = next(self._queue)
            except StopIteration:
                raise ScriptExhausted(
                    f"scripted backend has no response left for request {self.served}"
                ) from None
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            item = Response(content=[TextBlock(text=item)], stop_reason="end_turn")
        if not isinstance(item, Response):
            raise TypeError(f"a script must give Response, str or an exception, not {item!r}")
        response = item.model_copy(deep=True)
        if not response.id:
            response.id = f"msg_scripted_{next(self._ids):04d}"
        if response.model is None:
            response.model = request.model or self.model
        return response

    def complete(self, request: Request) -> Response:
        return self._next(request)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        yield from events_from_response(self._next(request), chunk_size=self.chunk_size)


def from_spec(rest: str, **options: Any) -> ScriptedBackend:
    """``scripted``, ``scripted:TEXT``, ``scripted:call:NAME {JSON}`` or ``scripted:[STEPS]``
    (see the module docstring)."""
    if rest.startswith(("[", "call:")) or rest == "call":
        return ScriptedBackend(_Steps(_parse_steps(rest)), **options)
    if rest:
        return ScriptedBackend(lambda request: rest, **options)

    def echo(request: Request) -> str:
        for message in reversed(request.messages):
            if message.role == "user" and message.text():
                return message.text()
        return ""

    return ScriptedBackend(echo, **options)


def _parse_steps(rest: str) -> list[dict[str, Any]]:
    """The steps of a spec, each ``{"text": str | None, "call": str | True | None,
    "input": dict | None}``; a :class:`ValueError` says what is wrong."""
    if not rest.startswith("["):
        name, _, raw = rest.removeprefix("call").removeprefix(":").partition(" ")
        try:
            given = json.loads(raw) if raw.strip() else None
        except ValueError as exc:
            raise ValueError(f"scripted:call:{name}: the input is not JSON: {exc}") from None
        return [_step({"call": name or True, "input": given}, 0)]
    try:
        items = json.loads(rest)
    except ValueError as exc:
        raise ValueError(f"scripted:[...]: not a JSON list: {exc}") from None
    if not isinstance(items, list) or not items:
        raise ValueError("scripted:[...]: needs a non-empty JSON list of steps")
    return [_step(item, k) for k, item in enumerate(items)]


def _step(item: Any, k: int) -> dict[str, Any]:
    if isinstance(item, str):
        return {"text": item, "call": None, "input": None}
    if not isinstance(item, dict) or not set(item) <= {"text", "call", "input"} or not item:
        raise ValueError(f"scripted step {k}: a string or an object with text, call, input")
    text, call, given = item.get("text"), item.get("call"), item.get("input")
    if text is not None and not isinstance(text, str):
        raise ValueError(f"scripted step {k}: text must be a string")
    if call is not None and call is not True and not (isinstance(call, str) and call):
        raise ValueError(f"scripted step {k}: call must be a tool name or true")
    if given is not None and not isinstance(given, dict):
        raise ValueError(f"scripted step {k}: input must be a JSON object")
    if call is None and given is not None:
        raise ValueError(f"scripted step {k}: input without call")
    return {"text": text, "call": call, "input": given}


class _Steps:
    """The script of a ``scripted:[...]`` spec: stateless, the step is chosen by the number
    of assistant turns in the conversation."""

    def __init__(self, steps: list[dict[str, Any]]) -> None:
        self.steps = steps
        self.ids = itertools.count(1)

    def __call__(self, request: Request) -> Response:
        done = sum(1 for m in request.messages if m.role == "assistant")
        step = self.steps[min(done, len(self.steps) - 1)]
        tool = _tool_for(step["call"], request) if step["call"] is not None else None
        content: list[Any] = []
        text = step["text"]
        if tool is None and step["call"] is not None and text is None:
            text = next((s["text"] for s in reversed(self.steps) if s["call"] is None), "")
        if text:
            content.append(TextBlock(text=text))
        if tool is None:
            return Response(content=content or [TextBlock(text="")], stop_reason="end_turn")
        given = step["input"] if step["input"] is not None else _input_for(tool.input_schema)
        content.append(ToolUseBlock(id=f"toolu_scripted_{next(self.ids):04d}", name=tool.name,
                                    input=given))
        return Response(content=content, stop_reason="tool_use")


def _tool_for(call: str | bool, request: Request) -> ToolSpec | None:
    """The tool a call step calls in ``request``, or None when the request does not offer it."""
    tools = {t.name: t for t in request.tools}
    if call is True:
        choice = request.tool_choice
        if choice is not None and choice.type == "none":
            return None
        if choice is not None and choice.name is not None:
            return tools.get(choice.name)
        return request.tools[0] if request.tools else None
    assert isinstance(call, str)
    return tools.get(call)


def _input_for(schema: Mapping[str, Any]) -> dict[str, Any]:
    """A minimal input for a schema: each required property with its default, first enum
    value, or an empty value of its type."""
    value = _value_for(schema, 0)
    return value if isinstance(value, dict) else {}


_EMPTY: dict[str, Any] = {"string": "", "integer": 0, "number": 0, "boolean": False,
                          "array": [], "null": None}


def _value_for(schema: Any, depth: int) -> Any:
    if not isinstance(schema, Mapping) or depth > 8:
        return None
    if "default" in schema:
        return schema["default"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = kind[0] if kind else None
    if kind == "object" or (kind is None and "properties" in schema):
        props = schema.get("properties") or {}
        required = schema.get("required") or []
        return {name: _value_for(props.get(name, {}), depth + 1) for name in required
                if isinstance(name, str)}
    return _EMPTY.get(str(kind), "")
