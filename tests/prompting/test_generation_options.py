"""The generation keywords are defined once: GenerationOptions names them for the type
checker, Generation holds their defaults; the two must name the same keywords."""

from __future__ import annotations

import dataclasses

from tooluse.prompting import Generation, GenerationOptions


def test_generation_options_and_their_defaults_name_the_same_keywords() -> None:
    assert GenerationOptions.__optional_keys__ == {f.name for f in dataclasses.fields(Generation)}
    assert not GenerationOptions.__required_keys__


def test_generation_fills_the_defaults_and_keeps_what_is_given() -> None:
    g = Generation(**GenerationOptions(max_tokens=7, stop=["</x>"]))
    assert (g.prefill, g.max_tokens, g.stop, g.temperature, g.grammar) == ("", 7, ["</x>"], 0.0, None)
