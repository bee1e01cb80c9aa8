"""The tooluse gateway over an in-process scripted backend: the gateway's own overhead.

``tooluse serve --backend scripted:TEXT`` can only answer with text, and the benchmark needs
the ``get_weather`` tool call, so this script builds the same app ``tooluse serve`` builds
(:func:`tooluse.server.create_app`) over an in-process backend that returns the canned tool
call at once (see :func:`build_backend`), and serves it with uvicorn the way ``tooluse serve`` does.
With no upstream hop, what a request costs here beyond a bare HTTP server is the gateway:
request decoding and validation, the neutral model, response / stream encoding.

Run: ``python bench/gateway/scripted_gateway.py --port 18103``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import canned  # noqa: E402

__all__ = ["build_app", "main"]


def canned_response() -> Any:
    """The canned ``get_weather`` answer as a neutral :class:`~tooluse.messages.Response`."""
    from tooluse.messages import Response, TextBlock, ToolUseBlock, Usage

    return Response(
        id="msg_01BenchScripted000000001",
        model=canned.MODEL,
        content=[
            TextBlock(text=canned.TEXT),
            ToolUseBlock(id=canned.TOOL_USE_ID, name=canned.TOOL_NAME, input=dict(canned.TOOL_INPUT)),
        ],
        stop_reason="tool_use",
        usage=Usage(input_tokens=412, output_tokens=58),
    )


def build_backend() -> Any:
    """A backend answering every request at once with the canned call, natively async.

    Not :class:`~tooluse.backends.scripted.ScriptedBackend` itself: that one implements only
    the sync ``complete``/``stream`` (plus a deep copy of each request, kept for tests), so
    under the async server every stream event would cross a worker thread. That is a cost
    of a test double, not of the gateway; this backend yields the same events
    (:func:`~tooluse.stream.events_from_response`, same chunk size as the upstream's deltas)
    straight from the event loop.
    """
    from collections.abc import AsyncIterator, Iterator

    from tooluse.backend import Backend
    from tooluse.messages import Request, Response
    from tooluse.stream import events_from_response

    answer = canned_response()

    class InstantBackend(Backend):
        name = "instant"
        model = canned.MODEL

        def complete(self, request: Request) -> Response:
            return answer

        def stream(self, request: Request) -> Iterator[Any]:
            return events_from_response(answer, chunk_size=canned.CHUNK)

        async def acomplete(self, request: Request) -> Response:
            return answer

        async def astream(self, request: Request) -> AsyncIterator[Any]:
            for event in events_from_response(answer, chunk_size=canned.CHUNK):
                yield event

    return InstantBackend()


def build_app(api_keys: list[str] | None = None) -> Any:
    from tooluse.server import create_app

    backend = build_backend()
    if api_keys:
        return create_app(backend, api_keys=api_keys)
    return create_app(backend)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=18103)
    parser.add_argument("--api-key", action="append", default=None)
    args = parser.parse_args(argv)
    import uvicorn

    uvicorn.run(build_app(args.api_key), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    sys.exit(main())
