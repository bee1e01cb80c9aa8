"""Start-up of the ``tooluse`` program: a process imports what its command needs, not the
whole library (docs/local.md, "Start-up and exit").

Each check runs in a fresh interpreter (``sys.modules`` of the test process holds everything
already). Behaviour, not times: which modules a start imports, that the public names still
resolve, that the program's exit keeps atexit handlers and the exit status.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

import tooluse


def _modules_after(code: str) -> set[str]:
    """The modules imported by a fresh interpreter running ``code``."""
    script = textwrap.dedent(code) + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, check=True)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def _imported(modules: set[str], *roots: str) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in roots or m in roots)


HEAVY = ("pydantic", "jsonschema", "llama_cpp", "numpy", "starlette", "uvicorn", "httpx2",
         "anyio", "asyncio", "mcp")


def test_import_tooluse_imports_none_of_the_heavy_dependencies() -> None:
    modules = _modules_after("import tooluse, tooluse.errors")
    assert not _imported(modules, *HEAVY)
    assert "tooluse.messages" not in modules and "tooluse.runner" not in modules


def test_building_the_parser_and_choosing_demo_imports_no_command_implementation() -> None:
    """``tooluse demo`` (and ``--help``) does not import the gateway, the BFCL harness, the
    codecs or the model before it needs them: the demo starts loading its model first."""
    modules = _modules_after("""
        from tooluse.cli import build_parser
        args = build_parser().parse_args(["demo"])
        assert args.func.__module__ == "tooluse.cli.demo"
    """)
    assert not _imported(modules, *HEAVY, "multiprocessing", "concurrent", "ssl", "email")
    assert not [m for m in modules if m.startswith(("tooluse.eval", "tooluse.server",
                                                    "tooluse.runner", "tooluse.codecs."))]


def test_the_public_names_resolve_lazily_and_completely() -> None:
    names = set(tooluse.__all__) - {"__version__"}
    assert names == set(tooluse._EXPORTS)
    for name in sorted(names):
        value = getattr(tooluse, name)
        assert getattr(value, "__name__", name) == name
    assert set(tooluse.__all__) <= set(dir(tooluse))
    from tooluse import Runner, ToolUseError

    assert Runner is tooluse.runner.Runner and ToolUseError is tooluse.errors.ToolUseError
    assert tooluse.eval.__name__ == "tooluse.eval"  # a submodule not imported yet, by name
    with pytest.raises(AttributeError, match="has no attribute 'nonexistent'"):
        _ = tooluse.nonexistent
    with pytest.raises(ImportError):
        from tooluse import nonexistent  # type: ignore[attr-defined]  # noqa: F401


def test_the_backends_package_resolves_lazily() -> None:
    modules = _modules_after("import tooluse.llama.model")
    assert not _imported(modules, *HEAVY)
    from tooluse import backends
    from tooluse.backend import Backend
    from tooluse.backends.registry import load_backend

    assert backends.Backend is Backend and backends.load_backend is load_backend
    assert set(backends.__all__) <= set(dir(backends))


def test_the_program_runs_atexit_handlers_and_keeps_the_exit_status() -> None:
    """``entry`` (console script, ``python -m tooluse.cli``) freezes the collector before
    shutting down, and nothing else of a normal exit is lost."""
    script = textwrap.dedent("""
        import atexit, gc, sys
        def report():
            print(f"atexit ran, frozen={gc.get_freeze_count() > 0}", flush=True)
        atexit.register(report)
        sys.argv = ["tooluse"] + sys.argv[1:]
        from tooluse.cli import entry
        entry()
    """)
    no_command = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                                timeout=120, check=False)
    assert no_command.returncode == 2  # main's status for no command
    assert "atexit ran, frozen=True" in no_command.stdout
    bad = subprocess.run([sys.executable, "-c", script, "convert", "--from", "nope"],
                         capture_output=True, text=True, timeout=120, check=False)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr  # argparse's SystemExit
    assert "atexit ran, frozen=True" in bad.stdout


def test_the_demo_sizes_its_context_for_its_conversation_on_the_default_model_only() -> None:
    from tooluse.cli import build_parser
    from tooluse.cli.demo import DEMO_N_CTX, _local_options

    def options(*argv: str) -> dict[str, object]:
        return _local_options(build_parser().parse_args(["demo", *argv]))

    assert options() == {"n_ctx": DEMO_N_CTX} == options("--backend", "local")
    assert options("--threads", "1") == {"n_threads": 1, "n_ctx": DEMO_N_CTX}
    assert options("--model", "other.gguf") == {}  # another model: its own context
    assert options("--backend", "local:/m/other.gguf") == {}
    assert options("--max-tokens", "2000") == {}  # five such turns may not fit: the model's


def test_the_synchronous_tool_loop_on_the_local_backend_imports_no_async_or_http_stack() -> None:
    """What ``tooluse demo`` imports to run: asyncio only when something async runs, the
    HTTP client and the gateway never."""
    modules = _modules_after("""
        import tooluse.backends.local, tooluse.runner, tooluse.tools, tooluse.cli.demo
        from tooluse.cli._run_printer import StepPrinter
        from tooluse.cli.demo import demo_tools
        demo_tools()
    """)
    assert not _imported(modules, "asyncio", "httpx2", "starlette", "uvicorn", "mcp")
    assert not [m for m in modules if m in ("tooluse.eval", "tooluse.server")
                or m.startswith(("tooluse.eval.", "tooluse.server."))]
