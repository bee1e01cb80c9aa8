"""The gateway's config file (``tooluse serve --config FILE``): models, their backends and
fallbacks, and API keys with their models and limits. TOML, read with the stdlib's
``tomllib``; docs/routing.md is the user's guide::

    usage_store = "/var/lib/tooluse/usage.sqlite3"   # or postgresql://... (optional)

    [[models]]
    name = "claude-sonnet-*"                 # an exact name or a glob of what clients send
    backend = "anthropic:claude-sonnet-4-5"  # a backend spec, as --backend takes it
    fallbacks = ["local-big"]                # other [[models]] names, tried in order

    [[models]]
    name = "local-big"
    backend = ["openai-prompt:http://10.0.0.5:8080/v1#qwen3",
               "openai-prompt:http://10.0.0.6:8080/v1#qwen3"]   # deployments of one model
    context_window = 32768
    timeout = 120

    [[keys]]
    key_env = "TEAM_A_KEY"                   # or key = "sk-..."
    name = "team-a"
    models = ["local-*", "claude-haiku-*"]
    rpm = 60

Everything is checked here, before any backend is built, and a problem is one line naming
the file, the entry and what is wrong (:class:`ConfigError`); building the backends
(:mod:`.routes`) adds what only loading finds (a spec's options). A key's value never
appears in an error, a repr or a log line.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Final

from ..errors import ToolUseError

__all__ = ["ConfigError", "GatewayConfig", "KeyEntry", "ModelEntry", "load_config",
           "parse_config"]

_TOP_KEYS: Final = ("models", "keys", "usage_store")
_MODEL_KEYS: Final = ("name", "backend", "fallbacks", "options", "preset", "context_window",
                      "timeout", "connect_timeout", "read_timeout", "cooldown")
_KEY_KEYS: Final = ("key", "key_env", "name", "models", "rpm", "tpm")
#: Entry keys that are backend options (the --upstream-* flags' names).
TIMEOUT_OPTIONS: Final = ("timeout", "connect_timeout", "read_timeout")
_GLOB_CHARS: Final = frozenset("*?[")


class ConfigError(ToolUseError, ValueError):
    """A gateway config that cannot be served: one line naming the file, the entry and
    what is wrong."""


@dataclass(frozen=True)
class ModelEntry:
    """One ``[[models]]`` entry: ``name`` (an exact model name or a glob), its deployments'
    backend ``specs``, its ``fallbacks`` (other entries' names), the backends' ``options``
    (``preset`` and the timeouts among them), ``context_window`` and ``cooldown``."""

    name: str
    specs: tuple[str, ...]
    number: int
    fallbacks: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    context_window: int | None = None
    cooldown: float | None = None

    @property
    def is_glob(self) -> bool:
        return any(c in _GLOB_CHARS for c in self.name)

    def matches(self, model: str) -> bool:
        return fnmatchcase(model, self.name) if self.is_glob else model == self.name

    @property
    def where(self) -> str:
        return f"[[models]] #{self.number} ({self.name!r})"


@dataclass(frozen=True)
class KeyEntry:
    """One ``[[keys]]`` entry: the key (never shown: ``repr`` leaves it out), its ``name``
    (given, or ``key-`` and the first 8 hex digits of its SHA-256), the model ``globs`` it
    may use and its limits per minute."""

    secret: str = field(repr=False)
    name: str
    number: int
    globs: tuple[str, ...] = ("*",)
    rpm: int | None = None
    tpm: int | None = None

    def allows(self, model: str) -> bool:
        return any(fnmatchcase(model, glob) for glob in self.globs)

    @property
    def limited(self) -> bool:
        return self.rpm is not None or self.tpm is not None


@dataclass(frozen=True)
class GatewayConfig:
    """A checked config: ``models`` in file order (the first match wins), ``keys``."""

    path: str
    models: tuple[ModelEntry, ...]
    keys: tuple[KeyEntry, ...] = ()
    usage_store: str | None = None

    def entry(self, name: str) -> ModelEntry:
        return next(e for e in self.models if e.name == name)

    def chain(self, entry: ModelEntry) -> list[ModelEntry]:
        """``entry``, then its fallbacks, each followed by its own, each entry once."""
        seen: dict[str, ModelEntry] = {}

        def visit(e: ModelEntry) -> None:
            if e.name in seen:
                return
            seen[e.name] = e
            for name in e.fallbacks:
                visit(self.entry(name))

        visit(entry)
        return list(seen.values())


def load_config(path: str | os.PathLike[str], *,
                env: Mapping[str, str] | None = None) -> GatewayConfig:
    """Read and check the config file at ``path`` (:class:`ConfigError` if it cannot be)."""
    where = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read the config: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_config(text, where, env=env)


def parse_config(text: str, path: str = "<config>", *,
                 env: Mapping[str, str] | None = None) -> GatewayConfig:
    """Check a config's TOML ``text``; ``path`` names it in errors; ``key_env`` variables
    are read from ``env`` (default: the process's environment)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    _known(data, _TOP_KEYS, path, "the top level")
    usage_store = data.get("usage_store")
    if usage_store is not None and (not isinstance(usage_store, str) or not usage_store):
        raise ConfigError(f"{path}: usage_store must be a file path or a postgresql:// URL")
    raw_models = data.get("models")
    if raw_models is None:
        raise ConfigError(f"{path}: no [[models]] entry: a config routes model names to "
                          "backends (see docs/routing.md)")
    if not isinstance(raw_models, list) or not all(isinstance(m, dict) for m in raw_models):
        raise ConfigError(f"{path}: models must be [[models]] tables")
    models = [_model(raw, n, path) for n, raw in enumerate(raw_models, 1)]
    _check_names(models, path)
    _check_fallbacks(models, path)
    raw_keys = data.get("keys", [])
    if not isinstance(raw_keys, list) or not all(isinstance(k, dict) for k in raw_keys):
        raise ConfigError(f"{path}: keys must be [[keys]] tables")
    keys = [_key(raw, n, path, os.environ if env is None else env)
            for n, raw in enumerate(raw_keys, 1)]
    _check_keys(keys, path)
    return GatewayConfig(path, tuple(models), tuple(keys), usage_store)


# -- pieces -----------------------------------------------------------------------------------

def _known(table: Mapping[str, Any], known: tuple[str, ...], path: str, where: str) -> None:
    for key in table:
        if key not in known:
            raise ConfigError(f"{path}: {where}: unknown key {key!r} (known: {', '.join(known)})")


def _number(value: Any, *, positive: bool, integer: bool = False) -> bool:
    if isinstance(value, bool) or not isinstance(value, int if integer else (int, float)):
        return False
    return value > 0 if positive else value >= 0


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value)


def _model(raw: dict[str, Any], number: int, path: str) -> ModelEntry:
    name = raw.get("name")
    where = f"[[models]] #{number}" + (f" ({name!r})" if isinstance(name, str) else "")
    _known(raw, _MODEL_KEYS, path, where)

    def bad(message: str) -> ConfigError:
        return ConfigError(f"{path}: {where}: {message}")

    if not isinstance(name, str) or not name.strip():
        raise bad("name is missing (an exact model name or a glob such as 'claude-*')")
    backend = raw.get("backend")
    if backend is None:
        raise bad("backend is missing (a backend spec, or a list of them for deployments)")
    specs = [backend] if isinstance(backend, str) else backend
    if not _strings(specs) or not specs:
        raise bad("backend must be a backend spec or a non-empty list of them, "
                  f"not {backend!r}")
    from ..backends.registry import available_backends

    known = available_backends()
    for spec in specs:
        scheme = spec.partition(":")[0]
        if scheme not in known:
            raise bad(f"backend {spec!r}: unknown backend {scheme!r} (known: {', '.join(known)})")
    fallbacks = raw.get("fallbacks", [])
    if not _strings(fallbacks):
        raise bad(f"fallbacks must be a list of [[models]] names, not {fallbacks!r}")
    options = raw.get("options", {})
    if not isinstance(options, dict):
        raise bad(f"options must be a table (options = {{ key = value }}), not {options!r}")
    options = dict(options)
    preset = raw.get("preset")
    if preset is not None:
        if not isinstance(preset, str) or not preset:
            raise bad(f"preset must be a preset's name, not {preset!r}")
        options["preset"] = preset
    for key in TIMEOUT_OPTIONS:
        if key in raw:
            if not _number(raw[key], positive=True):
                raise bad(f"{key} must be a number of seconds > 0, not {raw[key]!r}")
            options[key] = float(raw[key])
    window = raw.get("context_window")
    if window is not None and not _number(window, positive=True, integer=True):
        raise bad(f"context_window must be a whole number of tokens > 0, not {window!r}")
    cooldown = raw.get("cooldown")
    if cooldown is not None and not _number(cooldown, positive=False):
        raise bad(f"cooldown must be a number of seconds >= 0, not {cooldown!r}")
    return ModelEntry(name=name, specs=tuple(specs), number=number,
                      fallbacks=tuple(fallbacks), options=options, context_window=window,
                      cooldown=None if cooldown is None else float(cooldown))


def _check_names(models: list[ModelEntry], path: str) -> None:
    first: dict[str, ModelEntry] = {}
    for entry in models:
        if entry.name in first:
            raise ConfigError(f"{path}: {entry.where}: the name is already that of "
                              f"{first[entry.name].where}")
        first[entry.name] = entry


def _check_fallbacks(models: list[ModelEntry], path: str) -> None:
    by_name = {e.name: e for e in models}
    for entry in models:
        for name in entry.fallbacks:
            if name == entry.name:
                raise ConfigError(f"{path}: {entry.where}: fallbacks: it names itself")
            if name not in by_name:
                raise ConfigError(f"{path}: {entry.where}: fallbacks: {name!r} names no "
                                  "[[models]] entry")
    # a cycle: a path of fallbacks back to where it started
    done: set[str] = set()
    stack: list[str] = []

    def visit(entry: ModelEntry) -> None:
        stack.append(entry.name)
        for name in entry.fallbacks:
            if name in stack:
                loop = [*stack[stack.index(name):], name]
                raise ConfigError(f"{path}: {by_name[name].where}: fallbacks form a cycle: "
                                  + " -> ".join(loop))
            if name not in done:
                visit(by_name[name])
        stack.pop()
        done.add(entry.name)

    for entry in models:
        if entry.name not in done:
            visit(entry)


def _key(raw: dict[str, Any], number: int, path: str, env: Mapping[str, str]) -> KeyEntry:
    where = f"[[keys]] #{number}" + (f" ({raw['name']!r})" if isinstance(raw.get("name"), str)
                                     else "")
    _known(raw, _KEY_KEYS, path, where)

    def bad(message: str) -> ConfigError:
        return ConfigError(f"{path}: {where}: {message}")

    if ("key" in raw) == ("key_env" in raw):
        raise bad("give the key as key = \"...\" or key_env = \"VARIABLE\" (one of them)")
    if "key" in raw:
        secret = raw["key"]
        if not isinstance(secret, str) or not secret.strip():
            raise bad("key must be a non-empty string")
    else:
        variable = raw["key_env"]
        if not isinstance(variable, str) or not variable:
            raise bad(f"key_env must name an environment variable, not {variable!r}")
        secret = env.get(variable, "")
        if not secret.strip():
            raise bad(f"key_env: the environment variable {variable} is not set (or empty)")
    secret = secret.strip()
    name = raw.get("name")
    if name is None:
        name = "key-" + hashlib.sha256(secret.encode()).hexdigest()[:8]
    elif not isinstance(name, str) or not name.strip():
        raise bad(f"name must be a non-empty string, not {name!r}")
    globs = raw.get("models", ["*"])
    if not _strings(globs) or not globs:
        raise bad("models must be a non-empty list of model names or globs, not "
                  f"{globs!r}")
    limits: dict[str, int | None] = {}
    for limit in ("rpm", "tpm"):
        value = raw.get(limit)
        if value is not None and not _number(value, positive=True, integer=True):
            raise bad(f"{limit} must be a whole number > 0, not {value!r}")
        limits[limit] = value
    return KeyEntry(secret=secret, name=name, number=number, globs=tuple(globs),
                    rpm=limits["rpm"], tpm=limits["tpm"])


def _check_keys(keys: list[KeyEntry], path: str) -> None:
    names: dict[str, KeyEntry] = {}
    secrets: dict[str, KeyEntry] = {}
    for key in keys:
        where = f"[[keys]] #{key.number} ({key.name!r})"
        if key.name in names:
            raise ConfigError(f"{path}: {where}: the name is already that of "
                              f"[[keys]] #{names[key.name].number}")
        if key.secret in secrets:
            raise ConfigError(f"{path}: {where}: the same key as "
                              f"[[keys]] #{secrets[key.secret].number}")
        names[key.name] = key
        secrets[key.secret] = key
