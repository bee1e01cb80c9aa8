"""A byte-level recogniser for :mod:`.ir` grammars, built for constrained decoding.

Why not only llama.cpp's grammar sampler: that sampler checks the *whole vocabulary* against
the grammar at every step, and cannot tell its caller "the next 12 bytes are fixed". This
matcher answers the two questions a fast decoder asks, cheaply:

- :meth:`Matcher.advance` — does this candidate token's text keep the output inside the
  grammar? (asked only for the model's best few candidates, in order);
- :meth:`Matcher.forced` — which bytes does the grammar allow and nothing else? (tag text
  such as ``</tool_name>\\n<parameters>\\n<location>`` is fed to the model in one batch
  instead of being sampled token by token).

A state is a set of *threads*; a thread is a stack of positions in the grammar (the same
idea as llama.cpp's grammar stacks). Repetitions keep a counter instead of being unrolled,
so a 200-character string costs one position, not 200 states. Transitions are memoised per
(state, byte), so the tag text and the common characters of a tool loop are computed once.
"""

from __future__ import annotations

from .ir import Alt, Chars, Lit, Node, Rep, Rule, Seq

__all__ = ["MatchState", "Matcher"]

# A position: (node number, int). Lit: bytes matched so far; Seq: index of the next item;
# Rep: items matched so far; Chars: continuation bytes still expected in a UTF-8 character. Nodes are numbered so that hashing a thread costs
# a few integers (grammar nodes hash by value, i.e. by their whole subtree).
Position = tuple[int, int]
Thread = tuple[Position, ...]
MatchState = frozenset[Thread]
_ACCEPT: Thread = ()


_CONTINUATION = frozenset(range(0x80, 0xC0))


def _continuations(lead: int) -> int:
    """How many continuation bytes follow a UTF-8 lead byte (0 for ASCII)."""
    if lead < 0x80:
        return 0
    if lead < 0xE0:
        return 1
    if lead < 0xF0:
        return 2
    return 3


class Matcher:
    """Recognises the byte strings of one grammar, incrementally."""

    def __init__(self, root: Node, *, cache_size: int = 200_000) -> None:
        self.root = root
        self._lit_bytes: dict[int, bytes] = {}
        self._char_sets: dict[int, frozenset[int]] = {}
        self._cache: dict[tuple[MatchState, int], MatchState] = {}
        self._cache_size = cache_size
        self._nodes: list[Node] = []
        self._numbers: dict[int, int] = {}
        threads: set[Thread] = set()
        self._enter(root, (), threads, set())
        self.initial: MatchState = frozenset(threads)

    # -- closure -------------------------------------------------------------------------------
    def _n(self, node: Node) -> int:
        number = self._numbers.get(id(node))
        if number is None:
            number = len(self._nodes)
            self._nodes.append(node)
            self._numbers[id(node)] = number
        return number

    def _bytes(self, node: Lit) -> bytes:
        data = self._lit_bytes.get(id(node))
        if data is None:
            data = node.text.encode("utf-8")
            self._lit_bytes[id(node)] = data
        return data

    def _set(self, node: Chars) -> frozenset[int]:
        """Bytes that can start a character of the class (a negated class matches whole
        UTF-8 characters: a lead byte, then its continuation bytes)."""
        allowed = self._char_sets.get(id(node))
        if allowed is None:
            allowed = node.allowed_bytes()
            if node.negated:
                allowed = frozenset(b for b in allowed if b < 0x80 or 0xC2 <= b <= 0xF4)
            self._char_sets[id(node)] = allowed
        return allowed

    def _enter(self, node: Node, rest: Thread, out: set[Thread], seen: set[Thread]) -> None:
        """Add the threads that start matching ``node`` and then continue with ``rest``."""
        if isinstance(node, Rule):
            self._enter(node.body, rest, out, seen)
        elif isinstance(node, Lit):
            if node.text:
                out.add(rest + ((self._n(node), 0),))
            else:
                self._complete(rest, out, seen)
        elif isinstance(node, Chars):
            out.add(rest + ((self._n(node), 0),))
        elif isinstance(node, Seq):
            if node.items:
                self._enter(node.items[0], rest + ((self._n(node), 1),), out, seen)
            else:
                self._complete(rest, out, seen)
        elif isinstance(node, Alt):
            for option in node.options:
                self._enter(option, rest, out, seen)
        elif isinstance(node, Rep):
            self._rep(node, 0, rest, out, seen)
        else:
            raise TypeError(f"not a grammar node: {node!r}")

    def _rep(self, node: Rep, count: int, rest: Thread, out: set[Thread],
             seen: set[Thread]) -> None:
        if node.max is None or count < node.max:
            # Unbounded repetitions stop counting at ``min`` so their stacks repeat (and the
            # ``seen`` check ends a loop over an item that can match nothing).
            nxt = count + 1 if node.max is not None or count < node.min else count
            key = rest + ((self._n(node), nxt),)
            if key not in seen:
                seen.add(key)
                self._enter(node.item, key, out, seen)
        if count >= node.min:
            self._complete(rest, out, seen)

    def _complete(self, stack: Thread, out: set[Thread], seen: set[Thread]) -> None:
        """The node below ``stack``'s top finished: continue with what comes after it."""
        if not stack:
            out.add(_ACCEPT)
            return
        number, index = stack[-1]
        node = self._nodes[number]
        rest = stack[:-1]
        if isinstance(node, Seq):
            if index >= len(node.items):
                self._complete(rest, out, seen)
            else:
                self._enter(node.items[index], rest + ((number, index + 1),), out, seen)
        elif isinstance(node, Rep):
            self._rep(node, index, rest, out, seen)
        else:  # pragma: no cover - only Seq and Rep positions wait for a child
            raise AssertionError(f"unexpected continuation {node!r}")  # noqa: TRY004

    # -- stepping ------------------------------------------------------------------------------
    def step(self, state: MatchState, byte: int) -> MatchState:
        """The state after one more byte (empty: the byte is not allowed)."""
        key = (state, byte)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        out: set[Thread] = set()
        seen: set[Thread] = set()
        for thread in state:
            if not thread:
                continue
            number, offset = thread[-1]
            node = self._nodes[number]
            rest = thread[:-1]
            if isinstance(node, Lit):
                data = self._bytes(node)
                if data[offset] == byte:
                    if offset + 1 == len(data):
                        self._complete(rest, out, seen)
                    else:
                        out.add(rest + ((number, offset + 1),))
            elif isinstance(node, Chars):
                # ``offset`` > 0: inside a multi-byte character, that many bytes to go.
                if offset:
                    if 0x80 <= byte <= 0xBF:
                        if offset == 1:
                            self._complete(rest, out, seen)
                        else:
                            out.add(rest + ((number, offset - 1),))
                elif byte in self._set(node):
                    more = _continuations(byte)
                    if more:
                        out.add(rest + ((number, more),))
                    else:
                        self._complete(rest, out, seen)
        result: MatchState = frozenset(out)
        if len(self._cache) >= self._cache_size:
            self._cache.clear()
        self._cache[key] = result
        return result

    def advance(self, state: MatchState, data: bytes) -> MatchState:
        """The state after ``data`` (empty if the grammar does not allow it)."""
        for byte in data:
            state = self.step(state, byte)
            if not state:
                break
        return state

    @staticmethod
    def accepts(state: MatchState) -> bool:
        """Whether the output may end here."""
        return _ACCEPT in state

    def allowed_bytes(self, state: MatchState) -> set[int]:
        allowed: set[int] = set()
        for thread in state:
            if not thread:
                continue
            number, offset = thread[-1]
            node = self._nodes[number]
            if isinstance(node, Lit):
                allowed.add(self._bytes(node)[offset])
            elif isinstance(node, Chars):
                allowed |= _CONTINUATION if offset else self._set(node)
        return allowed

    def forced(self, state: MatchState, limit: int = 256) -> tuple[bytes, MatchState]:
        """The bytes the grammar allows and nothing else from ``state`` (and the state after
        them). Stops where the output could also end, or where there is a choice."""
        out = bytearray()
        while len(out) < limit and state and not self.accepts(state):
            allowed = self.allowed_bytes(state)
            if len(allowed) != 1:
                break
            byte = allowed.pop()
            out.append(byte)
            state = self.step(state, byte)
        return bytes(out), state

    def matches(self, data: bytes) -> bool:
        """Whether ``data`` is a complete sentence of the grammar."""
        return self.accepts(self.advance(self.initial, data))
