"""Structured output through tool use: ``extract(backend, Model, prompt) -> Model``.

The Messages API document's JSON-output recipe: a tool need not be a function — define one
whose input schema is the shape you want, force it with ``tool_choice`` ``{"type": "tool"}``,
and read the call's input as the answer. This does exactly that, and closes the loop the
recipe leaves open: when the model's input does not validate, the problems go back as an
``is_error`` tool result and the model tries again, up to ``max_validation_retries`` tries
(then :class:`~tooluse.runner.ExtractionError`, holding the conversation and the last
problems).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeVar, overload

from pydantic import BaseModel

from ..backend import Backend
from ..messages import Message
from ..tools import Tool, ToolSet
from .loop import Prompt, Runner
from .run_result import RunResult

__all__ = ["aextract", "extract", "extract_result", "output_tool"]

M = TypeVar("M", bound=BaseModel)


def output_tool(
    target: type[BaseModel] | Mapping[str, Any] | Tool,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Tool:
    """The schema-only tool that stands for ``target``: a pydantic model class, a JSON
    Schema dict (named ``name``, default ``"record_output"``) or a ready :class:`Tool`."""
    if isinstance(target, Tool):
        return target
    if isinstance(target, type) and issubclass(target, BaseModel):
        return Tool.from_model(target, name=name, description=description)
    if isinstance(target, Mapping):
        return Tool.from_schema(
            name or "record_output",
            description
            if description is not None
            else "Record the answer in exactly this structure. Call this tool to answer.",
            dict(target),
        )
    raise TypeError(
        f"extract() needs a pydantic model class, a JSON Schema dict or a Tool, not {target!r}"
    )


def _runner(
    backend: Backend | str,
    tool: Tool,
    system: str | None,
    model: str | None,
    max_tokens: int,
    max_validation_retries: int,
    retry_max_tokens: int | None,
    request_options: dict[str, Any],
) -> Runner:
    """A runner whose one tool is ``tool``, forced on the first turn, with one more turn
    than tries (each failed try costs one turn; more are never needed)."""
    return Runner(
        backend,
        ToolSet([tool]),
        system=system,
        model=model,
        max_tokens=max_tokens,
        tool_choice=tool.name,
        max_iterations=max_validation_retries + 1,
        max_validation_retries=max_validation_retries,
        retry_max_tokens=retry_max_tokens,
        **request_options,
    )


@overload
def extract(
    backend: Backend | str, target: type[M], prompt: Prompt | None = ..., **kw: Any
) -> M: ...
@overload
def extract(
    backend: Backend | str, target: Mapping[str, Any] | Tool, prompt: Prompt | None = ..., **kw: Any
) -> Any: ...
def extract(
    backend: Backend | str,
    target: type[BaseModel] | Mapping[str, Any] | Tool,
    prompt: Prompt | None = None,
    **kw: Any,
) -> Any:
    """Ask the model for ``target``-shaped output and return it validated: an instance of
    a pydantic model class, or the dict for a JSON Schema. Keyword arguments as for
    :func:`extract_result`."""
    return extract_result(backend, target, prompt, **kw).output


def extract_result(
    backend: Backend | str,
    target: type[BaseModel] | Mapping[str, Any] | Tool,
    prompt: Prompt | None = None,
    *,
    messages: Iterable[Message | Mapping[str, Any]] | None = None,
    name: str | None = None,
    description: str | None = None,
    system: str | None = None,
    model: str | None = None,
    max_tokens: int = 1024,
    max_validation_retries: int = 3,
    retry_max_tokens: int | None = None,
    **request_options: Any,
) -> RunResult:
    """:func:`extract`, returning the whole :class:`RunResult` (``.output`` is the value;
    ``.messages`` the conversation, including any failed tries)."""
    tool = output_tool(target, name=name, description=description)
    runner = _runner(backend, tool, system, model, max_tokens, max_validation_retries,
                     retry_max_tokens, request_options)
    return runner.run(prompt, messages=messages, output=tool)


async def aextract(
    backend: Backend | str,
    target: type[BaseModel] | Mapping[str, Any] | Tool,
    prompt: Prompt | None = None,
    *,
    messages: Iterable[Message | Mapping[str, Any]] | None = None,
    name: str | None = None,
    description: str | None = None,
    system: str | None = None,
    model: str | None = None,
    max_tokens: int = 1024,
    max_validation_retries: int = 3,
    retry_max_tokens: int | None = None,
    **request_options: Any,
) -> Any:
    """:func:`extract` for async code."""
    tool = output_tool(target, name=name, description=description)
    runner = _runner(backend, tool, system, model, max_tokens, max_validation_retries,
                     retry_max_tokens, request_options)
    result = await runner.arun(prompt, messages=messages, output=tool)
    return result.output
