"""Tool use for any text-only model: the serving side of the prompt-based format.

:class:`PromptToolsBackend` implements the neutral :class:`~tooluse.backend.Backend`
on top of a :class:`~tooluse.prompting.text_backend.TextBackend`, doing what the
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
  the tools and the choice (:mod:`.grammar`), so every call parses and validates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Generator, Iterator
from typing import Any, Literal

from ..backend import Backend
from ..codecs.legacy import (
    LegacyParser,
    escape,
    new_message_id,
)
from ..errors import BackendError, ConversionError
from ..messages import Request, ToolChoice, ToolUseBlock, Usage
from ..stream import MessageDelta, MessageStart, MessageStop, StreamEvent
from .asked_more import asks_for_more
from .call_edits import call_adjuster, fanned_out, given_to_all, paired_in_order
from .choices import (
    PLAN_MAX_TOOLS,
    CallDecision,
    further_tools,
    name_coverage,
    prerequisite,
    question_text,
    relevance,
    select_tools,
    tool_naming,
)
from .emitter import Emitter, earlier_calls
from .focus import value_focus
from .grammar import (
    FUNCTION_CALLS_CLOSE,
    FUNCTION_CALLS_OPEN,
    GrammarLimits,
    ToolGrammar,
    tool_call_grammar,
)
from .text_backend import CountingTextBackend, TextBackend, TextEnd, TextMessage, context_error
from .text_prompt import build_text_prompt, reminded

__all__ = ["PromptToolsBackend", "build_text_prompt"]

log = logging.getLogger("tooluse.prompting")

class PromptToolsBackend(Backend):
    """Messages-API tool use over a text model (see the module docstring).

    ``style``: how tools are described (``"xml"``, ``<tool_description>``
    blocks, or ``"json"``).
    ``grammar``: constrain decoding so calls always parse and validate (needs a text
    backend that supports grammars). ``max_tokens``: default when a request sets none.
    ``stop_on_malformed_call``: end the turn as soon as a call the model is writing can no
    longer parse (only possible without a grammar); the text written so far is returned.

    Decisions taken around the model (:mod:`.choices`; each off by default here; the default
    local model turns some on, measured in docs/benchmarks/bfcl.md):

    - ``max_tools``: offer at most this many tools, the most relevant by BM25 (0: all);
      the names left out are logged and kept in :attr:`last_left_out`;
    - ``decision``: under ``auto``, call or answer as a :class:`~.choices.CallDecision`
      on the model's scores says (needs a text backend with ``score_continuations`` and
      the grammar);
    - ``score_tools``: the first call's tool is the one whose whole name the model finds
      likeliest (not the one its first token favours);
    - ``rank_tools``: the first call's tool is the one whose words cover most of the
      question (:func:`~.choices.relevance`; ties go to the likeliest whole name); a
      135M model mostly names the wrong one of several tools, word overlap rarely does;
    - ``plan_tools`` (with ``rank_tools``, at most five tools): the next calls are forced
      to the further tools the question asks for (:func:`~.choices.further_tools`: each
      covering at least two more of its words), in the order chosen; later calls stay free;
    - ``calls_as_planned`` (with ``plan_tools``, two to five tools): the planned calls are
      all the model writes, the call block closes after them (further calls of a planned
      tool come from ``fan_out`` and ``restate``, which read the question); a small
      model's own further calls there are mostly of a tool the question does not ask for;
    - ``prerequisite_tools`` (with ``rank_tools``): when the chosen tool needs a value that
      another, not yet called, looks up ("the stock price of General Motors": the price
      tool's ``symbol``, ``get_ticker_symbol``), the turn calls that one
      (:func:`~.choices.prerequisite`); the chosen tool comes next turn, and the parameter
      that was looked up takes the lookup's result (a short text, if the call validates);
    - ``optional_from_conversation``: optional parameters whose value the conversation
      does not give are left out of the calls;
    - the edits made to each call after the model wrote it, each kept only if the call
      still validates (:func:`.call_edits.call_adjuster` says what each does; docs/local.md
      gives examples and measures): ``percent_fractions`` (a rate the conversation writes
      as a percentage given as a fraction), ``scaled_numbers`` ("213 million" whole),
      ``date_formats``, ``city_state``, ``enum_values``, ``stated_units``, ``from_to``,
      ``described_codes``, ``after_names``, ``named_numbers``, ``compounding``,
      ``implied_numbers``, ``stray_numbers``, ``literal_lists``, ``written_names`` (a
      value replaced by the name the question writes for it: "Premier League" for
      ``league``), ``currency_codes`` (the ISO code of each currency the question
      names, where the call writes codes), ``named_options``, ``asked_flags`` and
      ``whole_phrases``;
    - ``names_not_values``: the text backend is told each tool's and its parameters' name
      words and its required parameters (``naming``); one that copies values from the
      conversation takes for a required parameter no value made of these words alone
      (``content: "todo"`` for ``todo_manager``, ``answer: "answer"``) and offers another
      span instead (an optional one is left to ``optional_from_conversation``, which
      leaves such a value out);
    - ``distinct_values``: the text backend is told each tool's required parameters and
      those that name a place (``location``, ``city``...); one that copies values from the
      conversation writes in a required parameter no value the call already holds as
      often as the question writes it (``artist: "The Thinker"`` after ``sculpture: "The
      Thinker"`` for "The Thinker by Rodin"), and, while a place parameter is still to
      come, no known place (:func:`.regions.known_place`) in another parameter
      (``cuisine: "Boston"`` before ``location``); it offers another span instead;
    - ``fan_out``: when a call's value is one item of a list in the question ("the
      factorial of 5, 10 and 15"), the same call is added for each item the model left out
      (:mod:`.fan_out`; each added call validated against its tool's schema);
    - ``restate``: when the question restates a call with other values in the same places
      ("...6 feet tall and weighs 80 kg, also for a person who is 5.6 feet and weighs 60
      kg"), the model's call is added again with each clause's values (:mod:`.restate`;
      each added call validated against its tool's schema);
    - ``each_option``: when the question lists two or more options of a call's parameter
      side by side ("in both ascending and descending order", "the last six months, the
      last year, and the last five years"), each call holding one is added again with
      each other one (:mod:`.each_option`; each added call validated against its tool's
      schema);
    - ``pair_in_order``: a tool's calls whose values are crossed against the question's
      order ("New York ... in Fahrenheit, Los Angeles ... in Celsius" written as New York
      in Celsius) are paired again in that order (:mod:`.pairing`); the block's calls are
      then streamed once the block is over;
    - ``share_optionals``: an optional value the question gives once, before anything that
      tells a tool's calls apart ("95% confidence interval ... sample size of 50 ... And
      the same for a sample size of 150"), written into each of the tool's calls that
      leaves it out (:mod:`.shared`); the block's calls are then streamed once the block
      is over;
    - ``asked_more`` (one tool offered): when the model wrote one call and closed the call
      block, the question asks for the same again ("do the same for", "repeat"...
      :func:`.asked_more.asks_for_more`) and neither ``fan_out`` nor ``restate`` finds
      the further calls, the block is reopened after the model's call and a second call
      to the tool forced; the model writes its values (never the first call's again);
    - ``focus_values``: when the question asks several tools for several things, each in a
      clause of its own, the text backend is told which part of the question each tool's
      values come from (:func:`.focus.value_focus`; a backend that copies values from the
      conversation offers a call only its tool's part).

    ``tools_under_none``: keep the tool descriptions in the prompt under ``tool_choice:
    none`` (the default, as the Messages API does: the prompt prefix stays that of the
    earlier turns, so a cached prefix is reused); False leaves them out, for a model that
    answers better without them. ``none_reminder``: text added to the last user turn
    under ``none`` when the tools stay in the prompt (:func:`build_text_prompt`).
    """

    name = "prompt"

    def __init__(
        self,
        text_backend: TextBackend,
        *,
        style: Literal["xml", "json"] = "xml",
        grammar: bool = True,
        max_tokens: int = 1024,
        limits: GrammarLimits | None = None,
        model: str | None = None,
        stop_on_malformed_call: bool = True,
        max_tools: int = 0,
        decision: CallDecision | None = None,
        score_tools: bool = False,
        rank_tools: bool = False,
        plan_tools: bool = False,
        calls_as_planned: bool = False,
        prerequisite_tools: bool = False,
        optional_from_conversation: bool = False,
        percent_fractions: bool = False,
        scaled_numbers: bool = False,
        date_formats: bool = False,
        city_state: bool = False,
        asked_flags: bool = False,
        described_codes: bool = False,
        enum_values: bool = False,
        stated_units: bool = False,
        from_to: bool = False,
        named_options: bool = False,
        after_names: bool = False,
        named_numbers: bool = False,
        compounding: bool = False,
        implied_numbers: bool = False,
        stray_numbers: bool = False,
        literal_lists: bool = False,
        written_names: bool = False,
        currency_codes: bool = False,
        whole_phrases: bool = False,
        names_not_values: bool = False,
        distinct_values: bool = False,
        fan_out: bool = False,
        restate: bool = False,
        each_option: bool = False,
        pair_in_order: bool = False,
        share_optionals: bool = False,
        asked_more: bool = False,
        focus_values: bool = False,
        tools_under_none: bool = True,
        none_reminder: str | None = None,
    ) -> None:
        if style not in ("xml", "json"):
            raise ValueError(f"style must be 'xml' or 'json', not {style!r}")
        self.text_backend = text_backend
        self.style: Literal["xml", "json"] = style
        self.grammar = grammar
        self.max_tokens = max_tokens
        self.limits = limits or GrammarLimits()
        self.model = model or getattr(text_backend, "model", None)
        self.stop_on_malformed_call = stop_on_malformed_call
        #: Structured output and ``strict`` tools are guaranteed only under the grammar.
        self.structured_output = grammar
        self.max_tools = max_tools
        self.decision = decision
        self.score_tools = score_tools
        self.rank_tools = rank_tools
        self.plan_tools = plan_tools
        self.calls_as_planned = calls_as_planned
        self.prerequisite_tools = prerequisite_tools
        self.optional_from_conversation = optional_from_conversation
        self.percent_fractions = percent_fractions
        self.scaled_numbers = scaled_numbers
        self.date_formats = date_formats
        self.city_state = city_state
        self.asked_flags = asked_flags
        self.described_codes = described_codes
        self.enum_values = enum_values
        self.stated_units = stated_units
        self.from_to = from_to
        self.named_options = named_options
        self.after_names = after_names
        self.named_numbers = named_numbers
        self.compounding = compounding
        self.implied_numbers = implied_numbers
        self.stray_numbers = stray_numbers
        self.literal_lists = literal_lists
        self.written_names = written_names
        self.currency_codes = currency_codes
        self.whole_phrases = whole_phrases
        self.names_not_values = names_not_values
        self.distinct_values = distinct_values
        self.fan_out = fan_out
        self.restate = restate
        self.each_option = each_option
        self.pair_in_order = pair_in_order
        self.share_optionals = share_optionals
        self.asked_more = asked_more
        self.focus_values = focus_values
        self.tools_under_none = tools_under_none
        self.none_reminder = none_reminder
        #: Timings and token counts of the last request (for benchmarks and the demo).
        self.last_end: TextEnd | None = None
        #: Tools retrieval left out of the last request's prompt.
        self.last_left_out: list[str] = []

    def _prompt(self, request: Request) -> tuple[list[TextMessage], str, list[str], ToolGrammar | None]:
        try:
            return build_text_prompt(
                request, style=self.style, grammar=self.grammar, limits=self.limits,
                tools_under_none=self.tools_under_none, none_reminder=self.none_reminder,
            )
        except ConversionError as exc:
            raise BackendError(str(exc), kind="invalid_request") from exc
        except ValueError as exc:  # e.g. tool_choice naming an unknown tool
            raise BackendError(str(exc), kind="invalid_request") from exc

    def count_tokens(self, request: Request) -> int | None:
        """The tokens of the rendered prompt (exact), when the text backend can count."""
        if not isinstance(self.text_backend, CountingTextBackend):
            return None
        messages, prefill, _, _ = self._prompt(self._retrieve(request))
        return self.text_backend.prompt_tokens(messages, prefill)

    def stream(self, request: Request) -> Iterator[StreamEvent]:
        request = self._retrieve(request)
        messages, prefill, stops, grammar = self._prompt(request)
        if isinstance(self.text_backend, CountingTextBackend):
            # Known before the first event: the gateway answers an HTTP error, not a stream.
            used = self.text_backend.prompt_tokens(messages, prefill)
            limit = self.text_backend.context_length()
            if used >= limit:
                raise context_error(used, limit)
        planned: dict[str, float] = {}
        if grammar is not None and request.tools and grammar.prefill == prefill:
            prefill, grammar = self._plan(request, messages, prefill, grammar, planned)
        options: dict[str, Any] = {
            "stop": stops,
            "max_tokens": request.max_tokens or self.max_tokens,
            "temperature": 0.0 if request.temperature is None else request.temperature,
            "top_p": request.top_p,
            "top_k": request.top_k,
        }
        if self.focus_values and grammar is not None and len(request.tools) > 1:
            options["focus"] = value_focus(question_text(request), request.tools)
        if (self.names_not_values or self.distinct_values) and grammar is not None \
                and request.tools:
            options["naming"] = {t.name: tool_naming(t, names=self.names_not_values,
                                                     distinct=self.distinct_values)
                                 for t in request.tools}
        started = time.perf_counter()
        yield MessageStart(id=new_message_id(), model=request.model or self.model)
        emitter = Emitter(LegacyParser(request.tools) if request.tools else None,
                           history=earlier_calls(request))
        choice = request.tool_choice or ToolChoice()
        # The block's calls streamed once it is over, edited together (paired as the
        # question pairs values, given the values it gives all of them).
        emitter.hold = (self.pair_in_order or self.share_optionals) and bool(request.tools) \
            and not choice.disable_parallel_tool_use
        if (self.optional_from_conversation or self.percent_fractions
                or self.prerequisite_tools or self.date_formats or self.city_state
                or self.asked_flags or self.whole_phrases
                or self.scaled_numbers or self.described_codes
                or self.enum_values or self.stated_units or self.from_to
                or self.named_options or self.after_names
                or self.named_numbers or self.compounding
                or self.implied_numbers or self.stray_numbers
                or self.literal_lists or self.written_names
                or self.currency_codes) and request.tools:
            emitter.adjust = call_adjuster(request, self.optional_from_conversation,
                                           self.percent_fractions, self.prerequisite_tools,
                                           self.date_formats, self.city_state,
                                           self.asked_flags, self.whole_phrases,
                                           scales=self.scaled_numbers,
                                           codes=self.described_codes,
                                           enums=self.enum_values,
                                           units=self.stated_units,
                                           directions=self.from_to,
                                           options=self.named_options,
                                           after_names=self.after_names,
                                           named_numbers=self.named_numbers,
                                           compounding=self.compounding,
                                           implied=self.implied_numbers,
                                           stray=self.stray_numbers,
                                           lists=self.literal_lists,
                                           names=self.written_names,
                                           currencies=self.currency_codes)
        if emitter.parser is not None and prefill:
            # The prefill is the start of the answer: parse it, but it is not new text.
            for _ in emitter.feed(prefill, emit_text=False):
                pass
        written: list[str] = []
        end = yield from self._generate(emitter, messages, prefill, grammar, options, written)
        if emitter.repeated == "history" and emitter.index < 0 and not emitter.blocks \
                and choice.type == "auto":
            # The model's first move was to ask again for a result it already has: a small
            # model does this instead of answering. Ask for the answer as text (same prompt,
            # so the cached prefix is reused; the grammar, or a stop string, rules out calls).
            emitter.repeated = None
            emitter.parser = LegacyParser(request.tools)  # the dropped call block is over
            emitter.held = ""
            text_only = tool_call_grammar(request.tools, ToolChoice(type="none"), self.limits) \
                if grammar is not None else None
            # As under ``none`` with the tools in the prompt: the reminder to answer.
            again = reminded(messages, self.none_reminder) \
                if self.none_reminder and self.tools_under_none else messages
            retry = yield from self._generate(emitter, again, "", text_only, options)
            retry.output_tokens += end.output_tokens
            retry.timings["retried_after_repeat"] = 1.0
            end = retry
        elif self.asked_more and grammar is not None and len(request.tools) == 1 \
                and choice.type in ("auto", "any") and not choice.disable_parallel_tool_use \
                and len(emitter.blocks) == 1 and emitter.repeated is None \
                and end.reason != "length" and asks_for_more(question_text(request)) \
                and not fanned_out(request, emitter.blocks, self.limits.max_calls,
                                   lists=self.fan_out, clauses=self.restate,
                                   options=self.each_option):
            yield from self._one_more(request, emitter, messages, prefill + "".join(written),
                                      options, end)
        yield from emitter.close()
        if (self.fan_out or self.restate or self.each_option) and emitter.blocks \
                and not choice.disable_parallel_tool_use:
            added = fanned_out(request, emitter.blocks, self.limits.max_calls,
                               lists=self.fan_out, clauses=self.restate,
                               options=self.each_option)
            for block in added:
                yield from emitter.call(block)
            if added:
                end.timings["fanned_out"] = float(len(added))
        if emitter.pending:
            held = list(emitter.pending)
            counts: dict[str, int] = {}

            def together(blocks: list[ToolUseBlock]) -> list[ToolUseBlock]:
                for key, on, edit in (("paired_in_order", self.pair_in_order, paired_in_order),
                                      ("shared_optionals", self.share_optionals,
                                       given_to_all)):
                    if on:
                        after = edit(request, blocks)
                        counts[key] = sum(a.input != b.input
                                          for a, b in zip(after, blocks, strict=True))
                        blocks = after
                return blocks

            yield from emitter.release(together)
            # Counted only if the calls released differ from those held: the emitter may
            # refuse the edit (neither edit undoes the other's changes).
            if emitter.blocks[-len(held):] != held:
                end.timings.update({k: float(n) for k, n in counts.items() if n})
        end.timings.setdefault("total_s", time.perf_counter() - started)
        end.timings.update(planned)
        if emitter.dropped:
            end.timings["optional_dropped"] = float(emitter.dropped)
        if self.last_left_out:
            end.timings["tools_left_out"] = float(len(self.last_left_out))
        self.last_end = end
        yield MessageDelta(
            stop_reason=emitter.stop_reason(end),
            stop_sequence=end.stop_sequence if emitter.user_stop(end) else None,
            usage=Usage(input_tokens=end.input_tokens, output_tokens=end.output_tokens),
        )
        yield MessageStop()

    def _retrieve(self, request: Request) -> Request:
        """Keep the ``max_tools`` tools most relevant to the question (see
        :func:`~.choices.select_tools`); the ones left out are logged."""
        self.last_left_out = []
        if not self.max_tools or len(request.tools) <= self.max_tools:
            return request
        choice = request.tool_choice or ToolChoice()
        keep = {b.name for m in request.messages for b in m.tool_uses}
        if choice.type == "tool" and choice.name:
            keep.add(choice.name)
        kept, left_out = select_tools(question_text(request), request.tools, self.max_tools,
                                      keep=sorted(keep))
        if left_out:
            self.last_left_out = left_out
            log.info("tool retrieval: %d of %d tools offered; left out: %s", len(kept),
                     len(request.tools), ", ".join(left_out))
        return request.model_copy(update={"tools": kept})

    def _plan(self, request: Request, messages: list[TextMessage], prefill: str,
              grammar: ToolGrammar, planned: dict[str, float]) -> tuple[str, ToolGrammar]:
        """Under ``auto``: call or answer (``decision``); under ``auto``/``any``: which tool
        first (``score_tools``: the model's likelihood of each whole name; ``rank_tools``:
        the tool covering most of the question)."""
        score = getattr(self.text_backend, "score_continuations", None)
        choice = request.tool_choice or ToolChoice()
        if score is None or choice.type not in ("auto", "any"):
            return prefill, grammar
        decide = self.decision is not None and choice.type == "auto"
        rank = self.rank_tools and len(request.tools) > 1
        if not decide and (not (self.score_tools or rank) or choice.type == "auto"):
            # Scoring the first tool commits to a call: under ``auto`` only once decided.
            return prefill, grammar
        opener = "<function_calls>\n<invoke>\n<tool_name>"
        names = [t.name for t in request.tools]
        ends = [escape(n) + "</tool_name>" for n in names]
        # One tool: nothing to choose (its name's likelihood only feeds ``w_tool``).
        tool_lps = score(messages, ends, prefill=opener) if len(names) > 1 or (
            decide and self.decision is not None and self.decision.w_tool) else [0.0]
        per_token = [lp / max(1, len(n) / 4) for lp, n in zip(tool_lps, ends, strict=True)]
        question = question_text(request)
        called = {b.name for m in request.messages for b in m.tool_uses}
        if rank:
            # Example values in descriptions ("e.g. 'Asia/Tokyo'") are not what a tool is
            # about: "What time is it in Tokyo?" is get_current_time's, not convert_time's.
            # Between tools covering as much, one not yet called this conversation (a lookup
            # done, the tool that needs it is next).
            rels = [relevance(question, tool, examples=False) for tool in request.tools]
            best = max(range(len(names)),
                       key=lambda i: (rels[i], names[i] not in called, tool_lps[i]))
        else:
            best = max(range(len(names)), key=lambda i: tool_lps[i])
        if decide:
            assert self.decision is not None
            (open_lp,) = score(messages, [opener])
            rel = relevance(question, request.tools)
            named = name_coverage(question, request.tools)
            verdict = self.decision.calls(open_lp, per_token[best], rel, named)
            planned.update({"call_open_lp": open_lp, "call_tool_lp": per_token[best],
                            "call_relevance": rel, "call_name_coverage": named,
                            "call_score": self.decision.score(open_lp, per_token[best], rel,
                                                              named),
                            "call_decided": float(verdict)})
            if not verdict:
                text_only = tool_call_grammar(request.tools, ToolChoice(type="none"),
                                              self.limits, request.response_schema)
                return "", text_only
        first: list[str] | None = [names[best]] if self.score_tools or rank else None
        before = prerequisite(question, request.tools, best, called) \
            if first and rank and self.prerequisite_tools else None
        if before is not None:
            # The chosen tool needs what another looks up: that one now, it next turn.
            first = [names[before]]
            planned["prerequisite_first"] = 1.0
        only_first = False
        if before is None and first and rank and self.plan_tools \
                and not choice.disable_parallel_tool_use:
            first += [names[i] for i in further_tools(question, request.tools, best)]
            planned["planned_calls"] = float(len(first))
            only_first = self.calls_as_planned and len(request.tools) <= PLAN_MAX_TOOLS
        forced = tool_call_grammar(
            request.tools,
            ToolChoice(type="any", disable_parallel_tool_use=choice.disable_parallel_tool_use),
            self.limits, request.response_schema, first=first, only_first=only_first)
        return forced.prefill, forced

    def _one_more(self, request: Request, emitter: Emitter, messages: list[TextMessage],
                  answer: str, options: dict[str, Any],
                  end: TextEnd) -> Generator[Any, None, None]:
        """``asked_more``: the call block of ``answer`` (the prefill and what the model
        wrote) reopened after its last call, and a further call to the same tool forced and
        generated within the tokens ``end`` leaves of the request's limit; its tokens and
        how it ended go into ``end``. A call the limit cuts is dropped, and the answer ends
        as it had."""
        cut = answer.rfind("</invoke>") + len("</invoke>")
        left = int(options["max_tokens"]) - end.output_tokens
        if cut < len("</invoke>") or left <= 0 \
                or answer[cut:].strip() not in ("", FUNCTION_CALLS_CLOSE):
            return
        name = emitter.blocks[-1].name
        header = f"<invoke>\n<tool_name>{escape(name)}</tool_name>\n<parameters>\n"
        grammar = tool_call_grammar(
            request.tools, ToolChoice(type="tool", name=name, disable_parallel_tool_use=True),
            self.limits)
        # The earlier call is done: a fresh parser reads the reopened block's new call.
        emitter.parser = LegacyParser(request.tools)
        emitter.held = ""
        for _ in emitter.feed(FUNCTION_CALLS_OPEN + header, emit_text=False):
            pass
        more = yield from self._generate(emitter, messages, answer[:cut] + "\n" + header,
                                         grammar, {**options, "max_tokens": left})
        end.output_tokens += more.output_tokens
        end.timings["one_more_call"] = 1.0
        if more.reason == "length":  # the further call cut: not part of the answer
            emitter.parser = LegacyParser(request.tools)
            return
        end.reason, end.stop_sequence = more.reason, more.stop_sequence

    def _generate(self, emitter: Emitter, messages: list[TextMessage], prefill: str,
                  grammar: ToolGrammar | None, options: dict[str, Any],
                  written: list[str] | None = None) -> Generator[Any, None, TextEnd]:
        """Stream one generation through ``emitter`` (its text also into ``written``);
        returns how it ended."""
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
            last = getattr(self.text_backend, "last_end", None)
            end = last if isinstance(last, TextEnd) else TextEnd(reason="end")
            end.reason, end.stop_sequence = "end", None
        if malformed:
            end.timings["stopped_at_malformed_call"] = 1.0
        return end
