"""The prompt cache: prefix reuse in memory (the KV cache) and on disk (saved KV states).

In memory: the tool system prompt and the conversation so far repeat at every turn of a
tool loop; llama.cpp keeps the evaluated tokens in its KV cache, so only the tokens after
the first one that differs from the previous request are evaluated (per sequence: with
slots, each of :mod:`.slots`'s sequences keeps its own).

On disk (:class:`DiskPromptCache`): every new process would otherwise evaluate the tool
system prompt again (``tooluse demo``, a ``tooluse serve`` start, an eval batch). The KV
state of that prefix (llama.cpp's ``llama_state_seq_get_data`` for the request's sequence) is saved
to a file keyed by the model file's identity and the exact prefix tokens, and loaded by a
later process that sees the same prefix. A file is trusted only when its header (magic,
format version, model identity, llama-cpp-python version), its token list and the
SHA-256 of its payload all check out; anything else is ignored and removed. The
directory is kept under a size bound by evicting the least recently used files.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import os
import struct
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .model import LoadedModel, ModelSettings
from .seq import Seq

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DiskPromptCache",
    "default_cache_dir",
    "eval_prompt",
    "load_pieces",
    "prompt_cache_from_option",
]

#: Default bound on the directory (what a prefix costs on disk: docs/benchmarks/code.md).
DEFAULT_MAX_BYTES = 512 * 1024 * 1024
#: Shorter prefixes are cheaper to evaluate than to load.
MIN_PREFIX_TOKENS = 64
_MAGIC = b"TOOLUSE-KV\x00\x01"
_SUFFIX = ".kv"
_ENV_DIR = "TOOLUSE_PROMPT_CACHE"
_ENV_SIZE = "TOOLUSE_PROMPT_CACHE_MB"
_OFF = {"0", "off", "false", "no", "none", ""}


def default_cache_dir() -> Path:
    """``$TOOLUSE_PROMPT_CACHE``, else ``$XDG_CACHE_HOME/tooluse/prompt-cache``, else
    ``~/.cache/tooluse/prompt-cache``."""
    env = os.environ.get(_ENV_DIR)
    if env and env.strip().lower() not in _OFF:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tooluse" / "prompt-cache"


def prompt_cache_from_option(value: bool | str | Path | None,
                             max_bytes: int | None = None) -> DiskPromptCache | None:
    """The disk cache an option asks for: True/None (the default directory, unless
    ``TOOLUSE_PROMPT_CACHE=off``), False or ``"off"`` (none), a path (that directory).
    ``max_bytes`` defaults to ``$TOOLUSE_PROMPT_CACHE_MB`` megabytes, else 512 MB."""
    if max_bytes is None:
        env = os.environ.get(_ENV_SIZE, "").strip()
        max_bytes = int(float(env) * 1024 * 1024) if env else DEFAULT_MAX_BYTES
    if value is False:
        return None
    if value is None or value is True:
        if os.environ.get(_ENV_DIR, "x").strip().lower() in _OFF:
            return None
        return DiskPromptCache(default_cache_dir(), max_bytes)
    text = str(value).strip()
    if text.lower() in _OFF | {"true", "on", "yes", "1", "default"}:
        return prompt_cache_from_option(text.lower() in {"true", "on", "yes", "1", "default"},
                                        max_bytes)
    return DiskPromptCache(Path(text).expanduser(), max_bytes)


_IDENTITIES: dict[ModelSettings, str] = {}


def model_identity(settings: ModelSettings) -> str:
    """What a saved KV state depends on: the model file (path, size, modification time and
    a hash of its first 64 KiB, the GGUF header), the llama-cpp-python version (its state
    format) and the settings that change the computed values (computed once per model)."""
    known = _IDENTITIES.get(settings)
    if known is not None:
        return known
    import llama_cpp

    path = Path(settings.path)
    stat = path.stat()
    with open(path, "rb") as f:
        head = hashlib.sha256(f.read(65536)).hexdigest()
    parts = [str(path.resolve()), str(stat.st_size), str(stat.st_mtime_ns), head,
             str(getattr(llama_cpp, "__version__", "?")), str(settings.extra_buffers),
             str(settings.n_ctx)]
    identity = hashlib.sha256("\x00".join(parts).encode()).hexdigest()
    _IDENTITIES[settings] = identity
    return identity


class DiskPromptCache:
    """Saved KV states of prompt prefixes, one file each, under ``directory``, at most
    ``max_bytes`` in all (least recently used files go first)."""

    def __init__(self, directory: Path, max_bytes: int = DEFAULT_MAX_BYTES,
                 min_tokens: int = MIN_PREFIX_TOKENS) -> None:
        self.directory = Path(directory)
        self.max_bytes = int(max_bytes)
        self.min_tokens = min_tokens

    def path_for(self, model: str, tokens: Sequence[int]) -> Path:
        digest = hashlib.sha256(model.encode() + _pack_tokens(tokens)).hexdigest()[:40]
        return self.directory / (digest + _SUFFIX)

    # -- reading -----------------------------------------------------------------------------
    def read(self, model: str, tokens: Sequence[int]) -> bytes | None:
        """The saved state of exactly ``tokens`` for ``model``, or None (missing, or a
        file that does not check out: it is removed)."""
        path = self.path_for(model, tokens)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        payload = _verify(data, model, tokens)
        if payload is None:
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used
        return payload

    # -- writing -----------------------------------------------------------------------------
    def write(self, model: str, tokens: Sequence[int], payload: bytes) -> Path | None:
        """Save ``payload`` as the state of ``tokens``; then evict down to the bound.
        Never raises for a full or read-only disk: the cache is an optimisation."""
        packed = _pack_tokens(tokens)
        header = json.dumps({
            "model": model,
            "n_tokens": len(tokens),
            "tokens_sha256": hashlib.sha256(packed).hexdigest(),
            "payload_size": len(payload),
            "payload_sha256": hashlib.sha256(payload).hexdigest(),
        }).encode()
        blob = _MAGIC + struct.pack("<I", len(header)) + header + packed + payload
        if len(blob) > self.max_bytes:
            return None
        path = self.path_for(model, tokens)
        if not _write_atomic(path, blob):
            return None
        self.evict(keep=path)
        return path

    def evict(self, keep: Path | None = None) -> None:
        """Remove the least recently used files until the directory holds at most
        ``max_bytes`` (``keep``, just written, goes last)."""
        entries: list[tuple[float, int, Path]] = []
        try:
            for path in self.directory.iterdir():
                if path.suffix not in (_SUFFIX, ".tmp"):
                    continue
                try:
                    st = path.stat()
                except OSError:
                    continue
                if path.suffix == ".tmp" and time.time() - st.st_mtime < 3600:
                    continue  # another process may be writing it
                entries.append((st.st_mtime, st.st_size, path))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        entries.sort(key=lambda e: (e[2] == keep, e[0]))
        for _, size, path in entries:
            if total <= self.max_bytes:
                break
            with contextlib.suppress(OSError):
                path.unlink()
                total -= size

    def size(self) -> int:
        try:
            return sum(p.stat().st_size for p in self.directory.glob("*" + _SUFFIX))
        except OSError:
            return 0


def _write_atomic(path: Path, blob: bytes) -> bool:
    """Write ``blob`` to a temporary file renamed to ``path`` (a reader never sees half a
    file); False when the disk refuses."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(blob)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return False
    return True


def _pack_tokens(tokens: Sequence[int]) -> bytes:
    return struct.pack(f"<{len(tokens)}i", *tokens)


def _verify(data: bytes, model: str, tokens: Sequence[int]) -> bytes | None:
    """The payload of a cache file when everything in it checks out, else None."""
    if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 4:
        return None
    (n_header,) = struct.unpack_from("<I", data, len(_MAGIC))
    start = len(_MAGIC) + 4
    try:
        header = json.loads(data[start:start + n_header])
    except ValueError:
        return None
    packed = _pack_tokens(tokens)
    body = start + n_header
    if not isinstance(header, dict) or header.get("model") != model \
            or header.get("n_tokens") != len(tokens) \
            or data[body:body + len(packed)] != packed:
        return None
    payload = data[body + len(packed):]
    if header.get("payload_size") != len(payload) \
            or header.get("payload_sha256") != hashlib.sha256(payload).hexdigest():
        return None
    return payload


# -- the model side ---------------------------------------------------------------------------
def eval_prompt(loaded: LoadedModel, seq: Seq, tokens: list[int], prefix: int = 0,
                disk: DiskPromptCache | None = None) -> tuple[int, int]:
    """Evaluate ``tokens`` in the sequence ``seq``, reusing the longest prefix already in
    its KV cache, and, when the first ``prefix`` tokens (the tool system prompt) are not in
    it, their saved state from ``disk`` (or evaluate them and save it).

    Returns (tokens reused, of which loaded from disk).
    """
    reuse = 0
    if seq.n_tokens > 0:
        previous = seq.input_ids[: seq.n_tokens]
        limit = min(len(previous), len(tokens))
        while reuse < limit and previous[reuse] == tokens[reuse]:
            reuse += 1
    # The last prompt token is always evaluated again, for fresh logits.
    reuse = min(reuse, len(tokens) - 1)
    from_disk = 0
    if disk is not None and reuse < prefix < len(tokens) and prefix >= disk.min_tokens:
        head = tokens[:prefix]
        model = model_identity(loaded.settings)
        payload = disk.read(model, head)
        if payload is not None and seq.load_state(payload, head):
            reuse = from_disk = prefix
        else:
            _keep(seq, reuse)
            seq.eval(head[reuse:])
            state = seq.save_state()
            if state is not None:
                disk.write(model, head, state)
            seq.eval(tokens[prefix:])
            return reuse, 0
    _keep(seq, reuse)
    seq.eval(tokens[reuse:])
    return reuse, from_disk


def _keep(seq: Seq, reuse: int) -> None:
    if reuse <= 0:
        seq.reset()
    else:
        seq.n_tokens = reuse


def system_text(messages: Sequence[Any]) -> str:
    """The system message's text (the tool system prompt), or "" when there is none."""
    return str(messages[0]["content"]) if messages and messages[0]["role"] == "system" else ""


def system_prefix_length(tokenize: Any, prompt: str, system: str, tokens: list[int]) -> int:
    """How many of ``tokens`` (the whole prompt's) hold the chat template's opening up to
    the end of the system message ``system`` (the tool system prompt): the prefix worth
    saving. 0 when the system message is not found or does not tokenize as a prefix."""
    if not system:
        return 0
    at = prompt.find(system)
    if at < 0:
        return 0
    head = tokenize(prompt[: at + len(system)])
    if not head or head != tokens[: len(head)]:
        return 0
    return len(head)


#: Version 2: all lengths first (``<H`` each), then all the bytes: read back with one
#: ``struct.unpack`` and slicing, faster than version 1's length-prefixed records parsed one
#: by one (docs/benchmarks/code.md). A version 1 file is ignored and replaced.
_PIECES_MAGIC = b"TOOLUSE-PIECES\x00\x02"


def load_pieces(loaded: LoadedModel, disk: DiskPromptCache) -> list[bytes]:
    """The model's token pieces (:meth:`LoadedModel.pieces`), read from ``disk`` when a
    valid copy is there (one ctypes call per vocabulary entry would be paid at every
    start), else computed and saved. The file is checked like a KV state: magic, model
    identity, count and SHA-256."""
    if loaded._pieces is not None:
        return loaded._pieces
    model = model_identity(loaded.settings)
    path = disk.directory / (hashlib.sha256(model.encode()).hexdigest()[:40] + ".pieces")
    n_vocab = int(loaded.llm.n_vocab())
    with contextlib.suppress(OSError):
        pieces = _read_pieces(path.read_bytes(), model, n_vocab)
        if pieces is not None:
            loaded._pieces = pieces
            return pieces
    pieces = loaded.pieces()  # each at most 256 bytes (LoadedModel.pieces' buffer)
    body = struct.pack(f"<{n_vocab}H", *map(len, pieces)) + b"".join(pieces)
    head = model.encode() + struct.pack("<I", n_vocab) + hashlib.sha256(body).digest()
    _write_atomic(path, _PIECES_MAGIC + head + body)
    return pieces


def _read_pieces(data: bytes, model: str, n_vocab: int) -> list[bytes] | None:
    at = len(_PIECES_MAGIC)
    key = model.encode()
    if data[:at] != _PIECES_MAGIC or data[at:at + len(key)] != key:
        return None
    at += len(key)
    if data[at:at + 4] != struct.pack("<I", n_vocab):
        return None
    digest, body = data[at + 4:at + 36], data[at + 36:]
    if hashlib.sha256(body).digest() != digest or len(body) < 2 * n_vocab:
        return None
    lengths = struct.unpack_from(f"<{n_vocab}H", body)
    blob = body[2 * n_vocab:]
    ends = list(itertools.accumulate(lengths))
    if (ends[-1] if ends else 0) != len(blob):
        return None
    return [blob[end - n:end] for n, end in zip(lengths, ends, strict=True)]
