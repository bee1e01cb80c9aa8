"""`tooluse convert` (placeholder until its issue lands)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    p = sub.add_parser("convert", help="(not built yet)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    raise SystemExit("tooluse convert: not built yet")
