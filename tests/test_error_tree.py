"""Every exception tooluse defines is under the one root, :class:`ToolUseError` (the tree is
drawn at the top of ``tooluse/errors.py``), except the few that are not tooluse's own
errors, each named here with its reason."""

from __future__ import annotations

import importlib
import pkgutil

import tooluse
from tooluse.errors import ToolUseError

OUTSIDE = {
    # raised *by a tool function* to fail with exactly its message; the runner catches it
    "tooluse.runner.results.ToolError",
    # the demo's tool's own error (a tool's error, like ToolError)
    "tooluse.cli.demo.TickerNotFound",
    # private control flow: the client went away while streaming
    "tooluse.server.http.streaming._Closed",
    # control flow: the client disconnected before its answer; the endpoint catches it
    "tooluse.server.http.disconnect.ClientGone",
    # private control flow: an `eval bfcl --jobs` worker could not load the backend; the
    # parent turns it into the CLI's one-line exit message
    "tooluse.cli.eval._WorkerFailed",
    # private control flow: a `tooluse serve` flag refused; _run prints its one line, exits 2
    "tooluse.cli.serve._Refused",
}


def _exception_classes() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(tooluse.__path__, "tooluse."):
        if info.name.endswith(".__main__"):  # running it is its only purpose
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_exception_is_under_the_root_or_named_with_a_reason() -> None:
    classes = _exception_classes()
    assert "tooluse.server.errors.GatewayError" in classes  # the walk reaches every layer
    outside = {name for name, cls in classes.items() if not issubclass(cls, ToolUseError)}
    assert outside == OUTSIDE


def test_the_tree_at_the_top_of_errors_py_names_every_branch() -> None:
    """Each class right under the root is drawn (deeper subclasses may be, need not be)."""
    import tooluse.errors

    doc = tooluse.errors.__doc__ or ""
    for name, cls in _exception_classes().items():
        if ToolUseError in cls.__bases__:
            assert f"── {cls.__name__} " in doc, f"{name} is missing from the tree in errors.py"


def test_cancelled_is_one_class_under_both_names() -> None:
    """A cancelled call is :class:`tooluse.errors.Cancelled` whoever raised it (a remote
    backend's HTTP client, the local engine's slot scheduler); ``UpstreamCancelled`` is its
    former name, kept where it was defined."""
    from tooluse.backends._upstream import UpstreamCancelled
    from tooluse.errors import BackendError, Cancelled

    assert UpstreamCancelled is Cancelled and issubclass(Cancelled, BackendError)
    assert Cancelled("gone").kind == "api"
