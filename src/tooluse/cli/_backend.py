"""Loading a backend from the command line: ``--backend SPEC`` plus ``-o KEY=VALUE``
options, with one-line errors naming the command (shared by ``eval bfcl``, ``run`` and
``demo``), and :func:`start_local_load`, which begins loading a local model early.

The command modules import what they run inside their functions, not at the top: the
parser of every command is built on each start, and ``tooluse demo`` should not import the
gateway or the BFCL harness (nor anything heavy before it can start loading its model)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import BackendError

__all__ = ["load_cli_backend", "parse_options", "parse_pairs", "start_local_load"]

#: The options of the local backend that choose the loaded model (ModelSettings).
_MODEL_KEYS = ("n_ctx", "n_threads", "n_threads_decode", "n_batch", "extra_buffers", "seed",
               "slots")


def parse_pairs(items: Iterable[str], separator: str, form: str) -> dict[str, str]:
    """``["a=1"]`` -> ``{"a": "1"}`` (split at the first ``separator``, both sides stripped);
    raises ValueError ``"must be <form>, not 'item'"`` for an item without a key."""
    pairs: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition(separator)
        if not sep or not key.strip():
            raise ValueError(f"must be {form}, not {item!r}")
        pairs[key.strip()] = value.strip()
    return pairs


def parse_options(items: Iterable[str], command: str) -> dict[str, Any]:
    """``["n_threads=1"]`` -> ``{"n_threads": "1"}``; a malformed item exits with a message."""
    try:
        return dict(parse_pairs(items, "=", "KEY=VALUE"))
    except ValueError as exc:
        raise SystemExit(f"{command}: --option {exc}") from None


def load_cli_backend(spec: str, options: dict[str, Any], command: str) -> Any:
    """The backend ``spec`` names, built with ``options``; exits with one line on failure."""
    from ..backends.registry import load_backend

    try:
        return load_backend(spec, **options)
    except TypeError as exc:
        hint = ("; --no-grammar needs a backend that generates with a grammar (local)"
                if "grammar" in options else "")
        raise SystemExit(
            f"{command}: backend {spec!r} does not take these options ({exc}){hint}"
        ) from None
    except (ValueError, ImportError, OSError, BackendError) as exc:
        raise SystemExit(f"{command}: cannot load backend {spec!r}: {exc}") from None


def start_local_load(spec: str | None, options: Mapping[str, Any]) -> None:
    """If ``spec`` (None: the default, ``local``) names the local backend, begin loading its
    model in the background (:func:`~tooluse.llama.model.start_loading`) while
    the command imports and builds the rest; the backend built later with the same spec
    and options takes the loaded model. Options it cannot read are left to that backend
    to report (here nothing is loaded)."""
    scheme, _, rest = (spec or "local").partition(":")
    if scheme != "local":
        return
    from ..llama.model import default_model_path, model_settings, start_loading

    given = options.get("model_path") or options.get("model") or rest or None
    chosen = {k: options[k] for k in _MODEL_KEYS if options.get(k) is not None}
    try:
        path = Path(given) if given else default_model_path()
        settings = model_settings(path, **chosen)
    except (BackendError, ValueError, TypeError, OSError):
        return
    start_loading(settings)
