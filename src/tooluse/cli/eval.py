"""`tooluse eval bfcl`: measure a backend's tool-call quality on BFCL categories.

tooluse eval bfcl --category simple_python --limit 20
tooluse eval bfcl --category all --backend local --no-grammar --json out.json
tooluse eval bfcl --category all --jobs 2        # two worker processes, one thread each
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._backend import load_cli_backend, parse_options
from .demo import add_preset_argument, with_preset

if TYPE_CHECKING:  # the harness is imported when the command runs, not by every `tooluse`
    from concurrent.futures import Executor

    from ..backend import Backend
    from ..eval.bfcl import BfclCase
    from ..eval.harness import CaseResult, CategorySummary

__all__ = ["register"]


def register(sub: Any) -> None:
    parser = sub.add_parser("eval", help="measure tool-call quality on benchmarks (BFCL)")
    bench = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK")
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])
    bfcl = bench.add_parser(
        "bfcl",
        help="run a backend over BFCL categories and grade the calls with an AST checker",
        description="Run a backend over BFCL categories; print per category the AST accuracy, "
        "the rate of answers whose calls parse and validate, the median latency per case and "
        "the generation speed.",
    )
    bfcl.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        help="folder with BFCL_v4_<cat>.json and possible_answer_<cat>.json (default: "
        "$TOOLUSE_SHARED_DIR/bench/bfcl, then ../shared/bench/bfcl beside the checkout)",
    )
    bfcl.add_argument(
        "--category",
        action="append",
        default=None,
        metavar="NAME",
        help="category to run, repeatable, or 'all': every BFCL_v<N>_<name>.json in the data "
        "folder (graded by possible_answer_<name>.json: its calls in any order; without one: "
        "no call is right, or any call for a relevance category); default simple_python",
    )
    bfcl.add_argument("--limit", type=int, default=None, help="first N cases of each category")
    bfcl.add_argument(
        "--every",
        type=int,
        default=1,
        metavar="N",
        help="a fixed sample: every N-th case of each category (with --offset; before --limit)",
    )
    bfcl.add_argument("--offset", type=int, default=0, metavar="K",
                      help="with --every: start at the K-th case (0-based)")
    bfcl.add_argument("--backend", default="local", help="backend spec (default: local)")
    bfcl.add_argument(
        "--option",
        "-o",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="backend option, repeatable (local: n_threads=1, n_ctx=8192, model=PATH...)",
    )
    add_preset_argument(bfcl)
    bfcl.add_argument(
        "--no-grammar",
        action="store_true",
        help="ask the backend not to constrain generation with a grammar (prefill only)",
    )
    bfcl.add_argument(
        "--tool-choice",
        choices=("auto", "any"),
        default="auto",
        help="auto (default, as BFCL): the model decides whether to call; any: a call is "
        "forced (irrelevance then always fails) to measure call quality alone",
    )
    bfcl.add_argument("--max-tokens", type=int, default=512, help="generation limit per case")
    bfcl.add_argument(
        "--json",
        type=Path,
        default=None,
        metavar="PATH",
        help="write per-case results (id, expected, got, the origin of each call got, pass, "
        "reason, latency)",
    )
    bfcl.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    bfcl.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        metavar="N",
        help="run the cases in N worker processes, each with its own backend (local: the "
        "cores divided among them, unless -o n_threads is given); the results and their "
        "order are those of one process",
    )
    bfcl.set_defaults(func=_run_bfcl)


def _categories(requested: list[str] | None, found: list[str]) -> tuple[list[str], bool]:
    """The categories to run, and whether 'all' asked for them (then a category whose data
    cannot be graded is skipped with a note instead of stopping the run)."""
    names: list[str] = []
    every = False
    for item in requested or ["simple_python"]:
        for name in item.split(","):
            name = name.strip()
            if name == "all":
                every = True
                names.extend(found)
            elif name:
                names.append(name)
    unknown = [n for n in names if n not in found]
    if unknown:
        raise SystemExit(
            f"tooluse eval bfcl: unknown category {', '.join(unknown)}; the data folder has "
            f"{', '.join(found) or 'none'} (or all)"
        )
    return list(dict.fromkeys(names)), every


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=12"],
            check=False,
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def _progress(total: int, label: str, disabled: bool) -> Any:
    try:
        from tqdm import tqdm
    except ImportError:  # tqdm is optional; no bar then
        return None
    return tqdm(
        total=total,
        desc=label,
        unit="case",
        file=sys.stderr,
        disable=disabled,
        mininterval=1.0 if sys.stderr.isatty() else 30.0,
        dynamic_ncols=True,
    )


def _run_bfcl(args: argparse.Namespace) -> int:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from ..eval.harness import summarize
    from ..eval.report import write_json

    _check_counts(args)
    data_dir, loaded = _load_cases(args)
    options = _eval_options(args)
    backend = None if args.jobs > 1 else load_cli_backend(args.backend, options,
                                                             "tooluse eval bfcl")
    meta = _meta(args, options, data_dir, list(loaded))
    summaries: list[CategorySummary] = []
    everything: list[CaseResult] = []
    interrupted = False
    pool = None if backend is not None else ProcessPoolExecutor(
        max_workers=args.jobs, mp_context=multiprocessing.get_context("spawn"),
        initializer=_start_worker, initargs=(args.backend, options))
    for category, cases in loaded.items():
        results, interrupted = _run_category(args, backend, pool, category, cases, meta,
                                             summaries, everything)
        everything.extend(results)
        if results:
            summaries.append(summarize(category, results))
        if args.json is not None:
            write_json(args.json, {**meta, "interrupted": interrupted}, summaries, everything)
        if interrupted:
            break
    if pool is not None:
        pool.shutdown(wait=not interrupted, cancel_futures=True)
    _print_report(args, summaries)
    if interrupted:
        print("(interrupted: partial results)", file=sys.stderr)
        return 130
    return 0


def _check_counts(args: argparse.Namespace) -> None:
    """--limit, --every, --offset and --jobs in range, or the CLI's one-line error."""
    if args.limit is not None and args.limit < 1:
        raise SystemExit("tooluse eval bfcl: --limit must be at least 1")
    if args.every < 1 or args.offset < 0:
        raise SystemExit("tooluse eval bfcl: --every must be at least 1, --offset at least 0")
    if args.jobs < 1:
        raise SystemExit("tooluse eval bfcl: --jobs must be at least 1")


def _load_cases(args: argparse.Namespace) -> tuple[Path, dict[str, list[BfclCase]]]:
    """The data folder, and the cases of each category asked for (the slice --offset,
    --every and --limit say), in order; with ``--category all``, a category whose data is
    missing or malformed is skipped with a line."""
    from ..eval.bfcl import BfclDataError, available_categories, default_data_dir, load_category

    loaded: dict[str, list[BfclCase]] = {}
    try:
        data_dir = args.data_dir if args.data_dir is not None else default_data_dir()
        categories, every = _categories(args.category, available_categories(data_dir))
        for category in categories:
            try:
                cases = load_category(data_dir, category)[args.offset::args.every]
                loaded[category] = cases[: args.limit] if args.limit else cases
            except BfclDataError as exc:
                if not every:
                    raise
                print(f"tooluse eval bfcl: skipping {category}: {exc}", file=sys.stderr)
    except BfclDataError as exc:
        raise SystemExit(f"tooluse eval bfcl: {exc}") from None
    return Path(data_dir), loaded


def _eval_options(args: argparse.Namespace) -> dict[str, Any]:
    """The backend's options: -o and --preset, --no-grammar, and for the local backend no
    prompt cache and, with --jobs, the cores shared among the workers."""
    options = with_preset(parse_options(args.option, "tooluse eval bfcl"), args.preset,
                          "tooluse eval bfcl")
    if args.no_grammar:
        options["grammar"] = False
    if (args.backend or "").startswith("local") and "prompt_cache" not in options:
        # BFCL's tool sets are nearly all distinct: saving each one's KV state would only
        # cost disk writes (docs/benchmarks/code.md).
        options["prompt_cache"] = "off"
    if args.jobs > 1 and (args.backend or "").startswith("local") and "n_threads" not in options:
        # Prompt evaluation scales with threads, but N processes on N cores beat one process
        # on N threads: nothing is shared and nothing waits.
        options["n_threads"] = str(max(1, (os.cpu_count() or 1) // args.jobs))
    return options


def _meta(args: argparse.Namespace, options: dict[str, Any], data_dir: Path,
          categories: list[str]) -> dict[str, Any]:
    """What the JSON file says of the run, beside its results."""
    from ..eval.bfcl import grading_rule

    return {
        "benchmark": "bfcl",
        "backend": args.backend,
        "options": {k: v for k, v in options.items() if k != "grammar"},
        "grammar": not args.no_grammar,
        "limit": args.limit,
        "every": args.every,
        "offset": args.offset,
        "max_tokens": args.max_tokens,
        "tool_choice": args.tool_choice,
        "data_dir": str(data_dir),
        "rules": {c: grading_rule(data_dir, c) for c in categories},
        "commit": _git_commit(),
        "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "jobs": args.jobs,
    }


def _run_category(args: argparse.Namespace, backend: Backend | None, pool: Executor | None,
                  category: str, cases: list[BfclCase], meta: dict[str, Any],
                  summaries: list[CategorySummary],
                  everything: list[CaseResult]) -> tuple[list[CaseResult], bool]:
    """One category's results (with a progress bar, saved every 10 cases), and whether the
    user interrupted it. A worker that could not start, or died, ends the run with one
    line."""
    from concurrent.futures.process import BrokenProcessPool

    from ..eval.harness import summarize
    from ..eval.report import write_json

    results: list[CaseResult] = []
    bar = _progress(len(cases), category, args.no_progress)
    try:
        for result in _results(backend, pool, cases, args.max_tokens, args.tool_choice):
            results.append(result)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(
                    acc=f"{sum(r.passed for r in results) / len(results):.0%}", refresh=False
                )
            if args.json is not None and len(results) % 10 == 0:
                write_json(
                    args.json,
                    meta,
                    [*summaries, summarize(category, results)],
                    [*everything, *results],
                )
    except KeyboardInterrupt:
        return results, True
    except (_WorkerFailed, BrokenProcessPool) as exc:
        assert pool is not None
        pool.shutdown(wait=False, cancel_futures=True)
        raise SystemExit(str(exc) if isinstance(exc, _WorkerFailed) else
                         "tooluse eval bfcl: a worker process died; its error is "
                         "printed above") from None
    finally:
        if bar is not None:
            bar.close()
    return results, False


def _print_report(args: argparse.Namespace, summaries: list[CategorySummary]) -> None:
    from ..eval.report import format_table

    mode = "grammar" if not args.no_grammar else "no grammar"
    print(
        f"BFCL, backend {args.backend} ({mode}, tool_choice {args.tool_choice}), AST checker"
        + (f", every {args.every}th case from #{args.offset} (a sample, not a full run)"
           if args.every > 1 or args.offset else "")
        + (f", first {args.limit} cases per category" if args.limit else "")
    )
    print(format_table(summaries))


# -- worker processes (--jobs) ---------------------------------------------------------------------
_worker_backend: Backend | str = "_start_worker has not run"


class _WorkerFailed(Exception):
    """A worker could not load the backend (the message is the CLI's one-line error)."""


def _start_worker(spec: str, options: dict[str, Any]) -> None:
    """Load the backend once in a worker process (each worker has its own); a failure is
    kept and reported with the first case, as one line in the parent, not a traceback."""
    global _worker_backend
    try:
        _worker_backend = load_cli_backend(spec, options, "tooluse eval bfcl")
    except SystemExit as exc:
        _worker_backend = str(exc)


def _worker_case(case: BfclCase, max_tokens: int, tool_choice: str) -> CaseResult:
    from ..eval.harness import run_case

    if isinstance(_worker_backend, str):
        raise _WorkerFailed(_worker_backend)
    return run_case(_worker_backend, case, max_tokens=max_tokens, tool_choice=tool_choice)


def _results(backend: Backend | None, pool: Executor | None, cases: Sequence[BfclCase],
             max_tokens: int, tool_choice: str) -> Iterator[CaseResult]:
    """Each case's result, in the cases' order: in this process, or from the workers (which
    take the next case as soon as they are free)."""
    from ..eval.harness import run_case

    if pool is None:
        assert backend is not None
        for case in cases:
            yield run_case(backend, case, max_tokens=max_tokens, tool_choice=tool_choice)
        return
    yield from pool.map(partial(_worker_case, max_tokens=max_tokens, tool_choice=tool_choice),
                        cases)
