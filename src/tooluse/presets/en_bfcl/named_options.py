"""Optional parameters the call leaves out whose option the question names (``named_options``).

A 135M model writes the parameters whose values the question spells out and closes the
call. An optional parameter whose value the question says only as a word it leaves out,
though the user asked for it: "Find *all* the roots" (``root_type``: "'real' for real
roots, 'all' for both"), "*state* law cases" (``judicial_system``: "e.g. 'federal',
'state'"), "a *direct* flight" (``direct_flight``), "a game ... *like new*" (``condition``,
an enum of "New", "Like New", "Used"...). BFCL's answers want them (failed answers lacked
only such a parameter: docs/benchmarks/code.md). :func:`named_options`
adds them:

- a boolean parameter the call leaves out, one of whose name's words (stemmed, no stop word,
  not a word of the tool's name: "flight" says nothing of ``flight.book``'s
  ``direct_flight``) the question says: true, or false when a negation stands in the three
  words before it (as :mod:`.flags` reads a boolean the model wrote);
- a string parameter the call leaves out, with two options or more — its enum, or the
  strings its description quotes ("'12h' or '24h'") — of which the question writes exactly
  one, its words stemmed and in a row ("detail" is "detailed"; an option inside a longer one
  the question writes does not count: "like new" is "Like New", not "New"; an option
  written as a path is written by its last part: "London time" writes the time zone
  "Europe/London"). Not an option
  that is a word of the tool's or another parameter's name ("my bot" says nothing of
  ``filterName``'s 'Bot' beside ``botId``), nor the parameter's default (``default``, or
  "default is 'x'" in its description): leaving it out says the same.

A required parameter, or one the call has, is left as it is. The result is kept only if the
call still validates (:func:`.call_edits.call_adjuster`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...language.words import content_words, split_name
from .flags import WORD, question_words, spoken_of
from .schemas import properties, required

__all__ = ["named_options", "option_spans", "parameter_options"]

#: A string a description quotes as one of its options: short, one line.
_QUOTED = re.compile(r"""(?<!\w)['"‘“]([^'"‘’“”\n]{1,24})['"’”](?!\w)""")
#: A default the description states: "Default is 'basic'", "default: all".
_DEFAULT = re.compile(r"\bdefaults?(?:\s+value)?(?:\s+is|\s+to|:)?\s+"
                      r"['\"‘“]?([\w -]{1,24}?)['\"’”]?(?=[\s.,;)]|$)", re.IGNORECASE)


def parameter_options(spec: Mapping[str, Any]) -> list[str]:
    """A string parameter's options: its enum's strings, or the strings its description
    quotes (none for a parameter of another type)."""
    enum = spec.get("enum")
    if isinstance(enum, list):
        return [member for member in enum if isinstance(member, str)]
    description = spec.get("description")
    if spec.get("type") == "string" and isinstance(description, str):
        return list(dict.fromkeys(_QUOTED.findall(description)))
    return []


def _default(spec: Mapping[str, Any]) -> str | None:
    """A parameter's default, from ``default`` or its description, as lowercase text."""
    if spec.get("default") is not None:
        return str(spec["default"]).lower()
    description = spec.get("description")
    found = _DEFAULT.search(description) if isinstance(description, str) else None
    return found.group(1).strip().lower() if found else None


def option_spans(option: str, stems: Sequence[str],
                 words: Sequence[str] | None = None) -> list[tuple[int, int]]:
    """Where (word indexes, end excluded) the question writes ``option``: its words'
    stems in a row among the question's ``stems`` (:func:`.flags.question_words`), or,
    given the question's ``words`` as written, its words as written. An option written as
    a path ("Europe/London", a time zone) is looked for by its last part, which the whole
    option's words end with."""
    part = option.rsplit("/", 1)[-1]
    if not WORD.search(part):
        part = option
    if words is None:
        wanted, have = question_words(part)[1], stems
    else:
        wanted, have = WORD.findall(part), words
    n = len(wanted)
    if n == 0:
        return []
    return [(i, i + n) for i in range(len(have) - n + 1) if list(have[i:i + n]) == wanted]


def named_options(arguments: Mapping[str, Any], schema: Any, question: str,
                  tool: str = "") -> dict[str, Any]:
    """``arguments`` with each optional parameter they leave out whose option ``question``
    names added (see the module docstring); ``tool`` is the tool's name."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    needed = required(schema)
    words, stems = question_words(question)
    tool_words = content_words(split_name(tool))
    named = {key: content_words(split_name(str(key))) for key in props}
    added: dict[str, Any] = {}
    for key, spec in props.items():
        if key in arguments or key in needed or not isinstance(spec, Mapping):
            continue
        if spec.get("type") == "boolean":
            wanted = spoken_of(named[key] - tool_words, words, stems)
            if wanted is not None:
                added[key] = wanted
            continue
        options = parameter_options(spec)
        if len(options) < 2:
            continue
        others = tool_words.union(*(w for other, w in named.items() if other != key))
        hits = [option for option in options
                if not set(question_words(option)[1]) & others and option_spans(option, stems)]
        hits = [h for h in hits
                if not any(h != g and re.search(rf"\b{re.escape(h.lower())}\b", g.lower())
                           for g in hits)]
        if len(hits) == 1 and hits[0].lower() != _default(spec):
            added[key] = hits[0]
    return {**arguments, **added}
