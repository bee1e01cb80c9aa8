"""Model backends behind one small interface (:class:`Backend`), chosen by spec string.

The names below are imported on first use (tooluse/_lazy.py): importing one backend module
(``tooluse.backends.local``) does not import the others' dependencies through this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..backend import Backend
    from .registry import available_backends, load_backend, register_backend

__all__ = ["Backend", "available_backends", "load_backend", "register_backend"]

_EXPORTS: dict[str, str] = {
    "Backend": "..backend",
    "available_backends": ".registry",
    "load_backend": ".registry",
    "register_backend": ".registry",
}

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, __all__, globals())
