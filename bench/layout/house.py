"""The drawing of the house: tooluse's packages (files, lines) and the imports between them,
before and after a change, as text (docs/architecture.md) and as PNG images (docs/images/).

    python bench/layout/house.py                        # before: c71f406 (the commit before the
                                                 # house work), after: this tree's src/
    python bench/layout/house.py --before REF --after REF_OR_DIR --no-write

A package is a folder of ``src/tooluse`` (the gateway's sub-packages, ``server/apis``,
``server/http`` and ``server/stores``, each its own, with ``server/base`` its routing modules
and ``server/errors`` its error); the modules at the top of
``tooluse`` (messages, stream, errors, backend...) are the neutral ``(core)``. An arrow goes
from a package to every package it imports (any import, read by
tests/test_import_layers.py's own reader). Rows are layers: a package sits one row above the highest package it
imports, so every arrow points down. A git ref is read with ``git archive`` (no checkout).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import test_import_layers as layer_test  # the layer test's import reader

#: The commit before the house work (its first step moved the local engine to llama/).
BEFORE = "c71f406"
#: Folders shown as packages of their own below their parent package.
SUBPACKAGES = ("server/apis", "server/http", "server/stores")
#: Once the gateway has sub-packages, its modules below the APIs (routing a request to a
#: backend) are drawn as ``server/base`` and its error as ``server/errors``, apart from the
#: app on top (app, tracing, trace page, threads, workers): in one box they would draw
#: circles that the modules do not have.
SERVER_BASE = ("route_config", "keys", "routes", "policy", "server_tools", "routing", "state")

Package = str


def _sources(where: str, scratch: Path) -> Path:
    """The ``src`` folder of a directory, or of a git ref (extracted into ``scratch``)."""
    path = Path(where)
    if path.is_dir():
        return path / "src" if (path / "src" / "tooluse").is_dir() else path
    raw = subprocess.run(["git", "archive", where, "src/tooluse"], cwd=ROOT, check=True,
                         capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(raw)) as tar:
        tar.extractall(scratch, filter="data")
    return scratch / "src"


def package_of(module: str) -> Package:
    """The drawn package of a dotted module name."""
    parts = module.split(".")[1:]
    if not parts:
        return "(core)"
    folder = "/".join(parts[:2])
    if folder in _folders:
        return folder
    if "server/apis" in _folders and parts[0] == "server" and len(parts) > 1:
        if parts[1] == "errors":
            return "server/errors"
        if parts[1] in SERVER_BASE:
            return "server/base"
    return parts[0] if len(parts) > 1 or parts[0] in _folders else "(core)"


#: The folders of the tree read now (a module ``server/stores.py`` is not ``server/stores``).
_folders: set[str] = set()


def read_house(src: Path) -> tuple[dict[Package, tuple[int, int]], dict[Package, set[Package]]]:
    """Per package its files and lines, and the packages it imports: the imports as
    tests/test_import_layers.py reads them (its reader, pointed at ``src``)."""
    root = src / "tooluse"
    _folders.clear()
    _folders.update(p.name for p in root.iterdir() if (p / "__init__.py").exists())
    _folders.update(f for f in SUBPACKAGES if (root / f / "__init__.py").exists())
    layer_test.SRC, layer_test.ROOT = src, root
    layer_test.MODULES = modules = layer_test._modules()
    sizes: dict[Package, tuple[int, int]] = {}
    for name, path in modules.items():
        files, lines = sizes.get(package_of(name), (0, 0))
        sizes[package_of(name)] = (files + 1, lines + len(path.read_text(encoding="utf-8").splitlines()))
    edges: dict[Package, set[Package]] = {}
    for name, targets in layer_test._graph().items():
        if name == "tooluse":
            continue  # the package's public face imports every layer
        for target in targets:
            if package_of(target) != package_of(name):
                edges.setdefault(package_of(name), set()).add(package_of(target))
    return sizes, edges


def layers(packages: list[Package], edges: dict[Package, set[Package]]) -> dict[Package, int]:
    """Each package's row: one above the highest it imports (a circle, if any, shares one)."""
    row: dict[Package, int] = {}

    def depth(p: Package, seen: tuple[Package, ...]) -> int:
        if p in row:
            return row[p]
        below = [depth(q, (*seen, p)) for q in edges.get(p, ()) if q not in seen]
        row[p] = 1 + max(below, default=-1)
        return row[p]

    for p in packages:
        depth(p, ())
    return row


def text_drawing(title: str, sizes: dict[Package, tuple[int, int]],
                 edges: dict[Package, set[Package]]) -> str:
    """The house as text: rows from the top layer down, each package with its size and the
    packages it imports."""
    row = layers(sorted(sizes), edges)
    total = f"{sum(f for f, _ in sizes.values())} files, {sum(n for _, n in sizes.values()):,} lines"
    lines = [f"{title}: {total}", ""]
    for level in range(max(row.values()), -1, -1):
        for p in sorted(q for q in sizes if row[q] == level):
            files, count = sizes[p]
            arrows = ", ".join(sorted(edges.get(p, ())))
            lines.append(f"  [{level}] {p:<16} {files:>3} files {count:>6,} lines"
                         + (f"  -> {arrows}" if arrows else ""))
    return "\n".join(lines)


def png_drawing(title: str, sizes: dict[Package, tuple[int, int]],
                edges: dict[Package, set[Package]], out: Path) -> None:
    """The house as boxes in rows (one per layer) and arrows down to what each imports."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    row = layers(sorted(sizes), edges)
    top = max(row.values())
    where: dict[Package, tuple[float, float]] = {}
    width = max(sum(1 for p in sizes if row[p] == level) for level in range(top + 1))
    for level in range(top + 1):
        members = sorted((p for p in sizes if row[p] == level), key=lambda p: -sizes[p][1])
        for k, p in enumerate(members):
            where[p] = ((k + 0.5) * width * 2.2 / len(members), level * 1.6)
    fig, ax = plt.subplots(figsize=(max(10.0, width * 2.6), (top + 1) * 1.3 + 1.2))
    box_w, box_h = 1.9, 0.72
    for a, targets in edges.items():
        for b in targets:
            (x1, y1), (x2, y2) = where[a], where[b]
            ax.add_patch(FancyArrowPatch((x1, y1 - box_h / 2), (x2, y2 + box_h / 2),
                                         arrowstyle="-|>", mutation_scale=9, lw=0.6,
                                         color="#8a8a8a", alpha=0.7,
                                         connectionstyle="arc3,rad=0.04"))
    for p, (x, y) in where.items():
        files, count = sizes[p]
        shade = "#dbe9f6" if not p.startswith("server") else "#fde2c8"
        ax.add_patch(FancyBboxPatch((x - box_w / 2, y - box_h / 2), box_w, box_h,
                                    boxstyle="round,pad=0.02", fc=shade, ec="#2f4f6f", lw=1))
        ax.text(x, y + 0.1, p, ha="center", va="center", fontsize=9, weight="bold")
        ax.text(x, y - 0.17, f"{files} files, {count:,} lines", ha="center", va="center",
                fontsize=7)
    ax.set_xlim(-0.2, width * 2.2 + 0.2)
    ax.set_ylim(-1.0, top * 1.6 + 1.0)
    ax.axis("off")
    total_files = sum(f for f, _ in sizes.values())
    total_lines = sum(n for _, n in sizes.values())
    ax.set_title(f"{title}: {total_files} files, {total_lines:,} lines "
                 "(arrows: imports, pointing down the layers)", fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__)
    parser.add_argument("--before", default=BEFORE, help="a git ref or a directory")
    parser.add_argument("--after", default=str(ROOT), help="a git ref or a directory")
    parser.add_argument("--images", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--markdown", type=Path, default=ROOT / "docs" / "architecture.md")
    parser.add_argument("--no-write", action="store_true", help="print the text drawings only")
    args = parser.parse_args(argv)
    drawings = []
    with tempfile.TemporaryDirectory() as scratch:
        for label, where in (("before", args.before), ("after", args.after)):
            src = _sources(where, Path(scratch) / label)
            sizes, edges = read_house(src)
            title = f"{label} ({where if label == 'before' or where != str(ROOT) else 'this tree'})"
            drawings.append((label, title, text_drawing(title, sizes, edges)))
            print(drawings[-1][2], "\n")
            if not args.no_write:
                png_drawing(title, sizes, edges, args.images / f"house-{label}.png")
    if not args.no_write:
        _write_markdown(args.markdown, drawings)
    return 0


_START, _END = "<!-- house:start -->", "<!-- house:end -->"


def _write_markdown(path: Path, drawings: list[tuple[str, str, str]]) -> None:
    """The drawings between the markers of ``path`` (the prose around them is kept)."""
    body = "\n\n".join(f"![the house, {label}](images/house-{label}.png)\n\n```text\n{text}\n```"
                       for label, _, text in drawings)
    block = f"{_START}\n{body}\n{_END}"
    text = path.read_text(encoding="utf-8") if path.exists() else f"# Architecture\n\n{block}\n"
    if _START in text:
        head, rest = text.split(_START, 1)
        text = head + block + rest.split(_END, 1)[1]
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
