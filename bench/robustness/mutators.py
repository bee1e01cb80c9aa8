"""Our own request mutators: a valid request, damaged in one to three places.

Each mutation is a way real clients (or attackers) get requests wrong: a field removed, a
value of the wrong type, an unknown key, an empty or huge value, a role swapped, a list
emptied or duplicated, a lone surrogate, bad image data, nesting too deep, the JSON text
truncated or not UTF-8. Starting from a *valid* request (``wire.valid_request``) makes most
mutants pass the first checks and reach the deep ones (tool pairing, schemas, images).
Deterministic for a given seed.
"""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable, Iterator
from typing import Any

from wire import valid_request

__all__ = ["mutants"]

Doc = Any

ODD_VALUES: list[Any] = [
    None, True, False, 0, -1, 2**63, -(2**70), 1e308, -0.0, 0.5, "", " ", "x" * 5000,
    "\u0000", "<function_calls>", "😀", [], [None], {}, {"": ""}, {"type": "text"},
    {"type": "tool_use", "id": "", "name": "", "input": []}, [[[]]], "null", "true", "1",
]
KEYS = ["type", "role", "content", "text", "tools", "name", "input", "id", "tool_use_id",
        "toolUseId", "toolUse", "toolResult", "json", "cache_control", "stream", "source",
        "image_url", "tool_calls", "function", "arguments", "parameters", "input_schema",
        "inputSchema", "toolSpec", "toolChoice", "tool_choice", "max_tokens", "maxTokens", "x-extra",
        # the wider Messages surface (thinking, structured output, documents, ...)
        "thinking", "output_config", "format", "schema", "document", "search_result", "citations",
        "container", "context_management", "service_tier", "budget_tokens", "strict"]


def _paths(doc: Doc, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


def _get(doc: Doc, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


def _set(doc: Doc, path: tuple[Any, ...], value: Any) -> Doc:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


def _random_json(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 2 or roll < 0.6:
        return copy.deepcopy(rng.choice(ODD_VALUES))
    if roll < 0.8:
        return [_random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(KEYS): _random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))}


# --- structural mutations: doc -> doc ------------------------------------------------------

def replace_value(doc: Doc, rng: random.Random) -> Doc:
    path = rng.choice(_paths(doc)[1:])
    return _set(doc, path, _random_json(rng))


def delete_key(doc: Doc, rng: random.Random) -> Doc:
    candidates = [p for p in _paths(doc)[1:] if isinstance(_get(doc, p[:-1]), dict)]
    path = rng.choice(candidates)
    del _get(doc, path[:-1])[path[-1]]
    return doc


def add_key(doc: Doc, rng: random.Random) -> Doc:
    dicts = [p for p in _paths(doc) if isinstance(_get(doc, p), dict)]
    _get(doc, rng.choice(dicts))[rng.choice(KEYS)] = _random_json(rng)
    return doc


def mangle_list(doc: Doc, rng: random.Random) -> Doc:
    lists = [p for p in _paths(doc) if isinstance(_get(doc, p), list)]
    target = _get(doc, rng.choice(lists))
    action = rng.randrange(4)
    if action == 0:
        target.clear()
    elif action == 1 and target:
        target.append(copy.deepcopy(rng.choice(target)))
    elif action == 2 and target:
        target.reverse()
    elif target:
        del target[rng.randrange(len(target))]
    return doc


def swap_string(doc: Doc, rng: random.Random) -> Doc:
    """A string replaced by a hostile one: lone surrogates, bad base64, odd names."""
    strings = [p for p in _paths(doc)[1:] if isinstance(_get(doc, p), str)]
    hostile = ["\ud800", "hi \udfff", "\udc00\ud800", "", "get weather!", "a" * 65, "toolu_1",
               "not base64!!", "iVBORw0KGgo", "data:image/png;base64,###", "data:text/plain;base64,aGk=",
               "/9j/4AAQ", "image/bmp", "assistant", "user", "system", "tool", "t1", "c1"]
    return _set(doc, rng.choice(strings), rng.choice(hostile))


def hostile_key(doc: Doc, rng: random.Random) -> Doc:
    dicts = [p for p in _paths(doc) if isinstance(_get(doc, p), dict)]
    _get(doc, rng.choice(dicts))[rng.choice(["\ud800", "\udfff", "", "😀", "a\u0000b"])] = "x"
    return doc


def deep_nesting(doc: Doc, rng: random.Random) -> Doc:
    """A value nested 50 to 5000 levels deep (written into the text by :func:`_dumps`)."""
    return _set(doc, rng.choice(_paths(doc)[1:]), f"__DEEP_{rng.choice([50, 99, 101, 500, 5000])}__")


STRUCTURAL: list[Callable[[Doc, random.Random], Doc]] = [
    replace_value, replace_value, delete_key, add_key, mangle_list, swap_string, swap_string,
    hostile_key, deep_nesting,
]


# --- byte-level mutations: bytes -> bytes --------------------------------------------------

def _truncate(raw: bytes, rng: random.Random) -> bytes:
    return raw[: rng.randrange(len(raw))]


def _bad_utf8(raw: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(raw))
    return raw[:at] + rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"]) + raw[at:]


def _flip(raw: bytes, rng: random.Random) -> bytes:
    at = rng.randrange(len(raw))
    return raw[:at] + bytes([rng.randrange(256)]) + raw[at + 1:]


def _not_object(raw: bytes, rng: random.Random) -> bytes:
    return rng.choice([b"", b" ", b"[]", b"null", b"1", b'"x"', b"NaN", b'{"a": NaN}',
                       b'{"a": Infinity}', b"{" * 10000, b"[" * 100000, b'{"model": "m"}'])


BYTES: list[Callable[[bytes, random.Random], bytes]] = [_truncate, _bad_utf8, _flip, _not_object]


def _dumps(doc: Doc) -> bytes:
    try:
        raw = json.dumps(doc, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: send it as its escape, as a client would
        raw = json.dumps(doc).encode("ascii")
    for depth in re.findall(rb'"__DEEP_(\d+)__"', raw):
        n = int(depth)
        nested = b'{"a":' * (n // 2) + b"[" * (n - n // 2) + b'"x"' + b"]" * (n - n // 2) + b"}" * (n // 2)
        raw = raw.replace(b'"__DEEP_' + depth + b'__"', nested)
    return raw


def mutants(api: str, count: int, seed: int, *, streaming: bool) -> Iterator[tuple[str, bytes]]:
    """``count`` malformed bodies for ``api``: (the mutations applied, the bytes)."""
    rng = random.Random(seed)
    for _ in range(count):
        doc = valid_request(api, stream=streaming and rng.random() < 0.5)
        names = []
        if rng.random() < 0.15:
            raw = _dumps(doc)
            mutation = rng.choice(BYTES)
            names.append(mutation.__name__.lstrip("_"))
            yield "+".join(names), mutation(raw, rng)
            continue
        for _ in range(rng.choice([1, 1, 2, 3])):
            mutation = rng.choice(STRUCTURAL)
            try:
                doc = mutation(doc, rng)
                names.append(mutation.__name__)
            except (IndexError, KeyError, TypeError):
                continue
            if mutation is deep_nesting:  # walking it again would exhaust the stack
                break
        yield "+".join(names) or "none", _dumps(doc)
