"""The trace of one request: what the gateway, the runner and the backend saw and did.

A :class:`Trace` belongs to one request (one HTTP request to the gateway, one
:meth:`Runner.run <tooluse.runner.Runner.run>`), never to a backend instance, so concurrent
requests cannot mix. Whoever starts the request makes it and makes it *current* with
:func:`tracing` (a :class:`contextvars.ContextVar`); everything below on the request's path
(the gateway's state, the runner's drivers, a backend, a text backend) writes into
:func:`current_trace` or :func:`current_turn`, which are None when nobody traces, so every
hook costs one context-variable read when tracing is off::

    trace = Trace(source="gateway", api="messages")
    with tracing(trace):
        trace.received("POST", "/v1/messages", headers, body)   # redacted here
        turn = begin_turn(neutral_request)     # one backend call (None: not tracing)
        ...                                    # the backend writes into current_turn()
        if turn is not None:
            turn.finish(response)              # or turn.fail(exc), or turn.watch(events)
        trace.sent(200, body_bytes)            # the response as sent, or the error

A :class:`TurnRecord` is one backend call: the neutral request, the neutral response (or the
error), its duration and usage, and for a text model (the prompt-based backend) the
messages it was given (:meth:`TurnRecord.text_prompt`), the prompt its chat template rendered
(:meth:`TurnRecord.rendered`), and one :class:`TextPass` per generation: the grammar's prefill,
the raw text the model wrote, why it ended and its token, cache and forced-token counts.
Context variables follow ``anyio.to_thread.run_sync`` and ``asyncio.to_thread`` into worker
threads (they copy the context), and the objects are shared, not copied, so a backend
writing in its worker thread writes into the request's trace.

:func:`.serialize.trace_dict` gives the stored form (JSON): it adds each call's origin, its validation
against the request's tool schema and its span in the raw text. :mod:`.store` keeps traces
in SQLite; :mod:`.view` reads them back for ``tooluse logs`` and the trace page.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from ..messages import Request, Response
from ..stream import Accumulator, StreamEvent

__all__ = ["REDACTED", "SECRET_HEADERS", "SECRET_KEYS", "TextPass", "Trace", "Turn",
           "begin_turn", "current_trace", "current_turn", "redact_body", "redact_headers",
           "redact_secrets", "tracing"]

#: What a secret header's value is replaced with in a trace.
REDACTED = "[redacted]"
#: Headers whose values never enter a trace (API keys, signatures, cookies).
SECRET_HEADERS = frozenset({
    "authorization", "proxy-authorization", "x-api-key", "api-key", "x-goog-api-key",
    "cookie", "set-cookie", "x-amz-security-token",
})

_current: ContextVar[Trace | None] = ContextVar("tooluse_trace", default=None)


def current_trace() -> Trace | None:
    """The trace of the request being served here, or None when nobody traces."""
    return _current.get()


def current_turn() -> TurnRecord | None:
    """The backend call being traced here (the current trace's last turn), or None."""
    trace = _current.get()
    return trace.turns[-1] if trace is not None and trace.turns else None


def begin_turn(request: Request) -> TurnRecord | None:
    """A new :class:`TurnRecord` of the current trace for a backend call of ``request`` (None
    when nobody traces)."""
    trace = _current.get()
    return trace.begin_turn(request) if trace is not None else None


@contextmanager
def tracing(trace: Trace | None) -> Iterator[Trace | None]:
    """Make ``trace`` the current one inside the block (``None``: leave things as they are)."""
    if trace is None:
        yield None
        return
    token = _current.set(trace)
    try:
        yield trace
    finally:
        try:
            _current.reset(token)
        except ValueError:  # an async generator closed from another context: nothing to undo
            pass


def redact_headers(headers: Iterable[tuple[str, str]]) -> dict[str, str]:
    """``headers`` (names lower-cased) with :data:`SECRET_HEADERS` values replaced by
    :data:`REDACTED`; repeated headers are joined by ``", "``."""
    out: dict[str, str] = {}
    for name, value in headers:
        name = name.lower()
        value = REDACTED if name in SECRET_HEADERS else value
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


#: Keys of a request body whose values never enter a trace: the MCP servers' credentials a
#: client hands the gateway (Messages ``mcp_servers[].authorization_token``, a Responses
#: ``mcp`` tool's ``authorization`` and ``headers``).
SECRET_KEYS = frozenset({"authorization_token", "authorization", "headers"})


def redact_secrets(value: Any) -> Any:
    """A JSON value with every :data:`SECRET_KEYS` value replaced by :data:`REDACTED` (a
    ``headers`` object keeps its names)."""
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == "headers" and isinstance(item, dict):
                out[key] = {name: REDACTED for name in item}
            elif key in SECRET_KEYS and item is not None and not isinstance(item, (dict, list)):
                out[key] = REDACTED
            else:
                out[key] = redact_secrets(item)
        return out
    if isinstance(value, list):
        return [redact_secrets(item) for item in value]
    return value


def redact_body(body: bytes | None) -> bytes | None:
    """A request body with :func:`redact_secrets` applied when it is a JSON object holding
    one of the keys (the bytes as they came otherwise)."""
    if body is None or not any(key.encode() in body for key in SECRET_KEYS):
        return body
    try:
        data = json.loads(body)
    except ValueError:
        return body
    return json.dumps(redact_secrets(data), ensure_ascii=False).encode()


@dataclass
class TextPass:
    """One generation of a text model: it continued the prompt after ``prefill`` (the
    grammar's or a rule's opening, not the model's) with ``text``.

    ``purpose``: ``"answer"`` (the turn's generation), ``"answer_again"`` (asked again
    for an answer after the model repeated a call), ``"one_more_call"`` (a further call
    a rule asked for). ``counts``: the text backend's own counters (``forced_tokens``,
    ``prompt_s``, ``generate_s``...: :attr:`TextEnd.timings
    <tooluse.prompting.text_model.TextEnd.timings>`)."""

    prefill: str
    text: str
    purpose: str = "answer"
    reason: str = "end"
    stop_sequence: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    counts: dict[str, float] = field(default_factory=dict)


@dataclass
class TurnRecord:
    """One backend call of a traced request (see the module docstring)."""

    request: Request
    started: float = field(default_factory=time.perf_counter)
    duration_s: float | None = None
    response: Response | None = None
    error: str | None = None
    #: The chat messages a text model was given (system prompt with the tools, turns).
    prompt: list[dict[str, str]] | None = None
    #: The prompt as the text model's chat template rendered it, when it renders locally.
    rendered_prompt: str | None = None
    passes: list[TextPass] = field(default_factory=list)
    #: The prompt-based backend's counters for the turn (rules applied, calls dropped...).
    diagnostics: dict[str, float] = field(default_factory=dict)
    #: Tools a preset left out of the prompt.
    tools_left_out: list[str] = field(default_factory=list)
    #: The gateway's tries of a routed request (route or deployment, outcome, ms, error),
    #: the one that answered last.
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def text_prompt(self, messages: Sequence[Mapping[str, str]]) -> None:
        """Record the chat messages given to the text model."""
        self.prompt = [dict(m) for m in messages]

    def rendered(self, prompt: str) -> None:
        """Record the prompt text the chat template made (the last one wins)."""
        self.rendered_prompt = prompt

    def add_pass(self, text_pass: TextPass) -> None:
        self.passes.append(text_pass)

    def finish(self, response: Response) -> None:
        """The backend's answer."""
        self.response = response
        self.duration_s = time.perf_counter() - self.started

    def fail(self, error: BaseException | str) -> None:
        """The backend call failed with ``error``."""
        self.error = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        self.duration_s = time.perf_counter() - self.started

    def watch(self, events: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
        """``events`` as they are, folded into :attr:`response` as they pass; an error or
        a stream stopped early is recorded as such."""
        folded = Accumulator()
        try:
            for event in events:
                folded.add(event)
                yield event
        except GeneratorExit:
            self.response = folded.response
            self.fail("the stream was closed before it ended (the client left)")
            raise
        except BaseException as exc:
            self.response = folded.response
            self.fail(exc)
            raise
        self.finish(folded.response)


#: The former name of :class:`TurnRecord`, kept so that code written against it still imports.
Turn = TurnRecord


@dataclass
class Trace:
    """Everything about one request (see the module docstring).

    ``source``: ``"gateway"`` or ``"runner"``; ``api``: the wire API (``messages``,
    ``chat``, ``converse``, ``responses``) or ``"runner"``.
    """

    source: Literal["gateway", "runner"]
    api: str
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    #: When the request arrived (seconds since the epoch).
    started_at: float = field(default_factory=time.time)
    started: float = field(default_factory=time.perf_counter)
    duration_s: float | None = None
    backend: str | None = None
    #: The HTTP request as received: method, path, headers (redacted), body bytes.
    method: str | None = None
    path: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    #: The answer as sent: HTTP status (None for a run), body bytes (a stream's as written).
    status: int | None = None
    sent_body: bytes | None = None
    #: Why the request failed, when it did.
    error: str | None = None
    turns: list[TurnRecord] = field(default_factory=list)
    #: Milliseconds per named phase (``gateway``, ``backend``, ``tools``...).
    phases: dict[str, float] = field(default_factory=dict)

    def received(self, method: str, path: str, headers: Iterable[tuple[str, str]],
                 body: bytes | None) -> None:
        """The request as it arrived; secret headers, and the MCP credentials in the body,
        are redacted here."""
        self.method, self.path = method, path
        self.headers = redact_headers(headers)
        self.body = redact_body(body)

    def sent(self, status: int | None, body: bytes | None = None) -> None:
        """The answer as sent (its status and body), which ends the trace."""
        self.status, self.sent_body = status, body
        self.duration_s = time.perf_counter() - self.started

    def fail(self, error: BaseException | str) -> None:
        """The request failed with ``error`` (ends the trace)."""
        self.error = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        self.duration_s = time.perf_counter() - self.started

    def begin_turn(self, request: Request) -> TurnRecord:
        """A new backend call of this request."""
        turn = TurnRecord(request)
        self.turns.append(turn)
        return turn

    def add_phase(self, name: str, seconds: float) -> None:
        """Add ``seconds`` to the phase ``name`` (kept in milliseconds)."""
        self.phases[name] = self.phases.get(name, 0.0) + seconds * 1000.0
