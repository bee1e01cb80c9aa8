"""Which deferred tools a model is offered: a tool marked ``deferred`` (``defer_loading``)
stays out of the prompt until the history loads it (a tool search found it, a client's tool
result named it in a tool reference, or the model called it)."""

from __future__ import annotations

from collections.abc import Sequence

from .messages import (
    Message,
    Request,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolSearchBlock,
    ToolSpec,
    ToolUseBlock,
)

__all__ = ["loaded_tools", "offered_tools"]


def loaded_tools(messages: Sequence[Message]) -> list[str]:
    """The tools the history has loaded, in the order it loaded them: found by a tool
    search, named by a tool reference in a result, or called."""
    names: list[str] = []

    def add(name: str) -> None:
        if name not in names:
            names.append(name)

    for message in messages:
        for block in message.content:
            if isinstance(block, ToolSearchBlock):
                for name in block.found:
                    add(name)
            elif isinstance(block, ToolResultBlock):
                for part in block.content:
                    if isinstance(part, ToolReferenceBlock):
                        add(part.name)
            elif isinstance(block, ToolUseBlock):
                add(block.name)
    return names


def offered_tools(request: Request) -> list[ToolSpec]:
    """The tools of ``request`` a model is offered: those not deferred, then the deferred
    ones the history has loaded (:func:`loaded_tools`), in the order it loaded them."""
    loaded = loaded_tools(request.messages)
    first = [t for t in request.tools if not t.deferred]
    by_name = {t.name: t for t in request.tools if t.deferred}
    return first + [by_name[n].model_copy(update={"deferred": False}) for n in loaded
                    if n in by_name]
