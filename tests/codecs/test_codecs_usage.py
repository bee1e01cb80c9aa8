"""One usage shape: each JSON codec's usage mapping is data (``USAGE``, a
:class:`~tooluse.codecs._common.UsageFields`) read by one decoder, and every codec's
``encode_usage`` writes what its ``decode_usage`` reads back, the neutral counts unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from tooluse.codecs._common import UsageFields
from tooluse.codecs.anthropic import cache as anthropic_usage
from tooluse.codecs.bedrock import cache as bedrock_usage
from tooluse.codecs.openai import responses as chat_usage
from tooluse.codecs.responses import responses as responses_usage
from tooluse.messages import Usage

CODECS = {"anthropic": anthropic_usage, "bedrock": bedrock_usage, "openai": chat_usage,
          "responses": responses_usage}

#: The same call's usage as each API writes it: 100 prompt tokens, 30 of them read from the
#: cache and 20 written to it (Chat has no field for writes: its 20 stay in the prompt),
#: 7 output tokens.
WIRE: dict[str, dict[str, Any]] = {
    "anthropic": {"input_tokens": 50, "cache_read_input_tokens": 30,
                  "cache_creation_input_tokens": 20, "output_tokens": 7},
    "bedrock": {"inputTokens": 50, "outputTokens": 7, "totalTokens": 107,
                "cacheReadInputTokens": 30, "cacheWriteInputTokens": 20},
    "openai": {"prompt_tokens": 100, "completion_tokens": 7, "total_tokens": 107,
               "prompt_tokens_details": {"cached_tokens": 30}},
    "responses": {"input_tokens": 100, "output_tokens": 7, "total_tokens": 107,
                  "input_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 20},
                  "output_tokens_details": {"reasoning_tokens": 0}},
}
NEUTRAL = {
    "anthropic": Usage(input_tokens=50, output_tokens=7, cache_read_input_tokens=30,
                       cache_creation_input_tokens=20),
    "bedrock": Usage(input_tokens=50, output_tokens=7, cache_read_input_tokens=30,
                     cache_creation_input_tokens=20),
    "openai": Usage(input_tokens=70, output_tokens=7, cache_read_input_tokens=30),
    "responses": Usage(input_tokens=50, output_tokens=7, cache_read_input_tokens=30,
                       cache_creation_input_tokens=20),
}


@pytest.mark.parametrize("name", list(CODECS))
def test_each_codec_reads_its_usage_into_the_neutral_counts(name: str) -> None:
    codec = CODECS[name]
    assert isinstance(codec.USAGE, UsageFields)
    assert codec.decode_usage(WIRE[name]) == NEUTRAL[name]
    assert codec.USAGE.decode(WIRE[name]) == NEUTRAL[name]


@pytest.mark.parametrize("name", list(CODECS))
def test_what_a_codec_writes_it_reads_back(name: str) -> None:
    codec = CODECS[name]
    written = codec.encode_usage(NEUTRAL[name])
    assert {k: v for k, v in written.items() if v} == {k: v for k, v in WIRE[name].items() if v}
    assert codec.decode_usage(written) == NEUTRAL[name]


@pytest.mark.parametrize("name", list(CODECS))
@pytest.mark.parametrize("usage", [None, [], "12", {}, {"input_tokens": None},
                                   {"prompt_tokens": -3, "completion_tokens": True},
                                   {"prompt_tokens_details": "x", "input_tokens_details": []}])
def test_a_missing_or_malformed_usage_counts_nothing(name: str, usage: Any) -> None:
    assert CODECS[name].decode_usage(usage) == Usage()


def test_a_prompt_count_that_holds_the_cache_never_goes_below_zero() -> None:
    fields = UsageFields(input="in", output="out", cache_read=("d", "read"),
                         cache_write=("d", "write"), prompt_includes_cache=True)
    assert fields.decode({"in": 10, "out": 1, "d": {"read": 8, "write": 5}}) == Usage(
        input_tokens=0, output_tokens=1, cache_read_input_tokens=8,
        cache_creation_input_tokens=5)
