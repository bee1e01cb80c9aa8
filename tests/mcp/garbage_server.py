"""Not a well-behaved MCP server: a stdio JSON-RPC loop, written by hand, that completes the
initialize handshake and lists one tool, then answers ``tools/call`` with a result that is
not a ``CallToolResult`` (``content`` is a string), or with a line of non-JSON noise and
then nothing (when the tool is ``mumble``)."""

from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": "broken", "description": "Answers garbage.", "inputSchema": {"type": "object"}},
    {"name": "mumble", "description": "Answers noise, then nothing.",
     "inputSchema": {"type": "object"}},
]


def reply(message_id: object, result: object = None, error: object = None) -> None:
    body: dict[str, object] = {"jsonrpc": "2.0", "id": message_id}
    if error is not None:
        body["error"] = error
    else:
        body["result"] = result
    sys.stdout.write(json.dumps(body) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    if "id" not in message:
        continue  # a notification
    method = message.get("method")
    if method == "initialize":
        reply(message["id"], {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                              "serverInfo": {"name": "garbage", "version": "0"}})
    elif method == "tools/list":
        reply(message["id"], {"tools": TOOLS})
    elif method == "tools/call":
        if message["params"]["name"] == "mumble":
            sys.stdout.write("this is not JSON-RPC\n")
            sys.stdout.flush()
        else:
            reply(message["id"], {"content": "not a list of blocks", "isError": "maybe"})
    else:
        reply(message["id"], error={"code": -32601, "message": f"no method {method}"})
