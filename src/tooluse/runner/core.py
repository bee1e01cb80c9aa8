"""The tool loop's decisions, written once, without I/O.

The loop has four ways to be driven — sync or async, whole turns or streamed — and all four
must decide the same things the same way: which request to send next, what to do with a
cut-off tool call, which calls to refuse (unknown tool, invalid input) and with what message,
when a tool has failed validation too often, when to stop. So :func:`conversation` is a
generator that *yields actions* (:class:`CallModel`, :class:`RunTools`, :class:`Retry`,
:class:`AskApproval`...) and receives their outcomes; the drivers in
:mod:`tooluse.runner.loop` only perform the I/O. Validation is pure computation, so it
happens here; so is deciding which calls need the user's approval and what a denied call
answers. Running tool functions and asking the ``approve`` callback are left to the drivers
(threads, tasks, timeouts, sync or async callbacks).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolInputError
from ..messages import (
    ContentBlock,
    Message,
    Request,
    Response,
    ServerTools,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSearchSpec,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from ..tools import Tool, ToolSet
from .errors import (
    ExtractionError,
    IncompleteToolCall,
    MaxIterationsExceeded,
    ToolRetriesExhausted,
)
from .results import error_result
from .run_result import RunResult

__all__ = [
    "AskApproval",
    "CallModel",
    "Decided",
    "Invocation",
    "Outcome",
    "Output",
    "Results",
    "Retry",
    "RunTools",
    "Settings",
    "add_usage",
    "conversation",
    "denied_text",
    "invalid_input_text",
    "unapproved_text",
    "unknown_tool_text",
]


@dataclass(frozen=True)
class Settings:
    """Everything that shapes requests and stopping; see :class:`~tooluse.runner.Runner`."""

    model: str | None = None
    system: str | None = None
    max_tokens: int = 1024
    tool_choice: ToolChoice | None = None
    #: The choices of the turns after the first, in order (then as :func:`_after_forced`).
    later_choices: tuple[ToolChoice | None, ...] = ()
    max_iterations: int = 10
    max_validation_retries: int = 3
    retry_max_tokens: int | None = None
    request_options: dict[str, Any] = field(default_factory=dict)
    #: The runner has an ``approve`` callback: calls that need approval are asked about
    #: (:class:`AskApproval`); without one they are denied unasked.
    approver: bool = False
    #: A tool search the backend runs (:mod:`.hosted`): the tools are deferred, but for
    #: those named in ``loaded``.
    tool_search: ToolSearchSpec | None = None
    loaded: tuple[str, ...] = ()

    def offered(self, tools: ToolSet) -> tuple[list[ToolSpec], ServerTools | None]:
        """The tools of a request, and the server tools the backend runs for it."""
        if self.tool_search is None:
            return tools.specs, None
        specs = [s.model_copy(update={"deferred": s.name not in self.loaded})
                 for s in tools.specs]
        return specs, ServerTools(search=self.tool_search)


@dataclass(frozen=True)
class CallModel:
    """Send ``request``; answer with the :class:`~tooluse.messages.Response`."""

    request: Request


@dataclass(frozen=True)
class Retry:
    """Notice: the last turn is discarded and re-asked with ``max_tokens``; answer None."""

    reason: str
    max_tokens: int


@dataclass(frozen=True)
class Invocation:
    call: ToolUseBlock
    tool: Tool


@dataclass(frozen=True)
class RunTools:
    """Run these (already validated) calls; answer with one :class:`Outcome` each, in order."""

    invocations: list[Invocation]


@dataclass(frozen=True)
class Outcome:
    """A call's result; ``problems`` is set when the call failed *validation* in the tool
    itself (a constraint only the function's pydantic model knows), so the retry budget
    counts it."""

    result: ToolResultBlock
    problems: list[str] | None = None


@dataclass(frozen=True)
class Results:
    """Notice: these results (one per call, in call order) were sent back; answer None."""

    calls: list[ToolUseBlock]
    results: list[ToolResultBlock]


@dataclass(frozen=True)
class AskApproval:
    """Ask the ``approve`` callback whether this (valid) call may run; answer with
    True or False."""

    invocation: Invocation


@dataclass(frozen=True)
class Decided:
    """Notice: the decision on a call that needs approval; answer None. ``asked`` is False
    when there was no callback to ask (the call is then denied)."""

    call: ToolUseBlock
    tool: str
    approved: bool
    asked: bool


@dataclass(frozen=True)
class Output:
    """``extract()`` mode: the run ends at the first valid call of ``tool``."""

    tool: Tool


Action = CallModel | RunTools | Retry | Results | AskApproval | Decided


def unknown_tool_text(name: str, tools: ToolSet) -> str:
    available = ", ".join(tools.names) or "(none)"
    return f"Unknown tool {name!r}. Available tools: {available}."


def invalid_input_text(name: str, problems: Sequence[str]) -> str:
    lines = "\n".join(f"- {p}" for p in problems)
    return f"Invalid input for tool {name!r}:\n{lines}\nFix these and call the tool again."


def denied_text(name: str) -> str:
    """The result of a call the user denied."""
    return f"The user denied this call of tool {name!r}, so it was not run."


def unapproved_text(name: str) -> str:
    """The result of a call that needs approval when the runner has no callback to ask."""
    return (
        f"Tool {name!r} needs the user's approval before it runs, and no one could be asked "
        "(the runner has no approve callback), so this call was denied and not run."
    )


def cut_in_tool_call(response: Response) -> bool:
    """``max_tokens`` stopped the answer inside a tool call (its input may be incomplete)."""
    return (
        response.stop_reason == "max_tokens"
        and bool(response.content)
        and isinstance(response.content[-1], ToolUseBlock)
    )


def unanswered_calls(messages: Sequence[Message]) -> list[ToolUseBlock]:
    """Calls in a final assistant turn that no tool_result answers yet (a resumed run)."""
    if not messages or messages[-1].role != "assistant":
        return []
    return messages[-1].tool_uses


def _system(text: str | None) -> list[TextBlock]:
    return [TextBlock(text=text)] if text else []


def add_usage(total: Usage, usage: Usage) -> None:
    """Add ``usage``'s counts to ``total`` (in place)."""
    total.input_tokens += usage.input_tokens
    total.output_tokens += usage.output_tokens
    total.cache_read_input_tokens += usage.cache_read_input_tokens
    total.cache_creation_input_tokens += usage.cache_creation_input_tokens
    for ttl, tokens in usage.cache_creation_by_ttl.items():
        total.cache_creation_by_ttl = {**total.cache_creation_by_ttl,
                                       ttl: total.cache_creation_by_ttl.get(ttl, 0) + tokens}
    for kind, count in usage.server_tool_requests.items():
        total.server_tool_requests = {**total.server_tool_requests,
                                      kind: total.server_tool_requests.get(kind, 0) + count}


def _after_forced(choice: ToolChoice | None) -> ToolChoice | None:
    """A forced choice (``any``/``tool``) applies to the first turn only: forcing it again
    after the results would make the model call tools forever."""
    if choice is not None and choice.type in ("any", "tool"):
        return ToolChoice(type="auto", disable_parallel_tool_use=choice.disable_parallel_tool_use)
    return choice


class _Budget:
    """Consecutive validation failures per tool name."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.streaks: dict[str, int] = {}
        self.last_problems: dict[str, list[str]] = {}

    def record(self, turn: list[tuple[str, list[str] | None]]) -> tuple[str, list[str]] | None:
        """Update with one turn's calls ((name, problems or None)); the exhausted tool, if any."""
        exhausted: tuple[str, list[str]] | None = None
        for name, problems in turn:
            if problems is None:
                self.streaks[name] = 0
                continue
            self.streaks[name] = self.streaks.get(name, 0) + 1
            self.last_problems[name] = problems
            if self.streaks[name] >= self.limit and exhausted is None:
                exhausted = (name, problems)
        return exhausted


@dataclass
class _State:
    """What one run carries from turn to turn (the loop itself is :func:`conversation`)."""

    settings: Settings
    tools: ToolSet
    messages: list[Message]
    output: Output | None
    budget: _Budget
    usage: Usage = field(default_factory=Usage)
    iterations: int = 0

    def finish(self, response: Response, value: Any = None) -> RunResult:
        return RunResult(
            messages=self.messages,
            response=response,
            iterations=self.iterations,
            usage=self.usage,
            output=value,
            tools=self.tools,
            system=self.settings.system,
            model=self.settings.model,
            max_tokens=self.settings.max_tokens,
        )

    def answer(self, calls: list[ToolUseBlock]) -> Generator[Action, Any, tuple[bool, Any]]:
        """Validate and run one turn's calls; append the results turn. In output mode,
        returns ``(True, value)`` when the output tool got a valid call."""
        results: list[ToolResultBlock | None] = [None] * len(calls)
        turn: list[tuple[str, list[str] | None]] = []
        pending: list[tuple[int, Invocation]] = []
        for i, call in enumerate(calls):
            tool = self.tools.get(call.name)
            if tool is None:
                problem = unknown_tool_text(call.name, self.tools)
                results[i] = error_result(call, problem)
                turn.append((call.name, [problem]))
                continue
            if self.output is not None and tool.name == self.output.tool.name:
                try:
                    value = tool.parse(call.input)
                except ToolInputError as exc:
                    results[i] = error_result(call, invalid_input_text(tool.name, exc.problems))
                    turn.append((tool.name, exc.problems))
                    continue
                return (True, value)
            try:
                tool.arguments(call.input)
            except ToolInputError as exc:
                results[i] = error_result(call, invalid_input_text(tool.name, exc.problems))
                turn.append((tool.name, exc.problems))
                continue
            if tool.function is None:
                results[i] = error_result(
                    call, f"Tool {tool.name!r} cannot be run here (it has no function)."
                )
                turn.append((tool.name, None))
                continue
            if tool.needs_approval(call.input):
                asked = self.settings.approver
                approved = False
                if asked:
                    approved = yield AskApproval(Invocation(call, tool))
                yield Decided(call, tool.name, approved, asked)
                if not approved:
                    text = denied_text(tool.name) if asked else unapproved_text(tool.name)
                    results[i] = error_result(call, text)
                    turn.append((tool.name, None))
                    continue
            pending.append((i, Invocation(call, tool)))
        if pending:
            outcomes: list[Outcome] = yield RunTools([inv for _, inv in pending])
            for (i, inv), outcome in zip(pending, outcomes, strict=True):
                results[i] = outcome.result
                turn.append((inv.tool.name, outcome.problems))
        answered = [r for r in results if r is not None]
        content: list[ContentBlock] = list(answered)
        self.messages.append(Message(role="user", content=content))
        yield Results(list(calls), answered)
        self._check_budget(turn)
        return (False, None)

    def _check_budget(self, turn: list[tuple[str, list[str] | None]]) -> None:
        exhausted = self.budget.record(turn)
        if exhausted is None:
            return
        name, problems = exhausted
        n = self.settings.max_validation_retries
        if self.output is not None:
            raise ExtractionError(
                f"no valid {name!r} output after {n} tries; last problems: "
                + "; ".join(problems),
                self.messages,
                problems=problems,
            )
        raise ToolRetriesExhausted(
            f"tool {name!r} was called with invalid input {n} times in a row; "
            f"last problems: {'; '.join(problems)}",
            self.messages,
            tool=name,
            problems=problems,
        )


def conversation(
    settings: Settings,
    tools: ToolSet,
    messages: list[Message],
    *,
    output: Output | None = None,
) -> Generator[Action, Any, RunResult]:
    """Run the loop over ``messages`` (extended in place); returns the :class:`RunResult`."""
    run = _State(settings, tools, messages, output, _Budget(settings.max_validation_retries))
    usage = run.usage
    choice = settings.tool_choice
    later = list(settings.later_choices)
    last: Response | None = None

    pending_calls = unanswered_calls(messages) if output is None else []
    if pending_calls:
        yield from run.answer(pending_calls)

    while run.iterations < settings.max_iterations:
        run.iterations += 1
        specs, server_tools = settings.offered(tools)
        request = Request(
            model=settings.model,
            system=_system(settings.system),
            messages=list(messages),
            tools=specs,
            server_tools=server_tools,
            tool_choice=choice,
            max_tokens=settings.max_tokens,
            **settings.request_options,
        )
        response: Response = yield CallModel(request)
        add_usage(usage, response.usage)
        if cut_in_tool_call(response):
            bigger = settings.retry_max_tokens
            if bigger is None:
                bigger = settings.max_tokens * 4
            if bigger > settings.max_tokens:
                yield Retry(
                    f"max_tokens ({settings.max_tokens}) cut the answer inside a tool call",
                    bigger,
                )
                response = yield CallModel(request.model_copy(update={"max_tokens": bigger}))
                add_usage(usage, response.usage)
            if cut_in_tool_call(response):
                raise IncompleteToolCall(
                    f"the answer was cut off by max_tokens inside a tool call "
                    f"(even with max_tokens={max(bigger, settings.max_tokens)}); "
                    "raise max_tokens or retry_max_tokens",
                    messages,
                )
        last = response
        messages.append(response.to_message())
        calls = response.tool_uses
        if not calls:
            if output is None:
                return run.finish(response)
            # A model that ignored the forced tool: ask once more, within the budget.
            problem = f"the answer did not call the {output.tool.name!r} tool"
            messages.append(
                Message(
                    role="user",
                    content=[
                        TextBlock(text=f"Answer by calling the {output.tool.name!r} tool.")
                    ],
                )
            )
            exhausted = run.budget.record([(output.tool.name, [problem])])
            if exhausted is not None:
                raise ExtractionError(
                    f"no {output.tool.name!r} call after "
                    f"{settings.max_validation_retries} tries",
                    messages,
                    problems=[problem],
                )
            continue
        done, value = yield from run.answer(calls)
        if done:
            return run.finish(response, value)
        if output is None:
            choice = later.pop(0) if later else _after_forced(choice)

    assert last is not None
    raise MaxIterationsExceeded(
        f"the model was still calling tools after max_iterations={settings.max_iterations} "
        "turns",
        messages,
    )
