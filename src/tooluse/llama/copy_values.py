"""Values copied, not invented (``copy_values``, fast engine, greedy decoding).

At the start of each parameter value (``<base>`` just written), the decoder looks ahead:
it writes the model's own free value greedily within the grammar (up to the ``<`` that
closes it) and notes its log-likelihood, then scores each span of the conversation
(:func:`~tooluse.language.spans.candidate_values`) that the grammar allows there,
closed the same way, whole, from the same KV position. A span wins when its likelihood plus
``bonus`` (nats) beats the free value's; the winner's text (the free value or the span,
with the ``</`` that closes it) is then fed as forced text. The grammar guarantee holds:
a span is only offered when the matcher accepts it followed by ``</``.

What it reads of the words: the spans come from :mod:`tooluse.language`, which reads the
conversation with English word lists (stop words, number words and ordinals, month names,
scale words, list words; :func:`~tooluse.language.spans.candidate_values`); whether the
conversation gives a value is read with English stems (:mod:`tooluse.language.words`); and a
bare number written for a string is taken for a stand-in unless the parameter's name holds
one of :data:`_NUMBER_NAMES` (English). The choice between the spans and the model's own
value is the model's likelihood alone. What this does on requests in other languages (the
realistic set's, with ``copy_values`` and without): docs/benchmarks/realistic.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..codecs.legacy import escape, unescape
from ..grammar.matcher import Matcher, MatchState
from ..language.lists import lists_in
from ..language.spans import candidate_values
from ..language.words import given_by, mentions, names_only, split_name, times_given
from ..prompting.hints import ToolNaming, ValueFocus
from .seq import Seq

__all__ = ["ValueCopier", "log_softmax", "score_tokens"]

#: An opening parameter tag just written (its ``>`` may be held back by token healing).
_OPENED = re.compile(rb"<([^<>/\s]+)(>?)(\[?)$")
_STRUCTURE = frozenset({b"tool_name", b"parameters", b"invoke", b"function_calls"})
_CLOSE = b"</"
_VALUE = re.compile(rb"<([^<>/\n]+)>([^<\n]*)</\1>")
_TOOL = re.compile(rb"<tool_name>([^<]*)</tool_name>")
#: The parameters a call has opened so far.
_PARAMETER = re.compile(rb"<([^<>/\s]+)>")
_NUMBER = re.compile(r"[$€£]?-?[\d.,]+%?")
#: Spans offered at each value (``candidate_values``' own default), and how many anchor
#: the search for lists.
_VALUE_SPANS = 24
_LIST_SPANS = 200


def log_softmax(np: Any, logits: Any) -> Any:
    shifted = logits - logits.max()
    return shifted - np.log(np.exp(shifted).sum())


def score_tokens(np: Any, seq: Seq, n_past: int, first: Any, ids: Sequence[int]) -> float:
    """The log-likelihood of ``ids`` after the first ``n_past`` tokens of the sequence
    ``seq`` (``first``: the log-probabilities of the next token there). Decodes past
    ``n_past`` without keeping it (``seq.n_tokens`` never moves)."""
    if not ids:
        return 0.0
    total = float(first[ids[0]])
    if len(ids) > 1:
        rows = seq.score(n_past, ids[:-1]).astype(np.float64)
        for row, token in zip(rows, ids[1:], strict=True):
            total += float(log_softmax(np, row)[token])
    return total


@dataclass
class _Slot:
    """A parameter value about to be written (at sequence position ``start``), and what the
    call around it says: the parameter (``name`` as its tag writes it), the ``>`` still to
    write (``head``), an array's ``[`` already forced (``bracket``), whether a word may be
    written (``words``) and an array is due (``array``), the call so far, its tool with
    that tool's part of the question (``focus``) and its naming, and ``is_place`` where a
    place parameter is still to come (a place is then no value here)."""

    start: int
    name: bytes
    parameter: str
    head: bytes
    bracket: bytes
    words: bool
    call: bytes
    tool: str | None
    focus: ValueFocus | None
    described: ToolNaming | None
    naming: AbstractSet[str]
    is_place: Callable[[str], bool] | None
    array: bool = False


class ValueCopier:
    """Chooses each parameter value between the model's free value and the conversation's
    spans (see the module docstring). ``copied`` counts the values taken from a span that
    the model would not have written."""

    def __init__(self, conversation: str, bonus: float | None = 0.0, *,
                 enums: bool = False, max_value_tokens: int = 48,
                 focus: ValueFocus | None = None,
                 naming: Mapping[str, ToolNaming] | None = None) -> None:
        self.conversation = conversation
        #: Each tool's name words and its parameters', its required parameters and its
        #: place parameters (:class:`~tooluse.prompting.hints.ToolNaming`): for a
        #: required parameter, a span or free value made of these words alone is no value.
        #: An optional one keeps it, for ``optional_from_conversation`` to leave out. With
        #: ``distinct``, a required parameter takes no value the call holds as often as
        #: the conversation writes it, and a known place waits for a place parameter.
        self.naming = naming or {}
        #: Where each tool's values are in the question: a call is offered only the spans
        #: of its tool's part, and the model's value, if the question writes it only
        #: elsewhere, is not taken as given (:class:`tooluse.prompting.hints.ValueFocus`).
        self.focus = focus
        # One pass over the conversation: the first spans are offered at every value, all
        # of them anchor the lists offered where an array is due.
        self._all_spans = candidate_values(conversation, limit=_LIST_SPANS) \
            if bonus is not None else []
        self.spans = self._all_spans[:_VALUE_SPANS]
        self.enums = enums
        self.bonus = bonus or 0.0
        self.max_value_tokens = max_value_tokens
        self.copied = 0
        self.enum_choices = 0
        #: Free values refused as another parameter's (``ToolNaming.distinct``).
        self.refused = 0
        self._decided = -1
        #: The last value chosen (its bytes, as forced) and its log-likelihood margin over
        #: the next best one (inf: there was none): a point a repeat guard may go back to.
        self.last_choice: tuple[bytes, float] | None = None

    def reopen(self) -> None:
        """Decoding went back to a value start (a repeat rolled back): choose again there."""
        self._decided = -1

    @cached_property
    def lists(self) -> list[list[str]]:
        """The lists the conversation writes ("stops at Santa Barbara and Monterey"),
        offered whole where an array is due; found at the first array value only."""
        return lists_in(self.conversation, self._all_spans)

    def choose(self, backend: Any, seq: Seq, np: Any, state: MatchState, matcher: Matcher,
               pieces: list[bytes], eog: frozenset[int],
               banned: frozenset[bytes] = frozenset()) -> bytes | None:
        """At a value start: the bytes to force (the chosen value and the ``</`` closing
        it), with the model's logits as they were; elsewhere None. ``banned``: values
        (as forced) ruled out here, e.g. by a rollback of a repeated call; the choice and
        its margin are kept in :attr:`last_choice`."""
        self.last_choice = None
        start = int(seq.n_tokens)
        if not (self.spans or self.enums) or start < 2 or start == self._decided:
            return None
        tail = b"".join(pieces[int(t)] for t in seq.input_ids[max(0, start - 12):start])
        opened = _OPENED.search(tail)
        if opened is None or opened.group(1) in _STRUCTURE:
            return None
        head = b"" if opened.group(2) else b">"
        finite = _finite_values(matcher, state, head) if self.enums else None
        if finite:
            return self._best_alternative(backend, seq, np, start,
                                          [v for v in finite if v + _CLOSE not in banned])
        slot = self._slot(seq, pieces, start, opened, head, matcher, state)
        options = self._offered(slot, matcher, state, banned)
        if not options:
            return None
        self._decided = start
        kept = seq.logits().copy()
        first = log_softmax(np, kept.astype(np.float64))
        free, free_lp = self._free_value(backend, seq, np, state, matcher, pieces, eog, head)
        free, options = self._judged(slot, free, options, banned)
        return self._decide(backend, seq, np, slot, kept, first, free, free_lp, options)

    def _slot(self, seq: Seq, pieces: list[bytes], start: int, opened: re.Match[bytes],
              head: bytes, matcher: Matcher, state: MatchState) -> _Slot:
        """What the value about to be written is, and what the call around it says."""
        call = self._call(seq, pieces, start)
        named = _TOOL.search(call)
        tool = unescape(named.group(1).decode("utf-8", "replace")) if named else None
        described = self.naming.get(tool or "")
        parameter = unescape(opened.group(1).decode("utf-8", "replace"))
        # A place (a known city, state or country) fills the tool's place parameter still
        # to come, not this one ("cuisine": "Boston" for "a Sushi restaurant in Boston",
        # where ``location`` follows).
        is_place = described.is_place if described is not None else None
        placed = is_place is not None and described is not None \
            and bool(described.places) and parameter not in described.places \
            and bool(described.places - {t.decode("utf-8", "replace")
                                         for t in _PARAMETER.findall(call)})
        return _Slot(
            start=start, name=opened.group(1), parameter=parameter, head=head,
            # an array's "[" the grammar forced already (nothing else can start the value)
            bracket=opened.group(3),
            # a word may be written here: a bare number is then offered only where a
            # number is due (copied into a string, "substance": "1" for "1 kg of ice", it
            # is mostly wrong)
            words=bool(matcher.advance(state, head + b"x")),
            call=call, tool=tool,
            focus=self.focus if self.focus is not None and tool is not None else None,
            described=described,
            naming=described.words if described is not None
            and parameter in described.required else frozenset(),
            is_place=is_place if placed else None)

    def _offered(self, slot: _Slot, matcher: Matcher, state: MatchState,
                 banned: frozenset[bytes]) -> list[bytes]:
        """The conversation's spans (and lists, where an array is due) offered at ``slot``:
        those its tool's part of the question writes, that do not only name the tool, that
        fill no other parameter of the call yet, that are no place where a place parameter
        is still to come, and that the grammar allows there."""
        head, bracket = slot.head, slot.bracket
        options = [head + escape(s).encode("utf-8") for s in self.spans
                   if not (slot.words and _NUMBER.fullmatch(s))
                   and (slot.focus is None or slot.focus.allows(str(slot.tool), s))
                   and not names_only(s, slot.naming, self.conversation)]
        slot.array = bool(bracket) or (not slot.words
                                       and bool(matcher.advance(state, head + b"[")))
        if slot.array:
            arrays = _as_arrays(self.lists) + self._enum_arrays(matcher, state, head, bracket)
            options += [head + escape(text).encode("utf-8")[len(bracket):] for text in arrays]
        # A span that already fills a parameter of this call is not offered again
        # ("current": 12, then "mu0": 12 instead of its constant).
        used = {m.group(2) for m in _VALUE.finditer(slot.call)}
        options = [o for o in options if o[len(head):] not in used]
        if slot.is_place is not None:
            options = [o for o in options if not slot.is_place(_text(o[len(head):]))]
        return [o for o in options if matcher.advance(state, o + _CLOSE)
                and o + _CLOSE not in banned]

    def _judged(self, slot: _Slot, free: bytes | None, options: list[bytes],
                banned: frozenset[bytes]) -> tuple[bytes | None, list[bytes]]:
        """The model's free value, or None where it is no value here (then the spans
        compete alone), and the spans that compete with it."""
        head, described = slot.head, slot.described
        value = free[len(head):] if free is not None else b""
        if free is not None and free + _CLOSE in banned:
            free = None
        if free is not None and (_placeholder(value, slot.name)
                                 or _stand_in(value, slot.name, slot.words)
                                 or (slot.words and names_only(_text(value), slot.naming,
                                                               self.conversation))):
            # The parameter's own name as its value ("answer": "answer"), a type's name
            # ("type": "string"), in a string that is no number or id, a bare number
            # ("food_name": "16" for "16 ounces of chai tea"), or words that only name the
            # tool or its parameters ("content": "todo" for ``todo_manager``): not a
            # value (docs/benchmarks/code.md).
            options = [o for o in options if o != free]
            free = None
        if free is not None and slot.is_place is not None and slot.is_place(_text(value)):
            options = [o for o in options if o != free]
            free = None
            self.refused += 1
        if free is not None and described is not None and described.distinct \
                and slot.parameter in described.required \
                and _repeats(value, slot.call, self.conversation):
            # A required value that already fills a parameter of this call, as often as
            # the conversation writes it ("sculpture": "The Thinker", then "artist": "The
            # Thinker" for "The Thinker by Rodin"): one of the two is wrong, and a span
            # the call does not hold yet takes its place. (An optional one is left to
            # ``optional_from_conversation``, which leaves out a value used too often.)
            options = [o for o in options if o != free]
            free = None
            self.refused += 1
        if free is not None and self._given(value) and (
                slot.focus is None or slot.focus.allows(str(slot.tool), _text(value))):
            # The model copied a value of the conversation already: only a longer span
            # that starts with it competes ("London" or "London, UK"). It gets the same
            # bonus as any span: on likelihood alone the shorter value nearly always wins
            # (docs/benchmarks/code.md).
            options = [o for o in options if o.startswith(free) and len(o) > len(free)]
        return free, options

    def _decide(self, backend: Any, seq: Seq, np: Any, slot: _Slot, kept: Any, first: Any,
                free: bytes | None, free_lp: float, options: list[bytes]) -> bytes | None:
        """Score each span whole from the value start, and write the likeliest: a span
        when its likelihood plus the bonus beats the free value's. ``kept``: the logits at
        the value start, given back to ``seq`` afterwards (nothing is evaluated again)."""
        llm = backend.loaded.llm
        start, head = slot.start, slot.head
        scored = []
        for option in options:
            if option == free:
                continue
            ids = list(llm.tokenize(option + _CLOSE, add_bos=False, special=False))
            scored.append((score_tokens(np, seq, start, first, ids), option))
        # Back at the value start with its logits (what was decoded past it is dropped).
        seq.rewind(start, kept)
        best_lp, best = max(scored) if scored else (float("-inf"), b"")
        lists = [(lp, o) for lp, o in scored if (slot.bracket + o[len(head):]).startswith(b"[")]
        if slot.array and lists and free is not None \
                and (slot.bracket + free[len(head):]).strip() == b"[]":
            # An empty array where the question lists items: the likeliest list, not none.
            best_lp, best = max(lists)
            free = None
        if free is not None and best_lp + self.bonus <= free_lp:
            return self._chosen(free, free_lp, [lp + self.bonus for lp, _ in scored])
        if not scored:
            return None
        self.copied += 1
        return self._chosen(best, best_lp + self.bonus,
                            [lp + self.bonus for lp, o in scored if o != best]
                            + ([free_lp] if free is not None else []))

    def _chosen(self, value: bytes, lp: float, others: Sequence[float]) -> bytes:
        """``value`` closed, noted in :attr:`last_choice` with its margin over ``others``."""
        margin = lp - max(others) if others else float("inf")
        self.last_choice = (value + _CLOSE, margin)
        return value + _CLOSE

    def _best_alternative(self, backend: Any, seq: Seq, np: Any, start: int,
                          values: list[bytes]) -> bytes | None:
        """The likeliest of a slot's few possible values (an enum, a boolean), each
        scored whole, not by its first token."""
        self._decided = start
        if len(values) < 2:
            return None
        llm = backend.loaded.llm
        kept = seq.logits().copy()
        first = log_softmax(np, kept.astype(np.float64))
        scored = [(score_tokens(np, seq, start, first, list(llm.tokenize(
            value + _CLOSE, add_bos=False, special=False))), value) for value in values]
        seq.rewind(start, kept)
        self.enum_choices += 1
        lp, best = max(scored)
        return self._chosen(best, lp, [other for other, v in scored if v != best])

    def _enum_arrays(self, matcher: Matcher, state: MatchState, head: bytes,
                     bracket: bytes) -> list[str]:
        """Where an array of enum members is due: the members the conversation names
        (:func:`~tooluse.language.words.mentions`), as one array written both ways."""
        members = _finite_values(matcher, state, head + (b'"' if bracket else b'["'),
                                 end=b'"')
        if not members:
            return []
        named = []
        for member in members:
            try:
                text = json.loads(b'"' + member[len(head) + 2 - len(bracket):] + b'"')
            except ValueError:
                continue
            if isinstance(text, str) and mentions(self.conversation, text):
                named.append(text)
        if not named:
            return []
        return [json.dumps(named, ensure_ascii=False),
                json.dumps(named, ensure_ascii=False, separators=(",", ":"))]

    @staticmethod
    def _call(seq: Seq, pieces: list[bytes], start: int) -> bytes:
        """The current call as written so far (from its ``<invoke>``)."""
        text = b"".join(pieces[int(t)] for t in seq.input_ids[max(0, start - 400):start])
        return text[text.rfind(b"<invoke>"):]

    def _given(self, value: bytes) -> bool:
        text = _text(value)
        try:
            number: float | None = float(text)
        except ValueError:
            number = None
        return given_by(text if number is None else number, self.conversation)

    def _free_value(self, backend: Any, seq: Seq, np: Any, state: MatchState, matcher: Matcher,
                    pieces: list[bytes], eog: frozenset[int],
                    head: bytes) -> tuple[bytes | None, float]:
        """The value greedy decoding writes here (None if it does not close within
        ``max_value_tokens``) and its log-likelihood up to the token holding its ``<``."""
        written = bytearray()
        total = 0.0
        for _ in range(self.max_value_tokens):
            logits = seq.logits().astype(np.float64)
            token = backend._next_token(seq, np, None, state, matcher, None, pieces, eog, 0.0,
                                        None, None)
            if token is None or token in eog:
                return None, float("-inf")
            total += float(log_softmax(np, logits)[token])
            written += pieces[token]
            state = matcher.advance(state, pieces[token])
            end = written.find(b"<", len(head))
            if end >= 0:
                value = bytes(written[:end])
                return (value, total) if value.startswith(head) else (None, float("-inf"))
            seq.eval([token])
        return None, float("-inf")


def _repeats(value: bytes, call: bytes, conversation: str) -> bool:
    """Does the call written so far hold ``value`` as often as the conversation writes it
    (a value the conversation writes at all)?"""
    held = sum(1 for m in _VALUE.finditer(call) if m.group(2) == value)
    if not held:
        return False
    written = times_given(_text(value).strip(), conversation)  # "1000" is the number 1,000
    return 0 < written <= held


def _text(value: bytes) -> str:
    """A value as the model wrote it, as text (the XML escapes undone)."""
    return unescape(value.decode("utf-8", "replace"))


#: JSON Schema's and Python's type names: written as a value, a small model's stand-in.
_TYPE_NAMES = frozenset({b"string", b"str", b"integer", b"int", b"number", b"float",
                         b"boolean", b"bool", b"array", b"list", b"object", b"dict"})
#: Words of a parameter's name that say a bare number is its value ("case_number": "28473",
#: "season": "2021"); read off the default model's calls on BFCL (docs/benchmarks/code.md).
_NUMBER_NAMES = frozenset({"id", "ids", "identifier", "number", "num", "no", "nr",
                           "year", "season", "code", "zip", "postal", "account",
                           "docket", "uuid", "phone", "pin", "version", "case",
                           "parcel", "serial", "isbn", "sku", "port", "key"})


def _stand_in(value: bytes, name: bytes, words: bool) -> bool:
    """Is ``value`` a stand-in, not a value: a type's name, or (where words are allowed, a
    string) a bare number for a parameter whose name says nothing of numbers or ids?"""
    plain = value.strip().lower()
    if plain in _TYPE_NAMES:
        return True
    if not words or not _NUMBER.fullmatch(value.decode("utf-8", "replace").strip()):
        return False
    said = re.split(r"[\W_]+", split_name(name.decode("utf-8", "replace")).lower())
    return not set(said) & _NUMBER_NAMES


def _placeholder(value: bytes, name: bytes) -> bool:
    """Is ``value`` the parameter's name written again ("content" for ``content``,
    "brain region" for ``brain_region``)?"""
    def plain(text: bytes) -> bytes:
        return re.sub(rb"[\W_]+", b" ", text.lower()).strip()
    return bool(plain(value)) and plain(value) == plain(name)


def _as_arrays(lists: Sequence[Sequence[str]]) -> list[str]:
    """Each list as a JSON array: of strings, and of numbers when every item is one."""
    arrays: list[str] = []
    for items in lists:
        arrays.append(json.dumps(list(items), ensure_ascii=False))
        numbers = [_json_number(item) for item in items]
        if all(n is not None for n in numbers):
            arrays.append(json.dumps(numbers))
    return arrays


def _json_number(text: str) -> int | float | None:
    try:
        number = float(text.replace(",", "").lstrip("$"))
    except ValueError:
        return None
    return int(number) if number.is_integer() and "." not in text else number


def _finite_values(matcher: Matcher, state: MatchState, head: bytes, limit: int = 24,
                   longest: int = 64, end: bytes = _CLOSE) -> list[bytes] | None:
    """Every value the grammar allows at this slot, each followed by ``end`` (``</``: an
    enum's members, ``true``/``false``; ``"``: the members of an array's enum items), or
    None when there are more than ``limit`` (a free string, a number)."""
    begin = matcher.advance(state, head)
    if not begin:
        return None
    found: list[bytes] = []
    stack: list[tuple[MatchState, bytes]] = [(begin, b"")]
    while stack:
        current, text = stack.pop()
        allowed = matcher.allowed_bytes(current)
        if len(allowed) > 16 or len(text) > longest:
            return None
        for byte in sorted(allowed):
            if byte == end[0]:
                if matcher.advance(current, end):
                    found.append(head + text)
                    if len(found) > limit:
                        return None
                continue
            after = matcher.step(current, byte)
            if after:
                stack.append((after, text + bytes([byte])))
    return found
