"""Edits to the calls a model wrote, made after it wrote them, from the conversation: optional
parameters it gives no value for left out, percentages written as fractions where a rate is
due, numbers written with a scale ("213 million") written whole (:mod:`.spoken`), dates
written in the format a parameter asks for (:mod:`.dates`), a city with its state
where that is asked (:mod:`.regions`), booleans set as the question asks
(:mod:`.flags`), optional parameters left out whose option the question names added
(:mod:`.named_options`), values the question writes as part of a word, name or quote
written whole and a name written right after a parameter's name given to it
(:mod:`.phrases`), a number the question labels with a parameter's name given to it
(:mod:`.named_numbers`), a number taken from inside another value replaced by the
question's unused one (:mod:`.stray_numbers`), a list the question writes out given whole
(:mod:`.literal_lists`), a value replaced by the name the question writes for it
(:mod:`.written_names`), currency codes for the currencies it names (:mod:`.currencies`),
the times a year "compounded quarterly" says (:mod:`.spoken`), the
code a parameter's description lists for what the question names (:mod:`.codes`), a
value naming another parameter's enum member given to it (:mod:`.enum_values`), the unit
the question states for a unit parameter (:mod:`.units`), a "from" and a "to" value in the
question's order (:mod:`.directions`), a value an earlier call looked up written as that
call returned it, the calls its lists ask for added (:mod:`.fan_out`), those its clauses
restate with other values (:mod:`.restate`), one for each option of a parameter it lists
(:mod:`.each_option`), a tool's calls' values paired in the question's order where they
cross it (:mod:`.pairing`), and an optional value the question gives once for all of a
tool's calls written into each (:mod:`.shared`). Each edited or added call is validated against
its tool's schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonschema.exceptions import SchemaError, UnknownType
from referencing.exceptions import Unresolvable

from ...codecs.legacy import new_tool_use_id
from ...messages import CallOrigin, Request, ToolUseBlock
from ...prompting.assist import changes_between
from ...prompting.assist import edited as edited_block
from ...tools.validation import compile_validator
from .choices import (
    conversation_text,
    keep_given_optionals,
    looks_up,
    percents_as_fractions,
    question_text,
    unasked_required,
    without_inside_others,
)
from .codes import described_codes
from .currencies import currency_codes
from .dates import dated
from .directions import from_to
from .each_option import option_calls
from .enum_values import enum_values
from .fan_out import fan_out
from .flags import asked_flags
from .focus import owned_spans
from .literal_lists import literal_lists
from .named_numbers import named_numbers as numbers_by_name
from .named_options import named_options
from .pairing import in_order
from .phrases import values_after_names, whole_phrases
from .regions import with_region
from .restate import restatements
from .shared import shared_optionals
from .spoken import compounding as per_year
from .spoken import implied as implied_numbers
from .spoken import scaled
from .stray_numbers import stray_numbers as strays
from .units import stated_units
from .written_names import written_names

__all__ = ["call_adjuster", "fanned_out"]

#: A call as (tool name, input).
Call = tuple[str, dict[str, Any]]


#: An edit of one call's input: (input, the tool's schema, the text it reads) -> input.
Edit = Callable[[dict[str, Any], Any, str], dict[str, Any]]


def call_adjuster(request: Request, optional: bool, percent: bool,
                  looked_up: bool = False,
                  dates: bool = False,
                  regions: bool = False,
                  flags: bool = False,
                  phrases: bool = False,
                  scales: bool = False,
                  codes: bool = False,
                  enums: bool = False,
                  units: bool = False,
                  directions: bool = False,
                  options: bool = False,
                  after_names: bool = False,
                  named_numbers: bool = False,
                  compounding: bool = False,
                  implied: bool = False,
                  stray: bool = False,
                  lists: bool = False,
                  names: bool = False,
                  currencies: bool = False) -> Callable[[ToolUseBlock], tuple[ToolUseBlock, int]]:
    """The editor of each call of ``request``: the edits switched on, in this order, each
    kept only if the call still validates.

    1. ``units``: a unit parameter whose value the question does not write gets the unit
       the question states (:func:`.units.stated_units`), and keeps it through 2;
    2. ``optional``: the optional parameters the conversation gives no value for are left
       out (:func:`.choices.keep_given_optionals`);
    3. the value edits of :func:`_value_edits`, in its order: ``enums``, ``lists``,
       ``percent``, ``scales``, ``phrases``, ``after_names``, ``directions``,
       ``currencies``, ``dates``, ``regions``, ``flags``, ``codes``, ``named_numbers``,
       ``compounding``, ``implied``, ``stray``, ``names`` (each rule's function says
       what it writes, and docs/local.md has an example of each);
    4. ``optional`` again: an optional string the conversation writes only inside a value
       the edits wrote whole is left out (:func:`.choices.without_inside_others`);
    5. ``options``: an optional parameter the call leaves out whose option the question
       names is added (:func:`.named_options.named_options`);
    6. ``looked_up``: a parameter an earlier call looked up gets that call's result
       (``symbol``: the ``GM`` that ``get_ticker_symbol`` returned; :func:`_looked_up`).

    The rule that last changed each parameter is recorded on the call's origin. The editor
    returns the call and how many parameters were left out."""
    conversation = conversation_text(request)
    question = question_text(request)
    schemas = {t.name: t.input_schema for t in request.tools}
    lookups = _looked_up(request, question) if looked_up else {}
    switched = {"enum_values": enums, "literal_lists": lists, "percent_fractions": percent,
                "scaled_numbers": scales, "whole_phrases": phrases, "after_names": after_names,
                "from_to": directions, "currency_codes": currencies, "date_formats": dates,
                "city_state": regions, "asked_flags": flags, "described_codes": codes,
                "named_numbers": named_numbers, "compounding": compounding,
                "implied_numbers": implied, "stray_numbers": stray, "written_names": names}
    edits = [(rule, edit, conversation if reads == "conversation" else question)
             for rule, edit, reads in _value_edits() if switched[rule]]

    def adjust(block: ToolUseBlock) -> tuple[ToolUseBlock, int]:
        call = _Editing(schemas.get(block.name), dict(block.input))
        dropped = _units_and_optionals(call, block, question, conversation, units, optional)
        for rule, edit, text in edits:
            call.keep(rule, edit(call.arguments, call.schema, text))
        if optional:  # the edits may have written whole a value an optional one is part of
            before = call.arguments
            if call.keep("optional_from_conversation",
                         without_inside_others(before, call.schema, conversation)):
                dropped += [k for k in before if k not in call.arguments]
        if options:
            call.keep("named_options",
                      named_options(call.arguments, call.schema, question, block.name))
        found = {p: v for (name, p), v in lookups.items() if name == block.name}
        if found:
            call.keep("prerequisite_tools", {**call.arguments, **found})
        if call.arguments == block.input:
            return block, 0
        return call.block(block), len(dropped)

    return adjust


def _units_and_optionals(call: _Editing, block: ToolUseBlock, question: str,
                         conversation: str, units: bool, optional: bool) -> list[str]:
    """The first two edits of :func:`call_adjuster`, which lean on each other: ``units``
    (the unit the question states), then ``optional`` (the optional parameters the
    conversation gives no value for left out, the stated units kept). The parameters left
    out."""
    stated = stated_units(call.arguments, call.schema, question) if units else {}
    if stated and _valid(call.schema, {**call.arguments, **stated}):
        call.take("stated_units", {**call.arguments, **stated})
    else:
        stated = {}
    if not optional:
        return []
    kept, dropped = keep_given_optionals(call.arguments, call.schema, conversation, block.name)
    # The question states these units, if not as words of their own ("5cm").
    call.take("optional_from_conversation",
              {k: kept.get(k, stated.get(k)) for k in block.input if k in kept or k in stated})
    return [k for k in dropped if k not in stated]


def _value_edits() -> list[tuple[str, Edit, str]]:
    """The value edits of :func:`call_adjuster`, in the order they run: (rule, edit, the
    text it reads: ``question`` or ``conversation``)."""
    return [
        ("enum_values", enum_values, "question"),
        ("literal_lists", literal_lists, "question"),
        ("percent_fractions", lambda a, s, t: percents_as_fractions(a, s, t)[0],
         "conversation"),
        ("scaled_numbers", scaled, "conversation"),
        ("whole_phrases", whole_phrases, "question"),
        ("after_names", values_after_names, "question"),
        ("from_to", from_to, "question"),
        ("currency_codes", currency_codes, "question"),
        ("date_formats", dated, "question"),
        ("city_state", with_region, "question"),
        ("asked_flags", asked_flags, "question"),
        ("described_codes", described_codes, "question"),
        ("named_numbers", numbers_by_name, "question"),
        ("compounding", per_year, "question"),
        ("implied_numbers", implied_numbers, "question"),
        ("stray_numbers", strays, "question"),
        # After the numbers are mended: a kind read off a count ("single" for the two
        # nights) needs the count the question writes, not the model's 2022.
        ("written_names", written_names, "question"),
    ]


class _Editing:
    """One call's input as the edits go, and the rule that last changed each parameter."""

    def __init__(self, schema: Any, arguments: dict[str, Any]) -> None:
        self.schema = schema
        self.arguments = arguments
        self.by: dict[str, str] = {}

    def take(self, rule: str, after: dict[str, Any]) -> None:
        """``after`` is the input now, ``rule`` the one that changed what differs."""
        for change in changes_between(self.arguments, after, rule):
            self.by[change.parameter] = rule
        self.arguments = after

    def keep(self, rule: str, after: dict[str, Any]) -> bool:
        """Take ``after`` if it changes something and the call still validates."""
        if after == self.arguments or not _valid(self.schema, after):
            return False
        self.take(rule, after)
        return True

    def block(self, original: ToolUseBlock) -> ToolUseBlock:
        """The call with its input as edited, each change recorded with its rule."""
        changes = [change.model_copy(update={"rule": self.by.get(change.parameter, "unknown")})
                   for change in changes_between(original.input, self.arguments, "unknown")]
        return edited_block(original, changes, self.arguments)


def _looked_up(request: Request, question: str) -> dict[tuple[str, str], str]:
    """``(tool, parameter) -> value`` for each required parameter ``question`` (the
    request's) does not speak of that an earlier call of the conversation looked up (its last result, when it
    succeeded with one short line of text)."""
    called: dict[str, str] = {}  # a call comes before its result
    results: dict[str, str] = {}
    for message in request.messages:
        for block in message.content:
            if block.type == "tool_use":
                called[block.id] = block.name
            elif block.type == "tool_result" and not block.is_error \
                    and block.tool_use_id in called:
                text = "".join(getattr(part, "text", "") for part in block.content).strip()
                if text and "\n" not in text and len(text) <= 100:
                    results[called[block.tool_use_id]] = text
    found: dict[tuple[str, str], str] = {}
    for target in request.tools:
        for parameter in unasked_required(question, target):
            for tool in request.tools:
                if tool.name != target.name and tool.name in results \
                        and looks_up(tool, parameter, target):
                    found[(target.name, parameter)] = results[tool.name]
    return found


def _valid(schema: Any, arguments: dict[str, Any]) -> bool:
    """Does ``arguments`` validate against ``schema`` (False when jsonschema cannot apply
    it: "type": "dict", a $ref to nowhere)?"""
    try:
        return bool(compile_validator(schema).is_valid(arguments))
    except (SchemaError, UnknownType, Unresolvable):
        return False


def _validator(request: Request) -> Callable[[str, dict[str, Any]], bool]:
    """Does a call (its tool's name, its input) name a tool of ``request`` and validate
    against that tool's schema?"""
    specs = {t.name: t for t in request.tools}

    def valid(name: str, arguments: dict[str, Any]) -> bool:
        spec = specs.get(name)
        return spec is not None and _valid(spec.input_schema, arguments)

    return valid


def fanned_out(request: Request, blocks: list[ToolUseBlock], limit: int, *,
               lists: bool = True, clauses: bool = False,
               options: bool = False) -> list[ToolUseBlock]:
    """The calls the question asks for that the model's ``blocks`` leave out, as new
    blocks: one per further item of a list (``lists``, :func:`.fan_out.fan_out`), then one
    per clause restating a call with other values (``clauses``,
    :func:`.restate.restatements`; where the calls name several tools, each tool from the
    clauses it alone owns, :func:`.focus.owned_spans`), then, for all of those, one per
    further option of a parameter the question lists (``options``,
    :func:`.each_option.option_calls`)."""
    valid = _validator(request)
    question = question_text(request)
    schemas = {t.name: t.input_schema for t in request.tools}
    calls = [(b.name, dict(b.input)) for b in blocks]
    made = fan_out(calls, question, schemas, limit=limit, valid=valid) if lists else []
    rules = ["fan_out"] * len(made)
    if clauses:
        every = [*calls, *made]
        parts = owned_spans(question, request.tools) if len({n for n, _ in every}) > 1 \
            else None
        restated = restatements(every, question, schemas, limit=limit, valid=valid,
                                parts=parts)
        made += restated
        rules += ["restate"] * len(restated)
    if options:
        each = option_calls([*calls, *made], question, schemas, limit=limit, valid=valid)
        made += each
        rules += ["each_option"] * len(each)
    return [ToolUseBlock(id=new_tool_use_id(), name=name, input=arguments,
                         origin=CallOrigin(source="added", rule=rule))
            for (name, arguments), rule in zip(made, rules, strict=True)]


def paired_in_order(request: Request, blocks: list[ToolUseBlock]) -> list[ToolUseBlock]:
    """``blocks`` with each tool's values paired in the question's order where the calls
    cross them (:func:`.pairing.in_order`); the blocks keep their ids and places. Each
    changed call is validated against its tool's schema: if one fails, none changes."""
    return _edited_together(request, blocks, in_order, "pair_in_order")


def given_to_all(request: Request, blocks: list[ToolUseBlock]) -> list[ToolUseBlock]:
    """``blocks`` with the optional values the question gives once for all of a tool's
    calls written into each that leaves them out (:func:`.shared.shared_optionals`); the
    blocks keep their ids and places. Each changed call is validated against its tool's
    schema: if one fails, none changes."""
    return _edited_together(request, blocks, shared_optionals, "share_optionals")


def _edited_together(request: Request, blocks: list[ToolUseBlock],
                     edit: Callable[[list[Call], str], list[Call]],
                     rule: str) -> list[ToolUseBlock]:
    """``blocks`` after ``edit`` (the calls and the question in, as many calls out), all
    or none: a changed call that does not validate leaves every block as it was. Each
    changed block's origin records its changes, made by ``rule``."""
    valid = _validator(request)
    calls = edit([(b.name, dict(b.input)) for b in blocks], question_text(request))
    if any(arguments != b.input and not valid(b.name, arguments)
           for (_, arguments), b in zip(calls, blocks, strict=True)):
        return list(blocks)
    return [b if arguments == b.input
            else edited_block(b, changes_between(b.input, arguments, rule), arguments)
            for (_, arguments), b in zip(calls, blocks, strict=True)]
