"""A backend that answers from a script: for tests, demos and users' own tests.

It replays a list of responses in order, or calls a function of the request, and records
every request it received (``backend.requests``) so a test can check what the model saw.
Its stream cuts text and tool-input JSON into small pieces, so code consuming the stream is
exercised on partial JSON exactly as a real streaming API would make it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ..backend import Backend
from ..errors import ToolUseError
from ..messages import Request, Response, TextBlock
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
    ) -> None:
        self.model = model
        self.chunk_size = chunk_size
        self.requests: list[Request] = []
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
        self.requests.append(request.model_copy(deep=True))
        if self._function is not None:
            item: Any = self._function(request)
        else:
            assert self._queue is not None
            try:
                item = next(self._queue)
            except StopIteration:
                raise ScriptExhausted(
                    f"scripted backend has no response left for request {len(self.requests)}"
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
    """``scripted`` (echoes the last user text) or ``scripted:TEXT`` (always answers TEXT)."""
    if rest:
        return ScriptedBackend(lambda request: rest, **options)

    def echo(request: Request) -> str:
        for message in reversed(request.messages):
            if message.role == "user" and message.text():
                return message.text()
        return ""

    return ScriptedBackend(echo, **options)
