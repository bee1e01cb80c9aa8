"""enum_values: a value that names another parameter's enum member is that parameter's."""

from __future__ import annotations

from typing import Any

from tooluse.presets.en_bfcl.enum_values import enum_values

MOVIES: dict[str, Any] = {"type": "object", "required": [], "properties": {
    "directed_by": {"type": "string", "description": "Director of the movie. Use 'dontcare' "
                    "if the director is not a specific search criterion.",
                    "default": "dontcare"},
    "genre": {"type": "string", "enum": ["Offbeat", "Comedy", "Drama", "dontcare"],
              "default": "dontcare"},
    "cast": {"type": "string", "description": "Leading actors.", "default": "dontcare"}}}


def test_a_genre_in_the_directors_place_goes_to_the_genre() -> None:
    assert enum_values({"directed_by": "drama"}, MOVIES) == {"genre": "Drama"}
    # The enum's default is no value of its own; the member already there is the same.
    assert enum_values({"directed_by": "Drama", "genre": "dontcare"}, MOVIES) == {
        "genre": "Drama"}
    assert enum_values({"directed_by": "Drama", "genre": "Drama", "cast": "Tom Hanks"},
                       MOVIES) == {"genre": "Drama", "cast": "Tom Hanks"}


def test_values_that_are_no_other_parameters_stay() -> None:
    # A director's name; a value the parameter's own description speaks of.
    for arguments in ({"directed_by": "Tim Burton", "genre": "Offbeat"},
                      {"directed_by": "dontcare", "genre": "Comedy"}):
        assert enum_values(arguments, MOVIES) == arguments
    # The enum holds another member: which of the two is wrong is not told.
    assert enum_values({"directed_by": "Drama", "genre": "Comedy"}, MOVIES) == {
        "directed_by": "Drama", "genre": "Comedy"}


def test_a_required_parameter_keeps_its_value() -> None:
    schema = {**MOVIES, "required": ["directed_by"]}
    assert enum_values({"directed_by": "Drama"}, schema) == {"directed_by": "Drama",
                                                             "genre": "Drama"}


def test_a_member_of_two_enums_is_neither_ones() -> None:
    schema = {"type": "object", "properties": {
        "query": {"type": "string"},
        "status": {"type": "string", "enum": ["open", "closed"]},
        "state": {"type": "string", "enum": ["open", "archived"]}}}
    assert enum_values({"query": "open"}, schema) == {"query": "open"}
    assert enum_values({"query": "closed"}, schema) == {"status": "closed"}


def test_enum_and_formatted_parameters_and_other_values_are_left_alone() -> None:
    schema = {"type": "object", "properties": {
        "day": {"type": "string", "format": "date"},
        "kind": {"type": "string", "enum": ["2024-01-01", "other"]},
        "count": {"type": "integer"}}}
    assert enum_values({"day": "2024-01-01", "count": 3}, schema) == {"day": "2024-01-01",
                                                                      "count": 3}
    assert enum_values({"x": 1}, None) == {"x": 1}
