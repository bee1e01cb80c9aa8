"""Helpers shared by the JSON codecs (private).

Why one place: the three wire formats disagree on spelling but agree on the rules a
conversation must follow (every tool call answered in the next user turn, names matching
``^[a-zA-Z0-9_-]{1,64}$``, schemas that are JSON Schema objects). Checking those rules once,
on neutral blocks that remember their wire path, keeps the error messages identical in
meaning and lets each codec only choose the wording its API uses.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import jsonschema
import jsonschema.exceptions
from pydantic import BaseModel, ConfigDict, ValidationError

from ..errors import ConversionError, WireFormatError
from ..messages import (
    ContentBlock,
    ImageBlock,
    Message,
    Request,
    TextBlock,
    ThinkingBlock,
    ToolReferenceBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
)
from ..tools.names import NAME_PATTERN as TOOL_NAME

Path = tuple[str | int, ...]
M = TypeVar("M", bound=BaseModel)

#: The tool-name rule of :mod:`tooluse.tools.names` as pattern text, for field constraints.
NAME_PATTERN = TOOL_NAME.pattern
ID_PATTERN = r"^[a-zA-Z0-9_-]+$"


class WireModel(BaseModel):
    """Base of the request-side wire models: unknown fields are an error (as the real APIs
    answer ``Extra inputs are not permitted``) and no type is coerced (``"5"`` is not 5)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class LenientModel(BaseModel):
    """Base of the response-side wire models: APIs add response fields over time, and a
    client must keep working when they do, so unknown fields are ignored there."""

    model_config = ConfigDict(extra="ignore")


def validate(model: type[M], data: Any, path: Path) -> M:
    """Validate ``data`` against ``model``; the first problem becomes a
    :class:`WireFormatError` whose path is ``path`` plus pydantic's location."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = tuple(p for p in first["loc"] if isinstance(p, (str, int)))
        raise WireFormatError(str(first["msg"]), (*path, *loc)) from None


def dispatch(
    data: Any, path: Path, models: Mapping[str, type[BaseModel]], *, tag: str = "type"
) -> BaseModel:
    """Validate a tagged object: pick the model by ``data[tag]`` (pydantic's wording for a
    missing or unknown tag), so paths stay ``messages.0.content.1.x`` without union names."""
    if not isinstance(data, dict):
        raise WireFormatError("Input should be a valid dictionary", path)
    if tag not in data:
        raise WireFormatError("Field required", (*path, tag))
    kind = data[tag]
    if not isinstance(kind, str) or kind not in models:
        expected = ", ".join(repr(k) for k in models)
        raise WireFormatError(
            f"Input tag {kind!r} found using {tag!r} does not match any of the expected tags: "
            f"{expected}",
            (*path, tag),
        )
    return validate(models[kind], data, path)


def one_key(data: Any, path: Path, allowed: Sequence[str], what: str) -> tuple[str, Any]:
    """Bedrock's union objects (``{"text": ...}``, ``{"toolUse": {...}}``): exactly one
    member, one of ``allowed``."""
    if not isinstance(data, dict):
        raise WireFormatError(f"{what} must be an object", path)
    keys = list(data)
    if len(keys) != 1:
        raise WireFormatError(
            f"{what} must hold exactly one of {', '.join(allowed)}; found "
            + (", ".join(keys) if keys else "none"),
            path,
        )
    key = keys[0]
    if key not in allowed:
        raise WireFormatError(
            f"{what} member {key!r} is not supported; expected one of {', '.join(allowed)}",
            (*path, key),
        )
    return key, data[key]


def check_input_schema(schema: dict[str, Any], path: Path) -> None:
    """The schema rules the Messages API enforces (and Converse users rely on)."""
    if schema.get("type") != "object":
        raise WireFormatError("Input should be 'object'", (*path, "type"))
    for key in ("oneOf", "allOf", "anyOf"):
        if key in schema:
            raise WireFormatError(
                "input_schema does not support oneOf, allOf, or anyOf at the top level",
                (*path, key),
            )
    try:
        problem = _schema_problem(json.dumps(schema, sort_keys=True))
    except RecursionError:
        raise WireFormatError("JSON schema is nested too deeply", path) from None
    if problem is not None:
        message, where = problem
        raise WireFormatError(
            "JSON schema is invalid - please consult https://json-schema.org or our "
            f"documentation: {message}",
            (*path, *where),
        )


_META_VALIDATOR = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


@functools.lru_cache(maxsize=2048)
def _schema_problem(schema_json: str) -> tuple[str, Path] | None:
    """The metaschema check, cached by the schema's canonical text: a gateway sees the same
    tool schemas on every request, and the check costs milliseconds."""
    error = jsonschema.exceptions.best_match(_META_VALIDATOR.iter_errors(json.loads(schema_json)))
    if error is None:
        return None
    return error.message, tuple(p for p in error.path if isinstance(p, (str, int)))


def parse_data_url(url: str) -> tuple[str, str] | None:
    """``data:image/png;base64,AAAA`` -> ``("image/png", "AAAA")``; None for other URLs."""
    if not url.startswith("data:"):
        return None
    head, sep, data = url[5:].partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    media_type = head[: -len(";base64")]
    return (media_type or "application/octet-stream"), data


def data_url(media_type: str, data: str) -> str:
    return f"data:{media_type};base64,{data}"


def count(value: Any) -> int:
    """A token count of a usage object from an upstream (a missing, null, negative or
    non-integer one is 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def usage_of_totals(prompt: Any, output: Any, cached: Any, written: Any = 0) -> Usage:
    """The usage of an API whose prompt count includes the cached tokens (OpenAI's
    ``prompt_tokens`` / ``input_tokens`` with their ``cached_tokens`` detail): the cached
    and written tokens taken out of the neutral ``input_tokens``."""
    read, write = count(cached), count(written)
    return Usage(input_tokens=max(count(prompt) - read - write, 0), output_tokens=count(output),
                 cache_read_input_tokens=read, cache_creation_input_tokens=write)


def json_text(value: Any) -> str:
    """A JSON tool-result part as text, for targets that carry only text results."""
    return json.dumps(value, ensure_ascii=False)


def image_placeholder(image: ImageBlock) -> TextBlock:
    """The documented non-strict stand-in for an image a target cannot carry."""
    what = image.url if image.url is not None else f"{image.media_type} image"
    return TextBlock(text=f"[image omitted: {what}]", cache=image.cache)


def reference_placeholder(part: ToolReferenceBlock) -> TextBlock:
    """The documented non-strict stand-in for a tool reference a target cannot carry: the
    text says which tool was loaded."""
    return TextBlock(text=f"[tool loaded: {part.name}]")


def unsupported(
    message: str, path: Path, target: str, strict: bool
) -> None:
    """Raise in strict mode; return (so the caller applies its fallback) otherwise."""
    if strict:
        raise ConversionError(message, path, target=target)


_log = logging.getLogger("tooluse.codecs")

#: What joins a thinking block's text and summary parts where a format has one text for them.
THINKING_SEPARATOR = ThinkingBlock.SEPARATOR


def thinking_text(block: ThinkingBlock) -> str:
    """A thinking block as one readable text, for a format with no place for its summary
    parts (Chat ``reasoning_content``, the legacy ``<thinking>`` section):
    :attr:`ThinkingBlock.joined_text`."""
    return block.joined_text


def dropped(message: str, path: Path, target: str, strict: bool) -> None:
    """Something the target format cannot hold is left out (a thinking block's signature, a
    redacted thinking block...): raise in strict mode; otherwise say so in a log line
    (logger ``tooluse.codecs``, INFO) and return, so the loss is never silent."""
    unsupported(message, path, target, strict)
    where = ".".join(str(p) for p in path)
    _log.info("%s: %s%s; left out", target, message, f" (at {where})" if where else "")


# --- conversation rules --------------------------------------------------------------


@dataclass
class Turn:
    """One turn (possibly several same-role wire messages merged) with the wire path of
    every block, so a rule broken inside the turn is reported where the client wrote it."""

    role: str
    path: Path
    blocks: list[tuple[Path, ContentBlock]] = field(default_factory=list)

    @property
    def tool_use_ids(self) -> list[str]:
        return [b.id for _, b in self.blocks if isinstance(b, ToolUseBlock)]


@dataclass(frozen=True)
class PairingWords:
    """How an API words the tool-pairing errors."""

    missing: Callable[[list[str]], str]
    unexpected: Callable[[str], str]
    duplicate_use: Callable[[str], str]
    duplicate_result: Callable[[str], str]


def check_tool_pairing(turns: Sequence[Turn], words: PairingWords) -> None:
    """Every tool call is answered in the next (user) turn, and every result answers a call
    of the turn just before it; ids are unique."""
    seen: set[str] = set()
    # First the results that answer nothing (the more precise complaint when a client
    # mistyped an id), then the calls left unanswered.
    for i, turn in enumerate(turns):
        if turn.role == "assistant":
            for path, block in turn.blocks:
                if isinstance(block, ToolUseBlock):
                    if block.id in seen:
                        raise WireFormatError(words.duplicate_use(block.id), (*path, "id"))
                    seen.add(block.id)
            continue
        prev = turns[i - 1] if i > 0 else None
        calls = set(prev.tool_use_ids) if prev is not None and prev.role == "assistant" else set()
        answered_here: set[str] = set()
        for path, block in turn.blocks:
            if isinstance(block, ToolResultBlock):
                if block.tool_use_id not in calls:
                    raise WireFormatError(words.unexpected(block.tool_use_id), path)
                if block.tool_use_id in answered_here:
                    raise WireFormatError(words.duplicate_result(block.tool_use_id), path)
                answered_here.add(block.tool_use_id)
    for i, turn in enumerate(turns):
        ids = turn.tool_use_ids if turn.role == "assistant" else []
        if not ids:
            continue
        nxt = turns[i + 1] if i + 1 < len(turns) else None
        answered = (
            {b.tool_use_id for _, b in nxt.blocks if isinstance(b, ToolResultBlock)}
            if nxt is not None and nxt.role == "user"
            else set()
        )
        missing = [x for x in ids if x not in answered]
        if missing:
            raise WireFormatError(words.missing(missing), turn.path)


def place_blocks(req: Request, target: str, strict: bool) -> Request:
    """The request with every block where the wire formats allow it.

    A ``tool_use`` outside an assistant turn or a ``tool_result`` outside a user turn has
    no meaning in any format: always a :class:`ConversionError`. An image in an assistant
    turn cannot be sent either: strict error, otherwise the text placeholder.
    """
    messages: list[Message] = []
    changed = False
    for i, msg in enumerate(req.messages):
        content: list[ContentBlock] = []
        for j, block in enumerate(msg.content):
            path: Path = ("messages", i, "content", j)
            if isinstance(block, ToolUseBlock) and msg.role != "assistant":
                raise ConversionError("a tool_use block belongs in an assistant turn", path, target=target)
            if isinstance(block, ToolResultBlock) and msg.role != "user":
                raise ConversionError("a tool_result block belongs in a user turn", path, target=target)
            if isinstance(block, ImageBlock) and msg.role == "assistant":
                unsupported("an assistant turn cannot carry an image", path, target, strict)
                content.append(image_placeholder(block))
                changed = True
                continue
            content.append(block)
        messages.append(Message(role=msg.role, content=content))
    return req.model_copy(update={"messages": messages}) if changed else req
