"""Lazy re-exports for a package's ``__init__`` (PEP 562): the names a package offers are
imported from their modules on first use, not when the package is imported.

Importing any ``tooluse`` module imports its parent packages first; if those imported all
they re-export, ``import tooluse.errors`` would cost the whole library (pydantic models,
jsonschema, asyncio, the HTTP client). With lazy re-exports a process pays only for what it
uses: ``tooluse convert`` does not import the model backends, ``tooluse demo`` not the
gateway, and ``tooluse demo`` can start loading the model before the rest is imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, exports: Mapping[str, str], names: Sequence[str],
    namespace: MutableMapping[str, Any],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package ``package``: ``exports`` maps each
    re-exported name to the module holding it (relative to ``package``, e.g. ``".tools"``);
    ``names`` is the package's ``__all__``, ``namespace`` its ``globals()`` (a name, once
    imported, is stored there, so later look-ups are plain attribute reads). Any other
    public name is tried as a submodule (``tooluse.runner`` without importing it first)."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module, package), name)
            namespace[name] = value
            return value
        if not name.startswith("_"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
