"""Reading a Python function into a tool: annotations -> JSON Schema, docstring -> words.

A tool's description is what makes a model use it well, and a Python programmer
already writes it down twice: in the docstring (what the function does, what each parameter
means) and in the annotations (the types). This module reads both so the user writes
nothing a third time. Types go through a pydantic model built with ``create_model``: pydantic
already knows how to turn ``Literal``, ``Optional``, ``TypedDict``, nested models and
``Annotated[..., Field(...)]`` into JSON Schema, and the same model later turns the model's
JSON input back into the Python objects the function expects (a model instance for a
model-typed parameter).
"""

from __future__ import annotations

import functools
import inspect
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, get_args, get_origin

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from pydantic.fields import FieldInfo

from ..errors import ToolDefinitionError
from .schema import tidy_schema

__all__ = ["FunctionInfo", "read_docstring", "read_function"]


@dataclass(frozen=True)
class Docstring:
    description: str
    params: dict[str, str]


@dataclass(frozen=True)
class FunctionInfo:
    """What a function says about itself, ready for :class:`~tooluse.tools.Tool`.

    ``args_model`` has one field per parameter, named ``p0``, ``p1``... and aliased to the
    parameter's name; ``always_pass`` lists the parameters whose Python default is a pydantic
    ``Field(...)`` (the function cannot use that object as a value, so the model's default is
    passed even when the model left the parameter out).
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    args_model: type[BaseModel]
    param_names: tuple[str, ...]
    accepts_extra: bool
    always_pass: frozenset[str] = frozenset()


def read_docstring(doc: str | None) -> Docstring:
    """Description (short + long, without the parameter/returns sections) and each
    parameter's description, from a Google, NumPy or reST docstring (style auto-detected)."""
    if not doc or not doc.strip():
        return Docstring("", {})
    parsed = docstring_parser.parse(inspect.cleandoc(doc))
    parts = [p.strip() for p in (parsed.short_description, parsed.long_description) if p]
    params = {
        p.arg_name.lstrip("*"): " ".join(p.description.split())
        for p in parsed.params
        if p.description
    }
    return Docstring("\n\n".join(parts), params)


def _annotation_description(annotation: Any) -> tuple[Any, str | None]:
    """Split plain-string metadata out of ``Annotated[T, "description", ...]``.

    Pydantic ignores bare strings in ``Annotated`` metadata; we read them as the parameter's
    description (the convention LangChain and others use), keeping any other metadata.
    """
    if get_origin(annotation) is not Annotated:
        return annotation, None
    base, *metadata = get_args(annotation)
    texts = [m for m in metadata if isinstance(m, str)]
    others = [m for m in metadata if not isinstance(m, str)]
    description = " ".join(t.strip() for t in texts) or None
    if others:
        return Annotated[(base, *others)], description
    return base, description


def _has_field_description(annotation: Any, default: Any) -> bool:
    if isinstance(default, FieldInfo) and default.description:
        return True
    if get_origin(annotation) is Annotated:
        return any(isinstance(m, FieldInfo) and m.description for m in get_args(annotation)[1:])
    return False


def read_function(
    function: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> FunctionInfo:
    """Build the tool facts of ``function``; raise :class:`ToolDefinitionError` naming the
    function when a parameter cannot be passed by keyword or its type has no JSON Schema."""
    base = function
    while isinstance(base, functools.partial):
        base = base.func
    tool_name = name or getattr(base, "__name__", None) or type(base).__name__
    target = _underlying(function)
    try:
        # The signature of the object itself: a partial's bound arguments and a bound
        # method's ``self`` are already gone from it.
        signature = inspect.signature(function)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"cannot read the signature: {exc}", tool=tool_name) from None
    try:
        hints = typing.get_type_hints(target, include_extras=True, localns=_caller_locals())
    except Exception as exc:  # NameError for unresolved forward refs, among others  # noqa: BLE001
        raise ToolDefinitionError(
            f"cannot resolve the type annotations: {exc}", tool=tool_name
        ) from None
    doc = read_docstring(inspect.getdoc(target))

    fields: dict[str, Any] = {}
    names: list[str] = []
    always: set[str] = set()
    accepts_extra = False
    for param in signature.parameters.values():
        if param.kind is param.VAR_KEYWORD:
            accepts_extra = True
            continue
        if param.kind is param.VAR_POSITIONAL:
            raise ToolDefinitionError(
                f"parameter '*{param.name}' cannot be given by a tool call (tool calls pass "
                "named parameters only)",
                tool=tool_name,
            )
        if param.kind is param.POSITIONAL_ONLY:
            raise ToolDefinitionError(
                f"parameter '{param.name}' is positional-only; tool calls pass named "
                "parameters only",
                tool=tool_name,
            )
        annotation = hints.get(param.name, Any)
        annotation, meta_description = _annotation_description(annotation)
        default = ... if param.default is inspect.Parameter.empty else param.default
        text = meta_description or doc.params.get(param.name)
        if text and _has_field_description(annotation, default):
            text = None  # an explicit Field(description=...) wins over the docstring
        fields[f"p{len(names)}"] = (annotation, _field(default, param.name, text))
        if isinstance(default, FieldInfo):
            always.add(param.name)
        names.append(param.name)

    config = ConfigDict(extra="allow" if accepts_extra else "forbid", arbitrary_types_allowed=False)
    try:
        model = create_model(
            f"{_model_name(tool_name)}Arguments", __config__=config, **fields
        )
        raw_schema = model.model_json_schema(mode="validation")
    except (PydanticSchemaGenerationError, PydanticUserError, TypeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ToolDefinitionError(
            f"a parameter's type has no JSON Schema: {first}", tool=tool_name
        ) from None
    schema = tidy_schema(raw_schema)
    schema.setdefault("properties", {})
    if accepts_extra:
        schema.pop("additionalProperties", None)
    else:
        schema["additionalProperties"] = False
    return FunctionInfo(
        name=tool_name,
        description=description if description is not None else doc.description,
        input_schema=schema,
        args_model=model,
        param_names=tuple(names),
        accepts_extra=accepts_extra,
        always_pass=frozenset(always),
    )


def _field(default: Any, name: str, description: str | None) -> FieldInfo:
    """The pydantic field for one parameter, under an internal field name with the
    parameter's name as alias: a parameter called ``copy``, ``json`` or ``_private`` would
    otherwise shadow a BaseModel attribute or be taken for a private attribute."""
    extra: dict[str, Any] = {"description": description} if description else {}
    if isinstance(default, FieldInfo):  # merged into a new FieldInfo: the caller's is untouched
        return FieldInfo.merge_field_infos(
            default,
            alias=name,
            validation_alias=name,
            serialization_alias=name,
            alias_priority=2,
            **extra,
        )
    found: FieldInfo = Field(default, alias=name, **extra)
    return found


def _underlying(function: Callable[..., Any]) -> Callable[..., Any]:
    """Where the annotations and the docstring live: the wrapped function of a
    ``functools.partial``, the ``__call__`` of a callable object, else the function."""
    while isinstance(function, functools.partial):
        function = function.func
    if inspect.isfunction(function) or inspect.ismethod(function) or inspect.isbuiltin(function):
        return function
    call = getattr(type(function), "__call__", None)  # noqa: B004
    if call is not None and not isinstance(function, type):
        return call  # type: ignore[no-any-return]
    return function


def _caller_locals() -> dict[str, Any]:
    """The local names of the code that asked for the tool (outside this package).

    With ``from __future__ import annotations`` every annotation is a string, and a class
    defined inside a function (common in tests and notebooks) cannot be found from the
    function's globals alone; pydantic resolves such names from the defining frame too.
    """
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tooluse.tools"):
        frame = frame.f_back  # type: ignore[assignment]
    return dict(frame.f_locals) if frame is not None else {}


def _model_name(name: str) -> str:
    cleaned = "".join(ch if ch.isalnum() else "_" for ch in name)
    return "".join(part[:1].upper() + part[1:] for part in cleaned.split("_") if part) or "Tool"
