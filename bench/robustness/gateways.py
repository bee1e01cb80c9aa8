"""The gateways the campaign runs against, each a subprocess serving ``create_app`` (what
``tooluse serve`` builds) under uvicorn on 127.0.0.1.

- ``--mode scripted``: over :class:`~tooluse.backends.scripted.ScriptedBackend` (the real
  one, with its request history) answering as a model would: a tool call when tools are
  offered, text quoting the results after a tool round trip, otherwise an echo. Used by the
  fuzzer and the soak.
- ``--mode upstream --upstream URL``: one app per (upstream kind, fault), mounted at
  ``/<kind>-<fault>``, each over the ``anthropic:`` or ``openai:`` backend pointed at
  ``URL/<fault>`` of the fault-injecting upstream (``faulty_upstream.py``). Backend options
  (``--backend-option timeout=5``) are handed to each backend as ``tooluse serve`` would.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

FAULTS = ["ok", "500", "429", "503", "reset", "silence", "cut", "broken-json", "empty"]
#: Mounted too, for the disconnect part (not a fault: an answer one event per 0.5 s).
MOUNTED = [*FAULTS, "slow"]
KINDS = ["anthropic", "openai"]


def scripted_app() -> Any:
    from tooluse.backends.scripted import ScriptedBackend
    from tooluse.messages import Request, Response, TextBlock, ToolResultBlock, ToolUseBlock
    from tooluse.server import create_app

    def model(request: Request) -> Response:
        last = request.messages[-1]
        results = [b for b in last.content if isinstance(b, ToolResultBlock)]
        if results:
            return Response(content=[TextBlock(text="It is " + results[0].text()[:40])],
                            stop_reason="end_turn")
        if request.tools and (request.tool_choice is None or request.tool_choice.type != "none"):
            spec = request.tools[0]
            return Response(content=[TextBlock(text="Let me check."),
                                     ToolUseBlock(id="toolu_bench_1", name=spec.name, input={"city": "Paris"})],
                            stop_reason="tool_use")
        return Response(content=[TextBlock(text="echo: " + last.text()[:200] or "echo")], stop_reason="end_turn")

    return create_app(ScriptedBackend(model, model="bench-model", chunk_size=8))


def upstream_app(upstream: str, options: dict[str, Any]) -> Any:
    from starlette.applications import Starlette
    from starlette.routing import Mount

    from tooluse.backends.registry import load_backend
    from tooluse.server import create_app

    mounts = []
    for kind in KINDS:
        for fault in MOUNTED:
            base = f"{upstream}/{fault}" + ("/v1" if kind == "openai" else "")
            backend = load_backend(f"{kind}:{base}#bench-model", api_key="bench-key", **options)
            mounts.append(Mount(f"/{kind}-{fault}", app=create_app(backend)))
    return Starlette(routes=mounts)


def _option(text: str) -> tuple[str, Any]:
    key, _, value = text.partition("=")
    try:
        return key, json.loads(value)
    except ValueError:
        return key, value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--mode", choices=["scripted", "upstream"], required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", default="")
    parser.add_argument("--backend-option", action="append", default=[], type=_option)
    args = parser.parse_args(argv)
    import uvicorn

    if args.mode == "scripted":
        app = scripted_app()
    else:
        app = upstream_app(args.upstream, dict(args.backend_option))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
