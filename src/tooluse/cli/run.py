"""``tooluse run``: the tool loop from the shell, with tools from MCP servers and Python.

::

    tooluse run --mcp "python -m mcp_server_time" --tool-choice any "What time is it in Tokyo?"

Tools come from MCP servers (``--mcp COMMAND`` over stdio, ``--mcp URL`` over streamable
HTTP) and Python functions (``--tool MODULE:FUNCTION``, imported from the current folder
first); the model is any backend spec (default: the bundled local model). Each step is
printed as ``tooluse demo`` prints it — the model's calls with their input, each result, the
answer, the timings — or, with ``--json``, the whole conversation as one JSON document (with
each call's origin). A call the backend changed or added, instead of writing it as the model
did, is marked with one line per change; the summary line counts the calls that ended in an
error. With ``--approve`` every call of a tool that is not read-only is asked about on the
terminal first (``y`` runs it; anything else, or no input, denies it). Bad input (a server
that does not start, an unreachable URL, a tool that cannot be imported, a tool choice
naming no tool) is one line on stderr and exit status 2; a run that stops (a backend error,
too many turns) exits 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import os
import shlex
import sys
from contextlib import ExitStack
from typing import Any, TextIO

from ..errors import BackendError, ToolDefinitionError, ToolUseError
from ._backend import load_cli_backend, parse_options, parse_pairs, start_local_load
from .demo import add_preset_argument, backend_label, with_preset

__all__ = ["load_function_tool", "register", "run_command", "terminal_approver"]

_COMMAND = "tooluse run"

_EPILOG = """\
example, with the MCP time server (pip install mcp-server-time):

  tooluse run --mcp "python -m mcp_server_time" --tool-choice any \\
      "What time is it in Tokyo?"

Each model turn prints its calls with their input, each tool result (an "error" line when
the tool answered with an error) and the answer; the summary line counts the calls that
ended in an error. A small model (the bundled 135M one) may write a zone the server
refuses ("Invalid timezone"): that result is an "error" line, counted in the summary, and
the answer built on it is worth little. Add --approve to be asked before each call of a
tool that is not read-only, --json for the conversation as JSON (with each call's origin).
"""


def register(sub: Any) -> None:
    p = sub.add_parser(
        "run",
        help="run the tool loop on a question with tools from MCP servers and Python",
        description="Run the tool loop once: the model answers QUESTION, calling tools from "
        "MCP servers (--mcp) and Python functions (--tool); each call, result and the "
        "answer are printed with timings (or the conversation as JSON with --json). A call "
        "the backend edited or added is marked, one line per change.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("question", metavar="QUESTION", help="the user's question")
    p.add_argument("--backend", metavar="SPEC", default="local",
                   help="backend spec (default: local, the bundled SmolLM2-135M-Instruct)")
    p.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="backend option, repeatable (local: n_threads=1, model=PATH...)")
    add_preset_argument(p)
    p.add_argument("--mcp", action="append", default=[], metavar="COMMAND|URL",
                   help="an MCP server, repeatable: a command line (stdio; a leading "
                   "'python' is this interpreter) or an http(s) URL (streamable HTTP)")
    p.add_argument("--header", action="append", default=[], metavar="'NAME: VALUE'",
                   help="HTTP header sent to every --mcp URL, repeatable")
    p.add_argument("--tool", action="append", default=[], metavar="MODULE:FUNCTION",
                   help="a Python function as a tool, repeatable (e.g. mypkg.tools:search); "
                   "MODULE is imported from the current folder first, as uvicorn and "
                   "python -m do")
    p.add_argument("--tool-choice", default="auto", metavar="CHOICE[,CHOICE...]",
                   help="tool choice of each model turn: auto (default), any, none or a tool "
                   "name; comma-separated for a plan of several turns (then auto)")
    p.add_argument("--system", default=None, metavar="TEXT", help="the system prompt")
    p.add_argument("--approve", action="store_true",
                   help="ask on the terminal (y/N) before every call of a tool that is not "
                   "read-only (an MCP tool whose annotations say readOnlyHint: true is never "
                   "asked about). The answer is read from standard input: y or yes runs the "
                   "call; anything else, or no input (e.g. stdin at its end), denies it, and "
                   "the model is told the user denied it. Without --approve, a --tool that "
                   "itself requires approval is denied unasked")
    p.add_argument("--json", action="store_true",
                   help="print the whole conversation as JSON instead of the steps "
                   "(with each call's origin and whether it ended in an error)")
    p.add_argument("--max-tokens", type=int, default=256, help="tokens per model turn")
    p.add_argument("--max-iterations", type=int, default=5, help="model turns at most")
    p.add_argument("--timeout", type=float, default=60.0,
                   help="seconds per MCP tool call (default 60)")
    p.set_defaults(func=_run)


class UsageError(ToolUseError, ValueError):
    """Bad input on the command line: one line, exit status 2."""


def _run(args: argparse.Namespace) -> int:
    options = with_preset(parse_options(args.option, _COMMAND), args.preset, _COMMAND)
    start_local_load(args.backend, options)  # loads while the tools are imported/connected
    backend = load_cli_backend(args.backend, options, _COMMAND)
    return run_command(args, backend)


def run_command(args: argparse.Namespace, backend: Any, *, out: TextIO | None = None,
                err: TextIO | None = None, inp: TextIO | None = None) -> int:
    """Run ``tooluse run`` with parsed ``args`` on ``backend``; returns the exit status.
    ``inp`` (default stdin) is where ``--approve`` reads its answers; its prompts go to
    ``err``."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        with ExitStack() as stack:
            return _run_with(args, backend, stack, out, err,
                             inp if inp is not None else sys.stdin)
    except UsageError as exc:
        print(f"{_COMMAND}: {exc}", file=err)
        return 2


def _run_with(args: argparse.Namespace, backend: Any, stack: ExitStack, out: TextIO,
              err: TextIO, inp: TextIO | None) -> int:
    from ..runner import Runner, RunnerError
    from ..tools import ToolSet
    from ._run_printer import StepPrinter, plan_steps, token_note

    if args.max_tokens < 1 or args.max_iterations < 1 or args.timeout <= 0:
        raise UsageError("--max-tokens, --max-iterations and --timeout must be positive")
    functions = [load_function_tool(spec) for spec in args.tool]
    servers = [stack.enter_context(_connect(spec, args)) for spec in args.mcp]
    if not functions and not servers:
        raise UsageError("no tools: give --mcp COMMAND|URL or --tool MODULE:FUNCTION")
    plan = plan_steps(args.tool_choice)
    approve = getattr(args, "approve", False)
    try:
        tools = ToolSet([*functions, *servers])
        if approve:
            tools = ToolSet([t if t.read_only else t.with_approval(True) for t in tools])
        runner = Runner(backend, tools, system=args.system, tool_choice=plan,
                        max_tokens=args.max_tokens, max_iterations=args.max_iterations,
                        approve=terminal_approver(inp, err) if approve else None)
    except ToolDefinitionError as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:
        raise UsageError(f"--tool-choice {args.tool_choice!r}: {exc}") from None

    if args.json:
        try:
            result = runner.run(args.question)
        except (RunnerError, BackendError) as exc:
            print(json.dumps({"error": str(exc)}), file=out)
            return 1
        print(json.dumps(_conversation(result, runner), ensure_ascii=False, indent=2), file=out)
        return 0

    printer = StepPrinter(out, plan=plan, note=lambda: token_note(backend),
                          unasked_hint=" (tooluse run --approve asks)")
    say = printer.say
    model = getattr(backend, "model", None) or getattr(backend, "name", "model")
    say(f"{_COMMAND}: {model} ({backend_label(backend)})")
    for line in _tool_lines(runner, servers):
        say(line)
    if args.system:
        say(f"system: {args.system}")
    say()
    say(f"User: {args.question}")
    printer.restart_clock()
    try:
        printer.run(runner.stream(args.question))
    except (RunnerError, BackendError) as exc:
        say()
        say(f"The run stopped: {exc}")
        return 1
    printer.summary()
    return 0


def _connect(spec: str, args: argparse.Namespace) -> Any:
    try:
        from ..mcp import MCPConnectionError, MCPServer
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    headers = _headers(args.header)
    url = spec.strip().lower().startswith(("http://", "https://"))
    try:
        if url:
            server = MCPServer(spec, headers=headers, timeout=args.timeout)
        else:
            argv = shlex.split(spec)
            if argv and argv[0] in ("python", "python3"):
                argv[0] = sys.executable  # the interpreter tooluse (and its packages) runs on
            server = MCPServer(argv, timeout=args.timeout)
    except ValueError as exc:
        raise UsageError(f"--mcp {spec!r}: {exc}") from None
    logging.getLogger("mcp").setLevel(logging.CRITICAL)  # problems reach the output anyway
    try:
        return server.connect()
    except MCPConnectionError as exc:
        raise UsageError(str(exc)) from None


def _headers(items: list[str]) -> dict[str, str]:
    try:
        return parse_pairs(items, ":", "'NAME: VALUE'")
    except ValueError as exc:
        raise UsageError(f"--header {exc}") from None


def import_from_here(module_name: str) -> Any:
    """Import ``module_name`` with the current folder first on the import path, as
    ``uvicorn main:app`` and ``python -m`` have it (the ``tooluse`` script alone does not:
    its own folder is first). The folder stays on the path: a tool module may import its
    neighbours when it runs."""
    here = os.getcwd()
    if not sys.path or sys.path[0] != here:
        sys.path.insert(0, here)
        importlib.invalidate_caches()
    return importlib.import_module(module_name)


def load_function_tool(spec: str) -> Any:
    """``MODULE:FUNCTION`` -> that function (or Tool); a :class:`UsageError` saying what
    is missing otherwise."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise UsageError(f"--tool must be MODULE:FUNCTION, not {spec!r}")
    try:
        module = import_from_here(module_name)
    except ImportError as exc:
        raise UsageError(f"--tool {spec!r}: cannot import {module_name!r}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the module's own import failed
        raise UsageError(f"--tool {spec!r}: importing {module_name!r} failed: "
                         f"{type(exc).__name__}: {exc}") from None
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise UsageError(f"--tool {spec!r}: {module_name!r} has no {attr!r}")
        value = getattr(value, part)
    if not callable(value):
        raise UsageError(f"--tool {spec!r}: {attr!r} is not a function")
    from ..tools import as_tool

    try:
        return as_tool(value)
    except ToolDefinitionError as exc:
        raise UsageError(f"--tool {spec!r}: {exc}") from None


def terminal_approver(inp: TextIO | None, err: TextIO) -> Any:
    """The ``approve`` callback of ``--approve``: asks ``Run name(input)? [y/N]`` on
    ``err`` and reads one line of ``inp``; ``y``/``yes`` approves, anything else denies, and
    so does no input (``inp`` None or at its end: nothing can answer)."""
    from ._run_printer import args_text

    def approve(call: Any, tool: Any) -> bool:
        made = "" if call.origin is None or call.source == "model" else \
            f" [not as the model wrote it: {call.origin.describe()}]"
        print(f"Approve {tool.name}({args_text(call)}){made}? [y/N] ", end="", file=err,
              flush=True)
        line = inp.readline() if inp is not None and not inp.closed else ""
        interactive = inp is not None and not inp.closed and inp.isatty()
        if not line:
            print("(no answer: standard input is at its end) -> denied", file=err, flush=True)
            return False
        answer = line.strip()
        if not interactive:
            print(answer, file=err, flush=True)  # what was read, as a terminal would echo it
        return answer.lower() in ("y", "yes")

    return approve


def _tool_lines(runner: Any, servers: list[Any]) -> list[str]:
    """``tools: a, b (MCP server x); c (Python)`` grouped by where they come from."""
    by_source: dict[str, list[str]] = {}
    owners = {id(t.function): s.label for s in servers for t in s.get_tools()}
    for tool in runner.tools:
        source = owners.get(id(tool.function))
        where = f"MCP server {source}" if source else "Python"
        by_source.setdefault(where, []).append(tool.name)
    parts = [f"{', '.join(names)} ({where})" for where, names in by_source.items()]
    return [f"tools: {'; '.join(parts)}"]


def _conversation(result: Any, runner: Any) -> dict[str, Any]:
    calls = [
        {"id": call.id, "name": call.name, "input": call.input, "source": call.source,
         "origin": None if call.origin is None else call.origin.model_dump(mode="json"),
         "error": None if res is None else res.is_error}
        for call, res in result.tool_calls
    ]
    return {
        "question": result.messages[0].text() if result.messages else "",
        "answer": result.text,
        "stop_reason": result.stop_reason,
        "iterations": result.iterations,
        "usage": result.usage.model_dump(),
        # each call with where it came from (source model/edited/added; origin None: as the
        # model wrote it) and whether its result is an error
        "calls": calls,
        "errors": sum(1 for c in calls if c["error"]),
        "tools": [{"name": t.name, "original_name": t.original_name,
                   "description": t.description, "input_schema": t.input_schema}
                  for t in runner.tools],
        "messages": [m.model_dump(mode="json") for m in result.messages],
    }
