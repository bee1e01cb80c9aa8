"""Tool use for any text-only model: the serving side of the prompt-based format.

:class:`PromptToolsBackend` implements the neutral :class:`~tooluse.backend.Backend`
on top of a :class:`~tooluse.prompting.text_model.TextBackend`, doing what the
Messages API does for its models (``docs/legacy.md``):

- the tools become a special system prompt (the legacy XML description by default, JSON
  Schema as an option) followed by the user's own system prompt;
- the conversation becomes text turns: assistant ``tool_use`` blocks as ``<function_calls>``,
  user ``tool_result`` blocks as ``<function_results>`` (the legacy codec does both);
- ``tool_choice`` ``any``/``tool`` prefill the assistant turn with the opening of a call,
  ``none`` keeps the tool descriptions (as the Messages API does; the prompt prefix, and
  so a local model's KV cache, stays the same through a tool loop) but allows only text
  (a text-only grammar, and a stop at any ``<function_calls>``), ``auto`` lets the
  model choose;
- generation stops at ``</function_calls>``; the text is parsed as it streams, and each call
  becomes a ``tool_use`` block (with a fresh id) as soon as its ``</invoke>`` arrives;
- with ``grammar=True`` (the default) the text backend decodes under a grammar built from
  the tools and the choice (:mod:`tooluse.grammar`), so every call parses and validates;
- a leading ``<think>`` section of the answer becomes a thinking block, streamed first; on
  a thinking model (``think_tags``) a request asking for reasoning gets a bounded think
  section in the grammar, and the history's thinking goes back to the chat template
  (:mod:`.thinking`).

With ``tool_format`` (a :class:`~.formats.NativeFormat`) all of this is done in a model
family's own format instead of the XML one: the chat template renders the tools and the
conversation (``tool_calls``, ``tool`` messages) as the model was trained, and the calls are
constrained, parsed and streamed in the family's wrapping, its reasoning in its own marks
(:mod:`.formats`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Iterator
from typing import Any

from ..backend import Backend
from ..codecs.legacy import (
    TOOL_STYLES,
    LegacyParser,
    ToolStyle,
    escape,
    new_message_id,
)
from ..deferred import offered_tools
from ..errors import BackendError, ConversionError
from ..grammar.tool_calls import (
    FUNCTION_CALLS_CLOSE,
    FUNCTION_CALLS_OPEN,
    GrammarLimits,
    ToolGrammar,
    tool_call_grammar,
)
from ..messages import Request, ToolChoice, ToolUseBlock
from ..stream import MessageDelta, MessageStart, MessageStop, StreamEvent
from ..trace import TextPass, current_turn
from .assist import Assist, Plan, PlanContext
from .consistency import Consistency, stream_kept
from .decide import Decision, decides
from .emitter import Emitter, earlier_calls
from .formats import JsonCallParser, NativeFormat
from .per_context import PerContext
from .text_model import (
    CountingTextBackend,
    TextBackend,
    TextEnd,
    TextMessage,
    check_room,
    count_prompt,
)
from .text_prompt import build_text_prompt, reminded
from .thinking import ThinkSplitter

__all__ = ["PromptToolsBackend", "build_text_prompt"]

log = logging.getLogger("tooluse.prompting")


class PromptToolsBackend(Backend):
    """Messages-API tool use over a text model (see the module docstring).

    ``style``: how tools are described (``"xml"``, ``<tool_description>``
    blocks, ``"json"``, JSON Schema, or ``"python"``, a function signature and docstring).
    ``demonstrations``: how many examples of a request and its call block (made-up tools)
    the system prompt gives (0 to 2). ``consistency``: several answers drawn, one kept
    (:mod:`.consistency`).
    ``grammar``: constrain decoding so calls always parse and validate (needs a text
    backend that supports grammars). ``max_tokens``: default when a request sets none.
    ``stop_on_malformed_call``: end the turn as soon as a call the model is writing can no
    longer parse (only possible without a grammar); the text written so far is returned.

    ``score_tools`` (off by default; needs a text backend with ``score_continuations`` and
    the grammar): the first call's tool is the one whose whole name the model finds
    likeliest, not the one its first token favours. It asks the model only.

    ``assist``: an opt-in preset of rules that read the question (an
    :class:`~.assist.Assist`, e.g. ``tooluse.presets.load_preset("en-bfcl")``); None (the
    default) leaves the calls to the model. A preset may plan the first calls (call or
    not, which tools), steer the values a copying text backend offers, edit each call,
    edit a block's calls together, ask for one more call and add calls; each call's
    :class:`~tooluse.messages.CallOrigin` records what it did.

    ``tools_under_none``: keep the tool descriptions in the prompt under ``tool_choice:
    none`` (the default, as the Messages API does: the prompt prefix stays that of the
    earlier turns, so a cached prefix is reused); False leaves them out, for a model that
    answers better without them. ``none_reminder``: text added to the last user turn
    under ``none`` when the tools stay in the prompt (:func:`build_text_prompt`).

    ``think_tags``: the model is a thinking model, writing ``<think>…</think>`` before its
    answer (:mod:`.thinking`); None (the default) asks the text backend (its ``think_tags``
    attribute: the local backend reads the chat template). A leading think section is read
    as thinking on any model.

    ``tool_format``: a model family's own format (:class:`~.formats.NativeFormat`, chosen
    from the chat template by :func:`~.formats.choose`); None (the default): the XML
    format. In a native format the text backend gets the tools for its chat template
    (``tools``), ``style`` does not apply (the template describes the tools), and what reads
    or reopens the XML call block does not run: the preset's ``asked_more``, the call
    ``decision`` and ``more_calls_margin`` (their thresholds are calibrated on the XML
    call opener).
    """

    name = "prompt"

    #: Timings and token counts of the last turn made through this instance in the current
    #: context (:class:`~.per_context.PerContext`: this thread, or this request's worker),
    #: for a caller that reads them right after its call (benchmarks, the demo, the eval
    #: harness); concurrent requests each see their own. None before any turn there. Every
    #: request's own are also in its trace (:mod:`tooluse.trace`: the turn's passes and
    #: ``diagnostics``).
    last_end: PerContext[TextEnd | None] = PerContext(lambda: None)
    #: Tools retrieval left out of the prompt of the last turn in the current context.
    last_left_out: PerContext[list[str]] = PerContext(list)

    def __init__(
        self,
        text_backend: TextBackend,
        *,
        style: ToolStyle = "xml",
        grammar: bool = True,
        max_tokens: int = 1024,
        limits: GrammarLimits | None = None,
        model: str | None = None,
        stop_on_malformed_call: bool = True,
        score_tools: bool = False,
        assist: Assist | None = None,
        tools_under_none: bool = True,
        none_reminder: str | None = None,
        think_tags: bool | None = None,
        tool_format: NativeFormat | None = None,
        decision: Decision | None = None,
        more_calls_margin: float | None = None,
        consistency: Consistency | None = None,
        demonstrations: int = 0,
        optional_margin: float | None = None,
    ) -> None:
        if style not in TOOL_STYLES:
            raise ValueError(f"style must be one of {', '.join(TOOL_STYLES)}, not {style!r}")
        self.text_backend = text_backend
        self.style: ToolStyle = style
        #: Examples of the call format in the system prompt (0 to 2, made-up tools).
        self.demonstrations = demonstrations
        self.grammar = grammar
        self.max_tokens = max_tokens
        self.limits = limits or GrammarLimits()
        self.model = model or getattr(text_backend, "model", None)
        self.stop_on_malformed_call = stop_on_malformed_call
        #: Structured output and ``strict`` tools are guaranteed only under the grammar.
        self.structured_output = grammar
        self.score_tools = score_tools
        self.assist = assist or Assist()
        self.tools_under_none = tools_under_none
        self.none_reminder = none_reminder
        self.think_tags = bool(getattr(text_backend, "think_tags", False)) \
            if think_tags is None else think_tags
        self.tool_format = tool_format
        #: Under ``auto``: the call decision from the model's likelihood (None: the text
        #: backend's own, e.g. argmax) (:mod:`.decide`).
        self.decision = decision
        #: Where the model closes its call block: one more call while another ``<invoke>``
        #: is at least this much (nats) less likely than closing (None: the model's own).
        self.more_calls_margin = more_calls_margin
        #: Several answers drawn and one kept (:mod:`.consistency`; None: the greedy one).
        self.consistency = consistency
        #: Where a call may close its parameters or write another optional one: another
        #: only when at least this much (nats) likelier (None: the model's own choice).
        self.optional_margin = optional_margin

    def _prompt(self, request: Request) -> tuple[list[TextMessage], str, list[str], ToolGrammar | None]:
        try:
            if self.tool_format is not None:
                return self.tool_format.build_thinking(
                    request, grammar=self.grammar, limits=self.limits,
                    tools_under_none=self.tools_under_none, thinking_model=self.think_tags)
            return build_text_prompt(
                request, style=self.style, grammar=self.grammar, limits=self.limits,
                tools_under_none=self.tools_under_none, none_reminder=self.none_reminder,
                thinking_model=self.think_tags, demonstrations=self.demonstrations,
            )
        except ConversionError as exc:
            raise BackendError(str(exc), kind="invalid_request") from exc
        except ValueError as exc:  # e.g. tool_choice naming an unknown tool
            raise BackendError(str(exc), kind="invalid_request") from exc

    def _template_tools(self, request: Request) -> dict[str, Any]:
        """The text backend's options for its chat template in a native format (tools,
        specials, variables: :meth:`~.formats.NativeFormat.template_options`)."""
        if self.tool_format is None:
            return {}
        return self.tool_format.template_options(request, tools_under_none=self.tools_under_none)

    def _parser(self, request: Request) -> LegacyParser | JsonCallParser | None:
        """The answer's parser in the format in use (None without tools, unless the format
        frames its text answer: harmony's ``final`` message)."""
        if self.tool_format is not None and (request.tools or self.tool_format.style.answer_open()):
            return self.tool_format.parser(request.tools)
        return LegacyParser(request.tools) if request.tools else None

    def _choice_grammar(self, request: Request, choice: ToolChoice,
                        response_schema: Any = None, **plan: Any) -> ToolGrammar:
        """The grammar of the answer under ``choice`` in the format in use."""
        if self.tool_format is not None:
            return self.tool_format.grammar(request.tools, choice, self.limits, response_schema,
                                            **plan)
        return tool_call_grammar(request.tools, choice, self.limits, response_schema, **plan)

    def count_tokens(self, request: Request) -> int | None:
        """The tokens of the rendered prompt (exact), when the text backend can count."""
        if not isinstance(self.text_backend, CountingTextBackend):
            return None
        request = self._retrieve(request)[0]
        messages, prefill, _, _ = self._prompt(request)
        return count_prompt(self.text_backend, messages, prefill,
                            self._template_tools(request))

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        request, left_out = self._retrieve(request)
        self.last_left_out = left_out
        messages, prefill, stops, grammar = self._prompt(request)
        if (turn := current_turn()) is not None:
            turn.text_prompt(messages)
            turn.tools_left_out = list(left_out)
        check_room(self.text_backend, messages, prefill, self._template_tools(request))
        planned: dict[str, float] = {}
        plan = Plan()
        reasons = self.think_tags or getattr(self.tool_format, "always_reasons", False)
        thinks = reasons and request.reasoning is not None and request.reasoning.on
        # A plan scores the call's opening right after the prompt: not where thinking comes
        # first.
        if grammar is not None and request.tools and grammar.prefill == prefill and not thinks:
            prefill, grammar, plan = self._plan(request, messages, prefill, grammar)
            planned.update(plan.diagnostics)
        options, steering = self._generation(request, stops, thinks, grammar)
        started = time.perf_counter()
        yield MessageStart(id=new_message_id(), model=request.model or self.model)
        emitter = self._emitter(request, plan, steering, prefill)
        written: list[str] = []
        # Self-consistency reads the answers with the XML parser: not in a native format.
        if self.consistency is not None and grammar is not None and request.tools \
                and self.tool_format is None and not thinks and options["temperature"] <= 0:
            end = yield from stream_kept(self.text_backend, self.consistency, emitter, messages,
                                         prefill, grammar, options, request.tools, written)
        else:
            end = yield from self._generate(emitter, messages, prefill, grammar, options,
                                            written)
        end = yield from self._after_answer(request, emitter, messages, prefill, grammar,
                                            options, written, end)
        yield from emitter.close()
        yield from self._completed(request, emitter, end)
        end.timings.setdefault("total_s", time.perf_counter() - started)
        end.timings.update(planned)
        if emitter.dropped:
            end.timings["optional_dropped"] = float(emitter.dropped)
        if left_out:
            end.timings["tools_left_out"] = float(len(left_out))
        self.last_end = end
        if turn is not None:
            turn.diagnostics = dict(end.timings)
        yield MessageDelta(
            stop_reason=emitter.stop_reason(end),
            stop_sequence=end.stop_sequence if emitter.user_stop(end) else None,
            usage=end.usage(),
        )
        yield MessageStop()

    def _generation(self, request: Request, stops: list[str], thinks: bool,
                    grammar: ToolGrammar | None) -> tuple[dict[str, Any], tuple[str, ...]]:
        """The text backend's generation options for ``request``, with the preset's hints,
        and the rules that steer decoding (named on the calls)."""
        options: dict[str, Any] = {
            "stop": stops,
            "max_tokens": request.max_tokens or self.max_tokens,
            "temperature": 0.0 if request.temperature is None else request.temperature,
            "top_p": request.top_p,
            "top_k": request.top_k,
        }
        if self.think_tags:
            options["think"] = thinks
        options.update(self._template_tools(request))
        steering: tuple[str, ...] = ()
        if grammar is not None and request.tools:
            hints, steering = self.assist.generation_hints(request)
            options.update(hints)
            if self.optional_margin is not None and self.tool_format is None:
                options.update(optional_margin=self.optional_margin, steered=[])
        return options, steering

    def _emitter(self, request: Request, plan: Plan, steering: tuple[str, ...],
                 prefill: str) -> Emitter:
        """The emitter of the answer's events, told what steered and planned its calls,
        whether to hold them for edits made together, and the preset's call editor; the
        prefill parsed (it is the start of the answer, not new text)."""
        emitter = Emitter(self._parser(request), history=earlier_calls(request),
                          think=ThinkSplitter() if self.tool_format is None
                          else self.tool_format.splitter())
        if self.tool_format is not None:
            emitter.format_stops = self.tool_format.format_stops()
        emitter.steering = steering
        if plan.first:
            emitter.planned = [(plan.steered_by, None),
                               *(((), plan.added_by) for _ in plan.first[1:])]
        elif plan.steered_by:
            emitter.planned = [(plan.steered_by, None)]
        # The block's calls streamed once it is over, edited together (e.g. paired as the
        # question pairs values).
        emitter.hold = self.assist.holds_calls(request)
        if request.tools:
            emitter.adjust = self.assist.call_editor(request)
        if prefill:
            for _ in emitter.feed(prefill, emit_text=False):
                pass
        return emitter

    def _after_answer(self, request: Request, emitter: Emitter, messages: list[TextMessage],
                      prefill: str, grammar: ToolGrammar | None, options: dict[str, Any],
                      written: list[str], end: TextEnd,
                      ) -> Generator[StreamEvent, None, TextEnd]:
        """What follows the model's answer: asked again for text where it asked again for a
        result it has, its repeated call kept where a call is due, or one more call where
        the preset asks for it; the turn's end."""
        choice = request.tool_choice or ToolChoice()
        if emitter.repeated == "history" and emitter.index < emitter.thoughts \
                and not emitter.blocks \
                and choice.type == "auto":
            # The model's first move was to ask again for a result it already has: a small
            # model does this instead of answering. Ask for the answer as text (same prompt,
            # so the cached prefix is reused; the grammar, or a stop string, rules out calls).
            emitter.repeated = None
            emitter.parser = self._parser(request)  # the dropped call block is over
            emitter.held = ""
            text_only = self._choice_grammar(request, ToolChoice(type="none")) \
                if grammar is not None else None
            # As under ``none`` with the tools in the prompt: the reminder to answer.
            again = reminded(messages, self.none_reminder) \
                if self.none_reminder and self.tools_under_none else messages
            retry = yield from self._generate(
                emitter, again, "", text_only,
                {**options, "think": False} if self.think_tags else options,
                purpose="answer_again")
            retry.output_tokens += end.output_tokens
            retry.timings["retried_after_repeat"] = 1.0
            return retry
        if emitter.repeated == "history" and not emitter.blocks \
                and choice.type in ("any", "tool"):
            # The one call the model wrote repeats a call of the conversation, and
            # tool_choice asks for a call: the model's call, not an empty turn.
            yield from emitter.keep_repeat()
        elif grammar is not None and emitter.repeated is None and end.reason != "length" \
                and self.assist.wants_one_more(request, emitter.blocks, self.limits.max_calls):
            yield from self._one_more(request, emitter, messages, prefill + "".join(written),
                                      options, end)
        elif grammar is not None and self.more_calls_margin is not None and emitter.blocks \
                and self.tool_format is None \
                and emitter.repeated is None and end.reason != "length" \
                and not choice.disable_parallel_tool_use:
            yield from self._more_calls(request, emitter, messages,
                                        prefill + "".join(written), options, end)
        return end

    def _more_calls(self, request: Request, emitter: Emitter, messages: list[TextMessage],
                    answer: str, options: dict[str, Any],
                    end: TextEnd) -> Generator[Any, None, None]:
        """``more_calls_margin``: where the model closed its call block, one more call
        while its log-likelihood of another ``<invoke>`` less that of closing the block
        reaches the margin (set per model on the calibration set: ``bench/calibration/calibrate.py``).
        The model writes each further call, tool and values; its origin records
        ``steered_by: ["more_calls"]``. Ends at ``limits.max_calls``, a repeated call, or
        the token limit."""
        score = getattr(self.text_backend, "score_continuations", None)
        margin = self.more_calls_margin
        if score is None or margin is None:
            return
        while len(emitter.blocks) < self.limits.max_calls and emitter.repeated is None \
                and end.reason != "length":
            cut = answer.rfind("</invoke>") + len("</invoke>")
            if cut < len("</invoke>"):
                return
            more, close = score(messages, ["\n<invoke>", "\n" + FUNCTION_CALLS_CLOSE],
                                prefill=answer[:cut])
            end.timings["more_calls_margin"] = more - close
            if more - close < margin:
                return
            before = len(emitter.blocks)
            steering = emitter.steering
            emitter.steering = (*steering, "more_calls")
            try:
                after = yield from self._one_more(request, emitter, messages, answer, options,
                                                  end, name=None)
            finally:
                emitter.steering = steering
            if after is None or len(emitter.blocks) == before:
                return
            end.timings["more_calls"] = end.timings.get("more_calls", 0.0) + 1.0
            answer = after

    def _completed(self, request: Request, emitter: Emitter,
                   end: TextEnd) -> Iterator[StreamEvent]:
        """The calls the preset adds once the block is over, and the held calls released
        as edited together (counted in ``end.timings``)."""
        if emitter.blocks:
            made = self.assist.added_calls(request, emitter.blocks, self.limits.max_calls)
            for block in made:
                yield from emitter.call(block, written=False)
            if made:
                end.timings["fanned_out"] = float(len(made))
        if emitter.pending:
            held = list(emitter.pending)
            counts: dict[str, int] = {}

            def together(blocks: list[ToolUseBlock]) -> list[ToolUseBlock]:
                after, changed = self.assist.edit_together(request, blocks)
                counts.update(changed)
                return after

            yield from emitter.release(together)
            # Counted only if the calls released differ from those held: the emitter may
            # refuse the edit.
            if emitter.blocks[-len(held):] != held:
                end.timings.update({k: float(n) for k, n in counts.items() if n})

    def _retrieve(self, request: Request) -> tuple[Request, list[str]]:
        """The request with the tools the preset offers (all, without one), and the names
        it left out. Deferred tools are not offered until the history loads them
        (:func:`~tooluse.deferred.offered_tools`)."""
        if any(t.deferred for t in request.tools):
            request = request.model_copy(update={"tools": offered_tools(request)})
        return self.assist.select_tools(request)

    def _plan(self, request: Request, messages: list[TextMessage], prefill: str,
              grammar: ToolGrammar) -> tuple[str, ToolGrammar, Plan]:
        """Under ``auto``/``any``: the preset's plan (call or answer, which tools first),
        else with ``score_tools`` the tool the model finds likeliest first; the prefill
        and grammar that hold the plan to."""
        score = getattr(self.text_backend, "score_continuations", None)
        choice = request.tool_choice or ToolChoice()
        if score is None or choice.type not in ("auto", "any"):
            return prefill, grammar, Plan()
        opener = "<function_calls>\n<invoke>\n<tool_name>" if self.tool_format is None \
            else self.tool_format.opener()
        tools = self._template_tools(request)
        tools.pop("specials", None)
        context = PlanContext([t.name for t in request.tools],
                              lambda continuations: score(messages, continuations, **tools),
                              lambda ends: score(messages, ends, prefill=opener, **tools))
        plan = self.assist.plan(request, context) or Plan()
        if plan.call is None and plan.first is None and self.decision is not None \
                and self.tool_format is None and choice.type == "auto" and decides(request):
            call, value = self.decision.calls(
                lambda msgs, conts: score(msgs, conts, prefill=prefill), messages)
            plan.diagnostics["decide_score"] = value
            if call:
                plan.call = True
                plan.steered_by += ("call_decision",)
        if plan.call is False:
            text_only = self._choice_grammar(request, ToolChoice(type="none"),
                                             request.response_schema)
            return "", text_only, plan
        if plan.first is None and self.score_tools and (choice.type == "any" or plan.call):
            # Scoring the first tool commits to a call: under ``auto`` only once decided.
            plan.first = [context.names[context.model_best()]]
            plan.steered_by += ("score_tools",)
        if plan.first is None and not plan.call:
            return prefill, grammar, plan
        forced = self._choice_grammar(
            request,
            ToolChoice(type="any", disable_parallel_tool_use=choice.disable_parallel_tool_use),
            request.response_schema, first=plan.first, only_first=plan.only_first)
        return forced.prefill, forced, plan

    def _one_more(self, request: Request, emitter: Emitter, messages: list[TextMessage],
                  answer: str, options: dict[str, Any], end: TextEnd,
                  name: str | None = "") -> Generator[Any, None, str | None]:
        """The call block of ``answer`` (the prefill and what the model wrote) reopened
        after its last call, and a further call generated within the tokens ``end`` leaves
        of the request's limit; its tokens and how it ended go into ``end``. Returns the
        answer with the call (None: no call; one the limit cuts is dropped, and the answer
        ends as it had).

        ``name=""`` (``asked_more``): a call to the same tool as the last, forced, recorded
        as added by the rule (its values are the model's). ``name=None``: the model
        chooses the tool as well (the caller records what steered it).

        Not in a native format: the call block it reopens is the XML one."""
        if self.tool_format is not None:
            return None
        cut = answer.rfind("</invoke>") + len("</invoke>")
        left = int(options["max_tokens"]) - end.output_tokens
        if cut < len("</invoke>") or left <= 0 \
                or answer[cut:].strip() not in ("", FUNCTION_CALLS_CLOSE):
            return None
        if name is None:
            header = "<invoke>\n<tool_name>"
            choice = ToolChoice(type="any", disable_parallel_tool_use=True)
        else:
            name = name or emitter.blocks[-1].name
            header = f"<invoke>\n<tool_name>{escape(name)}</tool_name>\n<parameters>\n"
            choice = ToolChoice(type="tool", name=name, disable_parallel_tool_use=True)
        grammar = tool_call_grammar(request.tools, choice, self.limits)
        # The earlier call is done: a fresh parser reads the reopened block's new call.
        emitter.parser = LegacyParser(request.tools)
        emitter.held = ""
        for _ in emitter.feed(FUNCTION_CALLS_OPEN + header, emit_text=False):
            pass
        # The model writes the call's values, but the call is there because a rule asked.
        emitter.forced_by = "asked_more" if name is not None else None
        written: list[str] = []
        prefill = answer[:cut] + "\n" + header
        more = yield from self._generate(emitter, messages, prefill, grammar,
                                         {**options, "max_tokens": left}, written,
                                         purpose="one_more_call")
        emitter.forced_by = None
        end.output_tokens += more.output_tokens
        end.timings["one_more_call"] = end.timings.get("one_more_call", 0.0) + 1.0
        if more.reason == "length":  # the further call cut: not part of the answer
            emitter.parser = LegacyParser(request.tools)
            return None
        end.reason, end.stop_sequence = more.reason, more.stop_sequence
        return prefill + "".join(written)

    def _generate(self, emitter: Emitter, messages: list[TextMessage], prefill: str,
                  grammar: ToolGrammar | None, options: dict[str, Any],
                  written: list[str] | None = None,
                  purpose: str = "answer") -> Generator[Any, None, TextEnd]:
        """Stream one generation through ``emitter`` (its text also into ``written``);
        returns how it ended. A traced request's turn gets it as a ``purpose`` pass."""
        turn = current_turn()
        if turn is not None and written is None:
            written = []
        before = getattr(self.text_backend, "last_end", None)
        chunks = self.text_backend.generate_text(messages, prefill=prefill, grammar=grammar,
                                                 **options)
        end: TextEnd | None = None
        malformed = False
        try:
            for chunk in chunks:
                if isinstance(chunk, TextEnd):
                    end = chunk
                    break
                if written is not None:
                    written.append(chunk)
                if steered := options.get("steered"):
                    emitter.steered_now += steered
                    steered.clear()
                yield from emitter.feed(chunk)
                if emitter.repeated:
                    # A small model tends to repeat a call until the token limit; an
                    # identical call is never useful: end the turn there.
                    break
                if self.stop_on_malformed_call and emitter.parser is not None \
                        and emitter.parser.call_failing:
                    # Without a grammar a model can go wrong inside a call (a small one
                    # copies the tool descriptions); once the call can no longer parse, the
                    # rest of the turn is paid for and thrown away. What was written is
                    # kept: the malformed call comes back as text.
                    malformed = True
                    break
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()  # release the model (its lock) when the turn ends early
        if end is None:
            # Stopped before its end came: the text backend kept it while closing, in this
            # context (its ``last_end`` is per context: :mod:`.per_context`), unless it
            # keeps none (then the value is the one from before this generation).
            last = getattr(self.text_backend, "last_end", None)
            end = last if isinstance(last, TextEnd) and last is not before \
                else TextEnd(reason="end")
            end.reason, end.stop_sequence = "end", None
        if malformed:
            end.timings["stopped_at_malformed_call"] = 1.0
        if turn is not None and written is not None:
            turn.add_pass(TextPass(
                prefill, "".join(written), purpose, end.reason, end.stop_sequence,
                end.input_tokens, end.output_tokens, end.cached_tokens, dict(end.timings)))
        return end
