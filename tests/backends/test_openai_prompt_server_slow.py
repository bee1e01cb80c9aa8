"""End to end: prompt-based tool use through a real OpenAI-compatible server on 127.0.0.1,
llama-cpp-python's own (``python -m llama_cpp.server``), serving the bundled SmolLM2-135M.

One server process serves the same GGUF under two names (its config-file form):

- ``smollm2``: the GGUF's own chat template. Like llama-cpp-python's server in general, it
  always opens a new assistant turn, so the prefill cannot be continued (``prefill="none"``);
- ``smollm2-continue``: a ChatML template that leaves a final assistant message open, which
  is what llama.cpp's ``llama-server`` and vLLM (``continue_final_message``) do
  (``prefill="assistant"``).

The server applies a GBNF grammar given in the request's ``grammar`` field.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import jsonschema
import pytest

from tooluse.backends.openai_prompt import OpenAIPromptBackend
from tooluse.errors import BackendError
from tooluse.messages import Message, Request, TextBlock, ToolChoice, ToolSpec, ToolUseBlock
from tooluse.prompting import build_text_prompt
from tooluse.stream import accumulate

pytestmark = pytest.mark.slow

for _module in ("llama_cpp", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
    pytest.importorskip(_module, reason=f"llama-cpp-python's server needs {_module}")

LAUNCHER = Path(__file__).with_name("openai_prompt_llama_server.py")
SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name, e.g. Paris"}},
    "required": ["city"],
}
WEATHER = ToolSpec(
    name="get_weather",
    description="Get the current weather for a city. Use it whenever the user asks about "
    "the weather somewhere.",
    input_schema=SCHEMA,
)
TIME = ToolSpec(name="get_time", description="Get the current time in a time zone.",
                input_schema={"type": "object", "properties": {"zone": {"type": "string"}},
                              "required": ["zone"]})

# ChatML (SmolLM2's format) where a final assistant message stays open: the model continues it.
CONTINUE_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging "
    "Face<|im_end|>\\n' }}{% endif %}"
    # llama-cpp-python appends an empty assistant message to ask for the answer.
    "{% if loop.last and message['role'] == 'assistant' and not message['content'] %}"
    "{% if not (loop.length > 1 and messages[-2]['role'] == 'assistant') %}"
    "{{ '<|im_start|>assistant\\n' }}{% endif %}"
    "{% elif loop.revindex == 2 and message['role'] == 'assistant' "
    "and messages[-1]['role'] == 'assistant' and not messages[-1]['content'] %}"
    "{{ '<|im_start|>assistant\\n' + message['content'] }}"
    "{% else %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] "
    "+ '<|im_end|>\\n' }}{% endif %}"
    "{% endfor %}"
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tooluse.backends.local import default_model_path

    try:
        model = str(default_model_path())
    except BackendError as exc:
        pytest.skip(str(exc))
    folder = tmp_path_factory.mktemp("llama_server")
    tokenizer_config = folder / "tokenizer_config.json"
    tokenizer_config.write_text(json.dumps({"chat_template": CONTINUE_TEMPLATE,
                                            "bos_token": "<|im_start|>",
                                            "eos_token": "<|im_end|>"}))
    port = _free_port()
    common = {"model": model, "n_ctx": 4096, "n_threads": 2, "n_batch": 512, "verbose": False}
    config = folder / "config.json"
    config.write_text(json.dumps({
        "host": "127.0.0.1",
        "port": port,
        "models": [
            {**common, "model_alias": "smollm2-continue", "chat_format": "hf-tokenizer-config",
             "hf_tokenizer_config_path": str(tokenizer_config)},
            {**common, "model_alias": "smollm2"},
        ],
    }))
    log = (folder / "server.log").open("wb")
    process = subprocess.Popen([sys.executable, str(LAUNCHER), "--config_file", str(config)],
                               stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                pytest.fail(f"llama_cpp.server exited with {process.returncode}: "
                            f"{(folder / 'server.log').read_text(errors='replace')[-2000:]}")
            try:
                if httpx2.get(url + "/models", timeout=2).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("llama_cpp.server did not start within 90 s")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def forced(*tools: ToolSpec, question: str = "What is the weather in Paris?") -> Request:
    return Request(
        max_tokens=60,
        messages=[Message(role="user", content=question)],
        tools=list(tools),
        tool_choice=ToolChoice(type="any"),
    )


def assert_valid_call(response: Any, tools: dict[str, ToolSpec]) -> ToolUseBlock:
    assert response.stop_reason == "tool_use", response.content
    calls = [b for b in response.content if isinstance(b, ToolUseBlock)]
    assert calls and all(not isinstance(b, TextBlock) for b in response.content)
    for call in calls:
        jsonschema.validate(call.input, tools[call.name].input_schema)
    return calls[0]


def test_forced_call_with_server_grammar_continuing_prefill(base_url: str) -> None:
    backend = OpenAIPromptBackend("smollm2-continue", base_url=base_url,
                                  grammar_field="grammar", prefill="assistant")
    try:
        response = accumulate(backend.stream(forced(WEATHER, TIME)))
    finally:
        backend.close()
    call = assert_valid_call(response, {"get_weather": WEATHER, "get_time": TIME})
    assert call.name == "get_weather" and "paris" in call.input["city"].lower()


def test_prefill_is_continued_without_grammar(base_url: str) -> None:
    """No grammar: the server continues the forced-call prefill, so the model's first words
    are a tool name. What follows is up to SmolLM2-135M, which without a grammar rarely
    writes the parameters right: the call may come back with an input that does not
    validate (as the Messages API may; the runner answers it with an ``is_error`` result),
    or, if it does not parse, as text, kept from the prefill on."""
    backend = OpenAIPromptBackend("smollm2-continue", base_url=base_url, prefill="assistant")
    request = forced(WEATHER)
    _, prefill, _, grammar = build_text_prompt(request, grammar=False)
    assert grammar is None and prefill.endswith("<tool_name>")
    try:
        response = accumulate(backend.stream(request))
    finally:
        backend.close()
    calls = [b for b in response.content if isinstance(b, ToolUseBlock)]
    if calls:
        assert response.stop_reason == "tool_use"
        assert [c.name for c in calls] == ["get_weather"] * len(calls)
    else:
        text = "".join(b.text for b in response.content if isinstance(b, TextBlock))
        assert text.startswith(prefill + "get_weather</tool_name>"), text
        assert response.stop_reason in ("end_turn", "max_tokens")


def test_forced_call_with_client_grammar(base_url: str) -> None:
    """No server-side grammar: the grammar is applied here, over the server's top-20
    candidates of each token (``logprobs``), the assistant message growing by the chosen
    tokens; text the grammar fixes is never asked for."""
    backend = OpenAIPromptBackend("smollm2-continue", base_url=base_url, prefill="assistant",
                                  client_grammar=True)
    request = forced(WEATHER).model_copy(
        update={"tool_choice": ToolChoice(type="any", disable_parallel_tool_use=True)})
    try:
        response = accumulate(backend.stream(request))
        end = backend.text_model.last_end
    finally:
        backend.close()
    call = assert_valid_call(response, {"get_weather": WEATHER})
    assert call.name == "get_weather" and "paris" in call.input["city"].lower()
    assert end is not None and 1 <= end.timings["requests"] <= 4


def test_forced_call_with_server_grammar_on_a_server_that_cannot_prefill(base_url: str) -> None:
    # The GGUF's own template closes a final assistant message; the prefill is not sent and
    # the grammar (which starts after it) makes the model write the rest of the call.
    backend = OpenAIPromptBackend("smollm2", base_url=base_url, grammar_field="grammar",
                                  prefill="none")
    try:
        response = accumulate(backend.stream(forced(WEATHER)))
    finally:
        backend.close()
    call = assert_valid_call(response, {"get_weather": WEATHER})
    assert call.name == "get_weather" and call.input["city"].strip()
