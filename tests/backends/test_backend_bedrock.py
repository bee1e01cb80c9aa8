"""The Bedrock Converse backend: converse with botocore's Stubber, converse_stream against a
local endpoint speaking the binary event stream (parsed by boto3 itself)."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

boto3 = pytest.importorskip("boto3")
from botocore.config import Config
from botocore.stub import Stubber

from tooluse.backends import load_backend
from tooluse.backends.bedrock import BedrockBackend
from tooluse.codecs import bedrock as codec
from tooluse.errors import BackendError
from tooluse.messages import (
    ImageBlock,
    Message,
    RedactedThinkingBlock,
    Request,
    Response,
    TextBlock,
    ThinkingBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)
from tooluse.runner import Runner
from tooluse.stream import (
    BlockStart,
    BlockStop,
    SignatureDelta,
    ThinkingDelta,
    accumulate,
    events_from_response,
)

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
WEATHER = ToolSpec(name="get_weather", description="Weather in a city.", input_schema=SCHEMA)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(16))


def client(**kw: Any) -> Any:
    return boto3.client(
        "bedrock-runtime",
        region_name="us-east-1",
        aws_access_key_id="AKIDEXAMPLE",
        aws_secret_access_key="secret",
        **kw,
    )


def request(**kw: Any) -> Request:
    base: dict[str, Any] = {
        "max_tokens": 200,
        "messages": [Message(role="user", content="Weather in Paris?")],
        "tools": [WEATHER],
    }
    base.update(kw)
    return Request(**base)


TOOL_REPLY = {
    "output": {
        "message": {
            "role": "assistant",
            "content": [
                {"text": "Checking."},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}},
            ],
        }
    },
    "stopReason": "tool_use",
    "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
    "metrics": {"latencyMs": 12},
}


def test_converse_params_and_answer() -> None:
    c = client()
    expected = {
        "modelId": MODEL,
        "messages": [{"role": "user", "content": [{"text": "Weather in Paris?"}]}],
        "inferenceConfig": {"maxTokens": 200},
        "toolConfig": {
            "tools": [
                {"toolSpec": {"name": "get_weather", "description": "Weather in a city.", "inputSchema": {"json": SCHEMA}}}
            ]
        },
    }
    with Stubber(c) as stub:
        stub.add_response("converse", TOOL_REPLY, expected)
        response = BedrockBackend(MODEL, client=c).complete(request())
        stub.assert_no_pending_responses()
    assert response.stop_reason == "tool_use"
    assert response.content == [
        TextBlock(text="Checking."),
        ToolUseBlock(id="tooluse_1", name="get_weather", input={"city": "Paris"}),
    ]
    assert response.usage == Usage(input_tokens=10, output_tokens=5)
    assert response.model == MODEL


def test_images_go_to_boto3_as_raw_bytes() -> None:
    c = client()
    image = ImageBlock(media_type="image/png", data=base64.b64encode(PNG).decode())
    req = request(messages=[Message(role="user", content=[TextBlock(text="What is this?"), image])], tools=[])
    expected = {
        "modelId": MODEL,
        "messages": [
            {"role": "user", "content": [{"text": "What is this?"}, {"image": {"format": "png", "source": {"bytes": PNG}}}]}
        ],
        "inferenceConfig": {"maxTokens": 200},
    }
    reply = {**TOOL_REPLY, "output": {"message": {"role": "assistant", "content": [{"text": "A tiny PNG."}]}}, "stopReason": "end_turn"}
    with Stubber(c) as stub:
        stub.add_response("converse", reply, expected)
        assert BedrockBackend(MODEL, client=c).complete(req).content == [TextBlock(text="A tiny PNG.")]


@pytest.mark.parametrize(
    ("code", "status", "kind"),
    [
        ("ThrottlingException", 429, "rate_limit"),
        ("ValidationException", 400, "invalid_request"),
        ("AccessDeniedException", 403, "permission"),
        ("ResourceNotFoundException", 404, "not_found"),
        ("ModelTimeoutException", 408, "timeout"),
        ("ServiceUnavailableException", 503, "unavailable"),
        ("InternalServerException", 500, "api"),
        ("ExpiredTokenException", 403, "authentication"),
    ],
)
def test_client_errors_map_to_kinds(code: str, status: int, kind: str) -> None:
    c = client()
    with Stubber(c) as stub:
        stub.add_client_error("converse", service_error_code=code, service_message="nope", http_status_code=status)
        with pytest.raises(BackendError) as info:
            BedrockBackend(MODEL, client=c).complete(request())
    assert info.value.kind == kind
    assert info.value.status == status
    assert code in str(info.value) and "nope" in str(info.value)


def test_missing_model_id_is_clear() -> None:
    with pytest.raises(BackendError, match="no model id"):
        BedrockBackend(client=client()).complete(request())


def test_runner_over_bedrock() -> None:
    def get_weather(city: str) -> dict[str, Any]:
        """Weather.

        Args:
            city: The city.
        """
        return {"city": city, "sky": "clear"}

    c = client()
    final = {**TOOL_REPLY, "output": {"message": {"role": "assistant", "content": [{"text": "Clear skies."}]}}, "stopReason": "end_turn"}
    with Stubber(c) as stub:
        stub.add_response("converse", TOOL_REPLY)
        stub.add_response("converse", final)
        backend = BedrockBackend(MODEL, client=c)
        captured: list[dict[str, Any]] = []
        c.meta.events.register("provide-client-params.bedrock-runtime.Converse", lambda params, **_: captured.append(params))
        result = Runner(backend, [get_weather]).run("Weather in Paris?")
    assert result.text == "Clear skies."
    results_turn = captured[1]["messages"][-1]
    assert results_turn["role"] == "user"
    assert results_turn["content"][0]["toolResult"]["toolUseId"] == "tooluse_1"
    assert results_turn["content"][0]["toolResult"]["content"] == [{"json": {"city": "Paris", "sky": "clear"}}]


# -- converse_stream over a real local endpoint ---------------------------------------------

@contextmanager
def eventstream_server(frames: list[bytes]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            assert self.path.endswith("/converse-stream"), self.path
            self.send_response(200)
            self.send_header("content-type", "application/vnd.amazon.eventstream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            data = b"".join(frames)
            for i in range(0, len(data), 50):  # frames cut across network chunks
                piece = data[i : i + 50]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"http://{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()


STREAMED = Response(
    content=[TextBlock(text="Let me check the weather."), ToolUseBlock(id="tooluse_9", name="get_weather", input={"city": "Paris"})],
    stop_reason="tool_use",
    usage=Usage(input_tokens=20, output_tokens=9),
)


def frames_for(response: Response) -> list[bytes]:
    from tooluse.server.http.eventstream import encode_event

    out = []
    for payload in codec.encode_events(events_from_response(response, chunk_size=5)):
        ((kind, body),) = payload.items()
        out.append(encode_event(kind, body))
    return out


def test_converse_stream_parsed_by_boto3() -> None:
    with eventstream_server(frames_for(STREAMED)) as url:
        c = client(endpoint_url=url, config=Config(retries={"max_attempts": 1}))
        events = list(BedrockBackend(MODEL, client=c).stream(request()))
    response = accumulate(events)
    assert response.content == STREAMED.content
    assert response.stop_reason == "tool_use"
    assert response.usage.output_tokens == 9


def test_converse_stream_exception_frame() -> None:
    from tooluse.server.http.eventstream import encode_exception

    frames = frames_for(STREAMED)[:3] + [encode_exception("throttlingException", "Too many tokens")]
    with eventstream_server(frames) as url:
        c = client(endpoint_url=url, config=Config(retries={"max_attempts": 1}))
        with pytest.raises(BackendError) as info:
            list(BedrockBackend(MODEL, client=c).stream(request()))
    assert info.value.kind == "rate_limit"
    assert "Too many tokens" in str(info.value)


def test_spec_strings() -> None:
    b = load_backend(f"bedrock:{MODEL}?region=eu-west-1&profile=dev")
    assert isinstance(b, BedrockBackend)
    assert (b.model, b.region, b.profile) == (MODEL, "eu-west-1", "dev")
    with pytest.raises(ValueError, match="unknown option"):
        load_backend(f"bedrock:{MODEL}?regoin=x")


# -- reasoning: settings and history blocks go up unchanged, reasoning comes back --

SIGNATURE = "EqQBCkgIARABGAIiQGs1gnature+/="
SECRET = bytes(range(3, 40))
THINKING = {"type": "enabled", "budget_tokens": 2048}


def reasoning_request() -> Request:
    """A Converse client's second turn of a tool loop with thinking, as the gateway decodes it."""
    return codec.decode_request({
        "messages": [
            {"role": "user", "content": [{"text": "Weather in Paris?"}]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "Paris, France.", "signature": SIGNATURE}}},
                {"reasoningContent": {"redactedContent": base64.b64encode(SECRET).decode()}},
                {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "sunny"}]}}]},
        ],
        "inferenceConfig": {"maxTokens": 4096},
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": SCHEMA}}}]},
        "additionalModelRequestFields": {"thinking": THINKING, "anthropic_beta": ["interleaved-thinking-2025-05-14"]},
    }, model_id=MODEL)


def test_reasoning_goes_up_unchanged_and_comes_back() -> None:
    c = client()
    expected = {
        "modelId": MODEL,
        "messages": [
            {"role": "user", "content": [{"text": "Weather in Paris?"}]},
            {"role": "assistant", "content": [
                {"reasoningContent": {"reasoningText": {"text": "Paris, France.", "signature": SIGNATURE}}},
                {"reasoningContent": {"redactedContent": SECRET}},  # boto3 takes the raw bytes
                {"toolUse": {"toolUseId": "tooluse_1", "name": "get_weather", "input": {"city": "Paris"}}}]},
            {"role": "user", "content": [{"toolResult": {"toolUseId": "tooluse_1", "content": [{"text": "sunny"}]}}]},
        ],
        "inferenceConfig": {"maxTokens": 4096},
        "toolConfig": {"tools": [{"toolSpec": {"name": "get_weather", "inputSchema": {"json": SCHEMA}}}]},
        "additionalModelRequestFields": {"thinking": THINKING, "anthropic_beta": ["interleaved-thinking-2025-05-14"]},
    }
    reply = {**TOOL_REPLY, "stopReason": "end_turn", "output": {"message": {"role": "assistant", "content": [
        {"reasoningContent": {"reasoningText": {"text": "It is sunny.", "signature": "sig-2"}}},
        {"reasoningContent": {"redactedContent": b"\x00\xffredacted"}},
        {"text": "Sunny in Paris."}]}}}
    with Stubber(c) as stub:
        stub.add_response("converse", reply, expected)
        response = BedrockBackend(MODEL, client=c).complete(reasoning_request())
        stub.assert_no_pending_responses()
    assert response.content == [
        ThinkingBlock(text="It is sunny.", signature="sig-2"),
        RedactedThinkingBlock(data=base64.b64encode(b"\x00\xffredacted").decode()),
        TextBlock(text="Sunny in Paris."),
    ]


REASONED = Response(
    content=[ThinkingBlock(text="The user wants Paris weather.", signature=SIGNATURE),
             RedactedThinkingBlock(data=base64.b64encode(SECRET).decode()),
             ToolUseBlock(id="tooluse_9", name="get_weather", input={"city": "Paris"})],
    stop_reason="tool_use",
    usage=Usage(input_tokens=20, output_tokens=9),
)


def test_converse_stream_reasoning_arrives_in_order() -> None:
    with eventstream_server(frames_for(REASONED)) as url:
        c = client(endpoint_url=url, config=Config(retries={"max_attempts": 1}))
        events = list(BedrockBackend(MODEL, client=c).stream(reasoning_request()))
    thinking = [e for e in events if getattr(e, "index", None) == 0]
    assert isinstance(thinking[0], BlockStart) and thinking[0].block == ThinkingBlock()
    assert all(isinstance(e, ThinkingDelta) for e in thinking[1:-2])
    assert len(thinking) > 4  # the text really arrives in pieces
    assert thinking[-2] == SignatureDelta(index=0, signature=SIGNATURE)  # after the text
    assert isinstance(thinking[-1], BlockStop)
    assert accumulate(events).content == REASONED.content


def test_summary_parts_are_refused_before_the_call() -> None:
    """A Responses reasoning item's summary has no Converse form: a clear error naming the
    field (the gateway's 400), and nothing is sent upstream."""
    from tooluse.errors import ConversionError

    summarized = ThinkingBlock(summary=["Looked it up."], signature="enc", id="rs_1")
    req = request(messages=[Message(role="user", content="Hi"),
                            Message(role="assistant", content=[summarized, TextBlock(text="Hello")]),
                            Message(role="user", content="More")])
    c = client()
    with Stubber(c) as stub, pytest.raises(ConversionError) as info:
        BedrockBackend(MODEL, client=c).complete(req)
    stub.assert_no_pending_responses()
    assert info.value.path == ("messages", 1, "content", 0, "summary")
