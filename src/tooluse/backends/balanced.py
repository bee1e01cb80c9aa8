"""Deployments of one model behind one backend: balanced, with failing ones cooled down.

:class:`BalancedBackend` takes several backends serving the same model (three vLLM or
llama-server boxes, two regions of one API) and sends each request to one of them:

- **The least busy.** The deployment with the fewest requests in flight (from this
  process); ties go round-robin, so an even load spreads evenly and a slow deployment,
  holding its requests longer, gets fewer new ones.
- **Failover before the answer starts.** A failure that :func:`~.failover.falls_over`
  accepts, before the first content event, goes on to the next deployment (each is tried
  at most once per request); the loop is :func:`~.failover.stream_first`'s. A prompt over
  the model's context is raised at once: every deployment holds the same model.
- **Cooldowns.** A deployment that failed that way (refused connection, timeout, 429, 5xx,
  529, also after its answer started) is left out for a while: the ``Retry-After`` its
  upstream sent, else ``cooldown`` seconds, doubled for each failure in a row up to
  ``max_cooldown``; an answer that completes ends the streak. When every deployment cools
  down, a request still goes to the one whose cooldown ends first: failing without trying
  would fail for sure (:meth:`BalancedBackend.available` tells a caller with somewhere
  else to go).

A deployment with another to go to after it fails at its first failure (an HTTP backend
does not retry inside the call: :func:`~.failover.more_to_try`); the last one tried retries
as it would alone. :meth:`BalancedBackend.states` is each deployment's state, for a health
page.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final

from ..backend import Backend
from ..errors import BackendError
from ..messages import Request, Response
from ..stream import StreamEvent
from .failover import (
    Opened,
    Try,
    acomplete_first,
    aopen_stream,
    complete_first,
    falls_over,
    stream_first,
    streamed,
)

__all__ = ["DEFAULT_COOLDOWN", "DEFAULT_MAX_COOLDOWN", "BalancedBackend"]

#: Seconds a deployment is left out after a failure, when its upstream did not say.
DEFAULT_COOLDOWN: Final = 5.0
#: The longest cooldown of a deployment failing again and again (seconds).
DEFAULT_MAX_COOLDOWN: Final = 300.0


@dataclass
class _Deployment:
    backend: Backend
    label: str
    in_flight: int = 0
    cool_until: float = 0.0
    streak: int = 0
    served: int = 0
    failed: int = 0
    last_error: str | None = None


def _stays(exc: BaseException) -> bool:
    """Whether a failure goes on to another deployment (not a prompt over the context,
    which every deployment of the model would refuse)."""
    return falls_over(exc) and getattr(exc, "kind", None) != "context_length"


class BalancedBackend(Backend):
    """``deployments`` of one model, balanced (see the module docstring). ``labels`` name
    them in the attempt log and :meth:`states` (default ``NAME[i]``)."""

    name = "balanced"

    def __init__(self, deployments: Sequence[Backend], *, labels: Sequence[str] | None = None,
                 cooldown: float = DEFAULT_COOLDOWN, max_cooldown: float = DEFAULT_MAX_COOLDOWN,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not deployments:
            raise ValueError("BalancedBackend needs at least one deployment")
        if labels is not None and len(labels) != len(deployments):
            raise ValueError("BalancedBackend: one label per deployment")
        if not cooldown >= 0 or not max_cooldown >= cooldown:
            raise ValueError(f"cooldowns must be 0 <= cooldown <= max_cooldown, not "
                             f"{cooldown!r} and {max_cooldown!r}")
        names = labels if labels is not None else [f"{b.name}[{i}]"
                                                   for i, b in enumerate(deployments)]
        self._deployments = [_Deployment(b, label)
                             for b, label in zip(deployments, names, strict=True)]
        self.cooldown = float(cooldown)
        self.max_cooldown = float(max_cooldown)
        self._clock = clock
        self._lock = threading.Lock()
        self._next = 0
        kinds = {b.name for b in deployments}
        models = {b.model for b in deployments}
        self.name = kinds.pop() if len(kinds) == 1 else "balanced"
        self.model = models.pop() if len(models) == 1 else None
        self.forwards = frozenset.intersection(*(b.forwards for b in deployments))
        self.structured_output = all(b.structured_output for b in deployments)

    @property
    def deployments(self) -> list[Backend]:
        return [d.backend for d in self._deployments]

    # -- state ------------------------------------------------------------------------------
    def available(self) -> bool:
        """Whether some deployment is not cooling down."""
        now = self._clock()
        return any(d.cool_until <= now for d in self._deployments)

    def states(self) -> list[dict[str, Any]]:
        """Each deployment: ``label``, ``state`` (``ready`` or ``cooling``), ``cooldown_s``
        left, ``in_flight``, ``served`` and ``failed`` so far, ``last_error``."""
        now = self._clock()
        with self._lock:
            return [{"label": d.label, "state": "ready" if d.cool_until <= now else "cooling",
                     "cooldown_s": round(max(0.0, d.cool_until - now), 3),
                     "in_flight": d.in_flight, "served": d.served, "failed": d.failed,
                     "last_error": d.last_error} for d in self._deployments]

    def _pick(self, tried: set[int], panic: bool) -> tuple[_Deployment, bool] | None:
        """The next deployment to try (its in-flight count already taken) and whether it is
        the last one this request may try, or None."""
        with self._lock:
            now = self._clock()
            count = len(self._deployments)
            if count == 1:  # one deployment: a pool of one
                only = self._deployments[0]
                if tried or (only.cool_until > now and not panic):
                    return None
                tried.add(0)
                only.in_flight += 1
                return only, True
            ready = [i for i in range(count)
                     if i not in tried and self._deployments[i].cool_until <= now]
            if ready:
                least = min(self._deployments[i].in_flight for i in ready)
                start = self._next
                index = next(i for i in ((start + k) % count for k in range(count))
                             if i in ready and self._deployments[i].in_flight == least)
                self._next = (index + 1) % count
                last = len(ready) == 1
            elif panic:
                rest = [i for i in range(count) if i not in tried]
                if not rest:
                    return None
                index = min(rest, key=lambda i: self._deployments[i].cool_until)
                last = len(rest) == 1
            else:
                return None
            tried.add(index)
            chosen = self._deployments[index]
            chosen.in_flight += 1
            return chosen, last

    def _tries(self, run: Callable[[_Deployment], Any]) -> Iterator[Try[Any]]:
        tried: set[int] = set()
        # Every deployment cooling down when the request came: try them all, soonest first.
        # Otherwise only the ready ones: once they failed, the caller's fallback is better
        # than a deployment that asked to be left alone.
        panic = not self.available()
        while (picked := self._pick(tried, panic)) is not None:
            chosen, last = picked
            yield chosen.label, partial(run, chosen), last

    def _done(self, deployment: _Deployment, exc: BaseException | None, *,
              finished: bool = True) -> None:
        """A call on ``deployment`` ended: with ``exc``, or answered (``finished``), or left
        by its caller before the end (neither)."""
        with self._lock:
            deployment.in_flight -= 1
            if exc is None:
                if not finished:
                    return
                deployment.served += 1
                deployment.streak = 0
                return
            if not _stays(exc):
                return
            deployment.failed += 1
            deployment.streak += 1
            retry_after = getattr(exc, "retry_after", None)
            wait = (float(retry_after) if retry_after is not None
                    else min(self.max_cooldown,
                             self.cooldown * 2 ** min(deployment.streak - 1, 30)))
            deployment.cool_until = max(deployment.cool_until, self._clock() + wait)
            kind = getattr(exc, "kind", type(exc).__name__)
            text = exc.message if isinstance(exc, BackendError) else str(exc)
            deployment.last_error = f"{kind}: {text[:200]}"

    # -- one deployment's call, counted ---------------------------------------------------
    def _stream_on(self, d: _Deployment, request: Request) -> Iterator[StreamEvent]:
        failure: BaseException | None = None
        finished = False
        try:
            yield from d.backend.stream(request)
            finished = True
        except Exception as exc:
            failure = exc
            raise
        finally:
            self._done(d, failure, finished=finished)

    async def _aopen_on(self, d: _Deployment, request: Request) -> Opened:
        try:
            opened = await aopen_stream(d.backend, request)
        except Exception as exc:
            self._done(d, exc, finished=False)
            raise
        except BaseException:  # cancelled while opening: left, neither failed nor served
            self._done(d, None, finished=False)
            raise
        opened.ends.append(lambda exc, finished: self._done(d, exc, finished=finished))
        return opened

    def _complete_on(self, d: _Deployment, request: Request) -> Response:
        try:
            response = d.backend.complete(request)
        except BaseException as exc:
            self._done(d, exc)
            raise
        self._done(d, None)
        return response

    async def _acomplete_on(self, d: _Deployment, request: Request) -> Response:
        try:
            response = await d.backend.acomplete(request)
        except BaseException as exc:
            self._done(d, exc)
            raise
        self._done(d, None)
        return response

    # -- Backend ----------------------------------------------------------------------------
    def stream(self, request: Request) -> Iterator[StreamEvent]:
        return stream_first(self._tries(lambda d: self._stream_on(d, request)),
                            fall_over=_stays)

    def astream(self, request: Request) -> AsyncIterator[StreamEvent]:
        return streamed(lambda: self.aopen(request))

    async def aopen(self, request: Request) -> Opened:
        """The stream of the first deployment that gets to its first content event
        (:func:`~.failover.aopen_stream`); the deployment's count ends with the stream."""
        return await acomplete_first(self._tries(lambda d: self._aopen_on(d, request)),
                                     fall_over=_stays)

    def complete(self, request: Request) -> Response:
        return complete_first(self._tries(lambda d: self._complete_on(d, request)),
                              fall_over=_stays)

    async def acomplete(self, request: Request) -> Response:
        return await acomplete_first(self._tries(lambda d: self._acomplete_on(d, request)),
                                     fall_over=_stays)

    def count_tokens(self, request: Request) -> int | None:
        now = self._clock()
        ready = [d for d in self._deployments if d.cool_until <= now] or self._deployments
        return ready[0].backend.count_tokens(request)

    def close(self) -> None:
        for deployment in self._deployments:
            deployment.backend.close()
