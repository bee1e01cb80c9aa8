"""Prompt-based tool use over an OpenAI-compatible server, for models without native tools.

Many models served by Ollama, vLLM or llama.cpp's server have no tool-calling template: the
server's ``tools`` field is ignored or refused. For those, :class:`OpenAIPromptBackend` does
what the local backend does in process (:class:`~tooluse.prompting.PromptToolsBackend`: tools
in the system prompt in the legacy XML format, ``<function_calls>`` parsed back, the
assistant turn prefilled for a forced choice), with :class:`OpenAIChatTextBackend` as the
text model: plain ``POST {base_url}/chat/completions`` requests, streamed, with no ``tools``.

Three things a text backend must do are not standard Chat Completions, so they are options:

- **prefill** (the start of the assistant turn, e.g. ``<function_calls>\\n<invoke>\\n<tool_name>``
  for ``tool_choice`` ``any``). ``prefill="assistant"`` (default) sends it as a final
  assistant message, which llama.cpp's ``llama-server`` (since 2025) and Ollama continue;
  ``"continue_final_message"`` adds vLLM's flags (``continue_final_message: true,
  add_generation_prompt: false``, also read by SGLang and recent ``llama-server``);
  ``"none"`` sends nothing, for servers that always open a new assistant turn
  (llama-cpp-python's own server): the answer is searched for the prefill the model wrote
  itself. A server that "continues" by echoing the prefill first is handled in every mode.
- **grammar**: the GBNF of :attr:`ToolGrammar.gbnf` in the field the server reads
  (``grammar_field="grammar"``: llama.cpp's server and llama-cpp-python's; ``"guided_grammar"``:
  vLLM before its ``structured_outputs`` field; a dotted path such as
  ``"structured_outputs.grammar"`` nests it). With no field a grammar cannot be applied, and
  :meth:`OpenAIChatTextBackend.generate_text` raises ``NotImplementedError`` as the
  protocol asks; :class:`OpenAIPromptBackend` therefore turns the grammar off by default
  when no field is given, and refuses ``grammar=True`` without one. A server with no
  grammar field but with ``logprobs`` can have the grammar applied here instead
  (``client_grammar=True``, :mod:`._client_grammar`: the server's tokens are kept while the
  grammar allows them, else its best allowed candidate).
- **which stop string ended the text**: Chat Completions only says ``finish_reason:
  "stop"``. vLLM adds ``stop_reason``; otherwise the text is also scanned here, so a stop
  string the server leaves in the text (or does not apply) is still found and cut.

A reasoning model's ``<think>`` section at the start of the text becomes a thinking block
(:mod:`tooluse.prompting.thinking`); ``think_tags=True`` declares a thinking model (Qwen3, an
R1 distill served without a reasoning parser): a request asking for reasoning then gets a
bounded think section in the grammar, each turn sends ``chat_template_kwargs:
{"enable_thinking": ...}`` (read by vLLM, SGLang and llama.cpp's server), and the history's
thinking goes back into its turns. Reasoning a server's own parser moves to
``reasoning_content`` is not read.

Spec: ``openai-prompt:http://127.0.0.1:8000/v1#MODEL`` (base URL, then ``#model``), or
``openai-prompt:MODEL`` with the base URL from ``OPENAI_BASE_URL``; the key from ``api_key=``
or ``OPENAI_API_KEY``. See ``docs/openai_prompt.md``.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.parse
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, Unpack

import httpx2

from ..codecs.legacy import ToolStyle
from ..errors import BackendError
from ..grammar.tool_calls import GrammarLimits, ToolGrammar
from ..prompting.per_context import PerContext
from ..prompting.text_model import (
    Generation,
    GenerationOptions,
    StopScanner,
    TextEnd,
    TextMessage,
)
from ..prompting.tool_use import PromptToolsBackend
from ._client_grammar import constrained_generate, step_result_from_chat
from ._openai_chat_stream import (
    _apply_finish,
    _apply_usage,
    _as_chunk,
    _content_of,
    _json_body,
    _read_chunk,
    error_from_body,
)
from ._sse import loads
from ._upstream import Upstream, UsesUpstream
from .openai import DEFAULT_BASE_URL
from .options import UPSTREAM_KEYS, UpstreamOptions, check_options
from .registry import flag_option, url_and_model

__all__ = [
    "OpenAIChatTextBackend",
    "OpenAIPromptBackend",
    "PrefillMode",
    "from_spec",
]

PrefillMode = Literal["assistant", "continue_final_message", "none"]
_PREFILL_MODES = ("assistant", "continue_final_message", "none")
_FIELD_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: How much text, in "none" prefill mode, may come before the model's own copy of the
#: prefill (a forced call's opening) before we stop looking for it.
_ECHO_WINDOW = 2000
_WS = " \t\r\n"


class _Echo:
    """Removes the model's own copy of the prefill from the start of its answer.

    ``loose=False``: the prefill was sent, so the continuation should not repeat it; a server
    that opens a new turn instead (the model then often starts by writing the prefill again)
    is caught by an exact match at the start (leading blanks ignored).

    ``loose=True`` (the prefill was not sent): the model was asked, by the prompt alone, to
    answer with the call; the prefill is searched for, blanks ignored, within the first
    :data:`_ECHO_WINDOW` characters, and what comes before it is dropped (a forced call has no
    text before it). Not found: everything is passed on at the end, nothing is lost.
    """

    def __init__(self, prefill: str, *, loose: bool) -> None:
        self.target = prefill.strip(_WS)
        self.loose = loose
        self.done = not self.target
        self.buffer = ""
        self.pattern: re.Pattern[str] | None = None
        if loose and self.target:
            # Literal characters with optional blanks between them: no nested quantifiers,
            # and the searched text is bounded by the window.
            chars = [c for c in self.target if c not in _WS]
            self.pattern = re.compile(r"\s*".join(re.escape(c) for c in chars))

    def push(self, text: str) -> str:
        if self.done:
            return text
        self.buffer += text
        if self.pattern is not None:
            found = self.pattern.search(self.buffer)
            if found is not None:
                return self._release(found.end())
            if len(self.buffer) > _ECHO_WINDOW:
                return self._release(0)
            return ""
        body = self.buffer.lstrip(_WS)
        if body.startswith(self.target):
            return self._release(len(self.buffer) - len(body) + len(self.target))
        if self.target.startswith(body):
            return ""  # still possibly the echo: wait for more
        return self._release(0)

    def flush(self) -> str:
        return "" if self.done else self._release(0)

    def _release(self, cut: int) -> str:
        out = self.buffer[cut:]
        self.buffer = ""
        self.done = True
        return out


class OpenAIChatTextBackend(UsesUpstream):
    """A :class:`~tooluse.prompting.text_model.TextBackend` over ``/chat/completions``.

    - ``model``: sent as ``model`` (omitted when None: llama-cpp-python's server serves its
      one model without it).
    - ``base_url``: up to ``/v1`` (default ``OPENAI_BASE_URL``, then OpenAI's).
    - ``prefill``: how the start of the assistant turn is sent (see the module docstring).
    - ``grammar_field``: where the GBNF goes, or None when the server takes no grammar.
    - ``stream_usage``: ask for token counts in the stream (``stream_options``); servers that
      do not send them leave the counts at 0.
    - ``extra_body``: more fields merged into every request (``{"repeat_penalty": 1.1}``).
    - ``think_tags``: the model is a thinking model (:mod:`tooluse.prompting.thinking`); a
      turn's ``think`` is then sent as ``chat_template_kwargs.enable_thinking``.
    - ``timeout``, ``retry`` / ``max_retries``, ``headers``, ``transport`` / ``http_client``:
      as for :class:`~tooluse.backends.openai.OpenAIBackend`. Retries happen only before the
      first chunk arrives.
    """

    #: How the last generation in the current context ended, kept when its consumer
    #: stopped early (:class:`~tooluse.prompting.per_context.PerContext`: concurrent
    #: requests each see their own).
    last_end: PerContext[TextEnd | None] = PerContext(lambda: None)

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        prefill: PrefillMode = "assistant",
        grammar_field: str | None = None,
        client_grammar: bool = False,
        candidates: int = 20,
        lookahead: int = 16,
        stream_usage: bool = True,
        extra_body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        think_tags: bool = False,
        **options: Unpack[UpstreamOptions],
    ) -> None:
        if prefill not in _PREFILL_MODES:
            raise ValueError(f"prefill must be one of {', '.join(_PREFILL_MODES)}, not {prefill!r}")
        if grammar_field is not None and not _FIELD_PATH.match(grammar_field):
            raise ValueError(
                f"grammar_field must be a field name such as 'grammar', 'guided_grammar' or "
                f"'structured_outputs.grammar', not {grammar_field!r}"
            )
        if client_grammar and prefill == "none":
            raise ValueError(
                "client_grammar needs a server that continues a final assistant message "
                "(prefill='assistant' or 'continue_final_message'), not prefill='none'"
            )
        if not 1 <= int(candidates) <= 100:
            raise ValueError("candidates must be between 1 and 100")
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.prefill_mode: PrefillMode = prefill
        self.grammar_field = grammar_field
        self.client_grammar = client_grammar
        self.candidates = int(candidates)
        self.lookahead = max(1, int(lookahead))
        self.stream_usage = stream_usage
        self.extra_body = dict(extra_body or {})
        self.extra_headers = dict(headers or {})
        self.think_tags = think_tags
        check_options(type(self).__name__, options, UPSTREAM_KEYS)
        self.upstream = Upstream("openai-prompt", error_from_body, **options)

    @property
    def endpoint(self) -> str:
        """``{base_url}/chat/completions``, keeping a query the base URL has."""
        parts = urllib.parse.urlsplit(self.base_url)
        return urllib.parse.urlunsplit(
            parts._replace(path=parts.path.rstrip("/") + "/chat/completions"))

    @property
    def supports_grammar(self) -> bool:
        return self.grammar_field is not None or self.client_grammar

    # -- the request --------------------------------------------------------------------------
    def build_body(self, messages: Sequence[TextMessage],
                   **options: Unpack[GenerationOptions]) -> dict[str, Any]:
        """The JSON body of the ``/chat/completions`` request for one generation."""
        return self._body(messages, Generation(**options))

    def _body(self, messages: Sequence[TextMessage], g: Generation) -> dict[str, Any]:
        prefill, grammar = g.prefill, g.grammar
        if grammar is not None and not self.supports_grammar:
            raise NotImplementedError(
                "this OpenAI-compatible server was configured without a grammar field "
                "(grammar_field=None), so a grammar cannot be applied: set grammar_field "
                "('grammar' for llama.cpp's server, 'guided_grammar' for vLLM), or "
                "client_grammar=True for a server with logprobs, or build the prompt "
                "backend with grammar=False"
            )
        wire: list[dict[str, str]] = []
        for i, message in enumerate(messages):
            role, content = message.get("role"), message.get("content")
            if role not in ("system", "user", "assistant") or not isinstance(content, str):
                raise BackendError(
                    f"openai-prompt: messages.{i}: a text message needs role system, user or "
                    f"assistant and string content, got role {role!r}",
                    kind="invalid_request",
                )
            wire.append({"role": role, "content": content})
        body: dict[str, Any] = {}
        if self.model is not None:
            body["model"] = self.model
        body["messages"] = wire
        if prefill and self.prefill_mode != "none":
            wire.append({"role": "assistant", "content": prefill})
            if self.prefill_mode == "continue_final_message":
                body["continue_final_message"] = True
                body["add_generation_prompt"] = False
        body["stream"] = True
        if self.stream_usage:
            body["stream_options"] = {"include_usage": True}
        body["max_tokens"] = int(g.max_tokens)
        body["temperature"] = float(g.temperature)
        if g.top_p is not None:
            body["top_p"] = float(g.top_p)
        if g.top_k is not None:
            body["top_k"] = int(g.top_k)
        stops = [s for s in g.stop if s]
        if stops:
            body["stop"] = stops
        if g.think is not None:
            body["chat_template_kwargs"] = {"enable_thinking": g.think}
        body.update(self.extra_body)
        if grammar is not None and self.grammar_field is not None:
            *parents, leaf = self.grammar_field.split(".")
            target = body
            for name in parents:
                inner = target.get(name)
                if not isinstance(inner, dict):
                    inner = {}
                target[name] = inner = dict(inner)
                target = inner
            target[leaf] = grammar.gbnf
        return body

    # -- generation ---------------------------------------------------------------------------
    def generate_text(self, messages: Sequence[TextMessage],
                      **options: Unpack[GenerationOptions]) -> Iterator[str | TextEnd]:
        g = Generation(**options)
        body = self._body(messages, g)
        if g.grammar is not None and self.grammar_field is None:
            return self._generate_client(body, g.prefill, g.grammar, g.stop, g.max_tokens,
                                         g.temperature)
        # With a grammar and no prefill sent, the grammar itself starts after the prefill:
        # the model cannot write it again.
        loose = self.prefill_mode == "none" and g.grammar is None
        echo = _Echo(g.prefill if (self.prefill_mode != "none" or loose) else "", loose=loose)
        return self._generate(body, g.stop, echo)

    def _generate(self, body: dict[str, Any], stop: Sequence[str],
                  echo: _Echo) -> Iterator[str | TextEnd]:
        started = time.perf_counter()
        end = TextEnd(reason="end")
        self.last_end = None
        response = self._send(body)
        first: float | None = None
        scanner = StopScanner(stop)
        cut = False  # a stop string was found in the text here
        finished = False  # the server said why it stopped (finish_reason)
        try:
            for payload in self._payloads(response):
                choice, usage = _read_chunk(payload)
                if usage is not None:
                    _apply_usage(end, usage)
                if choice is None:
                    continue
                content = _content_of(choice)
                if content:
                    if first is None:
                        first = time.perf_counter()
                    text, hit = scanner.push(echo.push(content))
                    if text:
                        yield text
                    if hit is not None:
                        end.reason, end.stop_sequence, cut = "stop", hit, True
                        break
                finish = choice.get("finish_reason")
                if finish:
                    finished = True
                    _apply_finish(end, finish, choice.get("stop_reason"), stop)
            if not cut and not finished:
                raise BackendError("openai-prompt: the upstream stream is incomplete: it ended "
                                   "without a finish_reason", kind="api")
            if not cut:
                text, hit = scanner.push(echo.flush())
                rest = text if hit is not None else text + scanner.flush()
                if rest:
                    yield rest
                if hit is not None:
                    end.reason, end.stop_sequence = "stop", hit
        finally:
            response.close()
            now = time.perf_counter()
            end.timings = {"total_s": now - started}
            if first is not None:
                end.timings["first_chunk_s"] = first - started
            self.last_end = end
        yield end

    def _generate_client(self, body: dict[str, Any], prefill: str, grammar: ToolGrammar,
                         stop: Sequence[str], max_tokens: int,
                         temperature: float) -> Iterator[str | TextEnd]:
        """Client-side constrained decoding (:mod:`._client_grammar`): one-token requests
        with their top candidates, the assistant message growing by the chosen token."""
        base = {k: v for k, v in body.items()
                if k not in ("stream", "stream_options", "stop", "max_tokens", "temperature")}
        base.update(stream=False, temperature=float(temperature), logprobs=True,
                    top_logprobs=self.candidates)
        if self.prefill_mode == "continue_final_message":
            base.update(continue_final_message=True, add_generation_prompt=False)
        messages = [m for m in base["messages"]]
        if prefill and messages and messages[-1]["role"] == "assistant":
            messages.pop()  # the prefill goes back on with the continuation

        def step(continuation: str, n: int) -> Any:
            text = prefill + continuation
            request = dict(base, max_tokens=n,
                           messages=messages + ([{"role": "assistant", "content": text}]
                                                if text else []))
            if not text:
                request.pop("continue_final_message", None)
                request.pop("add_generation_prompt", None)
            response = self._send(request)
            try:
                data = _json_body(response)
            finally:
                response.close()
            if isinstance(data, dict) and "error" in data and "choices" not in data:
                raise error_from_body(data, None)
            try:
                return step_result_from_chat(data)
            except ValueError as exc:
                raise BackendError(f"openai-prompt: client_grammar: {exc}",
                                   kind="invalid_request") from None

        started = time.perf_counter()
        end: TextEnd | None = None
        self.last_end = None
        try:
            for item in constrained_generate(step, grammar, matcher=grammar.matcher,
                                             stop=stop, max_tokens=max_tokens,
                                             temperature=temperature,
                                             lookahead=self.lookahead):
                if isinstance(item, TextEnd):
                    end = item
                    break
                yield item
        finally:
            if end is not None:
                end.timings["total_s"] = time.perf_counter() - started
                self.last_end = end
        if end is not None:
            yield end

    def _payloads(self, response: httpx2.Response) -> Iterator[dict[str, Any]]:
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type == "application/json":
            # A server that ignores "stream": one document; read it as one chunk.
            yield _as_chunk(_json_body(response))
            return
        for sse in self.upstream.events(response):
            data = sse.data.strip()
            if not data:
                continue
            if data == b"[DONE]":
                return
            try:
                payload = loads(data)
            except ValueError:
                raise BackendError(
                    f"openai-prompt: malformed stream chunk: {sse.text.strip()[:200]!r}",
                    kind="api") from None
            if not isinstance(payload, dict):
                raise BackendError(
                    f"openai-prompt: a stream chunk is not an object: {sse.text.strip()[:200]!r}",
                    kind="api")
            if "error" in payload and "choices" not in payload:
                raise error_from_body(payload, None)
            yield payload
        raise BackendError("openai-prompt: the upstream stream is incomplete: it ended "
                           "without data: [DONE]", kind="api")

    # -- HTTP ---------------------------------------------------------------------------------
    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        headers.update(self.extra_headers)
        return headers

    def _send(self, body: dict[str, Any]) -> httpx2.Response:
        content = json.dumps(body, ensure_ascii=False).encode("utf-8")
        return self.upstream.send(self.endpoint, content, self._headers(), stream=True)

    def close(self) -> None:
        self.upstream.close()


# -- the tool-use backend -----------------------------------------------------------------------


class OpenAIPromptBackend(PromptToolsBackend):
    """Messages-API tool use over any OpenAI-compatible server, prompt-based (see the module
    docstring). Takes the options of :class:`OpenAIChatTextBackend` and of
    :class:`~tooluse.prompting.PromptToolsBackend` (``style``, ``max_tokens``, ``limits``).

    ``grammar``: default on exactly when ``grammar_field`` is given; ``grammar=True``
    without a field is refused here, at construction, rather than at the first request.
    ``think_tags``: the model is a thinking model (see the module docstring).
    """

    name = "openai-prompt"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        grammar_field: str | None = None,
        client_grammar: bool = False,
        grammar: bool | None = None,
        prefill: PrefillMode = "assistant",
        style: ToolStyle = "xml",
        max_tokens: int = 1024,
        limits: GrammarLimits | None = None,
        think_tags: bool = False,
        **http_options: Any,
    ) -> None:
        if grammar is None:
            grammar = grammar_field is not None or client_grammar
        if grammar and grammar_field is None and not client_grammar:
            raise ValueError(
                "grammar=True needs grammar_field (the request field the server reads a GBNF "
                "grammar from: 'grammar' for llama.cpp's server, 'guided_grammar' for vLLM) "
                "or client_grammar=True"
            )
        text = OpenAIChatTextBackend(model, base_url=base_url, grammar_field=grammar_field,
                                     client_grammar=client_grammar, prefill=prefill,
                                     think_tags=think_tags, **http_options)
        super().__init__(text, style=style, grammar=grammar, max_tokens=max_tokens,
                         limits=limits, model=model)

    @property
    def text_model(self) -> OpenAIChatTextBackend:
        assert isinstance(self.text_backend, OpenAIChatTextBackend)
        return self.text_backend

    def close(self) -> None:
        self.text_model.close()


#: Options that may also be given in the spec string's query (``...?grammar_field=grammar``),
#: for command lines that pass only a spec (``tooluse serve --backend``).
SPEC_OPTIONS = ("grammar_field", "client_grammar", "candidates", "lookahead", "grammar",
                "prefill", "style", "max_tokens", "timeout", "connect_timeout", "read_timeout",
                "max_retries", "stream_usage", "think_tags")


def _spec_query(base_url: str, options: dict[str, Any]) -> str:
    """Move the known options out of the base URL's query into ``options`` (keyword
    options win); other query parameters stay in the URL."""
    parts = urllib.parse.urlsplit(base_url)
    if not parts.query:
        return base_url
    kept: list[tuple[str, str]] = []
    for key, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if key in SPEC_OPTIONS:
            options.setdefault(key, value)
        else:
            kept.append((key, value))
    return urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(kept)))


def from_spec(rest: str, **options: Any) -> OpenAIPromptBackend:
    """``openai-prompt:BASE_URL#MODEL`` or ``openai-prompt:MODEL``. Options (strings from a
    command line are accepted), as keywords or in the URL's query
    (``openai-prompt:http://127.0.0.1:8080/v1?grammar_field=grammar&prefill=none#MODEL``):
    ``grammar_field`` (``none`` for no grammar), ``grammar``, ``prefill``, ``style``,
    ``max_tokens``, ``timeout``, ``max_retries``, ``stream_usage``, ``think_tags``; keywords
    only: ``api_key``, ``headers``, ``extra_body``, ``limits``."""
    base_url, model = url_and_model(rest)
    if base_url is not None:
        base_url = _spec_query(base_url, options)
    for key in ("grammar", "stream_usage", "client_grammar", "think_tags"):
        if key in options and options[key] is not None:
            options[key] = flag_option(options[key], key)
    for key in ("max_tokens", "max_retries", "candidates", "lookahead"):
        if key in options and options[key] is not None:
            options[key] = int(options[key])
    for key in ("timeout", "connect_timeout", "read_timeout"):
        if key in options and options[key] is not None:
            options[key] = float(options[key])
    if str(options.get("grammar_field", "")).strip().lower() in ("none", "null", "off", ""):
        options["grammar_field"] = None
    if base_url is not None:
        options.setdefault("base_url", base_url)
    return OpenAIPromptBackend(model, **options)
