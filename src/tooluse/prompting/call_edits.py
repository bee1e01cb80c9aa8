"""Edits to the calls a model wrote, made after it wrote them, from the conversation: optional
parameters it gives no value for left out, percentages written as fractions where a rate is
due, and the calls its lists ask for added (:mod:`.fan_out`). Each edited or added call is
validated against its tool's schema."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jsonschema.exceptions import SchemaError, UnknownType
from referencing.exceptions import Unresolvable

from ..codecs.legacy import new_tool_use_id
from ..messages import Request, ToolUseBlock
from ..tools.validation import compile_validator
from .choices import conversation_text, keep_given_optionals, percents_as_fractions, question_text
from .fan_out import fan_out

__all__ = ["call_adjuster", "fanned_out"]


def call_adjuster(request: Request, optional: bool,
                  percent: bool) -> Callable[[ToolUseBlock], tuple[ToolUseBlock, int]]:
    """Leaves out of each call the optional parameters the conversation gives no value for
    (``optional``), and writes as fractions the rates it gives as percentages (``percent``,
    kept only if the call still validates). Returns the call and how many were left out."""
    conversation = conversation_text(request)
    schemas = {t.name: t.input_schema for t in request.tools}

    def adjust(block: ToolUseBlock) -> tuple[ToolUseBlock, int]:
        schema = schemas.get(block.name)
        arguments, dropped = keep_given_optionals(block.input, schema, conversation) \
            if optional else (dict(block.input), [])
        if percent:
            fractions, changed = percents_as_fractions(arguments, schema, conversation)
            if changed and _valid(schema, fractions):
                arguments = fractions
        if arguments == block.input:
            return block, 0
        return block.model_copy(update={"input": arguments}), len(dropped)

    return adjust


def _valid(schema: Any, arguments: dict[str, Any]) -> bool:
    """Does ``arguments`` validate against ``schema`` (False when jsonschema cannot apply
    it: "type": "dict", a $ref to nowhere)?"""
    try:
        return bool(compile_validator(schema).is_valid(arguments))
    except (SchemaError, UnknownType, Unresolvable):
        return False


def fanned_out(request: Request, blocks: list[ToolUseBlock],
               limit: int) -> list[ToolUseBlock]:
    """The calls :func:`.fan_out.fan_out` adds to the model's ``blocks``, as new blocks."""
    specs = {t.name: t for t in request.tools}

    def valid(name: str, arguments: dict[str, Any]) -> bool:
        spec = specs.get(name)
        return spec is not None and _valid(spec.input_schema, arguments)

    added = fan_out([(b.name, dict(b.input)) for b in blocks], question_text(request),
                    {name: spec.input_schema for name, spec in specs.items()},
                    limit=limit, valid=valid)
    return [ToolUseBlock(id=new_tool_use_id(), name=name, input=arguments)
            for name, arguments in added]
