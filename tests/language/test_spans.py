"""The spans a parameter value may copy from the conversation (``copy_values``)."""

from __future__ import annotations

from tooluse.language.spans import candidate_values


def test_numbers_come_first_in_their_order_and_plain_forms() -> None:
    spans = candidate_values("A triangle with a base of 10 units and height of 5 units.")
    assert spans[:2] == ["10", "5"]
    assert candidate_values("It costs 1,000.50 today")[:2] == ["1000.50", "1000.5"]
    assert "-3" in candidate_values("the minimum is -3 degrees")


def test_quoted_strings_names_and_symbolic_words_are_offered_whole() -> None:
    spans = candidate_values('Weather in "San Francisco" and New York City for AAPL, f(x)=x^2+3x')
    for wanted in ("San Francisco", "New York City", "AAPL", "f(x)=x^2+3x"):
        assert any(wanted in s for s in spans), (wanted, spans)
    assert "San Francisco" in spans and "New York City" in spans


def test_stop_words_and_sentence_starts_are_not_offered() -> None:
    spans = candidate_values("What is the area of a circle?")
    assert spans == ["area", "circle"]


def test_tool_results_give_their_values_not_their_tags() -> None:
    conversation = ("What is GM's stock price?\n<function_results>\n<result>\n"
                    "<tool_name>get_ticker_symbol</tool_name>\n<stdout>GM</stdout>\n</result>\n"
                    "</function_results>")
    spans = candidate_values(conversation)
    assert "GM" in spans and "get_ticker_symbol" in spans
    assert not any(s.startswith("/") or s in ("stdout", "function_results", "result")
                   for s in spans)


def test_no_repeats_and_a_limit() -> None:
    spans = candidate_values(" ".join(f"word{i} Paris" for i in range(50)), limit=5)
    assert len(spans) == 5 and len(set(spans)) == 5 and spans.count("Paris") == 1
    assert candidate_values("") == []


def test_places_with_their_region_are_offered_whole_before_their_parts() -> None:
    spans = candidate_values("I'm at London, UK in fahr. Then 221B Baker Street, Berkeley, CA, USA")
    assert spans.index("London, UK") < spans.index("London")
    assert "Baker Street, Berkeley, CA, USA" in spans and "Baker Street, Berkeley" in spans
    # A comma followed by a lower-case word joins nothing.
    assert not any(s.startswith("Tel Aviv,") for s in candidate_values(
        "What are the conditions in Tel Aviv, and could you provide that in Fahrenheit?"))


def test_runs_of_content_words_are_offered_but_not_across_punctuation_or_stop_words() -> None:
    spans = candidate_values("I am lightly active and want vegan chocolate cake, near the "
                             "Mississippi river in the 19th century.")
    for wanted in ("lightly active", "vegan chocolate cake", "Mississippi river", "19th century"):
        assert wanted in spans, (wanted, spans)
    assert not any(s.startswith("cake near") for s in spans)
    assert "active and want" not in spans
    # Runs come after the single phrases and symbols, before the single words.
    assert spans.index("Mississippi") < spans.index("Mississippi river") < spans.index("lightly")
