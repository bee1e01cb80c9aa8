"""Messages: the per-message fields of mid-conversation ``role: "system"`` messages
(``output_config`` with ``effort`` and ``timing``, ``clear_at``), as Claude Code sends them under
its ``per-turn-control-2026-07-01`` beta. The rows of docs/server.md's policy table they pin:

- on any backend the message's text joins the system prompt, ``clear_at:
  "next_user_message"`` hides it once a later user message exists, and the last per-turn
  effort is the request's reasoning effort;
- an Anthropic upstream gets every such message back verbatim, in its place, and its text
  not a second time in ``system``; also after history thinking it cannot take was dropped;
- what the API refuses (``output_config`` on a user turn, an unknown effort, a per-turn
  ``format``) is a 400 naming the field.
"""

# ruff: noqa: F811 - the `scripted` fixture is imported from the surface tests

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anthropic
import httpx2
import pytest
from test_server_messages_surface import Upstream as SurfaceUpstream
from test_server_messages_surface import scripted  # noqa: F401 - the fixture: a backend saying "ok"

from tooluse.backends.anthropic import AnthropicBackend
from tooluse.codecs import anthropic as codec
from tooluse.messages import Message, PlacedMessage, Request, TextBlock, ThinkingBlock
from tooluse.server import ServerThread, create_app

BETA = "per-turn-control-2026-07-01"

#: Claude Code's shape: the user's turn, then a system message that sets the turn's effort.
CLAUDE_CODE_LIKE: dict[str, Any] = {
    "model": "m", "max_tokens": 100, "system": [{"type": "text", "text": "You are Claude Code."}],
    "thinking": {"type": "adaptive", "display": "omitted"}, "output_config": {"effort": "high"},
    "messages": [
        {"role": "user", "content": [{"type": "text", "text": "<reminder>"},
                                     {"type": "text", "text": "say hello"}]},
        {"role": "system", "output_config": {"effort": "medium"},
         "content": [{"type": "text", "text": "# Environment\nlinux"}]},
    ],
}


class Upstream(SurfaceUpstream):
    """The surface tests' recording upstream, which also answers count_tokens."""

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        answer = super().handle(request)
        if request.url.path.endswith("/count_tokens"):
            return httpx2.Response(200, json={"input_tokens": 42})
        return answer


@pytest.fixture()
def upstream() -> Iterator[tuple[ServerThread, Upstream]]:
    seen = Upstream()
    backend = AnthropicBackend("m", base_url="http://upstream.invalid", api_key="k",
                               max_retries=0, transport=httpx2.MockTransport(seen.handle),
                               async_transport=httpx2.MockTransport(seen.ahandle))
    with ServerThread(create_app(backend)) as srv:
        yield srv, seen


def post(url: str, body: dict[str, Any], path: str = "/v1/messages") -> httpx2.Response:
    return httpx2.post(url + path, json=body, headers={"anthropic-beta": BETA}, timeout=20)


def error_of(response: httpx2.Response) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    return str(error["message"])


# -- any backend: applied ---------------------------------------------------------------------


def test_the_anthropic_sdk_sets_a_turns_effort_on_a_system_message(scripted: Any) -> None:
    """The SDK's own beta call (its ``BetaSystemMessageParam``), as Claude Code sends it:
    answered, the per-turn effort read as the reasoning's effort over the top-level one."""
    srv, backend = scripted
    client = anthropic.Anthropic(base_url=srv.url, api_key="k", max_retries=0)
    answer = client.beta.messages.create(
        model="m", max_tokens=100, betas=[BETA], system="base",
        thinking={"type": "adaptive"}, output_config={"effort": "high"},
        messages=[{"role": "user", "content": "hi"},
                  {"role": "system", "content": "be brief", "output_config": {"effort": "low"}}],
    )
    assert answer.content[0].text == "ok"  # type: ignore[union-attr]
    seen = backend.requests[-1]
    assert seen.reasoning is not None and seen.reasoning.effort == "low"
    assert [b.text for b in seen.system] == ["base", "be brief"]


def test_the_last_turns_effort_is_in_force(scripted: Any) -> None:
    srv, backend = scripted
    body = {"model": "m", "max_tokens": 10, "thinking": {"type": "enabled", "budget_tokens": 2048},
            "messages": [
                {"role": "user", "content": "one"},
                {"role": "system", "output_config": {"effort": "max"}},
                {"role": "assistant", "content": "first"},
                {"role": "user", "content": "two"},
                {"role": "system", "output_config": {"effort": "xhigh"}, "content": ""},
                {"role": "system", "content": "a note without an effort"},
            ]}
    assert post(srv.url, body).status_code == 200
    seen = backend.requests[-1]
    assert seen.reasoning is not None and seen.reasoning.effort == "xhigh"
    assert seen.reasoning.budget_tokens == 2048
    # the messages that only set an effort add no text; the turns around them are unchanged
    assert [b.text for b in seen.system] == ["a note without an effort"]
    assert [m.text() for m in seen.messages] == ["one", "first", "two"]


def test_clear_at_next_user_message_hides_the_text_after_the_next_user_turn(scripted: Any) -> None:
    srv, backend = scripted
    shown = {"role": "system", "content": "only for this turn", "clear_at": "next_user_message"}
    kept = {"role": "system", "content": "for good", "clear_at": "never"}
    first = [{"role": "user", "content": "one"}, shown, kept]
    assert post(srv.url, {"model": "m", "max_tokens": 10, "messages": first}).status_code == 200
    assert [b.text for b in backend.requests[-1].system] == ["only for this turn", "for good"]
    later = [*first, {"role": "assistant", "content": "ok"}, {"role": "user", "content": "two"}]
    assert post(srv.url, {"model": "m", "max_tokens": 10, "messages": later}).status_code == 200
    assert [b.text for b in backend.requests[-1].system] == ["for good"]


def test_timing_is_accepted_and_changes_nothing_on_other_backends(scripted: Any) -> None:
    srv, backend = scripted
    timed = {"role": "system", "output_config": {"timing": {"type": "now",
                                                            "now": "2026-11-28T02:15:04+00:00"}}}
    body = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}, timed]}
    assert post(srv.url, body).status_code == 200
    seen = backend.requests[-1]
    assert seen.system == [] and seen.reasoning is None


# -- an Anthropic upstream: forwarded in place -------------------------------------------------


def test_claude_codes_system_message_reaches_the_upstream_as_sent(upstream: Any) -> None:
    srv, seen = upstream
    assert post(srv.url, CLAUDE_CODE_LIKE).status_code == 200
    (body,) = seen.bodies
    assert body["messages"] == CLAUDE_CODE_LIKE["messages"]
    # its text is not sent twice (one text block is written as its string)
    assert body["system"] == "You are Claude Code."
    assert body["output_config"] == {"effort": "high"}
    assert body["thinking"] == CLAUDE_CODE_LIKE["thinking"]
    assert BETA in seen.headers[0]["anthropic-beta"].split(",")


def test_system_messages_inside_a_turn_and_at_the_end_keep_their_place(upstream: Any) -> None:
    """Two user messages around a system message are one neutral turn; the upstream still gets
    three messages, each as sent, and every per-message field."""
    srv, seen = upstream
    messages = [
        {"role": "system", "content": "before anything", "clear_at": "never"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"role": "system", "content": [{"type": "text", "text": "between",
                                        "cache_control": {"type": "ephemeral"}}],
         "clear_at": "next_user_message", "output_config": {"effort": "low"}},
        {"role": "user", "content": [{"type": "text", "text": "c"}, {"type": "text", "text": "d"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "e"}, {"type": "text", "text": "f"}]},
        {"role": "system", "output_config": {"effort": "medium", "timing": {"type": "now", "now": "t"}}},
    ]
    body = {"model": "m", "max_tokens": 10, "system": "top", "messages": messages}
    assert post(srv.url, body).status_code == 200
    assert seen.bodies[-1]["messages"] == messages
    assert seen.bodies[-1]["system"] == "top"
    # count_tokens goes upstream with the same messages
    assert post(srv.url, {k: v for k, v in body.items() if k != "max_tokens"},
                path="/v1/messages/count_tokens").json() == {"input_tokens": 42}
    assert seen.bodies[-1]["messages"] == messages


def test_a_system_message_keeps_its_place_when_unsendable_thinking_is_dropped() -> None:
    """An assistant turn that held only a local model's unsigned thinking is left out for an
    Anthropic upstream; the system message after it still stands before the next user turn."""
    body = {"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "answer"},
        {"role": "system", "content": "after the answer", "output_config": {"effort": "low"}},
        {"role": "user", "content": "two"},
    ]}
    request = codec.decode_request(body)
    # the neutral history as a local model would leave it: an extra thinking-only turn
    unsigned = Message(role="assistant", content=[ThinkingBlock(text="hmm")])
    history = [request.messages[0], Message(role="user", content=[TextBlock(text="more")]),
               unsigned, *request.messages[1:]]
    placed = request.passthrough.messages  # type: ignore[union-attr]
    assert [(p.turn, p.block) for p in placed] == [(1, 1)]
    moved = request.model_copy(update={
        "messages": history,
        "passthrough": request.passthrough.model_copy(update={  # type: ignore[union-attr]
            "messages": [placed[0].model_copy(update={"turn": 3})]})})
    sent = codec.encode_request(codec.sendable(moved))["messages"]
    assert sent == [
        {"role": "user", "content": "one"}, {"role": "user", "content": "more"},
        {"role": "assistant", "content": "answer"}, body["messages"][2],
        {"role": "user", "content": "two"},
    ]


def test_a_system_prompt_changed_after_decoding_keeps_the_text_once() -> None:
    """If ``Request.system`` no longer ends with the placed messages' text, the text goes in
    ``system`` only (never twice)."""
    request = codec.decode_request({"model": "m", "max_tokens": 10, "messages": [
        {"role": "user", "content": "hi"}, {"role": "system", "content": "note"}]})
    changed = request.model_copy(update={"system": [TextBlock(text="other")]})
    sent = codec.encode_request(changed)
    assert sent["system"] == "other"
    assert sent["messages"] == [{"role": "user", "content": "hi"}]
    assert codec.encode_request(request)["messages"][-1] == {"role": "system", "content": "note"}


def test_placed_messages_are_part_of_the_passthrough() -> None:
    request = codec.decode_request(CLAUDE_CODE_LIKE)
    assert request.passthrough is not None
    assert request.passthrough.messages == [PlacedMessage(
        turn=0, block=2, body=CLAUDE_CODE_LIKE["messages"][1], system=1)]
    assert isinstance(request, Request) and request.reasoning is not None
    assert request.reasoning.effort == "medium"


# -- refused as the API refuses -----------------------------------------------------------------


@pytest.mark.parametrize(("message", "path"), [
    ({"role": "user", "content": "x", "output_config": {"effort": "low"}},
     "messages.1.output_config: Extra inputs are not permitted"),
    ({"role": "assistant", "content": "x", "clear_at": "never"},
     "messages.1.clear_at: Extra inputs are not permitted"),
    ({"role": "system", "content": "x", "output_config": {"effort": "huge"}},
     "messages.1.output_config.effort: "),
    ({"role": "system", "content": "x", "output_config": {"format": {"type": "json_schema",
                                                                    "schema": {}}}},
     "messages.1.output_config.format: Extra inputs are not permitted"),
    ({"role": "system", "content": "x", "clear_at": "later"}, "messages.1.clear_at: "),
    ({"role": "system", "output_config": {"timing": {"type": "later", "now": "t"}}},
     "messages.1.output_config.timing.type: "),
    ({"role": "system"}, "messages.1.content: "),
    ({"role": "system", "output_config": {}}, "messages.1.content: "),
])
def test_what_the_api_refuses_is_a_400_naming_the_field(scripted: Any, message: dict[str, Any],
                                                         path: str) -> None:
    body = {"model": "m", "max_tokens": 10,
            "messages": [{"role": "user", "content": "hi"}, message]}
    assert error_of(post(scripted[0].url, body)).startswith(path)
