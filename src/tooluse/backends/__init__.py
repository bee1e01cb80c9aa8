"""Model backends behind one small interface (:class:`Backend`), chosen by spec string."""

from ..backend import Backend
from .registry import available_backends, load_backend, register_backend

__all__ = ["Backend", "available_backends", "load_backend", "register_backend"]
