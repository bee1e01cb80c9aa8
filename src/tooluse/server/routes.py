"""The gateway's route table: which backend answers which model name.

Built from a checked config (:class:`~.route_config.GatewayConfig`), one :class:`Route`
per ``[[models]]`` entry in file order, each over a
:class:`~tooluse.backends.balanced.BalancedBackend` of its deployments (one deployment is a
pool of one: it gets the same cooldowns and attempt log). ``--backend`` alone is the table
of one route ``*`` over that backend as it is (:meth:`RouteTable.single`), which the
gateway serves exactly as before routing existed.

Two facts about a route the gateway applies per request (:mod:`.routing`):

- **The model sent upstream.** When every deployment's spec names its model
  (``anthropic:claude-sonnet-4-5``, ``openai:URL#qwen3``), that model is asked for,
  whatever the client named; when none does (``openai:URL``), the client's name goes on.
  (A mix is refused: which name would a deployment get?) The client's name is echoed in
  every answer either way.
- **Retries.** An HTTP deployment with somewhere else to go after it (other deployments,
  or fallbacks) fails at its first failure: the next one is the retry, and a cooldown keeps
  the failing one out meanwhile. The last try of a request retries as its backend would
  alone (``options = { max_retries = N }``; :mod:`tooluse.backends.failover`).

Backends are loaded once per (spec, options): a reload (SIGHUP) keeps the ones whose entry
did not change, with their connections and loaded models, and closes the others once the
requests that were using them have ended (:meth:`RouteTable.retire`).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio.to_thread

from ..backend import Backend
from ..backends.balanced import DEFAULT_COOLDOWN, BalancedBackend
from ..backends.registry import load_backend
from ..errors import BackendError
from .route_config import ConfigError, GatewayConfig, ModelEntry

__all__ = ["Route", "RouteTable"]

#: Model names looked up before the table stops remembering new ones (globs cost more).
_MATCH_CACHE = 4096

LoadKey = tuple[str, str]


@dataclass(frozen=True)
class Route:
    """One route: its config ``entry`` (None for ``--backend``'s one route) and the
    ``backend`` answering it."""

    entry: ModelEntry | None
    backend: Backend
    pins_model: bool = False

    @property
    def name(self) -> str:
        return self.entry.name if self.entry is not None else "*"

    @property
    def context_window(self) -> int | None:
        return self.entry.context_window if self.entry is not None else None

    def matches(self, model: str) -> bool:
        return self.entry.matches(model) if self.entry is not None else True


def redact_spec(spec: str) -> str:
    """A spec as it may be shown: a URL's ``user:password@`` left out."""
    return re.sub(r"(https?://)[^/@\s]*@", r"\1", spec)


class RouteTable:
    """The routes, in the order they are matched, and the backends they own."""

    def __init__(self, routes: list[Route], *, config: GatewayConfig | None = None,
                 loaded: Mapping[LoadKey, Backend] | None = None) -> None:
        self.routes = routes
        self.config = config
        #: Backends by what built them (a reload reuses them): only a config's.
        self.loaded: dict[LoadKey, Backend] = dict(loaded or {})
        self._by_name = {r.name: r for r in routes}
        self._matched: dict[str, Route | None] = {}
        self._chains: dict[str, list[Route]] = {}
        self._lock = threading.Lock()
        self._in_flight = 0
        self._successor: RouteTable | None = None
        self._closed = False

    @classmethod
    def single(cls, backend: Backend) -> RouteTable:
        """``--backend`` alone: one route ``*`` over ``backend`` as it is."""
        return cls([Route(None, backend)])

    @property
    def simple(self) -> bool:
        """Whether this is ``--backend``'s table (no config)."""
        return self.config is None

    @property
    def backend(self) -> Backend:
        """The first route's backend (``--backend``'s, for a simple table)."""
        return self.routes[0].backend

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def build(cls, config: GatewayConfig, previous: RouteTable | None = None) -> RouteTable:
        """The routes of ``config``, reusing ``previous``'s backends where an entry did not
        change. Raises :class:`ConfigError` for a backend that cannot be built (and closes
        those built so far)."""
        reuse = dict(previous.loaded) if previous is not None else {}
        loaded: dict[LoadKey, Backend] = {}
        routes: list[Route] = []
        try:
            for entry in config.models:
                routes.append(_route(config, entry, reuse, loaded))
        except BaseException:
            for key, backend in loaded.items():
                if key not in reuse:
                    backend.close()
            raise
        return cls(routes, config=config, loaded=loaded)

    # -- matching ---------------------------------------------------------------------------
    def match(self, model: str) -> Route | None:
        """The first route whose name matches ``model`` (exactly, or as a glob)."""
        try:
            return self._matched[model]
        except KeyError:
            pass
        found = next((r for r in self.routes if r.matches(model)), None)
        if len(self._matched) < _MATCH_CACHE:
            self._matched[model] = found
        return found

    def chain(self, route: Route) -> list[Route]:
        """``route`` and its fallbacks, in the order they are tried (the caller must not
        change the list)."""
        if self.config is None or route.entry is None:
            return [route]
        found = self._chains.get(route.name)
        if found is None:
            found = self._chains[route.name] = [self._by_name[e.name]
                                                for e in self.config.chain(route.entry)]
        return found

    def route(self, name: str) -> Route | None:
        return self._by_name.get(name)

    def listed(self) -> list[str]:
        """The model names to list (``/v1/models``): the routes' exact names."""
        if self.config is None:
            backend = self.backend
            return [backend.model or backend.name]
        return [r.name for r in self.routes if r.entry is not None and not r.entry.is_glob]

    # -- showing ----------------------------------------------------------------------------
    def health(self) -> list[dict[str, Any]]:
        """Each route with its deployments' state (``/health``)."""
        out = []
        for route in self.routes:
            states = getattr(route.backend, "states", None)
            specs = route.entry.specs if route.entry is not None else ()
            deployments = states() if callable(states) else []
            backends = getattr(route.backend, "deployments", [])
            for state, spec, backend in zip(deployments, specs, backends, strict=False):
                state["backend"] = redact_spec(spec)
                usage = getattr(backend, "slot_usage", None)
                if callable(usage):  # a local model: its slots
                    state["slots"] = usage()
            out.append({"name": route.name, "deployments": deployments,
                        "fallbacks": list(route.entry.fallbacks) if route.entry else []})
        return out

    def describe(self) -> str:
        """The route table as ``tooluse serve --config FILE --check`` prints it."""
        assert self.config is not None
        config = self.config
        rows = [("#", "MODEL NAME", "DEPLOYMENTS", "FALLBACKS", "CONTEXT", "SENDS", "OPTIONS")]
        for route in self.routes:
            entry = route.entry
            assert entry is not None
            sends = "its model" if route.pins_model else "client's name"
            specs = [redact_spec(s) for s in entry.specs]
            options = " ".join(f"{k}={_shown(k, v)}" for k, v in entry.options.items())
            if entry.cooldown is not None:
                options = f"{options} cooldown={entry.cooldown:g}".strip()
            rows.append((str(entry.number), entry.name, specs[0],
                         ", ".join(entry.fallbacks) or "-",
                         str(entry.context_window or "-"), sends, options or "-"))
            rows += [("", "", spec, "", "", "", "") for spec in specs[1:]]
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
        lines = [f"{config.path}: {len(self.routes)} model route(s), {len(config.keys)} key(s)"]
        lines += ["  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                  for row in rows]
        for key in config.keys:
            limits = ", ".join(f"{n} {v}" for n, v in (("rpm", key.rpm), ("tpm", key.tpm))
                               if v is not None) or "no limits"
            lines.append(f"  key {key.name}: models {', '.join(key.globs)}; {limits}")
        unmatched = "" if any(r.name == "*" for r in self.routes) else \
            "  (no '*' route: other model names are answered 404)"
        if unmatched:
            lines.append(unmatched)
        return "\n".join(lines)

    # -- lifetime ---------------------------------------------------------------------------
    def acquire(self) -> None:
        """A request starts on this table."""
        with self._lock:
            self._in_flight += 1

    def release(self) -> None:
        """A request on this table ended (a retired table closes once the last one has)."""
        with self._lock:
            self._in_flight -= 1
            close = self._successor is not None and self._in_flight == 0
        if close:
            self._close_unshared()

    def retire(self, successor: RouteTable) -> None:
        """``successor`` replaces this table: its backends that ``successor`` did not take
        over are closed once no request uses them."""
        with self._lock:
            self._successor = successor
            close = self._in_flight == 0
        if close:
            self._close_unshared()

    def _close_unshared(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        kept = set(map(id, self._successor.loaded.values())) if self._successor else set()
        _close_all(b for b in self.loaded.values() if id(b) not in kept)

    def close(self) -> None:
        """Close every backend of this table (at shutdown)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        _close_all(self._backends())

    async def aclose(self) -> None:
        """:meth:`close` from the event loop, at shutdown: a backend with an ``aclose`` (an
        HTTP backend, whose connection pool belongs to this loop) closes on the loop, the
        others in a worker thread."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        for backend in self._backends():
            aclose = getattr(backend, "aclose", None)
            if aclose is not None:
                await aclose()
            else:
                await anyio.to_thread.run_sync(backend.close)

    def _backends(self) -> Iterable[Backend]:
        return self.loaded.values() if self.config is not None else [self.backend]


def _shown(option: str, value: Any) -> str:
    """An option's value as ``--check`` prints it (a credential's is not shown)."""
    secret = re.search(r"(^|_)(key|secret|password|token|credentials?)$", option.lower())
    return "***" if secret else str(value)


def _close_all(backends: Iterable[Backend]) -> None:
    for backend in backends:
        backend.close()


def _route(config: GatewayConfig, entry: ModelEntry, reuse: Mapping[LoadKey, Backend],
           loaded: dict[LoadKey, Backend]) -> Route:
    def bad(message: str) -> ConfigError:
        return ConfigError(f"{config.path}: {entry.where}: {message}")

    options = dict(entry.options)
    deployments = []
    for spec in entry.specs:
        key = (spec, json.dumps(options, sort_keys=True, default=str))
        backend = loaded.get(key) or reuse.get(key)
        if backend is None:
            try:
                backend = load_backend(spec, **options)
            except TypeError as exc:
                raise bad(f"backend {redact_spec(spec)!r} does not take these options "
                          f"({exc})") from None
            except (ValueError, ImportError, OSError, BackendError) as exc:
                raise bad(f"backend {redact_spec(spec)!r}: {exc}") from None
        loaded[key] = backend
        deployments.append(backend)
    named = [b.model is not None for b in deployments]
    if any(named) and not all(named):
        raise bad("its deployments must all name their model or none may (which name "
                  "would the others be sent?)")
    labels = [entry.name] if len(deployments) == 1 else [
        f"{entry.name}[{i}]" for i in range(len(deployments))]
    cooldown = DEFAULT_COOLDOWN if entry.cooldown is None else entry.cooldown
    pool = BalancedBackend(deployments, labels=labels, cooldown=cooldown,
                           max_cooldown=max(cooldown, 300.0))
    return Route(entry, pool, pins_model=all(named))
