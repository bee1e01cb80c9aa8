"""Presets: opt-in sets of rules that read the question around a text model's tool calls.

A preset implements :class:`~tooluse.prompting.assist.Assist`, the hook by which the
prompt-based backend lets rules plan a request's calls, steer the model's values, edit the
calls it wrote and add calls it did not. None is on unless the user asks for one
(``LocalBackend(preset="en-bfcl")``, ``-o preset=en-bfcl``, ``--preset en-bfcl``); every
change a preset makes is recorded on the call (:class:`~tooluse.messages.CallOrigin`).

Presets register through the ``tooluse.presets`` entry-point group, as backends do
(``pyproject.toml``: ``en-bfcl = "tooluse.presets.en_bfcl:EnBfcl"``); a third-party
package registers its own the same way, or at run time with :func:`register_preset`.

- ``en-bfcl`` (:mod:`.en_bfcl`): English only, fitted on the six BFCL categories the
  project tuned on; each rule's measured gain and harm in docs/local.md.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from ..prompting.assist import Assist

__all__ = ["PresetFactory", "available_presets", "load_preset", "register_preset"]

#: Builds a preset from its options (rule switches as keyword arguments).
PresetFactory = Callable[..., Assist]
_registered: dict[str, PresetFactory] = {}


def register_preset(name: str, factory: PresetFactory) -> None:
    """Make ``load_preset(name, **options)`` call ``factory(**options)``."""
    _registered[name] = factory


def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group="tooluse.presets")}


def available_presets() -> list[str]:
    return sorted(set(_registered) | set(_entry_points()))


def load_preset(name: str, **options: Any) -> Assist:
    """The preset registered as ``name``, built with ``options`` (its rule switches).
    Raises ValueError for an unknown name or option."""
    factory = _registered.get(name)
    if factory is None:
        ep = _entry_points().get(name)
        if ep is None:
            raise ValueError(f"unknown preset {name!r}; available: "
                             f"{', '.join(available_presets()) or 'none'}")
        factory = ep.load()
    return factory(**options)
