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
from typing import Any, TypedDict, TypeVar, Unpack, overload

from pydantic import BaseModel

from ..backend import Backend
from ..messages import Message
from ..tools import Tool, ToolSet
from .loop import Prompt, Runner
from .run_result import RunResult

__all__ = ["ExtractOptions", "aextract", "extract", "extract_result", "output_tool"]

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


class ExtractOptions(TypedDict, total=False):
    """The keyword arguments of :func:`extract`, :func:`extract_result` and
    :func:`aextract`: ``messages`` continues a saved conversation; ``name`` and
    ``description`` name the output tool (see :func:`output_tool`); the rest are as for
    :class:`~tooluse.runner.Runner` (``max_validation_retries`` counts tries: one model turn
    each, so the run has one more turn than tries at most)."""

    messages: Iterable[Message | Mapping[str, Any]] | None
    name: str | None
    description: str | None
    system: str | None
    model: str | None
    max_tokens: int
    max_validation_retries: int
    retry_max_tokens: int | None
    temperature: float
    top_p: float
    top_k: int
    stop_sequences: list[str]
    metadata: dict[str, Any]


def _prepare(
    backend: Backend | str,
    target: type[BaseModel] | Mapping[str, Any] | Tool,
    options: ExtractOptions,
) -> tuple[Runner, Tool, Iterable[Message | Mapping[str, Any]] | None]:
    """The output tool and a runner whose one tool it is, forced on the first turn, with
    one more turn than tries (each failed try costs one turn; more are never needed)."""
    rest: dict[str, Any] = dict(options)
    messages = rest.pop("messages", None)
    tool = output_tool(target, name=rest.pop("name", None),
                       description=rest.pop("description", None))
    tries = rest.pop("max_validation_retries", 3)
    runner = Runner(backend, ToolSet([tool]), tool_choice=tool.name,
                    max_iterations=tries + 1, max_validation_retries=tries, **rest)
    return runner, tool, messages


@overload
def extract(
    backend: Backend | str,
    target: type[M],
    prompt: Prompt | None = ...,
    **options: Unpack[ExtractOptions],
) -> M: ...
@overload
def extract(
    backend: Backend | str,
    target: Mapping[str, Any] | Tool,
    prompt: Prompt | None = ...,
    **options: Unpack[ExtractOptions],
) -> Any: ...
def extract(
    backend: Backend | str,
    target: type[BaseModel] | Mapping[str, Any] | Tool,
    prompt: Prompt | None = None,
    **options: Unpack[ExtractOptions],
) -> Any:
    """Ask the model for ``target``-shaped output and return it validated: an instance of
    a pydantic model class, or the dict for a JSON Schema. Options: :class:`ExtractOptions`."""
    return extract_result(backend, target, prompt, **options).output


def extract_result(
    backend: Backend | str,
    target: type[BaseModel] | Mapping[str, Any] | Tool,
    prompt: Prompt | None = None,
    **options: Unpack[ExtractOptions],
) -> RunResult:
    """:func:`extract`, returning the whole :class:`RunResult` (``.output`` is the value;
    ``.messages`` the conversation, including any failed tries)."""
    runner, tool, messages = _prepare(backend, target, options)
    return runner.run(prompt, messages=messages, output=tool)


async def aextract(
    backend: Backend | str,
    target: type[BaseModel] | Mapping[str, Any] | Tool,
    prompt: Prompt | None = None,
    **options: Unpack[ExtractOptions],
) -> Any:
    """:func:`extract` for async code."""
    runner, tool, messages = _prepare(backend, target, options)
    result = await runner.arun(prompt, messages=messages, output=tool)
    return result.output
