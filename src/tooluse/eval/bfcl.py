"""Reading BFCL categories: where the data lives, what a case holds, and its tools.

The Berkeley Function Calling Leaderboard ships each category as two JSON-lines files:
``BFCL_v4_<category>.json`` (``id``, ``question`` — a list of turns, each a list of
``{role, content}`` messages — and ``function``, the tool definitions in BFCL's schema
dialect) and ``possible_answer_<category>.json`` (``id`` and ``ground_truth``). This module
turns them into :class:`BfclCase` objects and into the neutral pieces a backend needs: a
:class:`~tooluse.tools.ToolSet` whose wire names are valid (``math.factorial`` is mapped and
mapped back) and a :class:`~tooluse.messages.Request`.

The data is never bundled: it is read in place from ``--data-dir``, ``$TOOLUSE_SHARED_DIR``
or the ``shared`` folder next to the checkout.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ToolUseError
from ..messages import Message, Request, TextBlock, ToolChoice
from ..tools import ToolSet, bfcl_toolset

__all__ = [
    "CATEGORIES",
    "BfclCase",
    "BfclDataError",
    "available_categories",
    "build_request",
    "build_toolset",
    "default_data_dir",
    "grading_rule",
    "load_category",
]

#: The categories the benchmark notes report (``--category all`` runs every category found
#: in the data folder, see :func:`available_categories`).
CATEGORIES: tuple[str, ...] = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
)

_QUESTIONS = re.compile(r"BFCL_v(\d+)_(.+)\.json")

#: How a case is graded, chosen from the data: ``calls`` (the possible answer's calls, one
#: to one and in any order, so one call or several in parallel alike), ``no_call`` (no
#: possible answer: no function fits, as in irrelevance), ``some_call`` (no possible
#: answer, but the category is about relevance: any call is right).
Rule = str


def available_categories(data_dir: Path | str) -> list[str]:
    """Every category with a ``BFCL_v<N>_<name>.json`` in ``data_dir``, sorted."""
    path = Path(data_dir)
    if not path.is_dir():
        raise BfclDataError(f"BFCL data folder {path} does not exist")
    return sorted({m.group(2) for f in path.iterdir() if (m := _QUESTIONS.fullmatch(f.name))})


def grading_rule(data_dir: Path | str, category: str) -> Rule:
    """How ``category`` is graded: by its possible answers when the folder has them, else
    ``no_call`` (irrelevance-like) or, for a relevance category, ``some_call``."""
    if (Path(data_dir) / f"possible_answer_{category}.json").is_file():
        return "calls"
    name = category.lower()
    if "relevance" in name and "irrelevance" not in name:
        return "some_call"
    return "no_call"


class BfclDataError(ToolUseError, ValueError):
    """BFCL data is missing or malformed; the message names the file and line."""


@dataclass
class BfclCase:
    """One BFCL question with its functions and (except for irrelevance) its answer."""

    id: str
    category: str
    messages: list[dict[str, Any]]
    functions: list[dict[str, Any]]
    ground_truth: list[dict[str, dict[str, list[Any]]]] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    #: How the case is graded (:func:`grading_rule`): ``calls``, ``no_call``, ``some_call``.
    rule: Rule = "calls"


def _repo_root() -> Path:
    # src/tooluse/eval/bfcl.py -> the checkout (for an editable install)
    return Path(__file__).resolve().parents[3]


def _candidates() -> list[Path]:
    found: list[Path] = []
    env = os.environ.get("TOOLUSE_SHARED_DIR")
    if env:
        base = Path(env).expanduser()
        found += [base / "bench" / "bfcl", base]
    found.append(_repo_root().parent / "shared" / "bench" / "bfcl")
    cwd = Path.cwd().resolve()
    for folder in (cwd, *cwd.parents):
        found.append(folder.parent / "shared" / "bench" / "bfcl")
    return found


def _looks_like_bfcl(path: Path) -> bool:
    return path.is_dir() and any(path.glob("BFCL_v*_*.json"))


def default_data_dir() -> Path:
    """Find the BFCL data: ``$TOOLUSE_SHARED_DIR/bench/bfcl`` (or the variable itself), then
    ``<checkout>/../shared/bench/bfcl``, then a ``shared/bench/bfcl`` beside the current
    directory or one of its parents. Raises :class:`BfclDataError` listing what was tried."""
    tried: list[Path] = []
    for path in _candidates():
        if path in tried:
            continue
        tried.append(path)
        if _looks_like_bfcl(path):
            return path
    listing = "\n  ".join(str(p) for p in tried)
    raise BfclDataError(
        "BFCL data not found; pass --data-dir DIR or set TOOLUSE_SHARED_DIR to the folder "
        f"holding bench/bfcl. Tried:\n  {listing}"
    )


def _question_file(data_dir: Path, category: str) -> Path:
    # A glob alone would let "multiple" pick up BFCL_v4_parallel_multiple.json.
    matches = sorted(
        (int(m.group(1)), path)
        for path in data_dir.iterdir()
        if (m := _QUESTIONS.fullmatch(path.name)) and m.group(2) == category
    )
    if not matches:
        raise BfclDataError(f"no BFCL_v<N>_{category}.json in {data_dir}")
    return matches[-1][1]  # the newest version if several are present


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise BfclDataError(f"{path}: cannot read: {exc}") from exc
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BfclDataError(f"{path}:{number}: not JSON: {exc}") from exc
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise BfclDataError(f"{path}:{number}: expected an object with a string 'id'")
            yield number, item


def _first_turn(path: Path, number: int, item: Mapping[str, Any]) -> list[dict[str, Any]]:
    question = item.get("question")
    if isinstance(question, list) and question and isinstance(question[0], dict):
        turn: Any = question  # an older flat shape: a list of messages
    elif isinstance(question, list) and question and isinstance(question[0], list):
        turn = question[0]
    else:
        raise BfclDataError(f"{path}:{number}: 'question' must be a non-empty list of turns")
    for message in turn:
        if not (
            isinstance(message, dict)
            and isinstance(message.get("role"), str)
            and isinstance(message.get("content"), str)
        ):
            raise BfclDataError(f"{path}:{number}: each message needs a string role and content")
    return [dict(m) for m in turn]


def load_category(data_dir: Path | str, category: str, limit: int | None = None) -> list[BfclCase]:
    """Read the first ``limit`` cases (all when None) of ``category`` from ``data_dir``."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise BfclDataError(f"BFCL data folder {data_dir} does not exist")
    questions = _question_file(data_dir, category)
    answers: dict[str, Any] = {}
    rule = grading_rule(data_dir, category)
    if rule == "calls":
        answer_file = data_dir / f"possible_answer_{category}.json"
        if not answer_file.is_file():
            raise BfclDataError(f"{answer_file} is missing (needed to grade {category})")
        for number, item in _read_jsonl(answer_file):
            truth = item.get("ground_truth")
            if not isinstance(truth, list) or not all(
                isinstance(call, dict) and len(call) == 1 for call in truth
            ):
                raise BfclDataError(
                    f"{answer_file}:{number}: 'ground_truth' must be a list of "
                    "{function_name: {param: [acceptable values]}}"
                )
            answers[item["id"]] = truth
    cases: list[BfclCase] = []
    for number, item in _read_jsonl(questions):
        if limit is not None and len(cases) >= limit:
            break
        functions = item.get("function")
        if not isinstance(functions, list) or not all(
            isinstance(f, dict) and isinstance(f.get("name"), str) for f in functions
        ):
            raise BfclDataError(f"{questions}:{number}: 'function' must be a list of named tools")
        truth = None
        if rule == "calls":
            if item["id"] not in answers:
                raise BfclDataError(f"{questions}:{number}: no possible answer for {item['id']}")
            truth = answers[item["id"]]
        extra = {k: v for k, v in item.items() if k not in ("id", "question", "function")}
        cases.append(
            BfclCase(
                id=item["id"],
                category=category,
                messages=_first_turn(questions, number, item),
                functions=functions,
                ground_truth=truth,
                extra=extra,
                rule=rule,
            )
        )
    return cases


def build_toolset(functions: Sequence[Mapping[str, Any]]) -> ToolSet:
    """A :class:`~tooluse.tools.ToolSet` of the case's functions, BFCL schemas normalised and
    invalid names (``math.factorial``) mapped to wire names the APIs accept (and back)."""
    return bfcl_toolset(functions)


def build_request(
    case: BfclCase, toolset: ToolSet, *, max_tokens: int = 512, tool_choice: str = "auto"
) -> Request:
    """The neutral request for a case: its tools, ``tool_choice`` (``auto`` as BFCL asks;
    ``any`` forces a call, to study call quality apart from the decision to call), the first
    turn's messages (``system`` messages become the system prompt), temperature 0."""
    system = [TextBlock(text=m["content"]) for m in case.messages if m["role"] == "system"]
    messages = [
        Message(role=m["role"], content=[TextBlock(text=m["content"])])
        for m in case.messages
        if m["role"] in ("user", "assistant")
    ]
    return Request(
        system=system,
        messages=messages,
        tools=list(toolset.specs),
        tool_choice=ToolChoice.model_validate({"type": tool_choice}),
        max_tokens=max_tokens,
        temperature=0.0,
    )
