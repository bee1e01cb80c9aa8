"""The trace page in a real headless Chromium (Debian's chromium and chromidriver, driven by
Selenium; no downloaded browser): the list of requests, one opened with its prompt, raw
output with the call block marked, calls with origin and validation, and the search.

Skips, saying how to get a browser, where there is none (.ci/run installs Debian's)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import httpx2 as httpx
import pytest
from trace_fakes import WEATHER_WIRE, city_backend

from tooluse.server import ServerThread
from tooluse.server.app import create_app
from tooluse.trace.store import TraceStore

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is in the [test] extra")
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions
from selenium.webdriver.support.ui import WebDriverWait

HOW = ("no Chromium for the trace page test: on Debian or Ubuntu run "
       "'apt-get install -y chromium chromium-driver' as root (.ci/run does), or set "
       "TOOLUSE_CHROMIUM and TOOLUSE_CHROMEDRIVER to their paths")


def _binaries() -> tuple[str, str] | None:
    browser = os.environ.get("TOOLUSE_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")
    driver = os.environ.get("TOOLUSE_CHROMEDRIVER") or shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    found = _binaries()
    if found is None:
        pytest.skip(HOW)
    # Selenium Manager must never fetch a browser or a driver: both are given, and offline.
    monkeypatch.setenv("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = found[0]
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1400,1000", "--disable-extensions", "--no-first-run"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options,
                              service=webdriver.ChromeService(executable_path=found[1]))
    try:
        yield driver
    finally:
        driver.quit()


def _ask(url: str, city: str) -> None:
    answer = httpx.post(url + "/v1/messages", timeout=30, json={
        "model": "m", "max_tokens": 200, "tools": [WEATHER_WIRE],
        "tool_choice": {"type": "any"},
        "messages": [{"role": "user", "content": f"Weather in {city}?"}]})
    assert answer.status_code == 200


@pytest.mark.slow
def test_trace_page_lists_requests_and_shows_one_side_by_side(browser: Any) -> None:
    store = TraceStore()
    with ServerThread(create_app(city_backend(), trace=store)) as server:
        for city in ("Paris", "Tokyo"):
            _ask(server.url, city)
        httpx.post(server.url + "/v1/messages", content=b"{oops",
                   headers={"content-type": "application/json"})
        store.flush()
        wait = WebDriverWait(browser, 20)
        browser.get(server.url + "/trace")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".trace-row")) == 3)
        rows = browser.find_elements(By.CSS_SELECTOR, ".trace-row")
        cells = [[c.text for c in row.find_elements(By.TAG_NAME, "td")] for row in rows]
        assert [c[1] for c in cells] == ["messages"] * 3
        assert [c[4] for c in cells] == ["0", "1", "1"]  # newest (the bad request) first
        assert cells[0][5].startswith("error") and cells[1][5] == "ok (200)"
        assert cells[1][3] == "get_weather" and cells[1][6].endswith("ms")

        paris = next(row for row in rows if row.get_attribute("data-id")
                     == store.list(search="Paris")[0]["id"])
        paris.click()
        wait.until(expected_conditions.visibility_of_element_located((By.ID, "detail")))
        wait.until(lambda d: "Paris" in d.find_element(By.CSS_SELECTOR, ".prompt").text)
        prompt = browser.find_element(By.CSS_SELECTOR, ".prompt").text
        assert "Weather in Paris?" in prompt and "Tokyo" not in prompt
        assert "<tool_name>get_weather</tool_name>" in prompt  # the tools' system prompt
        mark = browser.find_element(By.CSS_SELECTOR, ".raw mark.call-span")
        assert mark.text.startswith("<invoke>") and "<city>Paris</city>" in mark.text
        prefill = browser.find_element(By.CSS_SELECTOR, ".raw span.prefill")
        assert prefill.text.startswith("<function_calls>")
        [call] = browser.find_elements(By.CSS_SELECTOR, ".calls .call")
        assert call.find_element(By.CSS_SELECTOR, ".call-name").text == "get_weather"
        assert mark.get_attribute("data-call") == call.get_attribute("data-id")
        badges = [b.text for b in call.find_elements(By.CSS_SELECTOR, ".badge")]
        assert badges == ["model", "valid"]
        assert '"city": "Paris"' in call.find_element(By.CSS_SELECTOR, ".call-input").text
        assert '"stop_reason": "tool_use"' in browser.find_element(
            By.CSS_SELECTOR, ".response").text

        search = browser.find_element(By.ID, "search")
        search.send_keys("Tokyo")
        browser.find_element(By.CSS_SELECTOR, "#search-form button[type=submit]").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".trace-row")) == 1)
        assert "1 request(s)" in browser.find_element(By.ID, "status").text
        errors = [e for e in browser.get_log("browser") if e["level"] == "SEVERE"]
        assert errors == []
