"""Search over deferred tools: what the server runs when the model calls a tool search.

A model offered a tool search sees one tool (:func:`search_tool`) instead of the many tools
kept out of its prompt; when it calls it, :class:`ToolIndex` finds the tools that match
and they are loaded for the rest of the conversation. Two modes, the two Anthropic
documents:

- ``bm25``: the query is words; tools are ranked by BM25 (``bm25s``, words lower-cased and
  crudely stemmed by :func:`~tooluse.language.words.stem`, English stop words left out)
  over their names (split into words), descriptions, parameter names and parameter
  descriptions, and those sharing a word with the query come back, best first;
- ``regex``: the query is a Python regular expression (at most 200 characters), searched
  case-insensitively in the same text; matching tools come back in their order.

At most :data:`MAX_FOUND` tools come back (the vendors return 3 to 5). An unusable query (an
invalid or over-long pattern, an empty one) is a :class:`SearchError` with the API's code
``invalid_tool_input``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ..errors import ToolUseError
from ..language.words import split_name, stem
from ..messages import ToolSpec

__all__ = ["MAX_FOUND", "MAX_PATTERN", "SearchError", "ToolIndex", "search_text", "search_tool"]

#: Tools one search returns at most.
MAX_FOUND = 5
#: The longest regular expression the regex mode takes (the Messages API's limit).
MAX_PATTERN = 200

_DESCRIPTIONS = {
    "bm25": ("Search for more tools. More tools exist than are listed: when none of the "
             "listed tools does what the user asks, call this tool with the user's request, "
             "and the matching tools become available to call."),
    "regex": ("Search for more tools. More tools exist than are listed: when none of the "
              "listed tools does what the user asks, call this tool with a Python regular "
              "expression matched against the tools' names, descriptions and parameters, and "
              "the matching tools become available to call."),
}
_QUERY = {
    "bm25": "The user's request, or what you need to do, in words.",
    "regex": "A Python regular expression, at most 200 characters (e.g. 'weather|forecast').",
}


def _stems(words: list[str]) -> list[str]:
    return [stem(w) for w in words]


class SearchError(ToolUseError, ValueError):
    """A query the search cannot run; ``code`` is the API's error code."""

    def __init__(self, message: str, code: str = "invalid_tool_input") -> None:
        super().__init__(message)
        self.code = code


def search_tool(name: str, mode: Literal["bm25", "regex"]) -> ToolSpec:
    """The search tool as the model sees it: ``name``, taking one string ``query``."""
    return ToolSpec(name=name, description=_DESCRIPTIONS[mode], input_schema={
        "type": "object", "properties": {"query": {"type": "string", "description": _QUERY[mode]}},
        "required": ["query"]})


def search_text(spec: ToolSpec) -> str:
    """The text a tool is found by: its name as words, its description, and each
    parameter's name (as words) and description."""
    parts = [split_name(spec.name), spec.name, spec.description]
    properties = spec.input_schema.get("properties")
    if isinstance(properties, Mapping):
        for key, sub in properties.items():
            parts.append(split_name(str(key)))
            if isinstance(sub, Mapping) and isinstance(sub.get("description"), str):
                parts.append(sub["description"])
    return "\n".join(p for p in parts if p)


class ToolIndex:
    """The tools a search looks through (the deferred ones), in their order."""

    def __init__(self, tools: Sequence[ToolSpec]) -> None:
        self.tools = list(tools)
        self._texts = [search_text(t) for t in self.tools]
        self._bm25: Any = None

    def search(self, query: Any, mode: Literal["bm25", "regex"], limit: int = MAX_FOUND
               ) -> list[str]:
        """The names of the tools that match ``query`` (at most ``limit``)."""
        if not isinstance(query, str) or not query.strip():
            raise SearchError("the query must be a non-empty string")
        if not self.tools:
            return []
        if mode == "regex":
            return self._regex(query, limit)
        return self._ranked(query, limit)

    def _regex(self, query: str, limit: int) -> list[str]:
        if len(query) > MAX_PATTERN:
            raise SearchError(f"the pattern is longer than {MAX_PATTERN} characters")
        try:
            pattern = re.compile(query, re.IGNORECASE)
        except re.error as exc:
            raise SearchError(f"invalid regular expression: {exc}") from None
        found = [t.name for t, text in zip(self.tools, self._texts, strict=True)
                 if pattern.search(text)]
        return found[:limit]

    def _ranked(self, query: str, limit: int) -> list[str]:
        try:
            import bm25s
        except ImportError:  # pragma: no cover - depends on the installation
            raise SearchError("the bm25 tool search needs bm25s: pip install bm25s",
                              code="unavailable") from None
        if self._bm25 is None:
            self._bm25 = bm25s.BM25()
            self._bm25.index(bm25s.tokenize(self._texts, stopwords="en", stemmer=_stems,
                                            show_progress=False), show_progress=False)
        tokens = bm25s.tokenize([split_name(query)], stopwords="en", stemmer=_stems,
                                show_progress=False)
        if not tokens.vocab:
            return []
        k = min(limit, len(self.tools))
        ranked, scores = self._bm25.retrieve(tokens, k=k, show_progress=False)
        return [self.tools[int(i)].name for i, score in zip(ranked[0], scores[0], strict=True)
                if float(score) > 0]
