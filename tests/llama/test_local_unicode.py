"""Non-ASCII values on the real model: every call validates, whatever the script.

Korean enum values share their first UTF-8 bytes ("울/섬세" and "이불" both start with
0xEC), so the grammar forces the rest of a character the model began; those bytes used to
go through llama.cpp's tokenizer as a partial character (becoming U+FFFD) and the value
came back as "��/섬세", an invalid call.
"""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

WASHER = ToolSpec(
    name="control_washer",
    description="세탁기 제어 (washing machine control).",
    input_schema={
        "type": "object",
        "properties": {
            "course": {"type": "string", "enum": [
                "표준세탁", "표준건조", "다용도실, 통돌이, 중지", "다용도실, 드럼, 시작",
                "울/섬세", "이불"]},
            "mode": {"type": "string", "enum": ["🔥 hot", "❄️ cold", "🌡️ warm"]},
            "city": {"type": "string", "enum": ["São Paulo", "Zürich", "Kraków", "Montréal"]},
            "note": {"type": "string", "description": "A note for the user, any language."},
        },
        "required": ["course", "mode", "city"],
    },
)
QUESTIONS = [
    "다용도실 통돌이 세탁기 중지해줘",
    "세탁기를 울/섬세 코스로 돌려줘 따뜻하게, Kraków",
    "Start the washer in Zürich with hot water, 이불 course",
    "Montréal 드럼 시작 ❄️, note: 빨래 끝나면 알려줘 😀",
]


@pytest.fixture(scope="module")
def local() -> Any:
    pytest.importorskip("llama_cpp")
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        return LocalBackend(n_threads=2)
    except BackendError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("choice", ["any", "auto"])
def test_korean_emoji_and_accented_values_always_validate(local: Any, choice: str) -> None:
    validator = jsonschema.Draft202012Validator(WASHER.input_schema)
    calls = 0
    for question in QUESTIONS:
        response = local.complete(Request(
            messages=[Message(role="user", content=question)], tools=[WASHER],
            tool_choice=ToolChoice(type=choice), max_tokens=160))
        for block in response.content:
            if block.type == "tool_use":
                calls += 1
                assert validator.is_valid(block.input), block.input
                assert "\ufffd" not in str(block.input)
            else:  # text, never a broken call kept as text
                assert "<function_calls>" not in block.text and "\ufffd" not in block.text
    if choice == "any":
        assert calls >= len(QUESTIONS)
