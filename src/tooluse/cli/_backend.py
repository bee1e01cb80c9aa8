"""Loading a backend from the command line: ``--backend SPEC`` plus ``-o KEY=VALUE``
options, with one-line errors naming the command (shared by ``eval bfcl`` and ``run``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..backends.registry import load_backend

__all__ = ["load_cli_backend", "parse_options", "parse_pairs"]


def parse_pairs(items: Iterable[str], separator: str, form: str) -> dict[str, str]:
    """``["a=1"]`` -> ``{"a": "1"}`` (split at the first ``separator``, both sides stripped);
    raises ValueError ``"must be <form>, not 'item'"`` for an item without a key."""
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition(separator)
        if not sep or not key.strip():
            raise ValueError(f"must be {form}, not {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_options(items: Iterable[str], command: str) -> dict[str, Any]:
    """``["n_threads=1"]`` -> ``{"n_threads": "1"}``; a malformed item exits with a message."""
    try:
        return dict(parse_pairs(items, "=", "KEY=VALUE"))
    except ValueError as exc:
        raise SystemExit(f"{command}: --option {exc}") from None


def load_cli_backend(spec: str, options: dict[str, Any], command: str) -> Any:
    """The backend ``spec`` names, built with ``options``; exits with one line on failure."""
    try:
        return load_backend(spec, **options)
    except TypeError as exc:
        hint = ("; --no-grammar needs a backend that generates with a grammar (local)"
                if "grammar" in options else "")
        raise SystemExit(
            f"{command}: backend {spec!r} does not take these options ({exc}){hint}"
        ) from None
    except (ValueError, ImportError, OSError) as exc:
        raise SystemExit(f"{command}: cannot load backend {spec!r}: {exc}") from None
