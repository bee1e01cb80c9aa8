"""``tooluse serve`` as a subprocess, as a user (or the benchmark) starts it."""

from __future__ import annotations

import ssl
import subprocess
import sys
import time
from collections.abc import Iterator

import anthropic
import httpx2
import openai
import pytest

from tooluse.server.thread import free_port


def _serve(*extra: str, scheme: str = "http", verify: ssl.SSLContext | bool = True) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tooluse.cli", "serve", "--backend", "scripted:hello from serve",
         "--port", str(port), "--api-key", "k1", "--max-body-bytes", "5000", "--log-level", "warning",
         *extra],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    url = f"{scheme}://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx2.get(url + "/health", timeout=1, verify=verify).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                out = proc.stdout.read().decode() if proc.stdout else ""
                pytest.fail(f"tooluse serve did not start: {out}")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture()
def served() -> Iterator[str]:
    yield from _serve()


def test_serve_subprocess(served: str) -> None:
    health = httpx2.get(served + "/health").json()
    assert health == {"status": "ok", "backend": "scripted", "model": "scripted"}
    msg = anthropic.Anthropic(base_url=served, api_key="k1", max_retries=0).messages.create(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert msg.content[0].text == "hello from serve"  # type: ignore[union-attr]
    chat = openai.OpenAI(base_url=served + "/v1", api_key="k1", max_retries=0).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "x"}])
    assert chat.choices[0].message.content == "hello from serve"
    with pytest.raises(anthropic.AuthenticationError):
        anthropic.Anthropic(base_url=served, api_key="nope", max_retries=0).messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    with pytest.raises(anthropic.APIStatusError) as info:
        anthropic.Anthropic(base_url=served, api_key="k1", max_retries=0).messages.create(
            model="m", max_tokens=5, messages=[{"role": "user", "content": "x" * 6000}])
    assert info.value.status_code == 413


def test_serve_over_tls(tls_cert: tuple[str, str, str]) -> None:
    """``--ssl-certfile/--ssl-keyfile``: the gateway speaks HTTPS with the given certificate;
    a client that trusts the CA gets through, one that does not is refused by TLS itself."""
    ca_file, cert_file, key_file = tls_cert
    trusted = ssl.create_default_context(cafile=ca_file)
    served_tls = _serve("--ssl-certfile", cert_file, "--ssl-keyfile", key_file,
                        scheme="https", verify=trusted)
    url = next(served_tls)
    try:
        with httpx2.Client(verify=trusted) as http:
            client = anthropic.Anthropic(base_url=url, api_key="k1", max_retries=0, http_client=http)
            msg = client.messages.create(
                model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
            assert msg.content[0].text == "hello from serve"  # type: ignore[union-attr]
        with pytest.raises(httpx2.ConnectError):
            httpx2.get(url + "/health", timeout=5)  # the system store does not know this CA
    finally:
        served_tls.close()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ssl-certfile", "/nonexistent/cert.pem"], "--ssl-certfile: no such file"),
        (["--ssl-keyfile", "/nonexistent/key.pem"], "--ssl-keyfile needs --ssl-certfile"),
        (["--server-tool-turns", "0"], "--server-tool-turns must be a positive integer"),
        (["--server-tool-timeout", "-1"], "--server-tool-timeout must be > 0 seconds"),
    ],
)
def test_serve_rejects_bad_tls_options(args: list[str], message: str) -> None:
    out = subprocess.run([sys.executable, "-m", "tooluse.cli", "serve", "--backend", "scripted:x", *args],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2
    assert message in out.stderr


def test_serve_rejects_unknown_backend() -> None:
    out = subprocess.run([sys.executable, "-m", "tooluse.cli", "serve", "--backend", "nosuch:x"],
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2
    assert "unknown backend 'nosuch'" in out.stderr


def _refs(value: object) -> list[str]:
    if isinstance(value, dict):
        return [r for k, v in value.items() for r in ([v] if k == "$ref" else _refs(v))]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def test_openapi_and_health_in_process() -> None:
    from starlette.testclient import TestClient

    from tooluse.backends.scripted import ScriptedBackend
    from tooluse.server import create_app

    with TestClient(create_app(ScriptedBackend(["x"]))) as client:
        doc = client.get("/openapi.json").json()
        assert doc["openapi"].startswith("3.1")
        assert set(doc["paths"]) == {
            "/v1/messages", "/v1/messages/count_tokens", "/model/{modelId}/converse",
            "/model/{modelId}/converse-stream", "/v1/chat/completions", "/v1/responses",
            "/v1/responses/{response_id}", "/v1/responses/{response_id}/input_items",
            "/v1/models", "/v1/models/{model_id}", "/usage", "/health"}
        for path, item in doc["paths"].items():  # every $ref names a schema of the document
            for ref in _refs(item):
                assert ref.rsplit("/", 1)[1] in doc["components"]["schemas"], (path, ref)
        ref = doc["paths"]["/v1/messages"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert ref.rsplit("/", 1)[1] in doc["components"]["schemas"]
        assert client.get("/health").json()["status"] == "ok"
