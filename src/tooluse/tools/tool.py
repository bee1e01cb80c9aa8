"""The :class:`Tool`: a name, a description, a checked input schema and (maybe) a function.

A tool is checked completely when it is made (name rule, schema validity, top-level
``type: object``) so that a mistake surfaces where the tool is defined, with the tool's name
in the message, rather than as an API error in the middle of a conversation. Its validator
is compiled at the same moment and reused for every call.
"""

from __future__ import annotations

import copy
import functools
import inspect
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias, TypeVar, overload

import anyio
import anyio.to_thread
from pydantic import BaseModel
from pydantic import ValidationError as PydanticValidationError

from .._run_sync import run_to_completion
from ..errors import ToolDefinitionError, ToolInputError
from ..messages import ToolSpec
from .names import check_name
from .names import map_name as _map_name
from .schema import check_schema, normalize_schema, tidy_schema
from .signature import read_docstring, read_function
from .validation import compile_validator, input_path, input_problems

__all__ = ["ApprovalRule", "Tool", "tool"]

M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])

#: Whether a tool's calls need the user's approval before they run: ``True``/``False``, or
#: a predicate on the call's (validated) input, e.g. ``lambda input: input["amount"] > 100``.
ApprovalRule: TypeAlias = bool | Callable[[dict[str, Any]], bool]


def _check_approval_rule(rule: Any, name: str) -> ApprovalRule:
    if isinstance(rule, bool) or callable(rule):
        return rule  # type: ignore[no-any-return]
    raise ToolDefinitionError(
        f"requires_approval must be True, False or a function of the input, not {rule!r}",
        tool=name,
    )


def _is_async_callable(function: Callable[..., Any] | None) -> bool:
    if function is None:
        return False
    if inspect.iscoroutinefunction(function):
        return True
    call = getattr(function, "__call__", None)  # an object whose __call__ is async  # noqa: B004
    return call is not None and inspect.iscoroutinefunction(call)


class Tool:
    """A tool the model may call.

    ``name`` is the name sent on the wire (always valid); ``original_name`` is the name the
    tool was defined with (different only when it was mapped). ``function`` may be ``None``:
    a schema-only tool is how the Messages API does structured JSON output (force the tool,
    read its input with :meth:`parse`).

    ``requires_approval`` (every constructor takes it): ``True``, or a predicate on the
    call's input (``lambda input: input["amount"] > 100``), makes a
    :class:`~tooluse.runner.Runner` ask its ``approve`` callback before it runs a call;
    a denied call, or any such call when the runner has no callback, is not run and goes
    back to the model as an error result (:meth:`needs_approval`). ``read_only`` is a
    hint that the tool changes nothing (an MCP tool's ``readOnlyHint``): ``tooluse run
    --approve`` and ``MCPServer(requires_approval=True)`` never ask about such a tool.

    Build tools with :meth:`from_function` (or the :func:`tool` decorator),
    :meth:`from_model` or :meth:`from_schema` rather than the constructor.
    """

    __slots__ = (
        "_always_pass",
        "_args_model",
        "_description",
        "_function",
        "_is_async",
        "_model",
        "_name",
        "_original_name",
        "_param_names",
        "_read_only",
        "_requires_approval",
        "_schema",
        "_spec",
        "_validator",
    )

    def __init__(
        self,
        name: str,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
        function: Callable[..., Any] | None = None,
        *,
        normalize: bool = False,
        map_name: bool = False,
        original_name: str | None = None,
        requires_approval: ApprovalRule = False,
        read_only: bool = False,
        _args_model: type[BaseModel] | None = None,
        _param_names: tuple[str, ...] = (),
        _always_pass: frozenset[str] = frozenset(),
        _model: type[BaseModel] | None = None,
    ) -> None:
        if not isinstance(name, str):
            raise ToolDefinitionError(f"a tool name must be a string, got {type(name).__name__}")
        self._original_name = original_name if original_name is not None else name
        self._name = _map_name(name) if map_name else check_name(name)
        if not isinstance(description, str):
            raise ToolDefinitionError("the description must be a string", tool=name)
        self._description = description
        schema: Any = {"type": "object", "properties": {}} if input_schema is None else input_schema
        if normalize and isinstance(schema, Mapping):
            schema = normalize_schema(schema)
        self._schema = check_schema(schema, tool=self._original_name)
        if function is not None and not callable(function):
            raise ToolDefinitionError("the function is not callable", tool=name)
        self._function = function
        self._validator = compile_validator(self._schema)
        self._args_model = _args_model
        self._param_names = _param_names
        self._always_pass = _always_pass
        self._model = _model
        self._spec: ToolSpec | None = None
        self._is_async = _is_async_callable(function)
        self._requires_approval = _check_approval_rule(requires_approval, self._original_name)
        self._read_only = bool(read_only)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def from_function(
        cls,
        function: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        map_name: bool = False,
        requires_approval: ApprovalRule = False,
    ) -> Tool:
        """A tool whose schema comes from ``function``'s annotations and whose descriptions
        come from its docstring (Google, NumPy or reST). Sync or async functions alike.
        ``requires_approval``: see :class:`Tool`."""
        info = read_function(function, name=name, description=description)
        return cls(
            info.name,
            info.description,
            info.input_schema,
            function,
            map_name=map_name,
            requires_approval=requires_approval,
            _args_model=info.args_model,
            _param_names=info.param_names,
            _always_pass=info.always_pass,
        )

    @classmethod
    def from_model(
        cls,
        model: type[BaseModel],
        name: str | None = None,
        description: str | None = None,
        *,
        function: Callable[[Any], Any] | None = None,
        map_name: bool = False,
        requires_approval: ApprovalRule = False,
    ) -> Tool:
        """A tool whose input is ``model``: the schema is the model's, :meth:`parse` returns
        a model instance, and ``function`` (optional) is called with that instance.

        The description defaults to the model's docstring (short + long part); fields
        without a ``description`` take theirs from the docstring's ``Args``/``Attributes``.
        """
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise ToolDefinitionError(
                f"from_model needs a pydantic model class, got {model!r}", tool=name
            )
        doc = read_docstring(model.__doc__)  # not inspect.getdoc: it inherits BaseModel's
        tool_name = name or model.__name__
        try:
            raw = model.model_json_schema(mode="validation")
        except Exception as exc:  # pydantic raises several kinds here  # noqa: BLE001
            raise ToolDefinitionError(f"the model has no JSON Schema: {exc}", tool=tool_name)
        schema = tidy_schema(raw)
        if model.__doc__ and schema.get("description") == inspect.cleandoc(model.__doc__):
            del schema["description"]  # it is the tool's description; don't send it twice
        props = schema.get("properties")
        if isinstance(props, dict):
            for key, prop in props.items():
                if isinstance(prop, dict) and "description" not in prop and key in doc.params:
                    prop["description"] = doc.params[key]
        return cls(
            tool_name,
            description if description is not None else doc.description,
            schema,
            function,
            map_name=map_name,
            requires_approval=requires_approval,
            _model=model,
        )

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        schema: Mapping[str, Any],
        function: Callable[..., Any] | None = None,
        *,
        normalize: bool = False,
        map_name: bool = False,
        requires_approval: ApprovalRule = False,
    ) -> Tool:
        """A tool from a raw JSON Schema. ``normalize=True`` first translates BFCL-style
        types (see :func:`~tooluse.tools.normalize_schema`); ``function``, when given, is
        called with the input as keyword arguments."""
        return cls(name, description, schema, function, normalize=normalize, map_name=map_name,
                   requires_approval=requires_approval)

    @classmethod
    def from_spec(cls, spec: ToolSpec, function: Callable[..., Any] | None = None, *,
                  requires_approval: ApprovalRule = False) -> Tool:
        """A tool from a :class:`~tooluse.messages.ToolSpec` (e.g. one read off the wire)."""
        return cls(spec.name, spec.description, spec.input_schema, function,
                   requires_approval=requires_approval)

    def with_name(self, wire_name: str, *, original_name: str | None = None) -> Tool:
        """This tool under another (valid) wire name, keeping ``original_name`` unless a
        new one is given (a tool qualified with its source's name)."""
        clone = copy.copy(self)
        clone._name = check_name(wire_name)
        if original_name is not None:
            clone._original_name = original_name
        clone._spec = None
        return clone

    def with_approval(self, requires_approval: ApprovalRule = True) -> Tool:
        """This tool with another approval rule (``True``, ``False`` or a predicate on the
        input); the tool itself is unchanged."""
        clone = copy.copy(self)
        clone._requires_approval = _check_approval_rule(requires_approval, self._original_name)
        return clone

    # ------------------------------------------------------------------ facts

    @property
    def name(self) -> str:
        return self._name

    @property
    def original_name(self) -> str:
        return self._original_name

    @property
    def description(self) -> str:
        return self._description

    @property
    def input_schema(self) -> dict[str, Any]:
        """The checked schema (shared, do not mutate; copy it to change it)."""
        return self._schema

    @property
    def function(self) -> Callable[..., Any] | None:
        return self._function

    @property
    def model(self) -> type[BaseModel] | None:
        """The pydantic model of a :meth:`from_model` tool, else ``None``."""
        return self._model

    @property
    def is_async(self) -> bool:
        return self._is_async

    @property
    def requires_approval(self) -> ApprovalRule:
        """``True``/``False`` or the predicate given (see :meth:`needs_approval`)."""
        return self._requires_approval

    @property
    def read_only(self) -> bool:
        """The tool says it changes nothing (an MCP tool's ``readOnlyHint``)."""
        return self._read_only

    def needs_approval(self, input: Any) -> bool:
        """Whether a call with ``input`` must be approved before it runs: the
        ``requires_approval`` flag, or its predicate's answer for ``input``. A predicate
        that raises counts as "needs approval" (when in doubt, ask)."""
        rule = self._requires_approval
        if isinstance(rule, bool):
            return rule
        try:
            return bool(rule(input))
        except Exception:  # noqa: BLE001 - a failing predicate must not let a call through
            return True

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model sees it (wire name, description, schema)."""
        if self._spec is None:
            self._spec = ToolSpec(
                name=self._name, description=self._description, input_schema=self._schema
            )
        return self._spec

    def __repr__(self) -> str:
        renamed = f", original_name={self._original_name!r}" if self.renamed else ""
        return f"Tool(name={self._name!r}{renamed})"

    @property
    def renamed(self) -> bool:
        return self._name != self._original_name

    # ------------------------------------------------------------------ input

    def validate(self, input: Any) -> dict[str, Any]:
        """Return ``input`` (as a dict) if it matches the schema, else raise
        :class:`ToolInputError` listing every problem by path."""
        problems = input_problems(self._validator, input)
        if problems:
            raise ToolInputError(self._name, problems)
        return dict(input)

    def parse(self, input: Any) -> Any:
        """Validated input: a model instance for a :meth:`from_model` tool, else the dict.
        This is how structured (JSON) output is read from a forced tool call."""
        data = self.validate(input)
        if self._model is None:
            return data
        return self._build(self._model, data)

    def _build(self, model: type[M], data: dict[str, Any]) -> M:
        try:
            return model.model_validate(data)
        except PydanticValidationError as exc:
            # The JSON Schema passed, so this is a constraint only pydantic knows (a custom
            # validator): still the model's fault, still worded by path.
            problems = [
                f"'{input_path(err['loc'])}': {err['msg']}" if err["loc"] else err["msg"]
                for err in exc.errors()
            ]
            raise ToolInputError(self._name, problems) from None

    def arguments(self, input: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The positional and keyword arguments the function is called with for ``input``."""
        data = self.validate(input)
        if self._model is not None:
            return (self._build(self._model, data),), {}
        if self._args_model is None:
            return (), data
        built = self._build(self._args_model, data)
        # Only what the model sent: parameters left out keep the function's own defaults.
        # Fields are p0, p1... aliased to the parameter names (see signature._field).
        kwargs = {
            name: getattr(built, f"p{i}")
            for i, name in enumerate(self._param_names)
            if f"p{i}" in built.model_fields_set or name in self._always_pass
        }
        kwargs.update(built.model_extra or {})
        return (), kwargs

    # ------------------------------------------------------------------ calling

    def _require_function(self) -> Callable[..., Any]:
        if self._function is None:
            raise ToolDefinitionError(
                "this tool has no function to call (it is a schema-only tool, e.g. for JSON "
                "output); read the model's input with .parse() instead",
                tool=self._name,
            )
        return self._function

    def call(self, input: Any) -> Any:
        """Validate ``input`` and call the function with it; an async function is run to
        completion. The return value is passed back as is."""
        function = self._require_function()
        args, kwargs = self.arguments(input)
        if not self._is_async:
            return function(*args, **kwargs)
        return run_to_completion(functools.partial(function, *args, **kwargs))

    async def acall(self, input: Any) -> Any:
        """Validate ``input`` and call the function from async code: async functions are
        awaited, sync ones run in a worker thread so they do not block the event loop."""
        function = self._require_function()
        args, kwargs = self.arguments(input)
        if self._is_async:
            return await function(*args, **kwargs)
        return await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (a decorated function stays usable)."""
        return self._require_function()(*args, **kwargs)


@overload
def tool(function: F, /) -> Tool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None, map_name: bool = False,
    requires_approval: ApprovalRule = False,
) -> Callable[[F], Tool]: ...


def tool(
    function: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    map_name: bool = False,
    requires_approval: ApprovalRule = False,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Decorator: ``@tool`` or ``@tool(name=..., description=..., requires_approval=...)``
    makes a :class:`Tool` with :meth:`Tool.from_function`. The result still calls like the
    function."""

    def make(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(f, name=name, description=description, map_name=map_name,
                                  requires_approval=requires_approval)

    if function is not None:
        return make(function)
    return make
