"""An MCP server's resources and prompts (``resources/list``, ``resources/read``,
``prompts/list``, ``prompts/get``), as tooluse values.

Mixed into :class:`~tooluse.mcp.MCPServer`: ``server.list_resources()``,
``server.read_resource(uri)``, ``server.list_prompts()``, ``server.get_prompt(name,
arguments)``, each sync (the ``a``-prefixed ones for async code). A resource's contents are
result parts (text, an image, or a JSON part holding a blob and its MIME type), so they can
be put in a conversation; a prompt's messages are :class:`~tooluse.messages.Message` s, ready
for :meth:`Runner.run(messages=...) <tooluse.runner.Runner.run>`. A server that does not
offer them, or fails, raises :class:`~tooluse.mcp.MCPConnectionError` with a one-line reason.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.to_thread
import mcp_types as mt
from mcp import Client

from ..messages import ImageBlock, JsonBlock, Message, ResultPart, TextBlock
from .convert import _part

__all__ = ["MCPPrompt", "MCPPromptArgument", "MCPResource", "ResourcesMixin"]

T = TypeVar("T")
#: Pages of a listing read at most.
_MAX_PAGES = 100
_IMAGE_TYPES = {"image/png", "image/jpeg", "image/gif", "image/webp"}


@dataclass(frozen=True)
class MCPResource:
    """A resource a server lists: its URI, name, and what it says of it."""

    uri: str
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None


@dataclass(frozen=True)
class MCPPromptArgument:
    name: str
    description: str | None = None
    required: bool = False


@dataclass(frozen=True)
class MCPPrompt:
    """A prompt (template) a server lists, with the arguments it takes."""

    name: str
    title: str | None = None
    description: str | None = None
    arguments: list[MCPPromptArgument] = field(default_factory=list)


def _contents(item: Any) -> ResultPart:
    if isinstance(item, mt.TextResourceContents):
        return TextBlock(text=item.text)
    if item.mime_type in _IMAGE_TYPES:
        return ImageBlock(media_type=item.mime_type, data=item.blob)
    return JsonBlock(value={"uri": str(item.uri), "mime_type": item.mime_type,
                            "blob": item.blob})


def _message(message: Any) -> Message:
    part = _part(message.content)
    if isinstance(part, ImageBlock):
        return Message(role=message.role, content=[part])
    # an embedded resource (a JSON part): a message carries it as its JSON text
    text = part.text if isinstance(part, TextBlock) else json.dumps(
        getattr(part, "value", None), ensure_ascii=False)
    return Message(role=message.role, content=[TextBlock(text=text)])


async def _pages(fetch: Callable[..., Awaitable[Any]]) -> list[Any]:
    """Every page of a paginated listing (at most :data:`_MAX_PAGES`)."""
    pages: list[Any] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        page = await fetch(cursor=cursor)
        pages.append(page)
        cursor = page.next_cursor
        if not cursor:
            break
    return pages


class ResourcesMixin:
    """The resource and prompt methods of :class:`~tooluse.mcp.MCPServer`."""

    def run_request(self, operation: Callable[[Client], Awaitable[T]], what: str) -> T:
        raise NotImplementedError  # MCPServer's: runs ``operation`` in the session's loop

    def list_resources(self) -> list[MCPResource]:
        """The server's resources (every page)."""

        async def listing(client: Client) -> list[MCPResource]:
            return [MCPResource(uri=str(r.uri), name=r.name, title=r.title,
                                description=r.description, mime_type=r.mime_type)
                    for page in await _pages(client.list_resources) for r in page.resources]

        return self.run_request(listing, "list its resources")

    def read_resource(self, uri: str) -> list[ResultPart]:
        """The contents of resource ``uri`` as result parts."""

        async def read(client: Client) -> list[ResultPart]:
            result = await client.read_resource(uri)
            return [_contents(c) for c in result.contents]

        return self.run_request(read, f"read resource {uri!r}")

    def list_prompts(self) -> list[MCPPrompt]:
        """The server's prompts (every page)."""

        async def listing(client: Client) -> list[MCPPrompt]:
            return [MCPPrompt(name=p.name, title=p.title, description=p.description,
                              arguments=[MCPPromptArgument(name=a.name, description=a.description,
                                                           required=bool(a.required))
                                         for a in p.arguments or []])
                    for page in await _pages(client.list_prompts) for p in page.prompts]

        return self.run_request(listing, "list its prompts")

    def get_prompt(self, name: str, arguments: Mapping[str, str] | None = None) -> list[Message]:
        """Prompt ``name`` filled with ``arguments``, as conversation messages (consecutive
        messages of one role are kept apart, as the server sent them)."""

        async def get(client: Client) -> list[Message]:
            result = await client.get_prompt(name, dict(arguments or {}))
            return [_message(m) for m in result.messages]

        return self.run_request(get, f"get prompt {name!r}")

    async def alist_resources(self) -> list[MCPResource]:
        return await anyio.to_thread.run_sync(self.list_resources)

    async def aread_resource(self, uri: str) -> list[ResultPart]:
        return await anyio.to_thread.run_sync(self.read_resource, uri)

    async def alist_prompts(self) -> list[MCPPrompt]:
        return await anyio.to_thread.run_sync(self.list_prompts)

    async def aget_prompt(self, name: str, arguments: Mapping[str, str] | None = None
                          ) -> list[Message]:
        return await anyio.to_thread.run_sync(self.get_prompt, name, arguments)
