"""What the local model evaluates per request, counted where a turn reaches
``llama_decode`` (``Llama.eval``, the sequence's ``score``, its ``logits``): no token is
evaluated again at a position whose KV cells still hold it (after a value's scoring the
kept logits are given back), except a value looked ahead and then chosen, on purpose, at
most once per value; and no decode's logits go unread before the next decode (forced text
is evaluated together with the token chosen before it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest

from tooluse.messages import Message, Request, TextBlock, ToolChoice, ToolSpec

pytestmark = pytest.mark.slow

FLIGHT = ToolSpec(name="book_flight", description="Book a flight between two cities.",
                  input_schema={"type": "object", "properties": {
                      "origin": {"type": "string", "description": "Departure city"},
                      "destination": {"type": "string", "description": "Arrival city"},
                      "seat_class": {"type": "string", "enum": ["economy", "business", "first"]},
                      "passengers": {"type": "integer", "description": "Number of passengers"}},
                      "required": ["origin", "destination", "seat_class", "passengers"]})
AREA = ToolSpec(name="calculate_triangle_area",
                description="Calculate the area of a triangle given its base and height.",
                input_schema={"type": "object", "properties": {
                    "base": {"type": "integer", "description": "The base of the triangle."},
                    "height": {"type": "integer", "description": "The height of the triangle."},
                    "unit": {"type": "string", "description": "The unit of measure."}},
                    "required": ["base", "height"]})


@dataclass
class Tally:
    """The decodes of the one sequence: (position, tokens) of each evaluation, the tokens
    scored, the evaluations whose logits nobody read before the next one, and the runs of
    tokens evaluated again at positions whose KV cells already held them."""

    evals: list[tuple[int, list[int]]] = field(default_factory=list)
    scored: int = 0
    unread: int = 0
    read: bool = True
    #: position -> token of what the KV cache holds
    held: dict[int, int] = field(default_factory=dict)
    again: list[tuple[int, int]] = field(default_factory=list)

    def drop(self, start: int) -> None:
        for position in [p for p in self.held if p >= start]:
            del self.held[position]


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Iterator[Tally]:
    llama_cpp = pytest.importorskip("llama_cpp")
    from tooluse.llama.seq import SoloSeq

    found = Tally()
    eval_, score, logits = llama_cpp.Llama.eval, SoloSeq.score, SoloSeq.logits

    def counted_eval(llm: Any, tokens: Any) -> None:
        tokens = [int(t) for t in tokens]
        at = int(llm.n_tokens)
        if tokens:
            if not found.read:
                found.unread += 1
            found.read = False
            found.evals.append((at, tokens))
            same = 0
            while same < len(tokens) and found.held.get(at + same) == tokens[same]:
                same += 1
            if same:
                found.again.append((at, same))
        found.drop(at)  # llama.cpp drops the cells past n_tokens first
        for offset, token in enumerate(tokens):
            found.held[at + offset] = token
        eval_(llm, tokens)

    def counted_score(self: Any, n_past: int, ids: Any) -> Any:
        found.scored += len(ids)
        found.drop(n_past)  # scoring keeps nothing past n_past
        return score(self, n_past, ids)

    def counted_logits(self: Any) -> Any:
        found.read = True
        return logits(self)

    monkeypatch.setattr(llama_cpp.Llama, "eval", counted_eval)
    monkeypatch.setattr(SoloSeq, "score", counted_score)
    monkeypatch.setattr(SoloSeq, "logits", counted_logits)
    yield found


def _complete(tool: ToolSpec, question: str) -> list[dict[str, Any]]:
    from tooluse.backends.local import LocalBackend
    from tooluse.errors import BackendError

    try:
        backend = LocalBackend(n_threads=2, prompt_cache=False, score_enums=True,
                               copy_values=True)
    except BackendError as exc:
        pytest.skip(str(exc))
    response = backend.complete(Request(
        messages=[Message(role="user", content=[TextBlock(text=question)])], tools=[tool],
        tool_choice=ToolChoice(type="any"), max_tokens=128))
    assert response.tool_uses
    for block in response.tool_uses:
        jsonschema.validate(dict(block.input), tool.input_schema)
    return [dict(block.input) for block in response.tool_uses]


def test_an_enum_scored_whole_is_not_evaluated_again(tally: Tally) -> None:
    calls = _complete(FLIGHT, "Book 2 business class seats from Boston to Denver.")
    assert calls[0]["seat_class"] in ("economy", "business", "first")
    assert tally.scored > 0  # the enum's members were scored
    # the value start was not evaluated again after it; what is (a value looked ahead and
    # then chosen) is at most one run per value, each at its own position
    assert len(tally.again) <= len(calls[0])
    assert len({at for at, _ in tally.again}) == len(tally.again)
    assert tally.unread <= 1  # only the turn's last decode (kept for the next prompt)


def test_values_copied_or_looked_ahead_cost_no_extra_decode(tally: Tally) -> None:
    calls = _complete(AREA, "Find the area of a triangle with a base of 10 units and "
                            "height of 5 units.")
    assert calls[0]["base"] == 10 and calls[0]["height"] == 5
    # A value looked ahead and then chosen is evaluated again on purpose (cells written in
    # another batch shape differ in their last bits and can turn a later greedy choice);
    # nothing else is.
    assert len(tally.again) <= len(calls[0])
    assert len({at for at, _ in tally.again}) == len(tally.again)
    assert tally.unread <= 1
    # One decode for the prompt, then at most one per choice the model makes.
    assert len(tally.evals) < 40
