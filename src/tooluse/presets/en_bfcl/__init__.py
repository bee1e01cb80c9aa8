"""``en-bfcl``: rules that read an English question around a small model's tool calls.

**English only, fitted on BFCL.** Each rule was written while reading the answers of the
SmolLM2-135M model on six categories of the Berkeley Function Calling Leaderboard
(``simple_python``, ``multiple``, ``parallel``, ``parallel_multiple``, ``irrelevance``,
``live_simple``), and kept when it gained there. They read the question's words —
numbers, dates, units, places, currencies, clauses, lists, flags, names — and plan the
calls, steer the values the model may copy, edit the calls it wrote and add calls it did
not. On BFCL they gain a lot; on requests unlike BFCL's they can also break right answers
and invent calls (docs/local.md gives each rule's measured gain and harm, on BFCL and on
``bench/realistic``). So they are never on by default: ``LocalBackend(preset="en-bfcl")``,
``-o preset=en-bfcl`` or ``--preset en-bfcl`` turns them on, and every change they make is
recorded on the call it made it to (:class:`~tooluse.messages.CallOrigin`).

:class:`EnBfclRules` lists the rules, each on in the preset; ``load_preset("en-bfcl",
fan_out=False)`` turns one off, and a backend given only some rules
(``LocalBackend(fan_out=True)``) gets this preset with only those on.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field, fields
from typing import Any

from ...messages import Request, ToolChoice, ToolUseBlock
from ...prompting.assist import Assist, CallEditor, Plan, PlanContext
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
from .focus import value_focus

__all__ = ["DEFAULT_DECISION", "RULES", "EnBfcl", "EnBfclRules"]

log = logging.getLogger("tooluse.presets.en_bfcl")

#: Under ``auto``, call or answer: a class-balanced logistic regression on the even cases of
#: the six BFCL categories of a recorded ``auto`` run (the model's opening likelihood,
#: relevance, name coverage), its bias then lowered as far as the even irrelevance cases
#: allow without more calls there (docs/benchmarks/code.md). Fitted for SmolLM2-135M.
DEFAULT_DECISION = CallDecision(bias=4.1315, w_open=0.3584, w_tool=0.0, w_rel=0.2995,
                                w_name=3.424)


@dataclass(frozen=True)
class EnBfclRules:
    """The rules of ``en-bfcl``, each on (True) in the preset. What each does, and its
    gain on BFCL and on ``bench/realistic``: docs/local.md. Grouped by what they do:

    - planning (which tools, call or not): ``decide`` (under ``auto``, call or answer by
      ``decision``, weights fitted on BFCL), ``rank_tools`` (the first call names the tool
      covering most of the question), ``plan_tools`` (further calls forced to the other
      tools the question asks for: *adds calls*), ``calls_as_planned`` (the block closes
      after the planned calls), ``prerequisite_tools`` (a lookup the chosen tool needs is
      called first; its result then fills the parameter); ``max_tools`` (offer at most
      this many tools, by BM25; 0: all) is off;
    - steering the values the model copies (with ``copy_values``): ``focus_values``,
      ``names_not_values``, ``distinct_values``;
    - edits to each call: ``optional_from_conversation`` and the value rewrites
      ``percent_fractions`` ... ``currency_codes``, ``named_options``;
    - edits to a block's calls together: ``pair_in_order``, ``share_optionals``;
    - calls added: ``fan_out``, ``restate``, ``each_option``, ``asked_more``.
    """

    decide: bool = True
    rank_tools: bool = True
    plan_tools: bool = True
    calls_as_planned: bool = True
    prerequisite_tools: bool = True
    focus_values: bool = True
    names_not_values: bool = True
    distinct_values: bool = True
    optional_from_conversation: bool = True
    percent_fractions: bool = True
    scaled_numbers: bool = True
    date_formats: bool = True
    city_state: bool = True
    asked_flags: bool = True
    described_codes: bool = True
    enum_values: bool = True
    stated_units: bool = True
    from_to: bool = True
    named_options: bool = True
    after_names: bool = True
    named_numbers: bool = True
    compounding: bool = True
    implied_numbers: bool = True
    stray_numbers: bool = True
    literal_lists: bool = True
    written_names: bool = True
    currency_codes: bool = True
    whole_phrases: bool = True
    pair_in_order: bool = True
    share_optionals: bool = True
    fan_out: bool = True
    restate: bool = True
    each_option: bool = True
    asked_more: bool = True
    max_tools: int = 0
    decision: CallDecision = field(default=DEFAULT_DECISION)

    @property
    def on(self) -> tuple[str, ...]:
        """The names of the rules on (``max_tools`` when it is above 0)."""
        return tuple(f.name for f in fields(self)
                     if (f.type in (bool, "bool") and getattr(self, f.name))
                     or (f.name == "max_tools" and self.max_tools > 0))


#: The rules :func:`.call_edits.call_adjuster` applies to each call as it is written.
_CALL_EDITS = ("optional_from_conversation", "percent_fractions", "prerequisite_tools",
               "date_formats", "city_state", "asked_flags", "whole_phrases", "scaled_numbers",
               "described_codes", "enum_values", "stated_units", "from_to", "named_options",
               "after_names", "named_numbers", "compounding", "implied_numbers",
               "stray_numbers", "literal_lists", "written_names", "currency_codes")

#: The names of the on/off rules (every field but ``max_tools`` and ``decision``).
RULES: tuple[str, ...] = tuple(f.name for f in fields(EnBfclRules)
                               if f.name not in ("max_tools", "decision"))


def _read(name: str, value: Any) -> Any:
    """A rule's option as a command line gives it: ``max_tools`` a whole number,
    ``decision`` four or five numbers ``bias,w_open,w_tool,w_rel[,w_name]`` (re-fitting
    it); a switch must be a bool."""
    if name == "max_tools" and isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ValueError(f"option 'max_tools' must be a whole number, not {value!r}") \
                from None
    if name == "decision" and isinstance(value, str):
        try:
            numbers = [float(x) for x in value.split(",")]
        except ValueError:
            numbers = []
        if len(numbers) not in (4, 5):
            raise ValueError("option 'decision' must be four or five numbers: bias,w_open,"
                             f"w_tool,w_rel[,w_name], not {value!r}")
        return CallDecision(*numbers)
    if name in RULES and not isinstance(value, bool):
        raise ValueError(f"rule {name!r} of preset 'en-bfcl' must be true or false, "
                         f"not {value!r}")
    return value


class EnBfcl(Assist):
    """The ``en-bfcl`` preset (see the module docstring); ``EnBfcl(fan_out=False)`` with a
    rule off, ``EnBfcl(only=("fan_out",))`` with only the rules named on."""

    name = "en-bfcl"

    def __init__(self, *, only: tuple[str, ...] | list[str] | None = None,
                 **options: Any) -> None:
        unknown = sorted(set(options) - {f.name for f in fields(EnBfclRules)})
        if unknown:
            raise ValueError(f"unknown option(s) of preset 'en-bfcl': {', '.join(unknown)}; "
                             f"its rules: {', '.join(RULES)}")
        options = {k: _read(k, v) for k, v in options.items()}
        if only is not None:
            bad = sorted(set(only) - set(RULES))
            if bad:
                raise ValueError(f"unknown rule(s) of preset 'en-bfcl': {', '.join(bad)}")
            options = {**{r: r in only for r in RULES}, **options}
        self.options = dataclasses.replace(EnBfclRules(), **options)

    @property
    def rules(self) -> tuple[str, ...]:
        return self.options.on

    def __repr__(self) -> str:
        return f"EnBfcl(rules={list(self.rules)})"

    # -- planning ---------------------------------------------------------------------------

    def select_tools(self, request: Request) -> tuple[Request, list[str]]:
        limit = self.options.max_tools
        if not limit or len(request.tools) <= limit:
            return request, []
        choice = request.tool_choice or ToolChoice()
        keep = {b.name for m in request.messages for b in m.tool_uses}
        if choice.type == "tool" and choice.name:
            keep.add(choice.name)
        kept, left_out = select_tools(question_text(request), request.tools, limit,
                                      keep=sorted(keep))
        if left_out:
            log.info("tool retrieval (max_tools): %d of %d tools offered; left out: %s",
                     len(kept), len(request.tools), ", ".join(left_out))
        return request.model_copy(update={"tools": kept}), left_out

    def plan(self, request: Request, context: PlanContext) -> Plan | None:
        o = self.options
        choice = request.tool_choice or ToolChoice()
        names = [t.name for t in request.tools]
        decide = o.decide and choice.type == "auto"
        rank = o.rank_tools and len(names) > 1
        if not decide and (not rank or choice.type == "auto"):
            return None  # ranking commits to a call: under ``auto`` only once decided
        question = question_text(request)
        called = {b.name for m in request.messages for b in m.tool_uses}
        best = context.model_best()
        if rank:
            # Example values in descriptions ("e.g. 'Asia/Tokyo'") are not what a tool is
            # about. Between tools covering as much, one not yet called this conversation
            # (a lookup done, the tool that needs it is next).
            rels = [relevance(question, tool, examples=False) for tool in request.tools]
            lps = context.name_lps()
            best = max(range(len(names)), key=lambda i: (rels[i], names[i] not in called,
                                                         lps[i]))
        plan = Plan()
        if decide:
            (open_lp,) = context.score(["<function_calls>\n<invoke>\n<tool_name>"])
            rel = relevance(question, request.tools)
            named = name_coverage(question, request.tools)
            tool_lp = context.per_token(force=o.decision.w_tool != 0)[best]
            verdict = o.decision.calls(open_lp, tool_lp, rel, named)
            plan.call = verdict
            plan.diagnostics.update({
                "call_open_lp": open_lp, "call_tool_lp": tool_lp, "call_relevance": rel,
                "call_name_coverage": named,
                "call_score": o.decision.score(open_lp, tool_lp, rel, named),
                "call_decided": float(verdict)})
            if not verdict:
                return plan
            plan.steered_by += ("decide",)
        if not rank:
            return plan
        first = [names[best]]
        plan.steered_by += ("rank_tools",)
        before = prerequisite(question, request.tools, best, called) \
            if o.prerequisite_tools else None
        if before is not None:
            # The chosen tool needs what another looks up: that one now, it next turn.
            first = [names[before]]
            plan.steered_by += ("prerequisite_tools",)
            plan.diagnostics["prerequisite_first"] = 1.0
        elif o.plan_tools and not choice.disable_parallel_tool_use:
            first += [names[i] for i in further_tools(question, request.tools, best)]
            plan.diagnostics["planned_calls"] = float(len(first))
            plan.added_by = "plan_tools" if len(first) > 1 else None
            plan.only_first = o.calls_as_planned and len(request.tools) <= PLAN_MAX_TOOLS
        plan.first = first
        return plan

    def generation_hints(self, request: Request) -> tuple[dict[str, Any], tuple[str, ...]]:
        o = self.options
        hints: dict[str, Any] = {}
        rules: tuple[str, ...] = ()
        if o.focus_values and len(request.tools) > 1:
            focus = value_focus(question_text(request), request.tools)
            if focus is not None:
                hints["focus"] = focus
                rules += ("focus_values",)
        if (o.names_not_values or o.distinct_values) and request.tools:
            hints["naming"] = {t.name: tool_naming(t, names=o.names_not_values,
                                                   distinct=o.distinct_values)
                               for t in request.tools}
            rules += tuple(r for r in ("names_not_values", "distinct_values")
                           if getattr(o, r))
        return hints, rules

    # -- edits ------------------------------------------------------------------------------

    def call_editor(self, request: Request) -> CallEditor | None:
        o = self.options
        if not request.tools or not any(getattr(o, rule) for rule in _CALL_EDITS):
            return None
        return call_adjuster(
            request, o.optional_from_conversation, o.percent_fractions, o.prerequisite_tools,
            o.date_formats, o.city_state, o.asked_flags, o.whole_phrases,
            scales=o.scaled_numbers, codes=o.described_codes, enums=o.enum_values,
            units=o.stated_units, directions=o.from_to, options=o.named_options,
            after_names=o.after_names, named_numbers=o.named_numbers,
            compounding=o.compounding, implied=o.implied_numbers, stray=o.stray_numbers,
            lists=o.literal_lists, names=o.written_names, currencies=o.currency_codes)

    def holds_calls(self, request: Request) -> bool:
        choice = request.tool_choice or ToolChoice()
        return (self.options.pair_in_order or self.options.share_optionals) \
            and bool(request.tools) and not choice.disable_parallel_tool_use

    def edit_together(self, request: Request,
                      blocks: list[ToolUseBlock]) -> tuple[list[ToolUseBlock], dict[str, int]]:
        counts: dict[str, int] = {}
        for key, on, edit in (("paired_in_order", self.options.pair_in_order,
                               paired_in_order),
                              ("shared_optionals", self.options.share_optionals,
                               given_to_all)):
            if on:
                after = edit(request, blocks)
                counts[key] = sum(a.input != b.input for a, b in zip(after, blocks,
                                                                      strict=True))
                blocks = after
        return blocks, counts

    # -- calls added ------------------------------------------------------------------------

    def _fanned_out(self, request: Request, blocks: list[ToolUseBlock],
                    limit: int) -> list[ToolUseBlock]:
        o = self.options
        if not (o.fan_out or o.restate or o.each_option) or not blocks:
            return []
        return fanned_out(request, blocks, limit, lists=o.fan_out, clauses=o.restate,
                          options=o.each_option)

    def wants_one_more(self, request: Request, blocks: list[ToolUseBlock], limit: int) -> bool:
        choice = request.tool_choice or ToolChoice()
        return self.options.asked_more and len(request.tools) == 1 \
            and choice.type in ("auto", "any") and not choice.disable_parallel_tool_use \
            and len(blocks) == 1 and asks_for_more(question_text(request)) \
            and not self._fanned_out(request, blocks, limit)

    def added_calls(self, request: Request, blocks: list[ToolUseBlock],
                    limit: int) -> list[ToolUseBlock]:
        choice = request.tool_choice or ToolChoice()
        if choice.disable_parallel_tool_use:
            return []
        return self._fanned_out(request, blocks, limit)
