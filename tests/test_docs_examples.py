"""Every example in README.md and docs/*.md runs as written.

Each fenced block of those files is one of:

- ``python``: run with pytest-examples (pydantic's), each block on its own, as a reader
  copies it. When the block shows printed output as ``#> ...`` comments (pytest-examples'
  convention) the output is compared exactly; ``pytest --update-examples
  tests/test_docs_examples.py`` rewrites those comments from a real run.
- ``bash``: run with ``bash -eo pipefail`` from the checkout's root, with this venv's
  ``bin`` first on PATH; the port 8080 is replaced by a free one so the test never collides
  with a server someone runs on this machine. Its process group is killed afterwards.
- ``console``: a transcript. Each ``$ COMMAND`` line is run like a bash block, and what it
  prints (stdout and stderr) is compared with the lines under it: ``...`` stands for any text
  within a line, and a line that is only ``...`` for any number of lines.
- ``text`` (or no language): not code (a synopsis, a prompt, a format). An unlabelled block
  that starts with ``$ `` is refused: label it ``console`` so it is run.

An HTML comment on the line before a block says how to treat it, always with a reason:
``<!-- not-run: REASON -->`` (it is not run: the test checks a reason is given and counts
it), ``<!-- slow: REASON -->`` (it loads the bundled model or runs long: ``-m slow``),
``<!-- slow, bfcl-data: REASON -->`` (also skipped where ``../shared``'s BFCL data is
absent), and ``numbers`` among the tags (``<!-- slow, numbers: REASON -->``) lets every
number in a console transcript differ (timings, token counts). A python or bash block with
no comment runs in the fast suite; a block in README.md or docs/ that cannot run must say
why. The run's count (blocks run, checked for output, not-run with their reasons) is
printed at the end of the session.
"""

from __future__ import annotations

import functools
import os
import re
import signal
import socket
import subprocess
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pytest_examples import CodeExample, EvalExample, find_examples

ROOT = Path(__file__).resolve().parents[1]
DOC_FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)
MARK = re.compile(r"<!--\s*([a-z][a-z, -]*?)\s*:\s*(.*?)\s*-->\Z", re.DOTALL)
TAGS = {"not-run", "slow", "bfcl-data", "numbers"}
LANGS = {"python", "bash", "console", "text", ""}
RUNNABLE = {"python", "bash", "console"}
TIMEOUT = 600


@dataclass
class Block:
    path: Path
    line: int  # the fence's line, 1-based
    lang: str
    source: str
    tags: set[str] = field(default_factory=set)
    reason: str = ""

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def _blocks() -> list[Block]:
    found = []
    for path in DOC_FILES:
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            before = text[: m.start()].rstrip("\n")
            block = Block(path, text[: m.start()].count("\n") + 1, m.group(1).strip().lower(),
                          m.group(2))
            mark = MARK.match(before[before.rfind("<!--"):]) if before.endswith("-->") else None
            if mark:
                block.tags = {t.strip() for t in mark.group(1).split(",")}
                block.reason = mark.group(2)
            found.append(block)
    return found


BLOCKS = _blocks()
EXAMPLES = [b for b in BLOCKS if b.lang in RUNNABLE]


# Blocks of docs that other people own, known to fail as written: (file, the block's first
# line) -> why. Each is an expected failure (strict: once fixed, remove it here), so the
# suite stays green while the owner fixes the doc, and the count shows them.
KNOWN_BROKEN: dict[tuple[str, str], str] = {}


def _broken(block: Block) -> str | None:
    first = block.source.splitlines()[0] if block.source else ""
    return KNOWN_BROKEN.get((str(block.path.relative_to(ROOT)), first))


def _marks(block: Block) -> list[pytest.MarkDecorator]:
    marks = [pytest.mark.slow] if "slow" in block.tags else []
    if (why := _broken(block)) is not None:
        marks.append(pytest.mark.xfail(reason=why, strict=True, raises=AssertionError))
    return marks


# -- the count -------------------------------------------------------------------------------

class _Count:
    def __init__(self) -> None:
        self.ran: list[str] = []
        self.checked: list[str] = []
        self.not_run: list[tuple[str, str]] = []

    def pytest_terminal_summary(self, terminalreporter) -> None:  # type: ignore[no-untyped-def]
        tr = terminalreporter
        declared = sum("not-run" in b.tags for b in EXAMPLES)
        slow = sum("slow" in b.tags and "not-run" not in b.tags for b in EXAMPLES)
        broken = sum(_broken(b) is not None for b in EXAMPLES)
        tr.write_sep("-", "docs examples (tests/test_docs_examples.py)")
        tr.write_line(f"in README.md and docs/*.md: {len(EXAMPLES)} code blocks (python, bash, "
                      f"console), {declared} marked not-run with a reason, {slow} slow, "
                      f"{broken} known to fail (owned elsewhere)")
        tr.write_line(f"this run: {len(self.ran)} blocks run, {len(self.checked)} of them "
                      f"checked for output, {len(self.not_run)} not run with a reason")
        for where, reason in self.not_run:
            tr.write_line(f"  not run: {where}: {reason}")
        for b in EXAMPLES:
            if (why := _broken(b)) is not None:
                tr.write_line(f"  known to fail: {b.id}: {why}")


@pytest.fixture(scope="module")
def count(request: pytest.FixtureRequest) -> _Count:
    counter = _Count()
    request.config.pluginmanager.register(counter, "tooluse-docs-examples-count")
    return counter


# -- checks on the docs themselves -----------------------------------------------------------

def test_every_block_is_labelled_and_every_mark_is_known() -> None:
    problems = []
    for b in BLOCKS:
        if b.lang not in LANGS:
            problems.append(f"{b.id}: unknown language {b.lang!r} (one of {sorted(LANGS)})")
        if b.lang in ("", "text") and b.source.startswith("$ "):
            problems.append(f"{b.id}: a transcript: label it ```console so it is run")
        if b.tags - TAGS:
            problems.append(f"{b.id}: unknown tags {sorted(b.tags - TAGS)} (known: {sorted(TAGS)})")
        if b.tags and len(b.reason.split()) < 3:
            problems.append(f"{b.id}: a mark needs a reason of a few words, not {b.reason!r}")
        if b.tags and b.lang not in RUNNABLE:
            problems.append(f"{b.id}: marked {sorted(b.tags)} but a {b.lang or 'plain'} block "
                            "is not run anyway")
    assert not problems, "\n".join(problems)


def test_the_examples_are_found() -> None:
    found = {(ex.path, ex.start_line) for p in DOC_FILES for ex in find_examples(p)}
    ours = {(b.path, b.line) for b in EXAMPLES if b.lang == "python"}
    assert ours == found, "this test's parser and pytest-examples disagree on the python blocks"
    assert len(EXAMPLES) >= 30


# -- running them ----------------------------------------------------------------------------

@functools.cache
def _python_examples(path: Path) -> list[CodeExample]:
    # one find_examples() per file: --update-examples rewrites a file's examples as one group
    return list(find_examples(path))


def _skip_if_needed(block: Block, count: _Count) -> None:
    if "not-run" in block.tags:
        count.not_run.append((block.id, block.reason))
        pytest.skip(f"not run: {block.reason}")
    if "bfcl-data" in block.tags:
        from tooluse.eval import BfclDataError, default_data_dir

        try:
            default_data_dir()
        except BfclDataError:
            count.not_run.append((block.id, "no BFCL data in ../shared"))
            pytest.skip("no BFCL data (../shared/bench/bfcl or TOOLUSE_SHARED_DIR)")


def _format(exc: BaseException) -> str:
    try:
        return "".join(traceback.format_exception(exc))
    except Exception:  # noqa: BLE001 - the same fake frames may break the standard library's formatter
        return f"{type(exc).__name__}: {exc}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _shell(script: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    script = script.replace("8080", str(_free_port()))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    log = tmp_path / "output.txt"
    with log.open("w") as out:  # a file, not a pipe: a server left running keeps no pipe open
        proc = subprocess.Popen(["bash", "-eo", "pipefail", "-c", script], cwd=ROOT, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            proc.wait(timeout=TIMEOUT)
        finally:
            try:  # whatever the block started in the background (a server) goes too
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return subprocess.CompletedProcess(proc.args, proc.returncode, log.read_text(), "")


def _transcript(source: str) -> list[tuple[str, list[str]]]:
    """``[(command, expected output lines)]`` of a console block."""
    steps: list[tuple[str, list[str]]] = []
    lines = source.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise AssertionError(f"a console block starts each command with '$ ': {lines[i]!r}")
        command = lines[i][2:]
        while command.endswith("\\"):
            i += 1
            command = command[:-1] + lines[i]
        i += 1
        expected = []
        while i < len(lines) and not lines[i].startswith("$ "):
            expected.append(lines[i])
            i += 1
        steps.append((command, expected))
    return steps


def _line_pattern(line: str, numbers: bool) -> str:
    parts = []
    for piece in re.split(r"(\.\.\.|\d+(?:[.,]\d+)*)", line):
        if piece == "...":
            parts.append(".*")
        elif numbers and piece and piece[0].isdigit():
            parts.append(r"\d+(?:[.,]\d+)*")
        elif numbers:  # numbers of another width move the columns of a table
            parts.append(" +".join(re.escape(word) for word in re.split(r" +", piece)))
        else:
            parts.append(re.escape(piece))
    return "".join(parts)


def output_matches(expected: list[str], got: str, *, numbers: bool = False) -> bool:
    """Whether ``got`` fits the expected lines (``...`` wildcards; with ``numbers``, any
    number where the doc shows one)."""
    pattern = "\n".join("(?:.*\n)*?" if line.strip() == "..." else _line_pattern(line.rstrip(), numbers) + "\n"
                        for line in expected)
    pattern = pattern.replace("\n\n", "\n")
    return re.fullmatch(pattern, got.rstrip("\n") + "\n" if got.strip() else "") is not None


def test_output_matching() -> None:
    assert output_matches(["a 1.5 s", "..."], "a 1.5 s\nmore\nlines\n")
    assert not output_matches(["a 1.5 s"], "a 2.5 s\n")
    assert output_matches(["a 1.5 s (12 tokens)"], "a 2.25 s (7 tokens)\n", numbers=True)
    assert output_matches(["answer  The ..."], "answer  The error is ...anything\n")
    assert not output_matches(["x"], "x\ny\n")
    assert output_matches(["a     9.5%  b"], "a   100.0%  b\n", numbers=True)


@pytest.mark.parametrize("block", [pytest.param(b, id=b.id, marks=_marks(b)) for b in EXAMPLES])
def test_example(block: Block, eval_example: EvalExample, count: _Count, tmp_path: Path) -> None:
    _skip_if_needed(block, count)
    if block.lang == "python":
        example = next(ex for ex in _python_examples(block.path) if ex.start_line == block.line)
        checked = "#>" in example.source
        eval_example.set_config(line_length=120)  # printed lines up to 120 stay one #> line
        try:
            if checked and eval_example.update_examples:
                eval_example.run_print_update(example)
            elif checked:
                eval_example.run_print_check(example)
            else:
                eval_example.run(example)
        except Exception as exc:  # noqa: BLE001 - any error of the example fails the test
            # pytest-examples maps the traceback onto the doc's lines, which pytest 9 cannot
            # render (an INTERNALERROR): report it as text instead
            raise AssertionError(f"{block.id} raised:\n{_format(exc)}") from None
        if checked:
            count.checked.append(block.id)
    elif block.lang == "bash":
        done = _shell(block.source, tmp_path)
        assert done.returncode == 0, f"{block.id} exited {done.returncode}:\n{done.stdout}"
    else:
        for command, expected in _transcript(block.source):
            done = _shell(command, tmp_path)
            assert output_matches(expected, done.stdout, numbers="numbers" in block.tags), (
                f"{block.id}: $ {command}\n--- the doc shows:\n" + "\n".join(expected)
                + f"\n--- it printed (exit {done.returncode}):\n{done.stdout}")
        count.checked.append(block.id)
    count.ran.append(block.id)




def _closure(dist: str, extras: frozenset[str]) -> set[str]:
    """The distributions ``dist[extras]`` installs, transitively (markers evaluated)."""
    from importlib import metadata

    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    seen: set[str] = set()
    todo = [(dist, extras)]
    done: set[tuple[str, frozenset[str]]] = set()
    while todo:
        name, wanted = todo.pop()
        if (name, wanted) in done:
            continue
        done.add((name, wanted))
        seen.add(canonicalize_name(name))
        for text in metadata.distribution(name).requires or []:
            req = Requirement(text)
            envs = [{**default_environment(), "extra": e} for e in (wanted or {""})]
            if req.marker is None or any(req.marker.evaluate(env) for env in envs):
                todo.append((req.name, frozenset(req.extras)))
    return seen


def test_all_extra_installs_what_the_readme_imports() -> None:
    """``pip install -e ".[all]"`` (the README's first command) is enough for every module the
    README's examples import or run with ``python -m`` / ``python -c "import ..."``."""
    from importlib import metadata

    from packaging.utils import canonicalize_name

    modules = set()
    for b in (b for b in EXAMPLES if b.path.name == "README.md" and "not-run" not in b.tags):
        modules |= set(re.findall(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", b.source, re.MULTILINE))
        modules |= set(re.findall(r"python -m ([A-Za-z_]\w*)", b.source))
        modules |= set(re.findall(r"python -c [\"']import ([A-Za-z_]\w*)", b.source))
    assert {"anthropic", "mcp_server_time", "tooluse"} <= modules
    installed = _closure("tooluse", frozenset({"all"}))
    owners = metadata.packages_distributions()
    missing = {m: owners.get(m) for m in modules - set(sys.stdlib_module_names)
               if m != "tooluse" and not {canonicalize_name(d) for d in owners.get(m, [])} & installed}
    assert not missing, f"the README imports these, which [all] does not install: {missing}"
