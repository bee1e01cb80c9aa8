"""OpenAI Responses API requests <-> the neutral model.

How the shapes map (the policy for every field is the table in docs/server.md, "The
Responses API"):

- ``input``: a string is one user message; items are read in order, and consecutive items
  of one side merge into one neutral turn: ``message`` (user) and ``function_call_output``
  / ``custom_tool_call_output`` make user turns, ``message`` (assistant),
  ``function_call`` and ``custom_tool_call`` assistant turns. ``system``/``developer``
  messages join the neutral system prompt after ``instructions``. ``reasoning`` items are
  assistant thinking blocks, and the request's ``reasoning`` is ``Request.reasoning`` (see
  :mod:`._reasoning`).
- a call's ``call_id`` is the neutral tool_use id; ``arguments`` is JSON text.
- ``custom`` and ``namespace`` tools: see :mod:`._tools`. Server tools (``web_search``...)
  are kept in ``Request.passthrough`` for a Responses upstream; ``web_search`` is dropped on
  other backends, every other server tool is refused there (``passthrough.required``).
- ``text.format`` ``json_schema`` (``json_object``: any object) is the neutral
  ``response_schema``, applied by the grammar on text backends.
- ``previous_response_id`` is resolved by the gateway, which passes the stored
  conversation as ``previous`` to :func:`decode_request`.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from pydantic import BaseModel

from ...errors import WireFormatError
from ...messages import (
    ContentBlock,
    ImageBlock,
    Message,
    Passthrough,
    Request,
    ServerTools,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
)
from .._common import (
    PairingWords,
    Path,
    Turn,
    check_input_schema,
    check_tool_pairing,
    dispatch,
    validate,
)
from ..openai.requests import _arguments, _image
from ._reasoning import decode_item, decode_settings
from ._tools import CUSTOM_INPUT, custom_description, custom_schema, joined_name
from ._wire import (
    TARGET,
    ItemModel,
    _CustomTool,
    _CustomToolCall,
    _FunctionCall,
    _FunctionCallOutput,
    _FunctionTool,
    _GrammarFormat,
    _InputFile,
    _InputImage,
    _InputText,
    _ItemReference,
    _JsonSchemaFormat,
    _Message,
    _NamespaceTool,
    _Reasoning,
    _ReasoningItem,
    _Refusal,
    _Request,
    _TextConfig,
)
from .server_tools import ITEMS as SERVER_ITEMS
from .server_tools import decode_item as decode_server_item
from .server_tools import decode_tool as decode_server_tool
from .shell_tools import ITEMS as SHELL_ITEMS
from .shell_tools import KINDS as CLIENT_RUN
from .shell_tools import decode_item as decode_shell_item
from .shell_tools import decode_tool as decode_shell_tool

__all__ = ["decode_request", "stream_requested"]

#: Server tools that are dropped (not refused) on a backend that cannot run them: the model
#: may search, and answers without it; Codex sends ``web_search`` in its default config.
DROPPABLE_SERVER_TOOLS = ("web_search", "web_search_2025_08_26", "web_search_preview",
                          "web_search_preview_2025_03_11")

#: Server tools OpenAI runs on its own servers, with what each does there (for the refusal).
VENDOR_RUN = {
    "file_search": "OpenAI searches your vector stores for the model",
    "code_interpreter": "OpenAI runs the model's code in its own container",
    "image_generation": "OpenAI generates the images",
    "computer_use_preview": "OpenAI drives a computer environment for the model",
}

#: Forwarded verbatim to a Responses upstream, ignored by other backends.
_FORWARDED = ("reasoning", "include", "prompt_cache_key", "prompt_cache_retention",
              "prompt_cache_options", "service_tier", "truncation", "max_tool_calls",
              "context_management", "image", "access_programs", "moderation")

_PAIRING = PairingWords(
    missing=lambda ids: f"No tool output found for function call {ids[0]}.",
    unexpected=lambda i: f"No tool call found for function call output with call_id {i}.",
    duplicate_use=lambda i: f"Duplicate item found with call_id {i}.",
    duplicate_result=lambda i: f"Duplicate function call output found with call_id {i}.",
)

_TEXT_PARTS: dict[str, type[BaseModel]] = {"input_text": _InputText, "output_text": _InputText, "refusal": _Refusal}
_USER_PARTS: dict[str, type[BaseModel]] = {**_TEXT_PARTS, "input_image": _InputImage, "input_file": _InputFile}
_ITEMS: dict[str, type[BaseModel]] = {"message": _Message, "function_call": _FunctionCall,
          "function_call_output": _FunctionCallOutput, "custom_tool_call": _CustomToolCall,
          "custom_tool_call_output": _FunctionCallOutput, "reasoning": _ReasoningItem,
          "item_reference": _ItemReference, **SERVER_ITEMS}


def stream_requested(data: Any) -> bool:
    """Whether a Responses request asks for a stream."""
    if not isinstance(data, dict) or data.get("stream") is None:
        return False
    if not isinstance(data["stream"], bool):
        raise WireFormatError("Input should be a valid boolean", ("stream",))
    return bool(data["stream"])


# --- input ---------------------------------------------------------------------------------


def _file(part: _InputFile, path: Path) -> TextBlock:
    """An ``input_file``: text files (by name or content) are carried as text, as the
    Messages codec carries text documents; anything else is refused."""
    if part.file_data is None:
        where = "file_id" if part.file_id is not None else "file_url"
        raise WireFormatError(
            "only inline files (file_data) are supported by this gateway: it has no Files "
            "API and fetches nothing", (*path, where))
    data = part.file_data
    if data.startswith("data:"):
        head, _, data = data[5:].partition(",")
        if head and not head.startswith("text/") and head.split(";")[0] not in (
                "application/json", "application/xml"):
            raise WireFormatError(f"file type {head.split(';')[0]!r} is not supported: only "
                                  "text files can be read here", (*path, "file_data"))
    try:
        text = base64.b64decode(data, validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        raise WireFormatError("file_data must be base64 of a UTF-8 text file (PDFs and other "
                              "binary files cannot be read here)", (*path, "file_data")) from None
    title = f"{part.filename}\n\n" if part.filename else ""
    return TextBlock(text=title + text)


def _parts(content: str | list[Any], path: Path, *, user: bool) -> list[TextBlock | ImageBlock]:
    if isinstance(content, str):
        return [TextBlock(text=content)] if content else []
    out: list[TextBlock | ImageBlock] = []
    for k, raw in enumerate(content):
        where = (*path, k)
        part = dispatch(raw, where, _USER_PARTS if user else _TEXT_PARTS)
        if isinstance(part, _InputText):
            out.append(TextBlock(text=part.text))
        elif isinstance(part, _Refusal):
            out.append(TextBlock(text=part.refusal))
        elif isinstance(part, _InputImage):
            if part.image_url is None:
                raise WireFormatError("only images given by image_url are supported (no Files "
                                      "API here)", (*where, "file_id"))
            out.append(_image(part.image_url, (*where, "image_url")))
        else:
            assert isinstance(part, _InputFile)
            out.append(_file(part, where))
    return out


def _output(item: _FunctionCallOutput, path: Path) -> ToolResultBlock:
    parts = _parts(item.output, (*path, "output"), user=True)
    return ToolResultBlock(tool_use_id=item.call_id, content=list(parts))


def _items(raw: str | list[Any] | None, system: list[TextBlock],
           turns: list[Turn]) -> None:
    """Read ``input`` into ``system`` and ``turns`` (appended to what is there)."""
    if raw is None:
        return
    if isinstance(raw, str):
        raw = [{"role": "user", "content": raw}]
    for i, data in enumerate(raw):
        path: Path = ("input", i)
        if isinstance(data, dict) and "type" not in data and "role" in data:
            data = {**data, "type": "message"}
        if isinstance(data, dict) and data.get("type") in SHELL_ITEMS:
            side, block = decode_shell_item(data, path)
            if turns and turns[-1].role == side:
                turns[-1].blocks.append((path, block))
            else:
                turns.append(Turn(role=side, path=path, blocks=[(path, block)]))
            continue
        item = dispatch(data, path, _ITEMS)
        role: str
        blocks: list[ContentBlock]
        if isinstance(item, _ItemReference):
            raise WireFormatError("item_reference is not supported: send the item itself, or "
                                  "chain with previous_response_id", (*path, "id"))
        if isinstance(item, _Message):
            where = (*path, "content")
            if item.role in ("system", "developer"):
                system.extend(b for b in _parts(item.content, where, user=False)
                              if isinstance(b, TextBlock))
                continue
            role = item.role
            blocks = list(_parts(item.content, where, user=item.role == "user"))
        elif isinstance(item, _FunctionCall):
            role = "assistant"
            blocks = [ToolUseBlock(id=item.call_id, name=joined_name(item.namespace, item.name),
                                   input=_arguments(item.arguments, (*path, "arguments")))]
        elif isinstance(item, _ReasoningItem):
            role, blocks = "assistant", [decode_item(item, path)]
        elif isinstance(item, _CustomToolCall):
            role = "assistant"
            blocks = [ToolUseBlock(id=item.call_id, name=joined_name(item.namespace, item.name),
                                   input={CUSTOM_INPUT: item.input})]
        elif isinstance(item, ItemModel) and item.__class__ in SERVER_ITEMS.values():
            so_far = [b for _, b in turns[-1].blocks] if turns and turns[-1].role == "assistant" \
                else []
            role, blocks = decode_server_item(item, path, so_far)
            if not blocks:
                continue
        else:
            assert isinstance(item, _FunctionCallOutput)
            role, blocks = "user", [_output(item, path)]
        if turns and turns[-1].role == role:
            turns[-1].blocks.extend((path, b) for b in blocks)
        else:
            turns.append(Turn(role=role, path=path, blocks=[(path, b) for b in blocks]))


# --- tools ---------------------------------------------------------------------------------


def _function(raw: Any, path: Path, namespace: str | None, passthrough: Passthrough,
              custom: bool) -> ToolSpec:
    if custom:
        tool = validate(_CustomTool, raw, path)
        fmt = tool.format
        if fmt is not None and fmt.get("type") != "text":
            validate(_GrammarFormat, fmt, (*path, "format"))
        name = joined_name(namespace, tool.name)
        passthrough.tool_fields[name] = {"type": "custom", "name": tool.name,
                                         "description": tool.description or "",
                                         **({"format": fmt} if fmt else {}),
                                         **({"namespace": namespace} if namespace else {})}
        return ToolSpec(name=name, description=custom_description(tool.description or "", fmt),
                        input_schema=custom_schema(fmt), strict=fmt is not None,
                        deferred=bool(tool.defer_loading))
    fn = validate(_FunctionTool, {"strict": None, **raw} if isinstance(raw, dict) else raw, path)
    schema = fn.parameters if fn.parameters is not None else {"type": "object", "properties": {}}
    if fn.parameters is not None:
        check_input_schema(schema, (*path, "parameters"))
    name = joined_name(namespace, fn.name)
    if namespace:
        passthrough.tool_fields[name] = {"name": fn.name, "namespace": namespace}
    # The API's default for ``strict`` is true: the call must match the schema.
    return ToolSpec(name=name, description=fn.description or "", input_schema=schema,
                    strict=fn.strict is not False, deferred=bool(fn.defer_loading))


def _tools(raw: list[Any] | None, passthrough: Passthrough, server: ServerTools
           ) -> list[ToolSpec]:
    specs: list[ToolSpec] = []
    names: set[str] = set()

    def add(spec: ToolSpec, path: Path) -> None:
        if spec.name in names:
            raise WireFormatError("Tool names must be unique.", (*path, "name"))
        names.add(spec.name)
        specs.append(spec)

    for k, tool in enumerate(raw or []):
        path: Path = ("tools", k)
        kind = tool.get("type") if isinstance(tool, dict) else None
        if kind in ("function", "custom"):
            add(_function(tool, path, None, passthrough, kind == "custom"), path)
        elif kind == "namespace":
            ns = validate(_NamespaceTool, tool, path)
            passthrough.tool_fields.setdefault(f"namespace:{ns.name}",
                                               {"description": ns.description})
            for j, member in enumerate(ns.tools):
                where = (*path, "tools", j)
                sub = member.get("type") if isinstance(member, dict) else None
                if sub not in ("function", "custom"):
                    raise WireFormatError("Input tag found using 'type' does not match any of "
                                          "the expected tags: 'function', 'custom'", (*where, "type"))
                add(_function(member, where, ns.name, passthrough, sub == "custom"), where)
        elif isinstance(tool, dict) and kind in CLIENT_RUN:
            spec = decode_shell_tool(tool, path, passthrough)
            if spec is not None:
                add(spec, path)
        elif isinstance(tool, dict) and decode_server_tool(tool, path, passthrough, server):
            continue
        elif isinstance(kind, str) and kind:
            passthrough.tools.append(tool)
            if kind not in DROPPABLE_SERVER_TOOLS:
                why = VENDOR_RUN.get(kind)
                passthrough.required.append(f"tools.{k}: {kind}" + (f": {why}" if why else ""))
        else:
            dispatch(tool, path, {"function": _FunctionTool, "custom": _CustomTool})
    return specs


def _tool_choice(raw: Any, parallel: bool | None, specs: list[ToolSpec],
                 passthrough: Passthrough) -> tuple[ToolChoice | None, list[ToolSpec]]:
    disable = parallel is False
    if raw is None or raw == "auto":
        choice = ToolChoice(type="auto", disable_parallel_tool_use=disable) if (
            raw is not None or disable) and specs else None
        return choice, specs
    if isinstance(raw, str):
        kinds = {"required": "any", "none": "none"}
        if raw not in kinds:
            raise WireFormatError("Input should be 'none', 'auto' or 'required'", ("tool_choice",))
        if not specs:
            return None, specs
        return ToolChoice(type=kinds[raw], disable_parallel_tool_use=disable  # type: ignore[arg-type]
                          and raw != "none"), specs
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind in ("function", "custom"):
        name = raw.get("name")
        if not isinstance(name, str):
            raise WireFormatError("Field required", ("tool_choice", "name"))
        name = joined_name(raw.get("namespace"), name)
        if name not in {s.name for s in specs}:
            raise WireFormatError(f"Tool choice '{name}' not found in 'tools' parameter.",
                                  ("tool_choice", "name"))
        return ToolChoice(type="tool", name=name, disable_parallel_tool_use=disable), specs
    if kind == "allowed_tools":
        mode = raw.get("mode")
        if mode not in ("auto", "required") or not isinstance(raw.get("tools"), list):
            raise WireFormatError("allowed_tools needs mode 'auto' or 'required' and a list of "
                                  "tools", ("tool_choice",))
        allowed = {joined_name(t.get("namespace"), t.get("name", "")) for t in raw["tools"]
                   if isinstance(t, dict) and t.get("type") in ("function", "custom")}
        kept = [s for s in specs if s.name in allowed]
        return ToolChoice(type="auto" if mode == "auto" else "any",
                          disable_parallel_tool_use=disable), kept
    if isinstance(kind, str) and passthrough.tools:
        raise WireFormatError(f"tool_choice {kind!r} forces a server tool, which this gateway's "
                              "backends do not run", ("tool_choice", "type"))
    raise WireFormatError(f"Tool choice {kind!r} not found in 'tools' parameter.",
                          ("tool_choice", "type"))


def _response_schema(text: dict[str, Any] | None) -> dict[str, Any] | None:
    if text is None:
        return None
    config = validate(_TextConfig, text, ("text",))
    fmt = config.format
    if fmt is None or fmt.get("type") == "text":
        return None
    if fmt.get("type") == "json_object":
        return {"type": "object"}
    schema = validate(_JsonSchemaFormat, fmt, ("text", "format")).schema_
    check_input_schema(schema, ("text", "format", "schema"))
    return schema


def _refuse(req: _Request) -> None:
    """What the gateway cannot do at all, refused naming the field."""
    if req.background:
        raise WireFormatError("background responses are not supported by this gateway",
                              ("background",))
    for field in ("conversation", "prompt"):
        if getattr(req, field) is not None:
            raise WireFormatError(
                f"'{field}' objects are not supported by this gateway: send the input itself "
                "(and chain with previous_response_id)", (field,))
    if req.top_logprobs:
        raise WireFormatError("top_logprobs is not supported by this gateway", ("top_logprobs",))


def decode_request(data: Any, /, *, previous: Request | None = None) -> Request:
    """A Responses request body -> :class:`Request` (raises :class:`WireFormatError`).

    ``previous``: the conversation ``previous_response_id`` names (its ``system`` and
    ``messages``), which this request's input continues; the gateway's store supplies it.
    """
    req = validate(_Request, data, ())
    _refuse(req)
    reasoning = decode_settings(validate(_Reasoning, req.reasoning, ("reasoning",))
                                if req.reasoning is not None else None)
    system: list[TextBlock] = [TextBlock(text=req.instructions)] if req.instructions else []
    turns: list[Turn] = []
    if previous is not None:
        system.extend(previous.system)
        for message in previous.messages:
            path: Path = ("previous_response_id",)
            turns.append(Turn(role=message.role, path=path,
                              blocks=[(path, b) for b in message.content]))
    _items(req.input, system, turns)
    if not turns:
        raise WireFormatError("input must hold at least one message or item", ("input",))
    check_tool_pairing(turns, _PAIRING)
    passthrough = Passthrough(api=TARGET)
    server = ServerTools(show_listings=True)
    tools = _tools(req.tools, passthrough, server)
    choice, offered = _tool_choice(req.tool_choice, req.parallel_tool_calls, tools, passthrough)
    passthrough.fields = {k: data[k] for k in _FORWARDED if data.get(k) is not None}
    user = req.safety_identifier or req.user
    return Request(
        model=req.model,
        system=system,
        messages=[Message(role=t.role, content=[b for _, b in t.blocks]) for t in turns],  # type: ignore[arg-type]
        tools=offered,
        tool_choice=choice,
        max_tokens=req.max_output_tokens,
        temperature=req.temperature,
        top_p=req.top_p,
        metadata={"user_id": user} if user is not None else {},
        response_schema=_response_schema(req.text),
        reasoning=reasoning,
        server_tools=server if server else None,
        passthrough=passthrough if passthrough != Passthrough(api=TARGET) else None,
    )
