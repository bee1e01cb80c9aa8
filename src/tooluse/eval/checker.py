"""The AST checker: does a model's list of function calls match a BFCL possible answer?

BFCL grades "AST" categories by comparing the calls a model made (name + arguments) with a
*possible answer*: for every expected call, the function name and, per parameter, the list of
acceptable values. ``""`` in that list means the parameter may be left out. This module
implements those rules independently (it reads the published semantics of BFCL's own checker,
not its code), so that scores computed here are comparable with the leaderboard's:

* the function name must be the expected one (names are compared in their original dotted
  form — the caller maps wire names back first);
* every parameter the schema requires must be present;
* no parameter outside the schema, nor outside the possible answer, may be given;
* a parameter the possible answer lists without ``""`` must be given;
* each value must be one of the acceptable ones, where strings are compared after BFCL's
  normalisation (lower case; spaces and ``,./-_*^`` removed; ``'`` read as ``"``), an
  integer is accepted where the schema says float, and lists and dicts are compared element
  by element with the same rules (a dict in a possible answer maps each key to *its* list of
  acceptable values, and may mark keys optional with ``""``);
* a value whose type differs from the schema's is wrong, unless an acceptable value has
  that same type (BFCL's "variable" rule: an answer may hold a string where the schema says
  otherwise);
* parallel calls may come in any order: expected and actual calls are matched one to one
  (a real bipartite matching, so a greedy choice can never fail a correct answer);
* for ``irrelevance`` the only right answer is no call at all.

Every check returns a :class:`CheckResult` whose ``reason`` says in words what was wrong and
whose ``kind`` is a short machine-readable category used to tally failure modes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .._jsonvalue import json_type

__all__ = [
    "Call",
    "CheckResult",
    "check_call",
    "check_calls",
    "normalize_string",
    "values_match",
]

#: ``(name, arguments)`` of one function call, with the tool's original (dotted) name.
Call = tuple[str, Mapping[str, Any]]

_STRIP = re.compile(r"[ ,./\-_*^]")


def normalize_string(text: str) -> str:
    """BFCL's string normalisation: why — "April 1, 2024" and "april 1 2024" mean the same."""
    return _STRIP.sub("", text).lower().replace("'", '"')


@dataclass(frozen=True)
class CheckResult:
    """The verdict on one case. ``kind`` is empty when it passed."""

    passed: bool
    reason: str = ""
    kind: str = ""

    @classmethod
    def ok(cls) -> CheckResult:
        return cls(True)

    @classmethod
    def fail(cls, kind: str, reason: str) -> CheckResult:
        return cls(False, reason, kind)


# -- values ------------------------------------------------------------------------------------


def _short(value: Any, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _kind_of(value: Any) -> str:
    """BFCL's words for a value's type (``float``, ``dict``)."""
    kind = json_type(value)
    return {"number": "float", "object": "dict"}.get(kind, kind)

def _schema_types(schema: Mapping[str, Any] | None) -> list[str]:
    if not schema:
        return []
    declared = schema.get("type")
    if isinstance(declared, str):
        return [declared]
    if isinstance(declared, list):
        return [t for t in declared if isinstance(t, str)]
    return []


def _fits_type(value: Any, declared: str) -> bool:
    kind = _kind_of(value)
    if declared in ("any", ""):
        return True
    if declared == "string":
        return kind == "string"
    if declared == "integer":
        return kind == "integer"
    if declared in ("float", "number"):
        # Python would turn an int into a float without complaint; BFCL accepts it too.
        return kind in ("integer", "float")
    if declared == "boolean":
        return kind == "boolean"
    if declared in ("array", "tuple"):
        return kind == "array"
    if declared in ("dict", "object"):
        return kind == "dict"
    if declared == "null":
        return kind == "null"
    return True  # a type this checker does not know is not held against the model


def _same_kind(value: Any, candidate: Any) -> bool:
    return _kind_of(value) == _kind_of(candidate)


def _scalar_equal(value: Any, candidate: Any) -> bool:
    """One value against one acceptable plain value (no ``""``-list wrapping)."""
    if isinstance(candidate, str):
        return isinstance(value, str) and normalize_string(value) == normalize_string(candidate)
    if isinstance(candidate, bool) or isinstance(value, bool):
        # True == 1 in Python; a boolean answer is not a number here.
        return isinstance(candidate, bool) and isinstance(value, bool) and value == candidate
    if isinstance(candidate, (int, float)):
        return isinstance(value, (int, float)) and float(value) == float(candidate)
    if candidate is None:
        return value is None
    if isinstance(candidate, (list, tuple)):
        return _list_equal(value, candidate, None) is None
    if isinstance(candidate, Mapping):
        return _dict_matches(value, candidate, None, "") is None
    return bool(value == candidate)


def _items_schema(schema: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    if not schema:
        return None
    items = schema.get("items")
    return items if isinstance(items, Mapping) else None


def _list_equal(
    value: Any, candidate: Sequence[Any], schema: Mapping[str, Any] | None
) -> str | None:
    """A list against one acceptable list, element by element. Returns a problem or None."""
    if not isinstance(value, (list, tuple)):
        return f"expected a list, got {_kind_of(value)}"
    if len(value) != len(candidate):
        return f"expected {len(candidate)} elements, got {len(value)}"
    items = _items_schema(schema)
    for index, (item, expected) in enumerate(zip(value, candidate, strict=True)):
        if isinstance(expected, Mapping):
            # A dict inside a list answer maps keys to lists of acceptable values.
            problem = _dict_matches(item, expected, items, f"[{index}]")
            if problem:
                return problem
        elif isinstance(expected, (list, tuple)) and not isinstance(expected, str):
            problem = _list_equal(item, expected, items)
            if problem:
                return f"[{index}]: {problem}"
        elif not _scalar_equal(item, expected):
            return f"[{index}]: got {_short(item)}, expected {_short(expected)}"
    return None


def _dict_matches(
    value: Any, candidate: Mapping[str, Any], schema: Mapping[str, Any] | None, path: str
) -> str | None:
    """A dict against one acceptable dict of ``key -> [acceptable values]``."""
    where = f"{path}: " if path else ""
    if not isinstance(value, Mapping):
        return f"{where}expected a dict, got {_kind_of(value)}"
    properties = schema.get("properties") if schema else None
    for key, item in value.items():
        if key not in candidate:
            return f"{where}unexpected key {key!r}"
        acceptable = candidate[key]
        if not isinstance(acceptable, list):
            acceptable = [acceptable]
        sub = properties.get(key) if isinstance(properties, Mapping) else None
        problem = values_match(item, acceptable, sub, f"{path}.{key}" if path else key)
        if problem:
            return problem
    for key, acceptable in candidate.items():
        if key not in value and not (isinstance(acceptable, list) and "" in acceptable):
            return f"{where}missing key {key!r}"
    return None


def values_match(
    value: Any,
    acceptable: Sequence[Any],
    schema: Mapping[str, Any] | None = None,
    path: str = "",
) -> str | None:
    """Check ``value`` against a list of acceptable values; return a problem or ``None``.

    ``schema`` (the parameter's JSON Schema, BFCL dialect accepted) drives the type rule and
    the nested schemas of dict keys and list items; ``path`` names the value in messages.
    """
    candidates = [c for c in acceptable if not (isinstance(c, str) and c == "")]
    label = f"{path}: " if path else ""
    declared = _schema_types(schema)
    if (
        declared
        and not any(_fits_type(value, t) for t in declared)
        and not any(_same_kind(value, c) for c in candidates)
    ):
        wanted = "|".join(declared)
        return f"{label}expected type {wanted}, got {_kind_of(value)} {_short(value)}"
    if not candidates:
        return f"{label}no value expected, got {_short(value)}"
    problems: list[str] = []
    for candidate in candidates:
        if isinstance(candidate, Mapping):
            problem = _dict_matches(value, candidate, schema, path)
        elif isinstance(candidate, (list, tuple)):
            sub = _list_equal(value, candidate, schema)
            problem = f"{label}{sub}" if sub else None
        else:
            problem = (
                None
                if _scalar_equal(value, candidate)
                else f"{label}got {_short(value)}, expected one of {_short(candidates, 120)}"
            )
        if problem is None:
            return None
        problems.append(problem)
    return (
        problems[0]
        if len(problems) == 1
        else (f"{label}got {_short(value)}, expected one of {_short(candidates, 120)}")
    )


# -- calls -------------------------------------------------------------------------------------


def _parameters(function: Mapping[str, Any]) -> Mapping[str, Any]:
    params = function.get("parameters") or {}
    return params if isinstance(params, Mapping) else {}


def check_call(
    call: Call, expected: Mapping[str, Mapping[str, Sequence[Any]]], function: Mapping[str, Any]
) -> CheckResult:
    """One actual call against one expected call ``{name: {param: [acceptable...]}}``.

    ``function`` is the expected function's BFCL definition (``name``, ``parameters``).
    """
    name, arguments = call
    ((expected_name, expected_params),) = expected.items()
    if name != expected_name:
        return CheckResult.fail("wrong_function", f"called {name!r}, expected {expected_name!r}")
    parameters = _parameters(function)
    properties = parameters.get("properties") or {}
    required = parameters.get("required") or []
    for param in required:
        if param not in arguments:
            return CheckResult.fail("missing_required", f"missing required parameter {param!r}")
    for param, value in arguments.items():
        if param not in properties or param not in expected_params:
            where = "the schema" if param not in properties else "the expected answer"
            return CheckResult.fail(
                "unexpected_param", f"unexpected parameter {param!r} (not in {where})"
            )
        schema = properties.get(param)
        problem = values_match(
            value,
            list(expected_params[param]),
            schema if isinstance(schema, Mapping) else None,
            param,
        )
        if problem:
            kind = "wrong_type" if "expected type" in problem else "wrong_value"
            return CheckResult.fail(kind, problem)
    for param, acceptable in expected_params.items():
        if param not in arguments and "" not in acceptable:
            return CheckResult.fail(
                "missing_param", f"parameter {param!r} must be given (no default accepted)"
            )
    return CheckResult.ok()


def _find_function(functions: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    for function in functions:
        if function.get("name") == name:
            return function
    # The data always defines the expected function; an empty schema keeps a broken line
    # from crashing the run (the value checks still apply).
    return {"name": name, "parameters": {}}


def _match_one_to_one(ok: list[list[bool]]) -> list[int | None]:
    """Maximum bipartite matching (expected -> actual) by augmenting paths."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j, fits in enumerate(ok[i]):
            if fits and j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(ok)):
        augment(i, set())
    assignment: list[int | None] = [None] * len(ok)
    for j, i in owner.items():
        assignment[i] = j
    return assignment


def check_calls(
    category: str,
    functions: Sequence[Mapping[str, Any]],
    calls: Sequence[Call],
    ground_truth: Sequence[Mapping[str, Mapping[str, Sequence[Any]]]] | None,
    *,
    rule: str | None = None,
) -> CheckResult:
    """Grade a case: all calls the model made against the whole possible answer.

    The rule comes from the data (``rule``, see :func:`~tooluse.eval.bfcl.grading_rule`):
    with a possible answer, its calls matched one to one in any order (one call or several
    in parallel alike); without one, no call is right (``no_call``, irrelevance) or any
    call is (``some_call``, relevance). Without ``rule``: ``no_call`` when there is no
    possible answer or the category is ``irrelevance``.
    """
    if rule == "some_call" and ground_truth is None:
        if calls:
            return CheckResult.ok()
        return CheckResult.fail("no_call", "no call made, and a function fits")
    if category.startswith("irrelevance") or ground_truth is None:
        if calls:
            names = ", ".join(name for name, _ in calls)
            return CheckResult.fail("called_irrelevant", f"called {names} but no function fits")
        return CheckResult.ok()
    if not calls:
        return CheckResult.fail("no_call", f"no call made, expected {len(ground_truth)}")
    if len(calls) != len(ground_truth):
        return CheckResult.fail(
            "wrong_count", f"made {len(calls)} calls, expected {len(ground_truth)}"
        )
    if len(ground_truth) == 1:
        expected = ground_truth[0]
        return check_call(calls[0], expected, _find_function(functions, next(iter(expected))))
    results = [
        [check_call(call, exp, _find_function(functions, next(iter(exp)))) for call in calls]
        for exp in ground_truth
    ]
    assignment = _match_one_to_one([[r.passed for r in row] for row in results])
    for i, j in enumerate(assignment):
        if j is None:
            row = results[i]
            name = next(iter(ground_truth[i]))
            # Explain with the closest miss: a call to the right function if there is one.
            same_name = [r for r in row if r.kind != "wrong_function"]
            closest = (same_name or row)[0]
            return CheckResult.fail(
                closest.kind, f"expected call {i} ({name}) unmatched: {closest.reason}"
            )
    return CheckResult.ok()
