"""The ``tooluse`` command. Each sub-command lives in its own module with a ``register``
function that adds its parser; this module only assembles them."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

_COMMANDS = ("demo", "run", "convert", "serve", "eval")


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
