"""The ``tooluse`` command. Each sub-command lives in its own module with a ``register``
function that adds its parser; this module only assembles them. A command module imports
what its command runs inside its functions, so that building the parser (every start)
stays cheap (tests/cli/test_cli_startup.py)."""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
from collections.abc import Sequence

__all__ = ["entry", "main"]

_COMMANDS = ("demo", "run", "convert", "serve", "eval", "logs")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tooluse",
        description="Tool use for every language model: convert between tool-use formats, "
        "run the tool loop on a local model, evaluate on BFCL, and serve the Messages, "
        "Converse and Chat Completions APIs with tool use.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in _COMMANDS:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130


def entry() -> None:
    """The ``tooluse`` program (the console script and ``python -m tooluse.cli``): runs
    :func:`main` and exits with its status.

    Before the interpreter shuts down, the objects that exist are moved out of the garbage
    collector's reach (:func:`gc.freeze`). Shutting down runs full collections over every
    object of every module imported (pydantic, numpy, jinja2, llama_cpp...), a noticeable
    part of a ``tooluse demo`` (docs/benchmarks/code.md); frozen, they are skipped. Everything else of a normal exit still
    happens: ``atexit`` handlers (the local model is freed there), flushing the standard
    streams, and freeing each object whose references drop to zero (so files are closed
    and flushed). What is skipped is collecting reference *cycles* still alive at exit,
    whose finalizers Python never promises to run at exit anyway; every file tooluse
    writes is closed by a ``with`` block before the command returns. Only the program
    does this: :func:`main`, called in-process (tests, other programs), does not."""
    try:
        code = main()
    finally:
        gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
