"""Tool formats: how a text model is prompted with tools and how its calls are written.

- ``xml`` (the default): the seeds' prompt-based format, ``<function_calls>`` with the tool
  descriptions in a system prompt (:mod:`tooluse.prompting.text_prompt`, the legacy codec);
  works on any model, the format the Messages API documents.
- ``native``: the model family's own format, chosen from its chat template
  (:func:`detect`): the template is rendered with ``tools=`` as the model was trained, and the
  calls are constrained and parsed in the family's wrapping (:class:`~.native.NativeFormat`):
  :class:`~.hermes.HermesFormat` (Qwen2.5, Qwen3: ``<tool_call>``),
  :class:`~.llama3.Llama3Format` (Llama 3.1+: JSON calls), :class:`~.mistral.MistralFormat`
  (``[TOOL_CALLS]``), :class:`~.harmony.HarmonyFormat` (gpt-oss: OpenAI's harmony
  messages, a call's recipient ``to=functions.NAME`` in its header, reasoning on the
  ``analysis`` channel, the answer on ``final``).

:func:`choose` turns the ``tool_format`` option (``xml``, ``native``, ``auto``, or a family's
name) and the chat template into the format to use: ``auto`` picks the native one when the
template renders tools (the bundled SmolLM2-135M's does not, so it stays XML).

Why a package: each family is a small module of its own (its wrapping, its template's
quirks), beside the parser and the prompt they share; adding a family is adding a module and
a line to :data:`FAMILIES`, nothing in the prompting layer changes.
"""

from __future__ import annotations

from typing import Literal

from .harmony import HarmonyFormat
from .hermes import HermesFormat
from .llama3 import Llama3Format
from .mistral import MistralFormat
from .native import NativeFormat, NativePrompt, template_tools
from .parser import JsonCallParser

__all__ = ["FAMILIES", "HarmonyFormat", "HermesFormat", "JsonCallParser", "Llama3Format", "MistralFormat",
           "NativeFormat", "NativePrompt", "ToolFormatName", "choose", "detect",
           "renders_tools", "template_tools"]

#: The families known, in the order :func:`detect` tries them.
FAMILIES: dict[str, type[NativeFormat]] = {
    "hermes": HermesFormat,
    "mistral": MistralFormat,
    "harmony": HarmonyFormat,
    "llama3": Llama3Format,
}

ToolFormatName = Literal["xml", "native", "auto", "hermes", "llama3", "mistral", "harmony"]


def renders_tools(template: str | None) -> bool:
    """Whether a chat template renders a ``tools`` list (reads the variable)."""
    return bool(template) and "tools" in str(template)


def detect(template: str | None) -> NativeFormat | None:
    """The family whose format ``template`` renders tools in, or None (no tools in it, or a
    family not known here)."""
    if not renders_tools(template):
        return None
    assert template is not None
    for family in FAMILIES.values():
        fmt = family()
        if fmt.matches(template):
            return fmt
    return None


def choose(option: str, template: str | None) -> NativeFormat | None:
    """The format for ``tool_format=option`` on a model with ``template``: None is XML.

    ``xml``: XML. ``auto``: the family :func:`detect` finds, else XML. ``native``: that
    family, and a ``ValueError`` where there is none (the template renders no tools, or in
    a format not known here). A family's name forces that family's format."""
    if option == "xml":
        return None
    if option in FAMILIES:
        return FAMILIES[option]()
    if option not in ("native", "auto"):
        raise ValueError(f"tool_format must be xml, native, auto or one of "
                         f"{', '.join(FAMILIES)}, not {option!r}")
    found = detect(template)
    if found is None and option == "native":
        why = "renders no tools" if not renders_tools(template) else \
            "renders tools in a format not known here"
        raise ValueError(f"tool_format=native: the model's chat template {why}; use "
                         f"tool_format=xml, or name the family ({', '.join(FAMILIES)})")
    return found
