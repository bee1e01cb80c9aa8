"""MCP tool definitions and results mapped to tooluse's, without a server: every content
kind, structuredContent, isError, and schemas that need tidying or cannot be used."""

from __future__ import annotations

import mcp_types as mt
import pytest

from tooluse.errors import ToolDefinitionError
from tooluse.mcp import mcp_tool, prepare_schema, result_block
from tooluse.messages import ImageBlock, JsonBlock, TextBlock

PNG_B64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="


def test_text_image_and_error_flag_are_kept() -> None:
    result = mt.CallToolResult(
        content=[mt.TextContent(text="a dot:"), mt.ImageContent(data=PNG_B64, mime_type="image/png")],
        is_error=True,
    )
    block = result_block(result, "toolu_1")
    assert block.tool_use_id == "toolu_1"
    assert block.is_error is True
    assert block.content == [TextBlock(text="a dot:"), ImageBlock(media_type="image/png", data=PNG_B64)]


def test_embedded_resources_keep_uri_type_and_body() -> None:
    text = mt.EmbeddedResource(resource=mt.TextResourceContents(
        uri="file:///notes.md", mime_type="text/markdown", text="# Notes"))
    image = mt.EmbeddedResource(resource=mt.BlobResourceContents(
        uri="file:///dot.png", mime_type="image/png", blob=PNG_B64))
    pdf = mt.EmbeddedResource(resource=mt.BlobResourceContents(
        uri="file:///a.pdf", mime_type="application/pdf", blob="JVBERi0="))
    block = result_block(mt.CallToolResult(content=[text, image, pdf]))
    assert block.content == [
        JsonBlock(value={"type": "resource", "uri": "file:///notes.md",
                         "mimeType": "text/markdown", "text": "# Notes"}),
        ImageBlock(media_type="image/png", data=PNG_B64),
        JsonBlock(value={"type": "resource", "uri": "file:///a.pdf",
                         "mimeType": "application/pdf", "blob": "JVBERi0="}),
    ]
    assert block.is_error is False


def test_resource_link_and_audio_become_json_with_every_field() -> None:
    link = mt.ResourceLink(uri="https://example.org/r", name="r", mime_type="text/plain")
    audio = mt.AudioContent(data="UklGRg==", mime_type="audio/wav")
    block = result_block(mt.CallToolResult(content=[link, audio]))
    assert block.content[0] == JsonBlock(value={"type": "resource_link", "uri": "https://example.org/r",
                                                "name": "r", "mimeType": "text/plain"})
    assert block.content[1] == JsonBlock(value={"type": "audio", "data": "UklGRg==",
                                                "mimeType": "audio/wav"})


def test_structured_content_replaces_the_text_that_repeats_it() -> None:
    structured = {"timezone": "Asia/Tokyo", "is_dst": False}
    result = mt.CallToolResult(
        content=[mt.TextContent(text='{\n  "timezone": "Asia/Tokyo",\n  "is_dst": false\n}')],
        structured_content=structured,
    )
    assert result_block(result).content == [JsonBlock(value=structured)]


def test_structured_content_is_added_when_no_text_repeats_it() -> None:
    result = mt.CallToolResult(content=[mt.TextContent(text="3 apples")],
                               structured_content={"count": 3})
    assert result_block(result).content == [TextBlock(text="3 apples"), JsonBlock(value={"count": 3})]
    # "true" is not the number 1, though they compare equal in Python
    result = mt.CallToolResult(content=[mt.TextContent(text="true")], structured_content={"result": 1})
    assert result_block(result).content == [TextBlock(text="true"), JsonBlock(value={"result": 1})]


def test_the_sdks_wrapped_plain_result_counts_as_a_repeat() -> None:
    for text, value in (("3", 3), ("it is noon", "it is noon")):
        result = mt.CallToolResult(content=[mt.TextContent(text=text)],
                                   structured_content={"result": value})
        assert result_block(result).content == [JsonBlock(value={"result": value})]


def test_schema_is_tidied_and_given_its_object_type() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "properties": {"where": {"$ref": "#/$defs/Place", "title": "Where"}},
        "required": ["where"],
        "title": "args",
        "$defs": {"Place": {"type": "object", "title": "Place",
                            "properties": {"city": {"type": "string", "title": "City"}}}},
    }
    assert prepare_schema(schema) == {
        "type": "object",
        "properties": {"where": {"type": "object", "properties": {"city": {"type": "string"}}}},
        "required": ["where"],
    }


def test_tool_names_are_mapped_and_the_original_kept() -> None:
    calls = []
    definition = mt.Tool(name="fs.read file", description="Read a file.",
                         input_schema={"type": "object", "properties": {"path": {"type": "string"}}})
    tool = mcp_tool(definition, lambda **kw: calls.append(kw))
    assert tool.name == "fs_read_file"
    assert tool.original_name == "fs.read file"
    assert tool.description == "Read a file."
    tool.call({"path": "/etc/hosts"})
    assert calls == [{"path": "/etc/hosts"}]


def test_unusable_schema_is_a_definition_error_naming_the_tool() -> None:
    definition = mt.Tool(name="bad", input_schema={"type": "string"})
    with pytest.raises(ToolDefinitionError, match="'bad'.*top level"):
        mcp_tool(definition, lambda **kw: None)


def _definition(annotations: mt.ToolAnnotations | None) -> mt.Tool:
    return mt.Tool(name="t", input_schema={"type": "object"}, annotations=annotations)


@pytest.mark.parametrize(("annotations", "read_only"), [
    (mt.ToolAnnotations(read_only_hint=True), True),
    (mt.ToolAnnotations(read_only_hint=False), False),
    (mt.ToolAnnotations(destructive_hint=True), False),
    (None, False),
])
def test_read_only_hint_makes_a_read_only_tool(annotations: mt.ToolAnnotations | None,
                                               read_only: bool) -> None:
    tool = mcp_tool(_definition(annotations), lambda **kw: None)
    assert tool.read_only is read_only
    assert not tool.needs_approval({})  # by default an MCP tool is not asked about
    asked = mcp_tool(_definition(annotations), lambda **kw: None, requires_approval=True)
    # a read-only tool never needs approval, every other one does when asked for
    assert asked.needs_approval({}) is (not read_only)
