"""Choosing a backend by a short spec string, the way the CLI and the server name one.

``"scheme:rest"`` picks the factory registered for ``scheme`` and hands it ``rest``:
``anthropic:claude-3-5-haiku-latest``, ``bedrock:anthropic.claude-3-haiku-20240307-v1:0``,
``openai:http://127.0.0.1:11434/v1#qwen2.5``, ``local`` or ``local:/path/model.gguf``.

Built-in backends register through the ``tooluse.backends`` entry-point group declared in
``pyproject.toml`` — the same way a third-party package registers its own — so there is no
central ``if provider == ...`` dispatch. :func:`register_backend` adds one at run time.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from ..backend import Backend

__all__ = [
    "BackendFactory",
    "available_backends",
    "flag_option",
    "load_backend",
    "register_backend",
    "url_and_model",
]

BackendFactory = Callable[..., Backend]
_registered: dict[str, BackendFactory] = {}


def register_backend(scheme: str, factory: BackendFactory) -> None:
    """Make ``scheme:...`` spec strings build backends with ``factory(rest, **options)``."""
    _registered[scheme] = factory


def _entry_point_factories() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group="tooluse.backends")}


def available_backends() -> list[str]:
    return sorted(set(_registered) | set(_entry_point_factories()))


def load_backend(spec: str | Backend, **options: Any) -> Backend:
    """Build the backend a spec string names (a :class:`Backend` is returned as is)."""
    if isinstance(spec, Backend):
        return spec
    scheme, _, rest = spec.partition(":")
    factory = _registered.get(scheme)
    if factory is None:
        ep = _entry_point_factories().get(scheme)
        if ep is None:
            raise ValueError(
                f"unknown backend {scheme!r} in spec {spec!r}; "
                f"available: {', '.join(available_backends()) or 'none'}"
            )
        factory = ep.load()
    return factory(rest, **options)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def flag_option(value: Any, name: str) -> bool:
    """A yes/no backend option, given as a bool or as a command line's text (``1``/``0``,
    ``true``/``false``, ``yes``/``no``, ``on``/``off``); anything else is a ``ValueError``."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"option {name!r} must be true or false, not {value!r}")


def url_and_model(rest: str) -> tuple[str | None, str | None]:
    """An HTTP backend's spec after its scheme, ``BASE_URL#MODEL``, ``BASE_URL`` or
    ``MODEL``, as ``(base_url, model)`` (``None`` for the part not given)."""
    if "#" in rest or rest.startswith(("http://", "https://")):
        url, _, model = rest.partition("#")
        return url, model or None
    return None, rest or None
