"""A recording proxy in front of every gateway the tests start, and the request-surface check
of the client tests (those marked ``client``: real SDKs and CLIs talking to the gateway).

Every :class:`~tooluse.server.ServerThread` serves its app through :class:`Recorder`, which
keeps each request (API, path, headers, JSON body) and the status of its answer (with the
body of an error). After a ``client`` test, every 4xx the gateway answered must be one the
policy in docs/server.md explains (:data:`EXPLAINED`: each names the words of the document
that explain it) or one the test provokes on purpose and says so
(``@pytest.mark.provokes_4xx(STATUS, "words of the error")``; without words, any
4xx of that status). A 4xx that a client worked
around (resent without a field, fell back to something else) is a failure all the same.

With ``TOOLUSE_SURFACE_LOG=PATH`` each request's field paths are appended to ``PATH`` as
JSON lines (``{"api", "client", "fields"}``), for bench/clients/latest.sh to report the
fields no row of the policy table names.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tooluse.server import ServerThread

DOCS = Path(__file__).resolve().parents[2] / "docs" / "server.md"


@dataclass
class Exchange:
    """One request the gateway received and what it answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any = None
    status: int | None = None
    error: str = ""
    test: str = ""

    @property
    def api(self) -> str:
        if self.path.startswith("/v1/messages"):
            return "messages"
        if self.path.startswith("/v1/responses"):
            return "responses"
        if self.path.startswith("/v1/chat/completions"):
            return "chat"
        if self.path.startswith("/model/"):
            return "converse"
        return "other"

    @property
    def client(self) -> str:
        return self.headers.get("user-agent", "").split(" ")[0] or "?"


@dataclass(frozen=True)
class Explanation:
    """A 4xx the policy table explains: which answers (``matches``) and the words of
    docs/server.md that explain them (``doc``, checked to be there)."""

    doc: str
    matches: Callable[[Exchange], bool]


def _context_overflow(exchange: Exchange) -> bool:
    text = exchange.error.lower()
    return exchange.status == 400 and ("prompt is too long" in text
                                       or "context_length_exceeded" in text)


def _thread_refused(exchange: Exchange) -> bool:
    return exchange.status == 400 and '"thread_unsupported_request"' in exchange.error


#: The 4xx answers docs/server.md explains as the gateway's policy.
EXPLAINED = (
    # a prompt over a local model's context is the API's own 400 (Claude Code's and Codex's
    # first requests are over the bundled model's 8192 tokens)
    Explanation(doc="A prompt over the model's context is the `context_length` error kind",
                matches=_context_overflow),
    # message threads are refused as the API refuses a request it cannot thread, with the
    # error_code the anthropic SDK's tool_runner reads to go on without a thread
    Explanation(doc="| `thread` (message threads beta) | **refused** as the API refuses what it "
                    "cannot thread", matches=_thread_refused),
)


def explained(exchange: Exchange) -> Explanation | None:
    """The policy that explains this 4xx, if any."""
    return next((e for e in EXPLAINED if e.matches(exchange)), None)


class Log:
    """Every exchange of the session's gateways, and the test each happened in."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.exchanges: list[Exchange] = []
        self.test = ""

    def add(self, exchange: Exchange) -> None:
        with self.lock:
            exchange.test = self.test
            self.exchanges.append(exchange)
        _surface_log(exchange)

    def of(self, test: str) -> list[Exchange]:
        with self.lock:
            return [e for e in self.exchanges if e.test == test]

    def start(self, test: str) -> None:
        with self.lock:
            self.test = test
            self.exchanges = [e for e in self.exchanges if e.test == test]


LOG = Log()


class Recorder:
    """ASGI app recording each HTTP exchange of ``app`` in :data:`LOG` (and passing
    everything else, the lifespan included, through unchanged)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def __getattr__(self, name: str) -> Any:  # app.state and the like stay reachable
        return getattr(self.app, name)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        exchange = Exchange(method=scope["method"], path=scope["path"], headers={
            k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]})
        chunks: list[bytes] = []
        error: list[bytes] = []

        async def recv() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    try:
                        exchange.body = json.loads(b"".join(chunks) or b"null")
                    except ValueError:
                        exchange.body = None
            return message

        async def snd(message: Any) -> None:
            if message["type"] == "http.response.start":
                exchange.status = message["status"]
            elif message["type"] == "http.response.body" and (exchange.status or 0) >= 400:
                error.append(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, recv, snd)
        finally:
            exchange.error = b"".join(error).decode("utf-8", "replace")[:2000]
            LOG.add(exchange)


_original_init = ServerThread.__init__


def _recording_init(self: ServerThread, app: Any, **options: Any) -> None:
    _original_init(self, app if isinstance(app, Recorder) else Recorder(app), **options)


def install() -> None:
    """Every ServerThread started from now on records its traffic."""
    ServerThread.__init__ = _recording_init  # type: ignore[method-assign]


def unexplained(exchanges: list[Exchange], provoked: list[tuple[int, str]]) -> list[str]:
    """The 4xx answers among ``exchanges`` that neither the policy nor the test explains."""
    out = []
    for e in exchanges:
        if e.status is None or not 400 <= e.status < 500:
            continue
        if explained(e) is not None:
            continue
        if any(e.status == status and words in e.error for status, words in provoked):
            continue
        out.append(f"{e.method} {e.path} -> {e.status} {e.error[:400]} (client: {e.client})")
    return out


def check_docs() -> None:
    """Each explanation's words are in docs/server.md (the policy explains it, or it must go)."""
    text = DOCS.read_text(encoding="utf-8")
    for e in EXPLAINED:
        assert e.doc in text, f"docs/server.md no longer says {e.doc!r}: the policy changed"


@pytest.fixture(autouse=True)
def _client_traffic(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a ``client`` test: no 4xx the policy does not explain."""
    LOG.start(request.node.nodeid)
    yield
    if request.node.get_closest_marker("client") is None:
        return
    provoked = [(m.args[0], m.args[1] if len(m.args) > 1 else "")
                for m in request.node.iter_markers("provokes_4xx")]
    found = unexplained(LOG.of(request.node.nodeid), provoked)
    assert not found, ("a client got a 4xx the policy in docs/server.md does not explain "
                       "(even if it recovered):\n" + "\n".join(found))


# --- the surface log (bench/clients/latest.sh) ---------------------------------------------

_LISTS = {"messages": ("messages", "system", "tools"), "responses": ("input", "tools"),
          "chat": ("messages", "tools"), "converse": ("messages", "system")}


def field_paths(api: str, body: Any) -> set[str]:
    """What a request body uses, as paths: its top-level keys (``thinking``), their members
    (``thinking.type``), the keys of the items of its lists (``messages[].output_config``,
    ``tools[].defer_loading``), the ``type`` of those items (``tools[type=web_search]``) and
    of their content blocks (``messages[].content[type=thinking]``; a Converse block by its
    one key: ``messages[].content[cachePoint]``)."""
    out: set[str] = set()
    if not isinstance(body, dict):
        return out
    for key, value in body.items():
        out.add(key)
        if isinstance(value, dict):
            out.update(f"{key}.{k}" for k in value)
            tools = value.get("tools") if key == "toolConfig" else None
            for tool in tools if isinstance(tools, list) else []:
                if isinstance(tool, dict):
                    out.update(f"{key}.tools[{k}]" for k in tool)
        if key not in _LISTS.get(api, ()) or not isinstance(value, list):
            continue
        for item in value:
            if not isinstance(item, dict):
                continue
            out.update(f"{key}[].{k}" for k in item)
            if isinstance(item.get("type"), str):
                out.add(f"{key}[type={item['type']}]")
            content = item.get("content")
            for block in content if isinstance(content, list) else []:
                if not isinstance(block, dict):
                    continue
                if isinstance(block.get("type"), str):
                    out.add(f"{key}[].content[type={block['type']}]")
                elif len(block) == 1:
                    out.add(f"{key}[].content[{next(iter(block))}]")
    return out


def _surface_log(exchange: Exchange) -> None:
    path = os.environ.get("TOOLUSE_SURFACE_LOG")
    if not path or exchange.api == "other" or exchange.method != "POST":
        return
    line = {"api": exchange.api, "client": exchange.client, "status": exchange.status,
            "fields": sorted(field_paths(exchange.api, exchange.body)),
            "beta": exchange.headers.get("anthropic-beta", "")}
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


install()
check_docs()
