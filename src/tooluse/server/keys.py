"""The config's API keys: who is calling, which models it may use, whether its limits have
room.

A key is found by comparing the sent key with *every* configured key in constant time
(:func:`hmac.compare_digest` over SHA-256 digests, so neither the position of a difference
nor a length tells anything), with no early exit. Only the key's ``name`` goes further
(usage rows, log lines); the key itself is never logged, traced or stored.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence

from .errors import GatewayError
from .http.auth import extract_api_key
from .route_config import KeyEntry

__all__ = ["KeyRing"]


class KeyRing:
    """The ``[[keys]]`` of a config."""

    def __init__(self, keys: Sequence[KeyEntry]) -> None:
        self.keys = list(keys)
        self._digests = [(hashlib.sha256(k.secret.encode()).digest(), k) for k in self.keys]

    def __bool__(self) -> bool:
        return bool(self.keys)

    @property
    def secrets(self) -> tuple[str, ...]:
        """The keys themselves, for the authentication every endpoint does."""
        return tuple(k.secret for k in self.keys)

    def identify(self, headers: Mapping[str, str]) -> KeyEntry | None:
        """The entry of the key ``headers`` carry (``x-api-key`` or ``Authorization:
        Bearer``), or None (no key sent, or one that is not in the config)."""
        if not self._digests:
            return None
        sent = extract_api_key(headers)
        if sent is None:
            return None
        digest = hashlib.sha256(sent.encode()).digest()
        found: KeyEntry | None = None
        for known, entry in self._digests:  # every key compared: timing tells nothing
            if hmac.compare_digest(digest, known):
                found = entry
        return found


def refuse_model(key: KeyEntry, model: str) -> GatewayError:
    """The native 403 for a model ``key`` may not use."""
    return GatewayError(f"this API key ({key.name}) may not use the model {model!r}",
                        "permission")
