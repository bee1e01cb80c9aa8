"""The hook by which an opt-in preset of rules works around a text model's tool calls.

:class:`~.tool_use.PromptToolsBackend` does prompt-based tool use for any text model:
prompt, grammar, constrained decoding, parsing. Rules that read the question's words
(numbers, dates, units, places, lists, clauses...) are no part of it: they come in a
*preset* (``tooluse.presets``, e.g. ``en-bfcl``), which the user turns on, and which the
backend asks at a few points of each request through the :class:`Assist` interface below.
The base :class:`Assist` does nothing at any of them, and is what a backend has unless the
user asked for a preset.

Every change a preset makes is recorded on the call it made it to
(:class:`~tooluse.messages.CallOrigin`): the values it changed with their rule (``edited``),
the calls it made (``added``), the rules that steered the model's decoding
(``steered_by``). :func:`edited` and :func:`added` build those records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..codecs.legacy import escape
from ..messages import CallOrigin, Request, ToolUseBlock, ValueChange

__all__ = [
    "Assist",
    "CallEditor",
    "Plan",
    "PlanContext",
    "added",
    "changes_between",
    "edited",
    "steered",
]

#: Edits one call after the model wrote it: the call in, the call out (its origin
#: recording each change) and how many optional parameters were left out.
CallEditor = Callable[[ToolUseBlock], tuple[ToolUseBlock, int]]


class PlanContext:
    """What the backend offers a preset planning a request's first calls (``auto``/``any``).

    ``score(continuations)``: the model's log-likelihood of each continuation of the
    prompt. :meth:`name_lps`: its log-likelihood of each tool's whole name after the
    opening of a call (scored once, on first use; with one tool, only if ``force``),
    :meth:`per_token` the same per token, :meth:`model_best` the index of the tool it
    likes best."""

    def __init__(self, names: Sequence[str],
                 score: Callable[[Sequence[str]], list[float]],
                 score_names: Callable[[Sequence[str]], list[float]]) -> None:
        self.names = list(names)
        self.score = score
        self._score_names = score_names
        self._lps: list[float] | None = None

    def name_lps(self, force: bool = False) -> list[float]:
        if self._lps is None or (force and len(self.names) == 1 and self._lps == [0.0]):
            ends = [escape(n) + "</tool_name>" for n in self.names]
            self._lps = self._score_names(ends) if len(self.names) > 1 or force else [0.0]
        return self._lps

    def per_token(self, force: bool = False) -> list[float]:
        ends = [escape(n) + "</tool_name>" for n in self.names]
        return [lp / max(1, len(e) / 4)
                for lp, e in zip(self.name_lps(force), ends, strict=True)]

    def model_best(self) -> int:
        lps = self.name_lps()
        return max(range(len(self.names)), key=lambda i: lps[i])


@dataclass
class Plan:
    """A preset's plan for a request's first calls.

    ``call``: under ``auto``, call (True), answer in text (False) or leave it to the model
    (None). ``first``: the tools the first calls must name, in order (None: the model's
    choice); ``only_first``: the call block closes after them. ``steered_by``: the rules
    that chose ``first[0]`` (recorded on that call); ``added_by``: the rule that asked for
    the further calls of ``first`` (recorded on each as an added call, its values the
    model's). ``diagnostics``: numbers for the request's timings."""

    call: bool | None = None
    first: list[str] | None = None
    only_first: bool = False
    steered_by: tuple[str, ...] = ()
    added_by: str | None = None
    diagnostics: dict[str, float] = field(default_factory=dict)


class Assist:
    """The hooks a preset implements; this base implements none of them (every method
    leaves the model alone), so a backend without a preset is the model's own.

    ``name``: the preset's name (``"none"`` here); :attr:`rules`: the rules it has on."""

    name = "none"

    @property
    def rules(self) -> tuple[str, ...]:
        return ()

    def select_tools(self, request: Request) -> tuple[Request, list[str]]:
        """The request with only the tools to offer, and the names left out."""
        return request, []

    def plan(self, request: Request, context: PlanContext) -> Plan | None:
        """Under ``auto``/``any`` with the grammar: call or not, and which tools first."""
        return None

    def generation_hints(self, request: Request) -> tuple[dict[str, Any], tuple[str, ...]]:
        """Extra generation options for a text backend that copies values from the
        conversation (``focus``, ``naming``), and the rules that set them (recorded as
        steering every call)."""
        return {}, ()

    def call_editor(self, request: Request) -> CallEditor | None:
        """Edits each call as it is parsed (None: no edit)."""
        return None

    def holds_calls(self, request: Request) -> bool:
        """Hold a call block's calls until it is over, for :meth:`edit_together`."""
        return False

    def edit_together(self, request: Request,
                      blocks: list[ToolUseBlock]) -> tuple[list[ToolUseBlock], dict[str, int]]:
        """A call block's calls edited together (as many out as in), and how many calls
        each rule changed."""
        return blocks, {}

    def wants_one_more(self, request: Request, blocks: list[ToolUseBlock], limit: int) -> bool:
        """The model closed its call block: should it write one more call?"""
        return False

    def added_calls(self, request: Request, blocks: list[ToolUseBlock],
                    limit: int) -> list[ToolUseBlock]:
        """Calls to add after the model's ``blocks`` (each with an ``added`` origin)."""
        return []


def changes_between(before: dict[str, Any], after: dict[str, Any],
                    rule: str) -> list[ValueChange]:
    """The top-level changes from ``before`` to ``after``, each made by ``rule``."""
    changes: list[ValueChange] = []
    for key, value in before.items():
        if key not in after:
            changes.append(ValueChange(parameter=key, kind="removed", before=value,
                                       rule=rule))
        elif after[key] != value or type(after[key]) is not type(value):
            changes.append(ValueChange(parameter=key, before=value, after=after[key],
                                       rule=rule))
    changes += [ValueChange(parameter=key, kind="added", after=after[key], rule=rule)
                for key in after if key not in before]
    return changes


def edited(block: ToolUseBlock, changes: Sequence[ValueChange],
           arguments: dict[str, Any]) -> ToolUseBlock:
    """``block`` with input ``arguments``, its origin recording ``changes`` (an added call
    stays ``added``; a model's call becomes ``edited``)."""
    if not changes:
        return block
    origin = block.origin or CallOrigin()
    source = "added" if origin.source == "added" else "edited"
    return block.model_copy(update={
        "input": arguments,
        "origin": origin.model_copy(update={"source": source,
                                            "changes": [*origin.changes, *changes]}),
    })


def added(block: ToolUseBlock, rule: str) -> ToolUseBlock:
    """``block`` marked as made by ``rule``, not written by the model."""
    origin = block.origin or CallOrigin()
    return block.model_copy(update={"origin": origin.model_copy(
        update={"source": "added", "rule": rule})})


def steered(block: ToolUseBlock, rules: Sequence[str]) -> ToolUseBlock:
    """``block`` with ``rules`` added to the rules that steered its decoding."""
    if not rules:
        return block
    origin = block.origin or CallOrigin()
    merged = [*origin.steered_by, *(r for r in rules if r not in origin.steered_by)]
    return block.model_copy(update={"origin": origin.model_copy(
        update={"steered_by": merged})})
