"""The command line's arguments: options anywhere (as with llama-tokenize),
an unknown first word, a machine without a display, and ``tokenize``
computing only what its format prints."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path
from typing import Iterator, Sequence

import pytest

import tokenprism.app.qt.main_window as main_window
from tokenprism.app.cli import SUBCOMMANDS, main, missing_display, parse_command
from tokenprism.core import Model, open_model
from tokenprism.core.formats.export import render, token_list
from tokenprism.core.library.resources import demo_models


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def orders(positionals: Sequence[str], options: Sequence[Sequence[str]]) -> Iterator[list[str]]:
    """Every way to place each option (with its value) before, between or
    after the positionals, which keep their order."""
    slots = len(positionals) + 1
    for where in itertools.product(range(slots), repeat=len(options)):
        argv: list[str] = []
        for slot in range(slots):
            for opt, at in zip(options, where):
                if at == slot:
                    argv += opt
            if slot < len(positionals):
                argv.append(positionals[slot])
        yield argv


def parsed(argv: list[str]) -> dict[str, object]:
    args = vars(parse_command(argv))
    args.pop("func", None)  # (gui's is a lambda made per parser)
    return args


# one case per subcommand: its positionals and every option it takes a value or flag for
ORDER_CASES: dict[str, tuple[list[str], list[list[str]]]] = {
    "info": (["m.gguf"], []),
    "tokenize": (["m.gguf", "Hello there"],
                 [["--format", "pieces"], ["--add-special"], ["--parse-special"], ["-o", "out.txt"]]),
    "decode": (["m.gguf", "1", "2", "3"], [["--text-only"]]),
    "compare": (["a.gguf", "b.gguf", "Hello"], [["--format", "json"], ["--add-special"], ["-o", "x.csv"]]),
    "convert": (["tokenizer.json"], [["-o", "out.gguf"], ["--name", "demo"], ["-q"]]),
    "check": (["m.gguf"], [["--against", "src"], ["--texts", "t.txt"], ["--texts-mode", "file"], ["--cases", "5"], ["--seed", "2"],
                           ["--add-special"], ["--format", "json"]]),
    "chat": (["m.gguf"], [["--messages", "c.json"], ["--template", "rag"], ["--tools", "t.json"],
                          ["--add-generation-prompt"], ["--add-special"], ["--format", "json"], ["--timeout", "1"],
                          ["--context-length", "4096"]]),
    "chunk": (["m.gguf"], [["--file", "t.txt"], ["--max-tokens", "64"], ["--overlap", "8"], ["--format", "text"]]),
    "find-tokens": (["m.gguf", "</s>"], [["--format", "json"], ["--parse-special"]]),
    "explain": (["m.gguf", "Hi"], [["--format", "json"], ["--add-special"], ["--parse-special"],
                                   ["--max-chars", "9"]]),
    "models": ([], [["--format", "json"], ["--add-folder", "/d"], ["--no-saved-folders"]]),
    "samples": ([], [["--dest", "/d"], ["--sdist", "s.tar.gz"], ["--force"], ["-q"]]),
    "stats": (["texts", "d.jsonl"], [["--model", "a.gguf"], ["--format", "json"], ["--workers", "2"],
                                     ["--add-special"]]),
    "plugins": ([], []),
    "version": ([], [["-v"]]),
    "gui": (["a.gguf", "b.gguf"], []),
}


def test_every_subcommand_has_an_order_case() -> None:
    assert set(ORDER_CASES) == set(SUBCOMMANDS)


@pytest.mark.parametrize("command", sorted(ORDER_CASES))
def test_options_may_stand_anywhere(command: str) -> None:
    positionals, options = ORDER_CASES[command]
    all_orders = list(orders(positionals, options))
    expected = parsed([command, *positionals, *itertools.chain.from_iterable(options)])
    assert expected["command"] == command
    for argv in all_orders:
        assert parsed([command, *argv]) == expected, argv
    # the positionals really landed where they belong, whatever the order
    if command == "tokenize":
        assert (expected["model"], expected["text"], expected["format"]) == ("m.gguf", "Hello there", "pieces")
    if command == "decode":
        assert expected["ids"] == ["1", "2", "3"] and expected["text_only"] is True
    if command == "compare":
        assert expected["items"] == ["a.gguf", "b.gguf", "Hello"]


def test_tokenize_with_the_format_between_model_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    """The case from llama-tokenize habits that failed with "unrecognized
    arguments: Hello"."""
    model = str(demo_models()["spm"])
    code, out, err = run(capsys, "tokenize", model, "--format", "pieces", "Hello")
    assert (code, err) == (0, "")
    ids = open_model(model).encode("Hello").ids
    assert [int(line.split()[0]) for line in out.splitlines()] == ids
    for argv in orders([model, "Hello"], [["--format", "pieces"], ["--add-special"]]):
        code, again, _ = run(capsys, "tokenize", *argv)
        assert code == 0 and again.splitlines()[1:] == out.splitlines(), argv
    # a text that starts with a dash still goes after --
    code, out, _ = run(capsys, "tokenize", model, "--format", "ids", "--", "-x")
    assert code == 0 and out == f"{open_model(model).encode('-x').ids}\n"


def test_decode_and_compare_with_options_among_the_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    spm, bpe = str(demo_models()["spm"]), str(demo_models()["bpe"])
    ids = open_model(spm).encode("Hi there").ids
    code, out, _ = run(capsys, "decode", spm, str(ids[0]), "--text-only", *map(str, ids[1:]))
    assert code == 0 and out == "Hi there\n"
    code, out, _ = run(capsys, "compare", spm, "--format", "ids", bpe, "Hi there")
    assert code == 0 and out.splitlines() == [str(ids), str(open_model(bpe).encode("Hi there").ids)]
    code, out, _ = run(capsys, "info", spm)
    assert code == 0 and "vocab size" in out


# ---- the first word ------------------------------------------------------------------------

@pytest.fixture
def gui_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []

    def run_gui(paths: list[str]) -> int:
        calls.append(paths)
        return 0

    monkeypatch.setattr(main_window, "run_gui", run_gui)
    return calls


def test_an_unknown_word_is_not_taken_for_a_model(capsys: pytest.CaptureFixture[str], gui_calls: list[list[str]],
                                                  tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    code, out, err = run(capsys, "foo")
    lines = err.splitlines()
    assert code == 1 and out == "" and gui_calls == []
    assert lines[0] == "tokenprism: error: unknown command or file: foo"
    assert len(lines) == 2 and all(c in lines[1] for c in SUBCOMMANDS), err
    code, _, err = run(capsys, "tokenzie", "m.gguf", "hi")
    assert code == 1 and "unknown command or file: tokenzie (did you mean tokenize?)" in err
    # a hostile word stays on its line, escaped
    code, _, err = run(capsys, "x\n\x1b[2Jy")
    assert code == 1 and "x\\n\\x1b[2Jy" in err and "\x1b" not in err and len(err.splitlines()) == 2
    # an existing file is a model, even named like nothing in particular
    model = tmp_path / "foo"
    model.write_bytes(demo_models()["spm"].read_bytes())
    monkeypatch.chdir(tmp_path)
    assert main(["foo"]) == 0 and gui_calls == [["foo"]]
    code, _, err = run(capsys, "foo", "missing.gguf")
    assert code == 1 and err == "tokenprism: error: missing.gguf: no such file\n" and len(gui_calls) == 1
    code, _, err = run(capsys, "gui", "missing.gguf")
    assert code == 1 and "missing.gguf: no such file" in err and len(gui_calls) == 1


# ---- no display ------------------------------------------------------------------------------

NO_DISPLAY = {"PATH": "/usr/bin"}


@pytest.mark.parametrize("env,platform,window", [
    (NO_DISPLAY, "linux", False),
    ({"DISPLAY": ":0"}, "linux", True),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", True),
    ({"QT_QPA_PLATFORM": "offscreen"}, "linux", True),
    ({"QT_QPA_PLATFORM": "xcb"}, "linux", False),
    ({"QT_QPA_PLATFORM": "wayland;xcb"}, "freebsd14", False),
    ({"QT_QPA_PLATFORM": "xcb;minimal"}, "linux", True),
    ({"QT_QPA_PLATFORM": "vnc:size=800x600"}, "linux", True),
    ({"DISPLAY": ""}, "linux", False),
    (NO_DISPLAY, "darwin", True),
    (NO_DISPLAY, "win32", True),
])
def test_missing_display(env: dict[str, str], platform: str, window: bool) -> None:
    why = missing_display(env, platform)
    assert (why is None) == window
    if why is not None:
        assert why.startswith("no display found") and "tokenprism tokenize MODEL TEXT" in why and "\n" not in why


def test_without_a_display_the_window_is_not_started(capsys: pytest.CaptureFixture[str],
                                                     gui_calls: list[list[str]],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    model = str(demo_models()["spm"])
    for argv in ([], [model], ["gui"], ["gui", model]):
        code, out, err = run(capsys, *argv)
        assert code == 1 and out == "" and gui_calls == [], argv
        assert err.startswith("tokenprism: error: no display found") and err.count("\n") == 1, err
    # the subcommands do not need one
    code, out, _ = run(capsys, "tokenize", model, "hi")
    assert code == 0 and out.startswith("[")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Qt needs a display server only on Linux/BSD")
def test_without_a_display_qt_never_aborts() -> None:
    """As a process: exit 1 with the one line, where Qt would abort (134)."""
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    proc = subprocess.run([sys.executable, "-m", "tokenprism.app", str(demo_models()["spm"])], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("tokenprism: error: no display found") and proc.stderr.count("\n") == 1


# ---- tokenize computes only what it prints -----------------------------------------------------

def _models(char_model_path: Path) -> list[Path]:
    return [char_model_path, *demo_models().values()]


@pytest.mark.parametrize("fmt", ["ids", "pieces"])
def test_ids_and_pieces_print_what_the_export_renders(fmt: str, char_model_path: Path, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    text = "Hello wörld 🙂 日本 <s>\u00a0\x01 ab€"
    for path in _models(char_model_path):
        model = open_model(path)
        for flags in ([], ["--add-special"], ["--parse-special"]):
            want = render([token_list(model, text=text, add_special=bool(flags and flags[0] == "--add-special"),
                                      parse_special=bool(flags and flags[0] == "--parse-special"))], fmt)
            code, out, _ = run(capsys, "tokenize", str(path), text, "--format", fmt, *flags)
            assert code == 0 and out == want, (path.name, flags)
            dest = tmp_path / f"out-{fmt}.txt"
            code, out, _ = run(capsys, "tokenize", str(path), text, "--format", fmt, *flags, "-o", str(dest))
            assert code == 0 and out == "" and dest.read_text("utf-8") == want


def test_ids_and_pieces_build_no_merge_ranks_or_fingerprint(char_model_path: Path,
                                                            capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The ids format never shows merge ranks (building gemma-4's table was
    ~260 ms of a ~500 ms run) or the tokenizer's fingerprint."""
    import tokenprism.core.formats.token_list as token_list_module

    def not_needed(*args: object) -> None:
        raise AssertionError("computed for a format that does not show it")

    monkeypatch.setattr(Model, "merge_ranks", not_needed)
    monkeypatch.setattr(token_list_module, "tokenizer_fingerprint", not_needed)
    bpe = str(demo_models()["bpe"])
    for fmt in ("ids", "pieces"):
        code, out, _ = run(capsys, "tokenize", bpe, "Hello world", "--format", fmt)
        assert code == 0 and out
    with pytest.raises(AssertionError, match="does not show it"):  # the formats that show them still do
        main(["tokenize", bpe, "Hello world", "--format", "json"])


def test_subcommand_help_still_works(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["tokenize", "m.gguf", "--help"])
    assert info.value.code == 0 and "--format" in capsys.readouterr().out
