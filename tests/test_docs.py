"""The documentation's examples, run: every ``>>>`` example in the
docstrings of ``tokenprism.core`` (the kernel, ``formats``, ``library``),
``tokenprism.plugins`` and ``tokenprism.app``, and the README's "Python API"
block, with the standard :mod:`doctest` module (``ELLIPSIS`` and
``NORMALIZE_WHITESPACE`` on). One test per module, so a failure names it.

Each docstring runs on its own, as ``python -m doctest`` would run it: its
module's names are its globals, and it sets up what it uses. Two things
are provided besides, so that the examples read like a user's session:

- The current folder is a fresh temporary one holding what the examples
  open by bare file name: llama.cpp's reference vocabularies named in the
  examples (``ggml-vocab-llama-spm.gguf``..., linked from
  :data:`tests.refdata.VOCAB_DIR`; the ids shown are llama.cpp's ids for
  them), and the sources the bundled demo models were trained from, under
  the names converters are usually given: ``tokenizer.model`` (the SPM
  demo's SentencePiece model), ``tokenizer.json`` and
  ``gpt2/tokenizer.json`` (the BPE demo's Hugging Face tokenizer). Files an
  example writes land there too.
- The names ``tokenprism.core`` exports (``open_model``, ``read_gguf``,
  ``Vocab``...) are there as after ``from tokenprism.core import *``,
  under the module's own.
- ``demo(kind)`` is the path of a bundled demo model
  (``tokenprism.core.library.resources.demo_models()[kind]``; kinds
  ``"spm"``, ``"bpe"``, ``"ugm"``, ``"wpm"``).

A docstring naming a reference vocabulary that is not on this machine is
skipped, with the reason. The examples are read from the ``.py`` sources
(with :mod:`ast`), not from ``__doc__``: mypyc-compiled modules keep no
docstrings a finder could walk, and the source is what a reader sees.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest

import tokenprism.core as core
from tests.refdata import VOCAB_DIR

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"core": "tokenprism.core", "plugins": "tokenprism.plugins", "app": "tokenprism.app"}
README = ROOT / "README.md"
TRAINED = ROOT / "resources" / "trained"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
REFERENCE_NAME = re.compile(r"ggml-vocab-[\w.-]+?\.gguf")


@dataclass(frozen=True)
class Docstring:
    name: str  # e.g. tokenprism.core.model.Model.encode
    text: str
    lineno: int  # 0-based line of the file where ``text`` begins


def module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = [PACKAGES[rel.parts[0]], *rel.parts[1:]]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def docstrings(path: Path) -> Iterator[Docstring]:
    """The docstrings of the module at ``path`` and of every class and
    function in it (nested ones too), unindented as written."""
    mod = module_name(path)

    def walk(node: ast.AST, qualname: str) -> Iterator[Docstring]:
        body = getattr(node, "body", [])
        first = body[0] if body else None
        if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)):
            yield Docstring(qualname, first.value.value, first.value.lineno - 1)
        for child in body:
            if isinstance(child, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                yield from walk(child, f"{qualname}.{child.name}")

    yield from walk(ast.parse(path.read_text(encoding="utf-8"), str(path)), mod)


def modules_with_examples() -> dict[str, Path]:
    """``{module name: source file}`` for every module with a ``>>>``
    example in a docstring."""
    found: dict[str, Path] = {}
    for folder in PACKAGES:
        for path in sorted((ROOT / folder).rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8") and any(
                    doctest.DocTestParser().get_examples(d.text) for d in docstrings(path)):
                found[module_name(path)] = path
    return found


MODULES = modules_with_examples()


def readme_api_block() -> tuple[str, int]:
    """The README's "Python API" example (a ``pycon`` block) and the
    0-based line it starts on."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = lines.index("## Python API")
    fence = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    assert lines[fence] == "```pycon", "the Python API example is a ```pycon block, so doctest can run it"
    end = lines.index("```", fence + 1)
    return "\n".join(lines[fence + 1:end]) + "\n", fence + 1


@pytest.fixture
def session_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The folder the examples run in (see the module docstring)."""
    shutil.copy(TRAINED / "demo-spm.model", tmp_path / "tokenizer.model")
    shutil.copy(TRAINED / "demo-bpe" / "tokenizer.json", tmp_path / "tokenizer.json")
    (tmp_path / "gpt2").mkdir()
    shutil.copy(TRAINED / "demo-bpe" / "tokenizer.json", tmp_path / "gpt2" / "tokenizer.json")
    monkeypatch.chdir(tmp_path)
    return tmp_path


PUBLIC = {name: getattr(core, name) for name in core.__all__}


def demo(kind: str) -> Path:
    from tokenprism.core.library.resources import demo_models

    return Path(demo_models()[kind])


def missing_references(text: str, folder: Path) -> list[str]:
    """Link the reference vocabularies ``text`` names into ``folder``;
    the names of those not found."""
    missing = []
    for name in sorted(set(REFERENCE_NAME.findall(text))):
        source = None if VOCAB_DIR is None else Path(VOCAB_DIR) / name
        if source is None or not source.is_file():
            missing.append(name)
        elif not (folder / name).exists():
            os.symlink(source, folder / name)
    return missing


def run_examples(tests: list[tuple[Docstring, str]], globs: dict[str, Any], folder: Path) -> None:
    """Run each docstring's examples with a fresh copy of ``globs``; fail
    with doctest's report of every wrong example, or skip the docstrings
    whose reference vocabularies are missing."""
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    parser = doctest.DocTestParser()
    report: list[str] = []
    skipped: list[str] = []
    ran = 0
    for doc, filename in tests:
        test = parser.get_doctest(doc.text, {**PUBLIC, **globs, "demo": demo}, doc.name, filename, doc.lineno)
        if not test.examples:
            continue
        missing = missing_references(doc.text, folder)
        if missing:
            skipped.append(f"{doc.name} ({', '.join(missing)})")
            continue
        runner.run(test, out=report.append)
        ran += len(test.examples)
    assert ran or skipped, "no example found"
    if runner.failures:
        pytest.fail("".join(report), pytrace=False)
    if skipped:
        pytest.skip(f"reference vocabularies not found (set TOKENPRISM_VOCAB_DIR) for: {'; '.join(skipped)}")


# Examples known to be wrong in modules being rewritten (strict: the test
# says so once they are right, and the entry goes).
WRONG: dict[str, str] = {}


@pytest.mark.parametrize("module", [
    pytest.param(m, marks=pytest.mark.xfail(reason=WRONG[m], strict=True)) if m in WRONG else m
    for m in sorted(MODULES)])
def test_docstring_examples(module: str, session_folder: Path) -> None:
    path = MODULES[module]
    globs = vars(importlib.import_module(module))
    run_examples([(d, str(path)) for d in docstrings(path)], globs, session_folder)


def test_readme_python_api(session_folder: Path) -> None:
    text, lineno = readme_api_block()
    run_examples([(Docstring("README.md (Python API)", text, lineno), str(README))], {}, session_folder)


def test_modules_found() -> None:
    """The scan sees the modules documented with examples (a broken scan
    would pass by running nothing)."""
    assert {"tokenprism.core.model", "tokenprism.core.encoding",
            "tokenprism.core.library.resources"} <= set(MODULES)
