"""The tool-running loop: :class:`Runner` (what a run returns, :class:`RunResult`, is in
:mod:`tooluse.runner.run_result`).

A run sends the conversation and the tools to the model, runs the calls it asks for (see
:mod:`tooluse.runner.execute`), sends the results back, and repeats until the model answers
without calling a tool. The decisions live in :mod:`tooluse.runner.core`; this module drives
them four ways: :meth:`Runner.run`, ``await`` :meth:`Runner.arun`, and the event streams
:meth:`Runner.stream` / :meth:`Runner.astream`. Each driver also asks the runner's
``approve`` callback when the core asks it to (:class:`~tooluse.runner.core.AskApproval`).
"""

from __future__ import annotations

import concurrent.futures
import inspect
import os
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, cast

import anyio

from ..backend import Backend
from ..backends.registry import load_backend
from ..errors import BackendError
from ..messages import (
    ContentBlock,
    Message,
    Reasoning,
    Request,
    Response,
    TextBlock,
    ToolChoice,
    ToolSearchSpec,
    ToolUseBlock,
)
from ..partial_json import IncrementalJSONParser, PartialJSONError
from ..stream import (
    Accumulator,
    BlockStart,
    BlockStop,
    StreamEvent,
    TextDelta,
    ToolInputDelta,
)
from ..telemetry import Off, agent_span
from ..tools import Tool, ToolSet, ToolSource
from ..tools.toolset import ToolLike
from ..trace.store import TraceStore, open_store
from .core import (
    Action,
    AskApproval,
    CallModel,
    Decided,
    Output,
    Results,
    Retry,
    RunTools,
    Settings,
    conversation,
)
from .events import (
    ApprovalDecisionEvent,
    ApprovalRequestEvent,
    FinalEvent,
    MessageEvent,
    RetryEvent,
    RunEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolInputDeltaEvent,
    ToolResultEvent,
)
from .execute import arun_invocations, run_invocations
from .hosted_backend import ServerToolsBackend
from .run_result import RunResult
from .tracing import TracedRun, call_failed

if TYPE_CHECKING:
    from ..telemetry.spans import AgentSpan

__all__ = ["SEARCH_TOOL", "Approver", "Prompt", "Runner", "make_tool_choice"]

#: The name of the tool search the model calls when a runner has ``tool_search``.
SEARCH_TOOL = "tool_search"

#: What a user turn can be given as.
Prompt = str | Message | Sequence[ContentBlock]
#: One turn's tool choice as the runner accepts it.
ToolChoiceLike = ToolChoice | str | Mapping[str, Any] | None

#: The ``approve`` callback: given a call that needs approval (its ``origin`` says where it
#: came from) and its tool, True runs it, False denies it. Sync or async.
Approver: TypeAlias = Callable[[ToolUseBlock, Tool], "bool | Awaitable[bool]"]

_Run = Generator[Action, Any, RunResult]


def _decision(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(
            f"the approve callback must return True or False, not {type(value).__name__}"
        )
    return value


def _ask(approve: Approver, action: AskApproval) -> Any:
    """Call the callback with a copy of the call (it cannot change what runs)."""
    return approve(action.invocation.call.model_copy(deep=True), action.invocation.tool)


def _approve_sync(approve: Approver, action: AskApproval) -> bool:
    value = _ask(approve, action)
    if inspect.isawaitable(value):
        value = _wait(value)
    return _decision(value)


def _wait(awaitable: Awaitable[Any]) -> Any:
    """An async callback's answer from sync code: run to completion on a fresh event loop,
    in a worker thread when this thread already runs one (sync code called from async)."""

    async def wait() -> Any:
        return await awaitable

    import asyncio  # here, not at the top: a synchronous program never needs it

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return anyio.run(wait)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(anyio.run, wait).result()


async def _approve_async(approve: Approver, action: AskApproval) -> bool:
    value = _ask(approve, action)
    if inspect.isawaitable(value):
        value = await value
    return _decision(value)


def make_tool_choice(
    value: ToolChoice | str | Mapping[str, Any] | None,
    tools: ToolSet,
    *,
    disable_parallel_tool_use: bool = False,
) -> ToolChoice | None:
    """``"auto"``/``"any"``/``"none"``, a tool's name, a :class:`ToolChoice` or its dict."""
    if value is None:
        return ToolChoice(type="auto", disable_parallel_tool_use=True) if (
            disable_parallel_tool_use
        ) else None
    if isinstance(value, ToolChoice):
        choice = value
    elif isinstance(value, str):
        if value in ("auto", "any", "none"):
            choice = ToolChoice(type=value)  # type: ignore[arg-type]
        else:
            choice = ToolChoice(type="tool", name=value)
    else:
        choice = ToolChoice.model_validate(dict(value))
    if choice.type == "tool" and choice.name not in tools:
        raise ValueError(
            f"tool_choice names {choice.name!r}, which is not one of the tools: "
            + (", ".join(tools.names) or "(none)")
        )
    if disable_parallel_tool_use and not choice.disable_parallel_tool_use:
        choice = choice.model_copy(update={"disable_parallel_tool_use": True})
    return choice


def _user_turn(prompt: Prompt) -> Message:
    if isinstance(prompt, Message):
        return prompt
    if isinstance(prompt, str):
        return Message(role="user", content=[TextBlock(text=prompt)])
    return Message(role="user", content=list(prompt))


def _start(prompt: Prompt | None, messages: Iterable[Message | Mapping[str, Any]] | None) -> list[Message]:
    convo = [m if isinstance(m, Message) else Message.model_validate(m) for m in messages or ()]
    convo = [m.model_copy(deep=True) for m in convo]
    if prompt is not None:
        turn = _user_turn(prompt)
        if convo and convo[-1].role == "user" and turn.role == "user":
            # Two user turns in a row are invalid in every API: merge them.
            convo[-1] = Message(role="user", content=[*convo[-1].content, *turn.content])
        else:
            convo.append(turn)
    if not convo:
        raise ValueError("nothing to run: give a prompt or messages")
    return convo


class _Turn:
    """Folds one streamed model turn into a response while translating backend events
    into run events (with each tool input parsed incrementally)."""

    def __init__(self) -> None:
        self.acc = Accumulator()
        self.calls: dict[int, tuple[str, str]] = {}
        self.parsers: dict[int, IncrementalJSONParser | None] = {}

    def add(self, event: StreamEvent) -> list[RunEvent]:
        self.acc.add(event)
        if isinstance(event, TextDelta):
            return [TextDeltaEvent(event.index, event.text)]
        if isinstance(event, ToolInputDelta):
            id_, name = self.calls[event.index]
            parser = self.parsers.get(event.index)
            value: Any = None
            if parser is not None:
                try:
                    parser.feed(event.partial_json)
                    value = parser.value()
                except PartialJSONError:
                    # Malformed input: stop showing it live; the accumulated response
                    # reports the error for the whole call.
                    self.parsers[event.index] = None
            return [ToolInputDeltaEvent(event.index, id_, name, event.partial_json, value)]
        if isinstance(event, BlockStart) and isinstance(event.block, ToolUseBlock):
            self.calls[event.index] = (event.block.id, event.block.name)
            self.parsers[event.index] = IncrementalJSONParser()
            return [ToolCallStartEvent(event.index, event.block.id, event.block.name,
                                       origin=event.block.origin)]
        if isinstance(event, BlockStop) and event.index in self.calls:
            id_, _ = self.calls[event.index]
            for block in self.acc.response.content:
                if isinstance(block, ToolUseBlock) and block.id == id_:
                    return [ToolCallEvent(event.index, block.model_copy(deep=True))]
        return []

    def finish(self) -> Response:
        return self.acc.finish()


class Runner:
    """Runs a conversation with tools until the model answers.

    ``backend``: a :class:`~tooluse.backends.Backend` or a spec string
    (``"anthropic:claude-3-5-haiku-latest"``). ``tools``: functions, :class:`Tool` s,
    pydantic models, tool dicts, or a :class:`ToolSet`.

    - ``tool_choice``: ``"auto"``, ``"any"``, ``"none"``, a tool name, or a
      :class:`ToolChoice`. A forced choice (``any`` or a tool) applies to the **first**
      model turn only; later turns use ``auto``, otherwise the model could never answer.
      A list gives the choice of each turn in order (a plan: ``["get_ticker_symbol",
      "get_current_stock_price", "none"]``); turns after it use ``auto`` (``none`` if the
      list ends with ``none``).
    - ``disable_parallel_tool_use``: ask the model for at most one call per turn.
    - ``parallel``: run one turn's calls concurrently (default) or one by one.
    - ``tool_timeout``: seconds per call; a late call is answered with an error.
    - ``max_iterations``: model turns at most (default 10); then
      :class:`MaxIterationsExceeded`.
    - ``max_validation_retries``: the same tool failing validation this many times in a
      row stops the run with :class:`ToolRetriesExhausted` (default 3).
    - ``retry_max_tokens``: when ``max_tokens`` cuts a tool call, the turn is asked again
      once with this many (default ``4 * max_tokens``; ``0`` disables the retry).
    - ``approve``: called as ``approve(call, tool)`` before a call whose tool requires
      approval (:meth:`Tool.needs_approval <tooluse.tools.Tool.needs_approval>`) runs;
      sync or async (:meth:`run` runs an async one to completion). True runs the call;
      False denies it: it is not run and the model gets an ``is_error`` result saying the
      user denied it. Without a callback every such call is denied that way, its result
      saying no one could be asked. An exception in the callback ends the run.
    - other keyword arguments (``temperature``, ``top_p``, ``stop_sequences``,
      ``metadata``, ``reasoning``: a :class:`~tooluse.messages.Reasoning` or its dict) go
      into every request. With ``reasoning`` on, the model's thinking blocks stay in
      ``result.messages`` as they came, signatures included, and go back with the
      conversation on the next turn, as the Messages API needs in a tool loop.
    - ``trace``: keep a trace of every run (:mod:`tooluse.trace`: each model call's
      request, prompt, raw output, calls and response) in this
      :class:`~tooluse.trace.store.TraceStore` or SQLite file; ``tooluse logs`` reads it.
    - ``tool_search``: ``"bm25"`` or ``"regex"``: the tools are deferred (kept out of the
      model's prompt, but for those named in ``loaded_tools``) and the model gets a
      ``tool_search`` tool instead; its searches run in the runner
      (:mod:`~tooluse.runner.hosted`, the gateway's own loop), the tools found are offered
      from then on, and each search is a :class:`~tooluse.messages.ToolSearchBlock` of the
      assistant turn in ``result.messages`` (counted in ``result.usage``).
    """

    def __init__(
        self,
        backend: Backend | str,
        tools: Iterable[ToolLike] | ToolSet = (),
        *,
        system: str | None = None,
        model: str | None = None,
        max_tokens: int = 1024,
        tool_choice: ToolChoiceLike | Sequence[ToolChoiceLike] = None,
        disable_parallel_tool_use: bool = False,
        max_iterations: int = 10,
        max_validation_retries: int = 3,
        retry_max_tokens: int | None = None,
        parallel: bool = True,
        tool_timeout: float | None = None,
        map_names: bool = False,
        approve: Approver | None = None,
        trace: TraceStore | str | os.PathLike[str] | None = None,
        tool_search: Literal["bm25", "regex"] | None = None,
        loaded_tools: Iterable[str] = (),
        **request_options: Any,
    ) -> None:
        if max_iterations < 1:
            raise ValueError("max_iterations must be >= 1")
        if max_validation_retries < 1:
            raise ValueError("max_validation_retries must be >= 1")
        if max_tokens < 1:
            raise ValueError("max_tokens must be >= 1")
        if tool_timeout is not None and tool_timeout <= 0:
            raise ValueError("tool_timeout must be > 0 seconds")
        allowed = {"temperature", "top_p", "top_k", "stop_sequences", "metadata", "reasoning"}
        unknown = set(request_options) - allowed
        if unknown:
            raise TypeError(f"Runner got unknown options: {', '.join(sorted(unknown))}")
        if request_options.get("reasoning") is not None:
            request_options["reasoning"] = Reasoning.model_validate(request_options["reasoning"])
        self.backend = load_backend(backend) if isinstance(backend, str) else backend
        #: What the drivers call: the backend, with a tool search run around it when asked.
        self._serving: Backend = ServerToolsBackend(self.backend) if tool_search else self.backend
        if (callable(tools) or isinstance(tools, ToolSource)) and not isinstance(tools, ToolSet):
            tools = [tools]  # a single function, Tool or MCP server given without a list
        self.tools = tools if isinstance(tools, ToolSet) else ToolSet(tools, map_names=map_names)
        self.parallel = parallel
        self.tool_timeout = tool_timeout
        if approve is not None and not callable(approve):
            raise TypeError("approve must be a function of (call, tool) returning True/False")
        self.approve = approve
        self.trace_store = open_store(trace)
        steps: list[ToolChoiceLike] = (
            list(tool_choice) if isinstance(tool_choice, (list, tuple))
            else [cast(ToolChoiceLike, tool_choice)]  # one choice (a str is not a plan)
        )
        if not steps:
            raise ValueError("tool_choice: an empty list plans no turn (give None for auto)")
        plan = [make_tool_choice(step, self.tools,
                                 disable_parallel_tool_use=disable_parallel_tool_use)
                for step in steps]
        self.settings = Settings(
            model=model,
            system=system,
            max_tokens=max_tokens,
            tool_choice=plan[0],
            later_choices=tuple(plan[1:]),
            max_iterations=max_iterations,
            max_validation_retries=max_validation_retries,
            retry_max_tokens=retry_max_tokens,
            request_options=dict(request_options),
            approver=approve is not None,
            tool_search=self._search_spec(tool_search, loaded_tools),
            loaded=tuple(loaded_tools),
        )

    def _search_spec(self, mode: str | None, loaded: Iterable[str]) -> ToolSearchSpec | None:
        if mode is None:
            return None
        if mode not in ("bm25", "regex"):
            raise ValueError(f"tool_search must be 'bm25' or 'regex', not {mode!r}")
        if SEARCH_TOOL in self.tools:
            raise ValueError(f"tool_search: a tool is already named {SEARCH_TOOL!r}")
        unknown = [n for n in loaded if n not in self.tools]
        if unknown:
            raise ValueError(f"loaded_tools names no tool of the runner: {', '.join(unknown)}")
        return ToolSearchSpec(name=SEARCH_TOOL, mode=mode)  # type: ignore[arg-type]

    def _loop(
        self,
        prompt: Prompt | None,
        messages: Iterable[Message | Mapping[str, Any]] | None,
        output: Tool | None = None,
    ) -> _Run:
        if output is not None and output.name not in self.tools:
            raise ValueError(f"output tool {output.name!r} is not one of this runner's tools")
        run = conversation(
            self.settings, self.tools, _start(prompt, messages),
            output=Output(output) if output is not None else None,
        )
        if self.trace_store is None:
            return run
        return TracedRun(run, self.trace_store, getattr(self.backend, "name", None))

    # -- whole turns ------------------------------------------------------------------------
    def run(
        self,
        prompt: Prompt | None = None,
        *,
        messages: Iterable[Message | Mapping[str, Any]] | None = None,
        output: Tool | None = None,
    ) -> RunResult:
        """Run to the model's answer. ``messages`` continues a saved conversation (a final
        assistant turn with unanswered calls has them run first). With ``output`` (one of
        the runner's tools, usually schema-only) the run ends at the first valid call of it,
        and :attr:`RunResult.output` is its parsed input: :func:`~tooluse.runner.extract`."""
        return self._drive(self._loop(prompt, messages, output))

    def _agent_span(self) -> AgentSpan | Off:
        return agent_span(self.backend, self.settings.model, lambda: self.tools.specs)

    def _drive(self, loop: _Run) -> RunResult:
        reply: Any = None
        with self._agent_span() as agent:
            while True:
                try:
                    action = loop.send(reply)
                except StopIteration as stop:
                    return _ran(agent, stop.value)
                if isinstance(action, CallModel):
                    with _keep_conversation(action.request), agent.chat(action.request) as span:
                        reply = self._serving.complete(action.request)
                        span.record(reply)
                elif isinstance(action, RunTools):
                    reply = run_invocations(action.invocations, parallel=self.parallel,
                                            timeout=self.tool_timeout, spans=agent)
                elif isinstance(action, AskApproval):
                    assert self.approve is not None
                    reply = _approve_sync(self.approve, action)
                else:
                    reply = None

    async def arun(
        self,
        prompt: Prompt | None = None,
        *,
        messages: Iterable[Message | Mapping[str, Any]] | None = None,
        output: Tool | None = None,
    ) -> RunResult:
        """:meth:`run` for async code: async tools are awaited, sync tools run in threads."""
        return await self._adrive(self._loop(prompt, messages, output))

    async def _adrive(self, loop: _Run) -> RunResult:
        reply: Any = None
        with self._agent_span() as agent:
            while True:
                try:
                    action = loop.send(reply)
                except StopIteration as stop:
                    return _ran(agent, stop.value)
                if isinstance(action, CallModel):
                    with _keep_conversation(action.request), agent.chat(action.request) as span:
                        reply = await self._serving.acomplete(action.request)
                        span.record(reply)
                elif isinstance(action, RunTools):
                    reply = await arun_invocations(action.invocations, parallel=self.parallel,
                                                   timeout=self.tool_timeout, spans=agent)
                elif isinstance(action, AskApproval):
                    assert self.approve is not None
                    reply = await _approve_async(self.approve, action)
                else:
                    reply = None

    # -- streamed ---------------------------------------------------------------------------
    def stream(
        self,
        prompt: Prompt | None = None,
        *,
        messages: Iterable[Message | Mapping[str, Any]] | None = None,
    ) -> Iterator[RunEvent]:
        """Run while yielding :mod:`~tooluse.runner.events`; the last is a
        :class:`FinalEvent` holding the :class:`RunResult`."""
        loop = self._loop(prompt, messages)
        reply: Any = None
        with self._agent_span() as agent:
            while True:
                try:
                    action = loop.send(reply)
                except StopIteration as stop:
                    yield FinalEvent(_ran(agent, stop.value))
                    return
                if isinstance(action, CallModel):
                    turn = _Turn()
                    with _keep_conversation(action.request):
                        events = self._serving.stream(action.request)
                        for event in agent.chat(action.request, stream=True).watch(events):
                            yield from turn.add(event)
                    reply = turn.finish()
                    yield MessageEvent(reply)
                elif isinstance(action, RunTools):
                    reply = run_invocations(action.invocations, parallel=self.parallel,
                                            timeout=self.tool_timeout, spans=agent)
                elif isinstance(action, AskApproval):
                    assert self.approve is not None
                    yield _request_event(action)
                    reply = _approve_sync(self.approve, action)
                else:
                    yield from _notice(action)
                    reply = None

    async def astream(
        self,
        prompt: Prompt | None = None,
        *,
        messages: Iterable[Message | Mapping[str, Any]] | None = None,
    ) -> AsyncIterator[RunEvent]:
        """:meth:`stream` for async code."""
        loop = self._loop(prompt, messages)
        reply: Any = None
        with self._agent_span() as agent:
            while True:
                try:
                    action = loop.send(reply)
                except StopIteration as stop:
                    yield FinalEvent(_ran(agent, stop.value))
                    return
                if isinstance(action, CallModel):
                    turn = _Turn()
                    with _keep_conversation(action.request), _unwrap_single_group():
                        events = self._serving.astream(action.request)
                        async for event in agent.chat(action.request, stream=True).awatch(events):
                            for run_event in turn.add(event):
                                yield run_event
                    reply = turn.finish()
                    yield MessageEvent(reply)
                elif isinstance(action, RunTools):
                    reply = await arun_invocations(action.invocations, parallel=self.parallel,
                                                   timeout=self.tool_timeout, spans=agent)
                elif isinstance(action, AskApproval):
                    assert self.approve is not None
                    yield _request_event(action)
                    reply = await _approve_async(self.approve, action)
                else:
                    for run_event in _notice(action):
                        yield run_event
                    reply = None


def _ran(agent: AgentSpan | Off, result: RunResult) -> RunResult:
    """``result``, once the run's span has recorded it."""
    agent.record(result.response, result.usage, result.iterations)
    return result


@contextmanager
def _keep_conversation(request: Request) -> Iterator[None]:
    """A backend failure mid-run must not lose the conversation: the error gets
    ``.messages`` (everything up to the failed call, every tool call answered), so the run
    can be resumed with ``run(messages=err.messages)`` once the backend is back. A traced
    run records the failure and ends its trace (:func:`.tracing.call_failed`)."""
    try:
        yield
    except BaseException as exc:
        if isinstance(exc, BackendError) and exc.messages is None:
            exc.messages = list(request.messages)
        call_failed(exc)
        raise


@contextmanager
def _unwrap_single_group() -> Iterator[None]:
    """A backend whose ``astream`` runs a task group may raise its error wrapped in an
    ExceptionGroup of one; the caller of a run should see the error itself."""
    try:
        yield
    except BaseExceptionGroup as group:
        if len(group.exceptions) == 1 and isinstance(group.exceptions[0], Exception):
            raise group.exceptions[0] from None
        raise


def _request_event(action: AskApproval) -> ApprovalRequestEvent:
    return ApprovalRequestEvent(action.invocation.call.model_copy(deep=True),
                                action.invocation.tool.name)


def _notice(action: Action) -> list[RunEvent]:
    if isinstance(action, Retry):
        return [RetryEvent(action.reason, action.max_tokens)]
    if isinstance(action, Decided):
        return [ApprovalDecisionEvent(action.call.model_copy(deep=True), action.tool,
                                      action.approved, action.asked)]
    if isinstance(action, Results):
        return [
            ToolResultEvent(call, result)
            for call, result in zip(action.calls, action.results, strict=False)
        ]
    return []
