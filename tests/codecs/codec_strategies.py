"""Hypothesis strategies for neutral requests and responses, restricted to what a given
wire format can carry (so ``decode(encode(x)) == x`` is a fair property for that format)."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from tooluse.messages import (
    ImageBlock,
    JsonBlock,
    Message,
    Request,
    Response,
    TextBlock,
    ToolChoice,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)


@dataclass(frozen=True)
class Caps:
    name: str
    json_results: bool = False
    result_images: bool = True
    url_images: bool = True
    is_error: bool = True
    choices: tuple[str, ...] = ("auto", "any", "tool", "none")
    disable_parallel: bool = True
    top_k: bool = True
    text_after_tool: bool = True
    text_after_results: bool = True
    response_id: bool = True
    response_model: bool = True
    response_text_blocks: int = 3
    stop_sequence: bool = True
    stop_reasons: tuple[str, ...] = ("end_turn", "tool_use", "max_tokens", "stop_sequence", "content_filtered")
    temperature_max: float = 1.0


ANTHROPIC = Caps("anthropic")
BEDROCK = Caps(
    "bedrock",
    json_results=True,
    url_images=False,
    choices=("auto", "any", "tool"),
    disable_parallel=False,
    response_id=False,
    response_model=False,
)
OPENAI = Caps(
    "openai",
    result_images=False,
    is_error=False,
    top_k=False,
    text_after_tool=False,
    text_after_results=False,
    response_text_blocks=1,
    stop_sequence=False,
    stop_reasons=("end_turn", "tool_use", "max_tokens", "content_filtered"),
)

# Text that is not empty and not only whitespace (the APIs reject empty text blocks).
texts = st.text(min_size=1, max_size=12).filter(lambda s: s.strip() != "")
ids = st.from_regex(r"[a-zA-Z0-9_-]{1,16}", fullmatch=True)
names = st.from_regex(r"[a-zA-Z0-9_-]{1,64}", fullmatch=True)
json_scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
inputs = st.dictionaries(st.text(max_size=6), json_values, max_size=3)


MAGIC = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff\xe0",
    "image/gif": b"GIF89a",
    "image/webp": b"RIFF\x00\x00\x00\x00WEBP",
}


def images(caps: Caps) -> st.SearchStrategy[ImageBlock]:
    # the bytes start with their type's signature: the codecs refuse data that is not an
    # image of the declared type, as the APIs do
    inline = st.builds(
        lambda mt, raw: ImageBlock(media_type=mt, data=base64.b64encode(MAGIC[mt] + raw).decode()),
        st.sampled_from(sorted(MAGIC)),
        st.binary(min_size=0, max_size=12),
    )
    if not caps.url_images:
        return inline
    return inline | st.builds(lambda u: ImageBlock(url=u), st.sampled_from(
        ["https://example.com/a.png", "https://example.com/cat.jpg"]))


@st.composite
def conversations(draw: Any, caps: Caps, tool_names: list[str]) -> list[Message]:
    messages: list[Message] = []
    pending: list[str] = []
    used_ids: set[str] = set()
    for _ in range(draw(st.integers(0, 2))):
        user: list[Any] = []
        for tid in pending:
            parts: list[Any] = draw(st.lists(
                st.builds(TextBlock, text=texts)
                | (images(caps).filter(lambda i: i.url is None) if caps.result_images else st.nothing())
                | (st.builds(JsonBlock, value=json_values) if caps.json_results else st.nothing()),
                max_size=2,
            ))
            user.append(ToolResultBlock(
                tool_use_id=tid, content=parts,
                is_error=draw(st.booleans()) if caps.is_error else False,
            ))
        if not pending or caps.text_after_results:
            extra = draw(st.lists(st.builds(TextBlock, text=texts) | images(caps), max_size=2,
                                  min_size=0 if pending else 1))
            user.extend(extra)
        messages.append(Message(role="user", content=user))
        assistant: list[Any] = draw(st.lists(st.builds(TextBlock, text=texts), max_size=2))
        pending = []
        if tool_names:
            for _ in range(draw(st.integers(0, 2))):
                tid = draw(ids.filter(lambda x: x not in used_ids))
                used_ids.add(tid)
                pending.append(tid)
                assistant.append(ToolUseBlock(id=tid, name=draw(st.sampled_from(tool_names)),
                                              input=draw(inputs)))
            if caps.text_after_tool and pending and draw(st.booleans()):
                assistant.append(TextBlock(text=draw(texts)))
        if not assistant:
            assistant.append(TextBlock(text=draw(texts)))
        messages.append(Message(role="assistant", content=assistant))
    # The conversation ends with a user turn that answers any pending calls.
    final: list[Any] = [ToolResultBlock(tool_use_id=t, content=[TextBlock(text="ok")]) for t in pending]
    if not pending or caps.text_after_results:
        final.append(TextBlock(text=draw(texts)))
    messages.append(Message(role="user", content=final))
    return messages


schemas = st.builds(
    lambda props, req: {"type": "object", "properties": {p: {"type": "string"} for p in props},
                        **({"required": sorted(props)[:1]} if req and props else {})},
    st.lists(st.from_regex(r"[a-z]{1,6}", fullmatch=True), max_size=3, unique=True),
    st.booleans(),
)


@st.composite
def requests(draw: Any, caps: Caps) -> Request:
    tool_names = draw(st.lists(names, max_size=3, unique=True))
    tools = [ToolSpec(name=n, description=draw(st.text(max_size=20)), input_schema=draw(schemas))
             for n in tool_names]
    choice = None
    if tools and draw(st.booleans()):
        kind = draw(st.sampled_from(caps.choices))
        choice = ToolChoice(
            type=kind,
            name=draw(st.sampled_from(tool_names)) if kind == "tool" else None,
            disable_parallel_tool_use=draw(st.booleans()) if caps.disable_parallel and kind != "none" else False,
        )
    return Request(
        model=draw(st.from_regex(r"[a-z0-9.:-]{1,20}", fullmatch=True)),
        system=draw(st.lists(st.builds(TextBlock, text=texts), max_size=2)),
        messages=draw(conversations(caps, tool_names)),
        tools=tools,
        tool_choice=choice,
        max_tokens=draw(st.integers(1, 100000)),
        temperature=draw(st.none() | st.floats(0, caps.temperature_max)),
        top_p=draw(st.none() | st.floats(0, 1)),
        top_k=draw(st.none() | st.integers(0, 500)) if caps.top_k else None,
        stop_sequences=draw(st.lists(texts, max_size=3)),
        metadata=draw(st.just({}) | st.builds(lambda u: {"user_id": u}, texts)),
    )


@st.composite
def responses(draw: Any, caps: Caps) -> Response:
    content: list[Any] = draw(st.lists(st.builds(TextBlock, text=texts), max_size=caps.response_text_blocks))
    used: set[str] = set()
    for _ in range(draw(st.integers(0, 2))):
        tid = draw(ids.filter(lambda x: x not in used))
        used.add(tid)
        content.append(ToolUseBlock(id=tid, name=draw(names), input=draw(inputs)))
    if caps.text_after_tool and draw(st.booleans()):
        content.append(TextBlock(text=draw(texts)))
    stop = draw(st.sampled_from(caps.stop_reasons))
    return Response(
        id=draw(st.from_regex(r"msg_[a-zA-Z0-9]{1,10}", fullmatch=True)) if caps.response_id else "",
        model=draw(st.from_regex(r"[a-z0-9.-]{1,12}", fullmatch=True)) if caps.response_model else None,
        content=content,
        stop_reason=stop,
        stop_sequence=draw(texts) if stop == "stop_sequence" and caps.stop_sequence else None,
        usage=Usage(input_tokens=draw(st.integers(0, 10**6)), output_tokens=draw(st.integers(0, 10**6))),
    )
