"""Values written whole, as the question writes them (``whole_phrases``).

A 135M model copying a name from the question often stops short, or starts late: "the
Treaty of Tordesillas" becomes ``Tordesillas``, "the Louvre Museum" ``Louvre``, "case
number XYZ123" ``123``, "docket 2022/AL2562" ``AL2562``. :func:`whole_phrases` writes
such a string value whole, where the question leaves no doubt what the whole is:

- a piece of one word: the whole word, where the piece ends at a change between letters
  and digits or at a separator (``U123`` for ``123``, ``~/data/scan.nii`` for
  ``scan.nii``), never inside plain letters (``en`` stays, not ``sentiment``), and without
  the possessive ``'s`` or the punctuation around the word;
- a piece of a name: the whole run of capitalised words it sits in, joined by single
  spaces and "of", "the", "de"... ("Metropolitan Museum of Art", "Gibson Les Paul"); not
  across "and" or punctuation, not over a label before it ("ID U123" stays ``U123``), and
  not a name that starts a sentence, whose first word may be no part of it ("Fetch
  Bitcoin News"), unless the value starts there too;
- a piece of a quote: the whole quote ('go to Goa' for ``Goa``), unless it holds most of
  the question (a whole request in quotes); text in bold (``**...**``, as a model's answer
  pasted into the question sets apart its sentence) counts as a quote;
- the last words of what the question writes right after the parameter's name or
  "verbatim", up to the end of the sentence: the whole of it ("add todo with content go
  to sleep at 9 pm" for ``content: "9 pm"``, "using the command netsh wlan disconnect"
  for ``command: "disconnect"``); not where that starts with a function word ("the format
  of YYYY") or holds a quote;
- for a command parameter (``command``, ``cmd``, ``instruction``, ``script``), the command
  line the question says to run, to the end of its sentence, where the model wrote a word of
  it: "using docker --version" for ``command: "docker"``, "You should use timeout 10" for
  ``"timeout"``;
- words joined by underscores that the question writes apart: "Climate Change" for
  ``climate_change``, "Pan troglodytes" for ``pan_troglodytes`` (the model's habit from
  code), where the question writes them alike every time and never joined, and the
  parameter's description gives no such joined word as an example ("e.g. 'six_months'").

Only where every place the question writes the value grows into the same whole, and not
into another parameter's value (``league: "Manchester"`` stays beside ``team: "Manchester
United"``: one of the two is wrong, and writing the same thing twice would not tell which);
enum and formatted parameters, and values the question does not write, are left as
written.

Measured by replay on recorded BFCL answers (``bench/bfcl_replay_edits.py --edit
whole_phrases``; docs/local.md). Runs of lowercase words are not grown: "Mississippi
river" would be right, but "water under", "human cell", "roast chicken" are wrong far more
often (docs/benchmarks/code.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from ...language.words import STOP_WORDS, split_name, whole_spans, words
from .choices import free_string
from .flags import negated
from .schemas import properties, required

__all__ = ["values_after_names", "whole_phrases"]

#: Punctuation that borders a word without being part of it.
_EDGE = "\"'`\u2018\u2019\u201c\u201d()[]{}<>,;:!?."
#: Characters a word's parts are joined by ("2022/AL2562", "my_file.nii", "user@host").
_JOINERS = "/\\_-.:#~@"
#: Lowercase words a name's capitalised words may be joined by.
_CONNECTORS = frozenset({"of", "the", "de", "la", "le", "du", "von", "van", "del", "der",
                         "di", "da"})
#: Words that label the identifier after them ("user ID U123", "project UUID SUPERFANCY").
_LABELS = frozenset({"id", "uuid", "guid", "no", "nr", "number", "code", "sku", "pin", "ref",
                     "isbn"})
_NAME_WORD = re.compile(r"\w[\w\-&]*(?:\.\w+)*")
_SENTENCE_END = re.compile(r"[.?!]\s*$")


def whole_phrases(arguments: Mapping[str, Any], schema: Any,
                  question: str) -> dict[str, Any]:
    """``arguments`` with each free string value that the question writes only as a piece
    of a word, a name or a quote written whole (see the module docstring)."""
    props = properties(schema)
    if props is None or not question:
        return dict(arguments)
    names = list(_names(question))
    changed: dict[str, Any] = {}
    for key, value in arguments.items():
        spec = props.get(key)
        if not isinstance(spec, Mapping) or not free_string(value, spec):
            continue
        whole = _whole(value, question, names)
        if whole is None and "_" in value and not _snake_examples(spec, props):
            whole = _spaced(value, question)
        if whole is None:
            whole = _named_tail(key, value, question)
        if whole is None:
            whole = _used_command(key, value, question)
        if whole is not None and whole != value and whole not in arguments.values() \
                and whole not in changed.values():
            # Grown into another parameter's value, it would say one thing twice.
            changed[key] = whole
    return {**arguments, **changed}


def _whole(value: str, question: str, names: list[tuple[int, int]]) -> str | None:
    """The one whole that every occurrence of ``value`` in ``question`` grows into, or
    None (not written, written alone somewhere, or growing into different wholes)."""
    wholes: set[str] = set()
    for found in re.finditer(re.escape(value), question):
        start, end = found.span()
        span = _in_word(question, start, end) or _in_name(names, question, start, end) \
            or _in_quote(question, start, end)
        if span is None:
            return None
        wholes.add(question[span[0]:span[1]])
    return wholes.pop() if len(wholes) == 1 else None


#: Words that start no value written after a parameter's name ("the format of YYYY").
_STARTS_NO_VALUE = STOP_WORDS | frozenset({"without", "between", "per", "via"})
_QUOTES = frozenset("\"'`\u2018\u2019\u201c\u201d")
#: What may stand between a parameter's name and its value ("content - go to gym",
#: "command: dir", "title is ...", "text as ...", "command called start calc").
_NAME_GAP = re.compile(r"\s*(?:[:=\-\u2013\u2014]|\bis\b|\bas\b|\bto be\b|\bcalled\b"
                       r"|\bnamed\b|\bknown as\b)?\s*", re.IGNORECASE)
#: The rest of a sentence: up to a full stop, question or exclamation mark before a space
#: or the end, or a line's end.
_REST = re.compile(r"[^\n]*?(?=[.?!](?:\s|$)|\n|$)")
#: The longest value read this way, in words.
_TAIL_WORDS = 12


def _named_tail(key: str, value: str, question: str) -> str | None:
    """The rest of the sentence after the parameter's name or "verbatim" ("add todo with
    content go to sleep at 9 pm", "using the exact command shutdown /s /t 0"), where the
    model wrote only its last words (``9 pm``, ``/s/t 0``): the same, every time the
    question writes the name so. Not a rest that starts with a function word ("the format
    of YYYY", "a deck without joker") or holds a quote (those are :func:`_in_quote`'s)."""
    said = words(value)
    if not said:
        return None
    name = r"[\s_-]+".join(re.escape(w) for w in words(split_name(key)))
    marker = re.compile(rf"(?<![\w-])(?:{name}s?|verbatim)(?![\w-])", re.IGNORECASE)
    wholes: set[str] = set()
    for found in marker.finditer(question):
        start = _NAME_GAP.match(question, found.end())
        rest = _REST.match(question, start.end() if start else found.end())
        tail = rest.group().strip() if rest else ""
        plain = words(tail)
        if len(said) < len(plain) <= _TAIL_WORDS and plain[len(plain) - len(said):] == said \
                and plain[0] not in _STARTS_NO_VALUE and not _QUOTES & set(tail):
            wholes.add(tail)
    return wholes.pop() if len(wholes) == 1 else None


#: The words of a parameter's name that make it a command line.
_COMMAND_NAMES = frozenset({"command", "commands", "cmd", "instruction", "script"})
#: What introduces the command a question says to run ("using docker --version", "You
#: should use timeout 10", "through dir D:\\ && echo testing.txt").
_USING = re.compile(r"(?<![\w-])(?:using|use|run|running|execute|through|via)\s+"
                    r"(?:the\s+)?(?:(?:exact\s+)?(?:command|instruction)\s+"
                    r"(?:(?:called|named)\s+)?)?", re.IGNORECASE)
#: Where a command line ends before its sentence does: "use docker ps *to find out*", "the
#: date *command*".
_COMMAND_END = re.compile(r"\s+(?:command$|to\s|so\s|in\s+order\s).*", re.IGNORECASE)


def _used_command(key: str, value: str, question: str) -> str | None:
    """The command line the question says to run, to the end of its sentence ("check
    whether docker is installed using docker --version"), for a command parameter
    (``command``, ``cmd``, ``instruction``, ``script``) where the model wrote only a word
    of it (``docker``): the one such line that holds the value's words as words and more.
    The line ends before "to", "so" or "in order" ("use docker ps to find out") and a last
    "command"; not a line that starts with a function word, offers alternatives ("the date
    or echo command") or is longer than twelve words."""
    if not _COMMAND_NAMES & set(words(split_name(key))) or not words(value):
        return None
    piece = re.compile(r"(?<![\w])" + re.escape(value.strip()) + r"(?![\w])", re.IGNORECASE)
    wholes: set[str] = set()
    for found in _USING.finditer(question):
        rest = _REST.match(question, found.end())
        line = _COMMAND_END.sub("", rest.group().strip()) if rest else ""
        plain = words(line)
        if plain and plain[0] not in _STARTS_NO_VALUE and len(plain) <= _TAIL_WORDS \
                and "or" not in plain \
                and line.lower() != value.strip().lower() and piece.search(line):
            wholes.add(line)
    return wholes.pop() if len(wholes) == 1 else None


#: A word joined by underscores ("climate_change").
_SNAKE = re.compile(r"(?<![\w$])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?![\w$])")


def _snake_examples(spec: Mapping[str, Any], props: Mapping[str, Any]) -> bool:
    """Does the parameter's description write a word joined by underscores that names no
    parameter ("e.g. 'six_months'"): are such values what it asks for?"""
    description = spec.get("description")
    return isinstance(description, str) and any(
        word not in props for word in _SNAKE.findall(description))


def _spaced(value: str, question: str) -> str | None:
    """The question's words that ``value``, joined by underscores, stands for ("Climate
    Change" for ``climate_change``), when the question writes them so, alike every time,
    and does not write ``value`` itself."""
    if _SNAKE.fullmatch(value.strip()) is None or whole_spans(question, value):
        return None
    pattern = r"(?<![\w-])" + r"[ -]".join(re.escape(w) for w in value.strip().split("_")) \
        + r"(?![\w-])"
    found = {m.group() for m in re.finditer(pattern, question, re.IGNORECASE)}
    return found.pop() if len(found) == 1 else None


def _words(text: str) -> Iterator[tuple[int, int]]:
    """Each whitespace-separated word's span, without the punctuation around it or a
    possessive ``'s``."""
    for match in re.finditer(r"\S+", text):
        start, end = match.span()
        while start < end and text[start] in _EDGE:
            start += 1
        while end > start and text[end - 1] in _EDGE:
            end -= 1
        if text[end - 2:end] in ("'s", "\u2019s"):
            end -= 2
        if start < end:
            yield start, end


def _joint(left: str, right: str) -> bool:
    """May a word be cut between these two characters (a letter and a digit, or a
    separator)?"""
    return (left.isalnum() and right.isalnum() and left.isdigit() != right.isdigit()) \
        or left in _JOINERS or right in _JOINERS


def _in_word(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The word that ``text[start:end]`` is a piece of, cut where words may be cut."""
    for word_start, word_end in _words(text):
        if word_start <= start and end <= word_end:
            if (word_start, word_end) == (start, end) or "'" in text[word_start:word_end]:
                return None
            if (word_start < start and not _joint(text[start - 1], text[start])) \
                    or (end < word_end and not _joint(text[end - 1], text[end])):
                return None
            return word_start, word_end
    return None


def _names(text: str) -> Iterator[tuple[int, int]]:
    """Runs of two or more capitalised words (with connectors between them) separated by
    single spaces: "Treaty of Tordesillas", "Los Angeles Lakers"."""
    run: list[tuple[int, int]] = []

    def close() -> Iterator[tuple[int, int]]:
        while run and text[run[-1][0]:run[-1][1]].lower() in _CONNECTORS:
            run.pop()
        while run and text[run[0][0]:run[0][1]].lower() in _LABELS:
            run.pop(0)  # "ID U123": the label names the value, it is no part of it
        if len(run) > 1:
            yield run[0][0], run[-1][1]

    for match in _NAME_WORD.finditer(text):
        word = match.group()
        joined = bool(run) and text[run[-1][1]:match.start()] == " "
        if word[0].isupper() or (joined and word.lower() in _CONNECTORS):
            if not joined:
                yield from close()
                run = []
            run.append(match.span())
        else:
            yield from close()
            run = []
    yield from close()


def _in_name(names: list[tuple[int, int]], text: str, start: int,
             end: int) -> tuple[int, int] | None:
    """The name ``text[start:end]`` is a piece of; None if it is none, or if the name
    starts a sentence and the value leaves its first word out ("Fetch Bitcoin News":
    that word may be no part of the name)."""
    for name_start, name_end in names:
        if name_start <= start and end <= name_end and (name_start, name_end) != (start, end):
            if name_start < start and (name_start == 0
                                       or _SENTENCE_END.search(text[:name_start])):
                return None
            return name_start, name_end
    return None


def values_after_names(arguments: Mapping[str, Any], schema: Any,
                       question: str) -> dict[str, Any]:
    """``arguments`` with each name the question writes right after a parameter's name
    given to that parameter (``after_names``).

    "Find a comedy movie directed by Edgar Wright" for a movie search with ``directed_by``
    and ``cast``: a 135M model writes ``cast: "Edgar Wright"``, the first free string
    parameter, though the question says whose value the name is. Where the question writes
    the words of a free string parameter's name (two words or more: "directed by"), then
    a run of capitalised words, and only one such run, that run is the parameter's value;
    another optional parameter holding it lets it go. Not after a negation ("not directed
    by"), nor where the call gives the parameter another value the question writes, save a
    piece of the name ("Nitesh" for "Nitesh Tiwari")."""
    props = properties(schema)
    if props is None:
        return dict(arguments)
    needed = required(schema)
    starts = {start: end for start, end in _names(question)}
    result = dict(arguments)
    for key, spec in props.items():
        words = split_name(str(key)).lower().split()
        if len(words) < 2 or not free_string(key, spec):  # a free string parameter
            continue
        said = re.compile(r"\b" + r"\s+".join(map(re.escape, words)) + r"\s+(?=\S)",
                          re.IGNORECASE)
        found = {question[m.end():starts[m.end()]] for m in said.finditer(question)
                 if m.end() in starts and not _negated(question[:m.start()])}
        if len(found) != 1:
            continue
        (name,) = found
        held = result.get(key)
        if held == name or (isinstance(held, str) and held and held not in name
                            and held.lower() in question.lower()):
            continue
        result = {k: v for k, v in result.items()
                  if k == key or v != name or k in needed}
        result[key] = name
    return result


def _negated(before: str) -> bool:
    """Does a negation stand in the three words that end ``before``?"""
    words = [w.lower() for w in re.findall(r"[\w']+", before)]
    return negated(words, len(words))


_QUOTE = re.compile(r"""(?<!\w)["'\u2018\u201c`]([^"'\u2019\u201d`\n]{1,120})"""
                    r"""["'\u2019\u201d`](?!\w)""")


#: Quoted, or set apart in bold ("**Logistic regression is not present in the text.**").
_MARKED = (_QUOTE, re.compile(r"\*\*([^*\n]{1,200}?)\*\*"))


def _in_quote(text: str, start: int, end: int) -> tuple[int, int] | None:
    """The quoted text ``text[start:end]`` is a piece of ('go to Goa' for ``Goa``), or the
    text in bold; not a quote holding most of the text (a whole request in quotes)."""
    for match in (m for pattern in _MARKED for m in pattern.finditer(text)):
        inside = match.span(1)
        if inside[0] <= start and end <= inside[1] and (start, end) != inside \
                and len(match.group(1)) <= 0.8 * len(text.strip()):
            return inside
    return None
