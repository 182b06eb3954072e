"""What the command line imports before it answers: ``--help`` and
``--version`` none of the subcommand modules, numpy or jinja2; ``tokenize``
no other command's module (start-up is most of a short command's time)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tokenprism.app.cli import MODULE_COMMANDS, SUBCOMMANDS, build_parser
from tokenprism.core import open_model
from tokenprism.core.library.resources import demo_models

PROBE = """
import contextlib, io, json, sys
from tokenprism.app.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as e:  # argparse's --help
        code = e.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""

HEAVY = ("numpy", "jinja2", "regex", "importlib.metadata", "tokenprism.core.chat", "tokenprism.core.library",
         "tokenprism.core.check", *(f"tokenprism.app.cli.{m}" for m, _, _ in MODULE_COMMANDS.values()))


def run_cli(*argv: str) -> tuple[int, str, set[str]]:
    res = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    got = json.loads(res.stdout.strip().splitlines()[-1])
    return got["code"], got["out"], set(got["modules"])


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["version"]])
def test_help_and_version_import_nothing_heavy(argv: list[str]) -> None:
    code, out, modules = run_cli(*argv)
    assert code == 0 and out
    assert modules.isdisjoint(HEAVY), sorted(modules & set(HEAVY))
    if argv == ["--help"]:
        # every command is listed, those in modules of their own too
        # (a long name such as find-tokens has its help on the next line)
        assert all(re.search(rf"^ {{4}}{re.escape(name)}(?: |$)", out, re.M) for name in SUBCOMMANDS), out


def test_tokenize_imports_no_other_command() -> None:
    model = demo_models()["spm"]
    # the first process with this sys.path writes the plugin host's table
    # (reading every entry point, importlib.metadata included); later ones use it
    run_cli("tokenize", str(model), "Hello", "--format", "ids")
    code, out, modules = run_cli("tokenize", str(model), "Hello", "--format", "ids")
    assert code == 0 and json.loads(out) == open_model(model).encode("Hello").ids
    assert modules.isdisjoint(HEAVY[3:]), sorted(modules & set(HEAVY))


@pytest.mark.parametrize("name", sorted(MODULE_COMMANDS))
def test_help_lines_match_the_modules_own(name: str) -> None:
    # the one-line entry --help shows without importing the module is the
    # help its module gives the command
    def entry(parser: object) -> str:
        sub = next(a for a in parser._subparsers._group_actions)  # type: ignore[attr-defined]
        return next(str(a.help) for a in sub._choices_actions if a.dest == name)

    assert entry(build_parser(name)) == entry(build_parser()) == MODULE_COMMANDS[name][2]
    assert f"{name}" in build_parser(name).commands and "tokenize" in build_parser(name).commands


def test_an_own_command_builds_only_its_parser() -> None:
    # each other subparser cost ~0.6 ms of every start-up; the full
    # parser (tokenprism --help) still lists every command
    assert set(build_parser("tokenize").commands) == {"tokenize"}
    assert set(build_parser("version").commands) == {"version"}
    assert set(build_parser().commands) == set(SUBCOMMANDS)
