"""The layers: no import circle anywhere, and imports only point down.

Every import counts, including those inside functions and under
``TYPE_CHECKING``: a circle a reader must untangle is there either way.
The layer contracts are also written for ``import-linter`` in
``pyproject.toml`` (``lint-imports``); this test runs it when it is
installed.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"core": "tokenprism.core", "plugins": "tokenprism.plugins", "app": "tokenprism.app"}
SERVICES = ("tokenprism.core.formats", "tokenprism.core.library", "tokenprism.core.check", "tokenprism.core.chat",
            "tokenprism.core.corpus")


def module_files() -> dict[str, Path]:
    """Installed module name -> source file, for core/, plugins/ and app/."""
    out: dict[str, Path] = {}
    for folder, pkg in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            out[".".join([pkg, *parts])] = path
    return out


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that ``name`` (at ``path``) imports."""
    is_pkg = path.name == "__init__.py"
    here = name if is_pkg else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")
                base = base[:len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # "from pkg import sub" names a module when sub is one
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in known else mod for a in node.names]
        for t in targets:
            while t and t not in known:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


# The one edge allowed against the layers: ``Model.chat`` is an accessor
# (as pandas' ``DataFrame.plot``) that imports the chat service inside the
# method, so ``model.chat(messages)`` works while loading the kernel never
# loads the service (test_the_accessor_imports_lazily). The same edge is an
# ``ignore_imports`` of the import-linter contract in pyproject.toml.
ACCESSORS = {("tokenprism.core.model", "tokenprism.core.chat")}


def import_graph() -> dict[str, set[str]]:
    known = module_files()
    return {name: {t for t in imports_of(name, path, known) if (name, t) not in ACCESSORS}
            for name, path in known.items()}


def test_the_accessor_imports_lazily() -> None:
    """The allowed edge stays inside a function (or under TYPE_CHECKING):
    importing the kernel does not import the chat service."""
    for source, target in ACCESSORS:
        tree = ast.parse(module_files()[source].read_text("utf-8"))
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and not node.level:
                assert not (node.module or "").startswith(target), f"{source} imports {target} at module level"
    code = ("import sys, tokenprism.core, tokenprism.core.model; "
            "print(sorted(m for m in sys.modules if m.startswith('tokenprism.core.chat')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "[]"


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                out.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle() -> None:
    found = circles(import_graph())
    assert not found, "import circles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_the_circle_finder_finds_one() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def _layer(name: str) -> str:
    if name.startswith("tokenprism.app.cli") or name in ("tokenprism.app", "tokenprism.app.__main__"):
        return "cli"
    if name.startswith("tokenprism.app"):
        return "app"
    if name.startswith(SERVICES):
        return "services"
    if name.startswith("tokenprism.plugins"):
        return "plugins"
    return "kernel"


# who may import whom: the command line (the entry point) may start the
# window; the window and its logic use services and the kernel; services use
# the kernel; plugins use the kernel (through its plugin API); the kernel
# finds plugins only through entry points, never by import
ALLOWED = {
    "cli": {"cli", "app", "services", "kernel"},
    "app": {"app", "services", "kernel"},
    "services": {"services", "kernel"},
    "plugins": {"plugins", "kernel"},
    "kernel": {"kernel"},
}


def test_imports_only_point_down() -> None:
    wrong = [f"{a} ({_layer(a)}) imports {b} ({_layer(b)})"
             for a, targets in import_graph().items() for b in sorted(targets)
             if _layer(b) not in ALLOWED[_layer(a)]]
    assert not wrong, "\n".join(wrong)


def test_import_linter_contracts_hold(tmp_path: Path) -> None:
    exe = shutil.which("lint-imports", path=os.path.dirname(sys.executable)) or shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    # the folders under their installed names, as a plain package tree:
    # import-linter cannot see through the editable install's finder
    pkg = tmp_path / "tokenprism"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for folder in PACKAGES:
        (pkg / folder).symlink_to(ROOT / folder, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml"), "--no-cache"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]
    assert "broken" in out.stdout and "0 broken" in out.stdout, out.stdout[-2000:]
