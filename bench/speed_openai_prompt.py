"""Forced tool calls through llama-cpp-python's OpenAI-compatible server, per decoding mode
of the ``openai-prompt`` backend: how long a call takes, how many HTTP requests it needs,
and how many calls validate against the tool's schema.

Starts the server on 127.0.0.1 (``tests/backends/openai_prompt_llama_server.py``, the same
launcher as the slow tests) serving the bundled SmolLM2-135M under two aliases: its own
chat template (cannot continue a prefill) and a ChatML template that continues a final
assistant message. Then, for each mode, asks each question once with ``tool_choice`` any
(one call at most) and greedy decoding.

    python bench/speed_openai_prompt.py            # --threads 2
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
import jsonschema

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "backends"))

from test_openai_prompt_server_slow import CONTINUE_TEMPLATE

from tooluse.backends.local import default_model_path
from tooluse.backends.openai_prompt import OpenAIPromptBackend
from tooluse.messages import Message, Request, ToolChoice, ToolSpec, ToolUseBlock
from tooluse.stream import accumulate

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
TOOLS = [
    ToolSpec(name="get_weather", description="Get the current weather for a city.",
             input_schema=SCHEMA),
    ToolSpec(name="get_time", description="Get the current local time in a city.",
             input_schema=SCHEMA),
]
QUESTIONS = {"What is the weather in Paris?": "get_weather",
             "What time is it in Tokyo?": "get_time",
             "Is it raining in London right now?": "get_weather",
             "Tell me the local time in Lima.": "get_time"}
MODES: dict[str, dict[str, Any]] = {
    "server grammar, prefill continued": {"model": "smollm2-continue", "grammar_field": "grammar"},
    "server grammar, prefill=none": {"model": "smollm2", "grammar_field": "grammar",
                                         "prefill": "none"},
    "client grammar (logprobs)": {"model": "smollm2-continue", "client_grammar": True},
    "no grammar, prefill continued": {"model": "smollm2-continue"},
}


def start_server(folder: Path, threads: int) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    tokenizer = folder / "tokenizer_config.json"
    tokenizer.write_text(json.dumps({"chat_template": CONTINUE_TEMPLATE,
                                     "bos_token": "<|im_start|>", "eos_token": "<|im_end|>"}))
    common = {"model": str(default_model_path()), "n_ctx": 4096, "n_threads": threads,
              "verbose": False}
    config = folder / "config.json"
    config.write_text(json.dumps({"host": "127.0.0.1", "port": port, "models": [
        {**common, "model_alias": "smollm2-continue", "chat_format": "hf-tokenizer-config",
         "hf_tokenizer_config_path": str(tokenizer)},
        {**common, "model_alias": "smollm2"}]}))
    launcher = ROOT / "tests" / "backends" / "openai_prompt_llama_server.py"
    process = subprocess.Popen([sys.executable, str(launcher), "--config_file", str(config)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    for _ in range(300):
        try:
            if httpx2.get(url + "/models", timeout=2).status_code == 200:
                return process, url
        except httpx2.TransportError:
            time.sleep(0.3)
    process.terminate()
    raise SystemExit("server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp), args.threads)
        try:
            # Warm both aliases (model load, first-request set-up) outside the timings.
            for alias in ("smollm2", "smollm2-continue"):
                httpx2.post(url + "/chat/completions", timeout=120, json={
                    "model": alias, "max_tokens": 1,
                    "messages": [{"role": "user", "content": "hi"}]})
            print("| mode | calls valid | right tool | median s per call | requests per call |")
            print("|---|---:|---:|---:|---:|")
            for name, options in MODES.items():
                model = options.pop("model")
                backend = OpenAIPromptBackend(model, base_url=url, **options)
                seconds: list[float] = []
                requests: list[float] = []
                valid = right = 0
                for question, expected in QUESTIONS.items():
                    request = Request(max_tokens=80, tools=TOOLS,
                                      messages=[Message(role="user", content=question)],
                                      tool_choice=ToolChoice(type="any",
                                                             disable_parallel_tool_use=True))
                    started = time.perf_counter()
                    response = accumulate(backend.stream(request))
                    seconds.append(time.perf_counter() - started)
                    end = backend.text_model.last_end
                    requests.append(end.timings.get("requests", 1.0) if end else 1.0)
                    calls = [b for b in response.content if isinstance(b, ToolUseBlock)]
                    try:
                        for call in calls:
                            jsonschema.validate(call.input, SCHEMA)
                        valid += bool(calls)
                        right += bool(calls) and calls[0].name == expected
                    except jsonschema.ValidationError:
                        pass
                backend.close()
                print(f"| {name} | {valid}/{len(QUESTIONS)} | {right}/{len(QUESTIONS)} "
                      f"| {statistics.median(seconds):.2f} "
                      f"| {statistics.mean(requests):.1f} |", flush=True)
        finally:
            process.terminate()
            process.wait(timeout=15)


if __name__ == "__main__":
    main()
