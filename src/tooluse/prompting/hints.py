"""What a preset tells a text backend that copies values from the conversation
(``copy_values``): the generation options ``focus`` (:class:`ValueFocus`) and ``naming``
(:class:`ToolNaming`). A preset builds them (:meth:`.assist.Assist.generation_hints`); a
backend that does not copy values ignores them. Without a preset none is given.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..language.words import given_by

__all__ = ["ToolNaming", "ValueFocus"]


@dataclass(frozen=True)
class ToolNaming:
    """What a tool's name and its parameters' names say (:func:`tool_naming`): their words
    (stemmed; empty where such values are not to be refused), which parameters are
    required, and with ``distinct``, which name a place (``location``, ``city``,
    ``start_location``...): a value then fills one parameter of a call, and a known place
    (``is_place``) its place parameter."""

    words: frozenset[str]
    required: frozenset[str]
    places: frozenset[str] = frozenset()
    distinct: bool = False
    #: Is a text a known place (a city, a state, a country)? Read where ``places`` is set.
    is_place: Callable[[str], bool] | None = None


@dataclass(frozen=True)
class ValueFocus:
    """For each tool that owns a part of ``question``, that part (see the module
    docstring)."""

    question: str
    parts: Mapping[str, str]

    def allows(self, tool: str, value: str) -> bool:
        """May a call of ``tool`` take ``value``: the question does not write it, or writes
        it in ``tool``'s part, or ``tool`` owns no part?"""
        part = self.parts.get(tool)
        if part is None or not given_by(value, self.question):
            return True
        return given_by(value, part)
