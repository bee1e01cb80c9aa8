"""The package's imports point one way: no circle between modules, no lower layer importing
a higher one.

Every import statement of every module under ``src/tooluse`` is read with :mod:`ast` — at
module level, inside functions and under ``if TYPE_CHECKING:`` alike (a circle hidden in a
function or behind a type-checking guard is still a circle in the design) — and resolved to
the module it names: ``from ..tools import ToolSet`` is an edge to ``tooluse.tools`` (the
package's ``__init__``), ``from . import stream`` to the submodule ``stream``. A package's
``__init__`` importing its own submodules is an edge like any other; the implicit import of a
parent package when a submodule is imported is not counted (it is not written anywhere).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
ROOT = SRC / "tooluse"

#: Lowest first. A module may import modules of its own layer and of lower ones only.
#: Matched by the longest dotted prefix; ``tooluse`` itself (the package's ``__init__``, its
#: public face re-exporting from every layer) is the top, and matches only itself.
LAYERS: list[tuple[str, ...]] = [
    # the neutral model: errors, JSON values, messages, stream events, the backend protocol
    (
        "tooluse._lazy",
        "tooluse._run_sync",
        "tooluse._greenlet_bridge",
        "tooluse._bounded_table",
        "tooluse._migrations",
        "tooluse._writer",
        "tooluse.errors",
        "tooluse.cancel",
        "tooluse._jsonvalue",
        "tooluse.partial_json",
        "tooluse.server_specs",
        "tooluse.messages",
        "tooluse.deferred",
        "tooluse.stream",
        "tooluse.backend",
    ),
    # what tooluse reads of a text's words (pure functions of text, English word lists)
    ("tooluse.language",),
    # OpenTelemetry spans (off unless switched on) over the neutral model, for the runner,
    # the gateway and the backends alike
    ("tooluse.telemetry",),
    ("tooluse.tools",),
    # tool sources over the tools layer: MCP servers' tools as Tool objects
    ("tooluse.mcp",),
    ("tooluse.codecs",),
    # the grammar of prompt-based tool calls, from the tools' schemas (codecs.legacy's format)
    ("tooluse.grammar",),
    # per-request traces, written by the prompting layer and everything above it
    ("tooluse.trace",),
    ("tooluse.prompting",),
    # opt-in rule sets over the prompting layer's hook (tooluse.prompting.assist)
    ("tooluse.presets",),
    # the local inference engine (llama.cpp through llama-cpp-python): a text backend of the
    # prompting layer, built by the local backend
    ("tooluse.llama",),
    ("tooluse.backends",),
    ("tooluse.runner",),
    ("tooluse.eval",),
    # the gateway, lowest first: its one error and which failure becomes which; HTTP
    # plumbing that knows no API; the Responses and usage stores; the routing of a request
    # to a backend (config, keys, routes, policy, the per-request state); the wire APIs
    # (one table of them, a module each, the endpoint they share, the OpenAPI document);
    # the app that mounts them (and the tracing, the trace page, the threads and workers)
    ("tooluse.server.errors",),
    ("tooluse.server.http",),
    ("tooluse.server.stores",),
    (
        "tooluse.server.route_config",
        "tooluse.server.keys",
        "tooluse.server.routes",
        "tooluse.server.policy",
        "tooluse.server.server_tools",
        "tooluse.server.routing",
        "tooluse.server.state",
    ),
    ("tooluse.server.apis",),
    ("tooluse.server",),
    ("tooluse.cli",),
    ("tooluse",),
]

#: Imports allowed against the layer order, each with its reason. Empty: none is needed.
EXCEPTIONS: dict[tuple[str, str], str] = {}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


MODULES = _modules()


def _targets(name: str, path: Path) -> Iterator[tuple[str, int]]:
    """The package modules ``name`` imports, with the line of each import."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "tooluse" or alias.name.startswith("tooluse."):
                    yield _existing(alias.name), node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if not (module == "tooluse" or module.startswith("tooluse.")):
                continue
            for alias in node.names:
                sub = f"{module}.{alias.name}"
                yield (sub if sub in MODULES else _existing(module)), node.lineno


def _existing(module: str) -> str:
    while module not in MODULES and "." in module:
        module = module.rpartition(".")[0]
    return module


def _graph() -> dict[str, dict[str, int]]:
    graph: dict[str, dict[str, int]] = {}
    for name, path in MODULES.items():
        edges = graph.setdefault(name, {})
        for target, line in _targets(name, path):
            if target != name:
                edges.setdefault(target, line)
    return graph


def _layer(module: str) -> int:
    best, best_len = len(LAYERS), -1
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            inside = module == prefix or (prefix != "tooluse" and module.startswith(prefix + "."))
            if inside and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    return best


def _cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start, edges in graph.items():
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(edges))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(graph[child])))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_module_is_read_and_every_import_resolves() -> None:
    graph = _graph()
    assert len(graph) > 50
    assert all(t in MODULES for edges in graph.values() for t in edges)
    # the walk sees imports inside functions and under TYPE_CHECKING too
    assert "tooluse.runner.loop" in graph["tooluse.runner.extract"]


def test_no_import_circle_between_modules() -> None:
    graph = _graph()
    cycles = _cycles(graph)
    described = []
    for component in cycles:
        members = set(component)
        edges = [
            f"  {a} -> {b} (line {graph[a][b]})"
            for a in component
            for b in graph[a]
            if b in members
        ]
        described.append("\n".join([" <-> ".join(component), *edges]))
    assert not cycles, "import circles:\n" + "\n".join(described)


def test_no_lower_layer_imports_a_higher_one() -> None:
    graph = _graph()
    upward = [
        f"{a} (layer {_layer(a)}) imports {b} (layer {_layer(b)}) at line {line}"
        for a, edges in graph.items()
        for b, line in edges.items()
        if _layer(b) > _layer(a) and (a, b) not in EXCEPTIONS
    ]
    assert not upward, "imports running up the layers:\n" + "\n".join(upward)


def test_every_exception_is_still_needed() -> None:
    graph = _graph()
    stale = [pair for pair in EXCEPTIONS if pair[1] not in graph.get(pair[0], {})]
    assert not stale, f"exceptions no longer needed, remove them: {stale}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_has_a_layer(module: str) -> None:
    assert _layer(module) < len(LAYERS), f"{module} is in no layer: add it to LAYERS"


def test_the_checks_catch_a_circle_and_an_upward_import() -> None:
    graph = {"a": {"b": 1}, "b": {"c": 2}, "c": {"a": 3}, "d": {"a": 4}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _layer("tooluse.messages") < _layer("tooluse.codecs.openai.stream")
    assert _layer("tooluse.runner.loop") > _layer("tooluse.backends.openai")
    assert _layer("tooluse.backend") < _layer("tooluse.backends")
    assert _layer("tooluse.language.words") < _layer("tooluse.grammar.tool_calls") \
        < _layer("tooluse.prompting.tool_use") < _layer("tooluse.llama.text") \
        < _layer("tooluse.backends.local")
    assert _layer("tooluse.somewhere_new") == len(LAYERS)  # no layer: reported, not top
