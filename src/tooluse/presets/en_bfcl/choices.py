"""Decisions made around a small model's tool calls, from the conversation and its scores.

A 135M model writes calls that parse (the grammar sees to that) but decides badly: it
rarely ranks a call first when one is needed, invents values for optional parameters, and
is lost among many tools. What lives here decides for it, each piece measurable alone
(docs/benchmarks/bfcl.md):

- :func:`select_tools` — BM25 (``bm25s``) over the tools' names, descriptions and
  parameters against the conversation, when more tools are offered than a small model
  handles (the legacy format advises 3-5); the rest are left out of the prompt and named.
- :class:`CallDecision` — under ``auto``, call or answer in text: a logistic model of the
  model's own likelihood of opening a call block, of writing the best tool's name, of
  the word overlap between the question and the tools, and of how much of a tool's name
  the question says, with weights fitted on BFCL tuning slices (never on the held-out
  ones).
- :func:`keep_given_optionals` — an optional parameter stays in a call only when the
  conversation gives its value (a string or number found in it, a flag whose name it
  mentions); required ones are never touched.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...language.numbers import counts
from ...language.words import (
    content_words,
    given_by,
    names_only,
    split_name,
    stem,
    times_given,
    value_key,
    whole_spans,
    words,
)
from ...messages import Request, ToolSpec
from ...prompting.hints import ToolNaming
from .regions import known_place
from .schemas import properties, required

__all__ = [
    "PLACE_WORDS",
    "PLAN_MAX_TOOLS",
    "CallDecision",
    "ToolNaming",
    "conversation_text",
    "free_string",
    "further_tools",
    "keep_given_optionals",
    "looks_up",
    "name_coverage",
    "naming_words",
    "percents_as_fractions",
    "prerequisite",
    "question_text",
    "relevance",
    "select_tools",
    "tool_naming",
    "tool_text",
    "unasked_required",
    "without_inside_others",
]

log = logging.getLogger("tooluse.prompting")


def naming_words(tool: str, schema: Any) -> frozenset[str]:
    """The words (stemmed) of a tool's name and of its parameters' names. A string made of
    these alone names the tool or a parameter and is no value: ``unit: "triangle"`` for
    ``geometry.area_triangle``, ``content: "todo"`` for ``todo_manager``, ``answer:
    "answer"`` (:func:`names_only`)."""
    return frozenset(stem(w) for name in [tool, *(properties(schema) or [])]
                     for w in words(split_name(str(name))))


#: Words of a parameter's name that make it a place's: ``location``, ``city``,
#: ``country``, ``state``, ``departure_city``, ``end_location``, ``destination``...
PLACE_WORDS = frozenset({"location", "city", "country", "state", "region", "place",
                         "county", "province", "town", "area", "origin", "destination",
                         "departure", "arrival", "address", "venue", "jurisdiction"})


def tool_naming(spec: ToolSpec, *, names: bool = True, distinct: bool = False) -> ToolNaming:
    """The :class:`ToolNaming` of ``spec``: its name words with ``names``, its place
    parameters with ``distinct``."""
    schema = spec.input_schema if isinstance(spec.input_schema, Mapping) else {}
    places = frozenset(str(name) for name in (properties(schema) or [])
                       if PLACE_WORDS & set(words(split_name(str(name))))) if distinct \
        else frozenset()
    return ToolNaming(naming_words(spec.name, schema) if names else frozenset(),
                      frozenset(required(schema)), places, distinct,
                      known_place if distinct else None)


#: An example value in a description ("e.g. 'Asia/Tokyo'"): what a value looks like, not
#: what the tool is about.
_EXAMPLE = re.compile(r"""(?<!\w)'[^'\n]{1,60}'(?!\w)|(?<!\w)"[^"\n]{1,60}"(?!\w)"""
                      r"|\(e\.g\.[^)]*\)")


def tool_text(spec: ToolSpec, examples: bool = True) -> str:
    """The words a tool is known by: its name, description, parameter names and their
    descriptions (without the quoted example values of the descriptions when not
    ``examples``)."""
    parts = [split_name(spec.name), spec.description or ""]
    schema = spec.input_schema if isinstance(spec.input_schema, Mapping) else {}
    props = schema.get("properties")
    for key, sub in (props.items() if isinstance(props, Mapping) else []):
        parts.append(split_name(str(key)))
        if isinstance(sub, Mapping) and isinstance(sub.get("description"), str):
            parts.append(sub["description"] if examples else _EXAMPLE.sub(" ", sub["description"]))
    return " ".join(parts)


def question_text(request: Request) -> str:
    """The last user turn's text (what the model is asked now)."""
    for message in reversed(request.messages):
        if message.role == "user":
            text = message.text()
            if text.strip():
                return text
    return ""


def conversation_text(request: Request) -> str:
    """Everything the user side said: user text and tool results (where copied values come
    from), and the system prompt."""
    parts = [b.text for b in request.system] if request.system else []
    for message in request.messages:
        if message.role != "user":
            continue
        parts.append(message.text())
        for block in message.content:
            if block.type == "tool_result":
                parts.extend(getattr(c, "text", "") for c in block.content)
    return "\n".join(p for p in parts if p)


def relevance(question: str, tools: ToolSpec | Sequence[ToolSpec],
              examples: bool = True) -> float:
    """The share of the question's content words (stemmed) found among the words of the
    tool, or of the tools together (a question asking for several things, each of another
    tool, is covered by them all, not by its best one); ``examples``: whether the example
    values quoted in parameter descriptions count (see :func:`tool_text`)."""
    asked = content_words(question)
    if not asked:
        return 0.0
    specs = [tools] if isinstance(tools, ToolSpec) else tools
    known = {stem(w) for spec in specs for w in words(tool_text(spec, examples))}
    return len(asked & known) / len(asked)


def name_coverage(question: str, tools: Sequence[ToolSpec]) -> float:
    """The largest share of a tool's name's content words that the question says
    ("get_current_weather" and "What's the weather now?": a half; an unrelated question:
    0). A question asking for a tool tends to name what it does; one it does not fit,
    rarely."""
    asked = content_words(question)
    shares = [len(named & asked) / len(named) for spec in tools
              if (named := content_words(split_name(spec.name)))]
    return max(shares, default=0.0)


#: With more tools than this, :func:`further_tools` names none: it cannot tell.
PLAN_MAX_TOOLS = 5


def further_tools(question: str, tools: Sequence[ToolSpec], first: int,
                  need: int = 2, max_tools: int = PLAN_MAX_TOOLS) -> list[int]:
    """The tools a question asks for besides ``tools[first]``, in the order chosen: greedily,
    the tool covering most of the question's content words (stemmed) that the chosen ones
    do not, a word of its name counting twice, while that gain is at least ``need``
    ("the weather in Paris, and book a hotel there" with a weather tool first: the hotel
    tool, for "book" and "hotel"). Chosen on BFCL's even cases of ``multiple`` and
    ``parallel_multiple`` (docs/benchmarks/bfcl.md), where two to four tools are offered.
    With more than ``max_tools`` (the legacy format's advice is 3-5 in the prompt), long
    tool descriptions cover a question's words by chance: no further tool is named."""
    if len(tools) > max_tools:
        return []
    asked = content_words(question)
    known = [{stem(w) for w in words(tool_text(spec, examples=False))} for spec in tools]
    named = [{stem(w) for w in words(split_name(spec.name))} for spec in tools]
    covered = asked & known[first]
    chosen: list[int] = []
    while True:
        gains = [(len(new) + len(new & named[i]), -i) for i in range(len(tools))
                 if i != first and i not in chosen
                 for new in [(asked & known[i]) - covered]]
        if not gains or max(gains)[0] < need:
            return chosen
        index = -max(gains)[1]
        chosen.append(index)
        covered |= asked & known[index]


#: A tool named for what it looks up: the first or last word of its name.
_LOOKUP_VERBS = frozenset({"get", "find", "lookup", "search", "fetch", "retrieve", "resolve"})


def prerequisite(question: str, tools: Sequence[ToolSpec], chosen: int,
                 called: Collection[str] = ()) -> int | None:
    """A tool to call before ``tools[chosen]``: one that looks up a required parameter of
    it that the question does not speak of ("the stock price of General Motors": the price
    tool needs a ``symbol``, ``get_ticker_symbol`` looks one up). It must not have been
    ``called`` yet; the parameter's name words must all be words of its name that the chosen
    tool's name lacks, and its name must start or end with a lookup verb (get, find,
    search...). None when there is none."""
    for parameter in unasked_required(question, tools[chosen]):
        for index, tool in enumerate(tools):
            if index != chosen and tool.name not in called \
                    and looks_up(tool, parameter, tools[chosen]):
                return index
    return None


def unasked_required(question: str, tool: ToolSpec) -> list[str]:
    """The required parameters of ``tool`` whose name the question does not speak of."""
    schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
    asked = content_words(question)
    return [str(p) for p in schema.get("required") or []
            if (wanted := content_words(split_name(str(p)))) and not wanted & asked]


def looks_up(tool: ToolSpec, parameter: str, target: ToolSpec) -> bool:
    """Is ``tool`` the lookup of ``target``'s ``parameter``: its name starts or ends with a
    lookup verb, and holds every word of the parameter's name that ``target``'s name
    lacks (``get_ticker_symbol`` for ``get_current_stock_price``'s ``symbol``)?"""
    name = split_name(tool.name).lower().split()
    wanted = content_words(split_name(parameter))
    return bool(name) and bool({name[0], name[-1]} & _LOOKUP_VERBS) and bool(wanted) \
        and wanted <= content_words(" ".join(name)) - content_words(split_name(target.name))


def select_tools(question: str, tools: Sequence[ToolSpec], limit: int,
                 keep: Sequence[str] = ()) -> tuple[list[ToolSpec], list[str]]:
    """The ``limit`` tools most relevant to ``question`` by BM25 (``bm25s``), in their
    original order, and the names of those left out. ``keep`` names tools that must stay
    (a named ``tool_choice``, tools the conversation already called). Without ``bm25s``
    installed, or when ``limit`` covers them all, every tool is kept."""
    if limit <= 0 or len(tools) <= limit:
        return list(tools), []
    try:
        import bm25s
    except ImportError:
        log.warning("tool retrieval needs bm25s (pip install bm25s); offering all %d tools",
                    len(tools))
        return list(tools), []
    docs = [tool_text(t) for t in tools]
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(docs, stopwords="en", show_progress=False),
                    show_progress=False)
    query = bm25s.tokenize([question or " "], stopwords="en", show_progress=False)
    chosen: list[int] = [i for i, t in enumerate(tools) if t.name in keep]
    if query.vocab:
        ranked, _ = retriever.retrieve(query, k=len(tools), show_progress=False)
        for index in ranked[0]:
            if len(chosen) >= limit:
                break
            if int(index) not in chosen:
                chosen.append(int(index))
    for index in range(len(tools)):  # no words in common: keep the first ones
        if len(chosen) >= limit:
            break
        if index not in chosen:
            chosen.append(index)
    kept = sorted(set(chosen))
    left_out = [t.name for i, t in enumerate(tools) if i not in kept]
    return [tools[i] for i in kept], left_out


# -- values the conversation gives ---------------------------------------------------------------


def free_string(value: Any, spec: Any) -> bool:
    """Is ``value`` a non-empty string of a parameter whose schema ``spec`` leaves it free: a
    string with no ``enum``, ``const``, ``format`` or ``pattern``?"""
    return isinstance(value, str) and bool(value.strip()) and isinstance(spec, Mapping) \
        and spec.get("type") == "string" \
        and not any(k in spec for k in ("enum", "const", "format", "pattern"))


def keep_given_optionals(arguments: Mapping[str, Any], schema: Any,
                         conversation: str, tool: str = "") -> tuple[dict[str, Any], list[str]]:
    """``arguments`` without the optional parameters whose value the conversation does not
    give, and the names of those dropped. Required parameters always stay.

    An optional parameter is not given a value by an empty list, object or string, by a
    value the conversation writes fewer times than the call uses it: in "a base of 10
    units", the 10 is ``base``'s, not also ``unit``'s (the required parameters, then the
    earlier ones, keep a value used too often), nor by a string whose words all name the
    tool (``tool``) or a parameter ("triangle" for ``geometry.area_triangle``'s ``unit``,
    "month" for ``month``): the question says what it asks for, not a value. The strings
    and numbers of a list count as used too ("Lakers" for ``venue`` beside ``teams:
    ["Lakers", "Clippers"]``, the 1 of ``rounding`` beside ``vector1: [3, 2, 1], vector2:
    [1, 2, 3]``), and a string the conversation writes only inside a longer value of the
    call is that value's ("Newton" of "Isaac Newton", "Beef" of "Beef Lasagna Recipe";
    :func:`_inside_others`). A number written in words gives a parameter whose name has
    one of the two words after it ("the next three days" for ``days: 3``;
    :func:`_counted`)."""
    needed = required(schema)
    naming = naming_words(tool, schema)
    kept: dict[str, Any] = {}
    dropped: list[str] = []
    used: dict[float | str, int] = {}
    for value in arguments.values():
        for item in value if isinstance(value, list) else ():
            text = isinstance(item, str) and bool(item.strip())
            number = isinstance(item, (int, float)) and not isinstance(item, bool)
            if text or number:
                used[value_key(item)] = used.get(value_key(item), 0) + 1
    for key in sorted(arguments, key=lambda k: k not in needed):  # stable: required first
        value = arguments[key]
        scalar = isinstance(value, (int, float, str)) and not isinstance(value, bool)
        if scalar:
            used[value_key(value)] = used.get(value_key(value), 0) + 1
        if key in needed or _counted(value, key, conversation) or (
                value not in ([], {}, "") and given_by(value, conversation, key)
                and (not scalar or used[value_key(value)] <= times_given(value, conversation))
                and not (isinstance(value, str)
                         and (names_only(value, naming, conversation)
                              or _inside_others(key, value, arguments, conversation)))):
            kept[key] = value
        else:
            dropped.append(key)
            if scalar:
                used[value_key(value)] -= 1
    return {k: kept[k] for k in arguments if k in kept}, dropped


def without_inside_others(arguments: Mapping[str, Any], schema: Any,
                          conversation: str) -> dict[str, Any]:
    """``arguments`` without the optional strings the conversation writes only inside a
    longer value of the call: :func:`keep_given_optionals`' check again, for a call whose
    values have grown since ("Beef" beside ``recipe: "Beef Lasagna Recipe"``, once a later
    edit wrote the recipe's name whole, :func:`.phrases.whole_phrases`)."""
    needed = required(schema)
    return {key: value for key, value in arguments.items()
            if key in needed or not isinstance(value, str)
            or not _inside_others(key, value, arguments, conversation)}


def _inside_others(key: str, value: str, arguments: Mapping[str, Any],
                   conversation: str) -> bool:
    """Does the conversation write ``value`` (``key``'s) only inside the places it writes
    another, longer string of the call (a value, or an item of a list)?"""
    own = whole_spans(conversation, value)
    longer = [span for k, v in arguments.items() if k != key
              for item in (v if isinstance(v, list) else [v])
              if isinstance(item, str) and len(item.strip()) > len(value.strip())
              for span in whole_spans(conversation, item)]
    return bool(own) and all(any(s <= start and end <= e for s, e in longer)
                             for start, end in own)


def _counted(value: Any, key: str, conversation: str) -> bool:
    """Does the conversation write the number ``value`` in words, one of the two words after
    it a word of the parameter's name ("the next three days" for ``days: 3``, "three
    personality traits" for ``trait_count: 3``; not "two charges" for
    ``medium_permittivity: 2``)?"""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    named = {stem(w) for w in words(split_name(key))}
    return any(number == value and any(stem(word.lower()) in named for word in words)
               for number, words in counts(conversation))


_WRITTEN_NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(\s*(?:%|percent\b|per cent\b))?",
                             re.IGNORECASE)


def percents_as_fractions(arguments: Mapping[str, Any], schema: Any,
                          conversation: str) -> tuple[dict[str, Any], list[str]]:
    """``arguments`` with each number parameter (``"type": "number"``, not an integer)
    whose value the conversation writes only as a percentage ("an annual rate of 5%": 5)
    given as the fraction (0.05), the convention of rates, returns and probabilities,
    unless the parameter's description says it is a percentage; and the keys changed."""
    props = properties(schema)
    if props is None:
        return dict(arguments), []
    written: dict[float, set[bool]] = {}
    for match in _WRITTEN_NUMBER.finditer(conversation):
        written.setdefault(float(match.group(1)), set()).add(bool(match.group(2)))
    changed: dict[str, Any] = {}
    for key, value in arguments.items():
        sub = props.get(key)
        if (not isinstance(sub, Mapping) or sub.get("type") != "number"
                or isinstance(value, bool) or not isinstance(value, (int, float)) or not value
                or written.get(float(value)) != {True}
                or "percent" in str(sub.get("description", "")).lower()):
            continue
        changed[key] = float(f"{value / 100:.12g}")
    return {**arguments, **changed}, list(changed)


# -- call or answer --------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallDecision:
    """Under ``auto``: call when ``bias + w_open*open + w_tool*tool + w_rel*relevance +
    w_name*name > 0``.

    ``open``: the model's log-likelihood of opening a call block rather than writing text;
    ``tool``: its log-likelihood of the best tool's whole name after that opening (per
    token); ``relevance``: :func:`relevance` of the question to the tools; ``name``:
    :func:`name_coverage`. Defaults: fitted by logistic regression on the BFCL tuning
    slices (docs/benchmarks/bfcl.md)."""

    bias: float = 0.0
    w_open: float = 1.0
    w_tool: float = 0.0
    w_rel: float = 0.0
    w_name: float = 0.0

    def score(self, open_lp: float, tool_lp: float, rel: float, name: float = 0.0) -> float:
        return self.bias + self.w_open * open_lp + self.w_tool * tool_lp + self.w_rel * rel \
            + self.w_name * name

    def calls(self, open_lp: float, tool_lp: float, rel: float, name: float = 0.0) -> bool:
        value = self.score(open_lp, tool_lp, rel, name)
        return math.isfinite(value) and value > 0
