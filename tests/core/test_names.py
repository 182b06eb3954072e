"""The names models are shown by: the metadata name when it is one, the
file's name when it is a hash, a path or missing, and file names (then
folders) added where two models would read the same."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path

import pytest

from tests.refdata import vocab_path
from tokenprism.app.cli import main
from tokenprism.core import open_model
from tokenprism.core.library.discovery import peek_gguf
from tokenprism.core.formats.export import ModelRef, render, token_list
from tokenprism.core.library.names import display_name, display_names, file_label, name_problem


def metadata_name(vocab: str) -> tuple[str, str]:
    """(general.name, path) of a reference vocabulary, as the file says."""
    path = vocab_path(vocab)
    peek = peek_gguf(path)
    assert peek is not None
    return peek.name, path


# ---- the reference files ---------------------------------------------------------------


def test_gemma4_hash_gives_way_to_the_file_name() -> None:
    name, path = metadata_name("gemma-4")
    assert name == "47b6801b24d15ff9bcd8c96dfaea0be9ed3a0301"  # the case this is about
    assert display_name(name, path) == "ggml-vocab-gemma-4"


def test_aquila_folder_path_gives_way_to_the_file_name() -> None:
    name, path = metadata_name("aquila")
    assert name == "D:\\Diverses\\models"
    assert display_name(name, path) == "ggml-vocab-aquila"


def test_qwen2_and_qwen35_share_a_name_and_are_told_apart_by_file() -> None:
    a, b = metadata_name("qwen2"), metadata_name("qwen35")
    assert a[0] == b[0] == "qwen2"
    assert display_name(*a) == display_name(*b) == "qwen2"  # alone, each is fine
    assert display_names([a, b]) == ["qwen2 (ggml-vocab-qwen2)", "qwen2 (ggml-vocab-qwen35)"]
    assert display_names([b, a]) == ["qwen2 (ggml-vocab-qwen35)", "qwen2 (ggml-vocab-qwen2)"]


@pytest.mark.parametrize("vocab, shown", [("llama-spm", "llama-spm"), ("baichuan", "Baichuan-7B"),
                                          ("nomic-bert-moe", "Nomic Xlm 2048"), ("gpt-neox", "gpt-neox-20b")])
def test_good_metadata_names_are_kept(vocab: str, shown: str) -> None:
    assert display_name(*metadata_name(vocab)) == shown


# ---- made-up cases -----------------------------------------------------------------------


@pytest.mark.parametrize("name, why", [
    ("", "empty"), ("   \t", "empty"),
    ("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "a hash"),
    ("sha256:e3b0c44298fc1c149afbf4c8996fb924", "a hash"), ("sha256-0123456789abcdef0123", "a hash"),
    ("123e4567-e89b-12d3-a456-426614174000", "a hash"),
    ("/home/me/models/llama", "a path"), ("~/models/x", "a path"), ("./out", "a path"), ("..\\x", "a path"),
    ("C:\\models\\Llama", "a path"), ("C:", "a path"), ("models\\7B", "a path"), ("Llama-3-8B.Q4_K_M.gguf", "a path"),
    ("Llama\x00 3", "control characters"), ("x" * 101, "too long"),
])
def test_names_that_are_no_names(name: str, why: str) -> None:
    assert name_problem(name) == why
    assert display_name(name, "/srv/models/My-Model-Q4_K_M.gguf") == "My-Model-Q4_K_M"


@pytest.mark.parametrize("name", ["Llama 3.1 8B Instruct", "gpt-2", "Phi3", "meta-llama/Llama-2-7b-hf", "cafe",
                                  "deadbeef", "Qwen2.5 Coder 7B", "模型 7B", "x" * 100])
def test_names_that_are_names(name: str) -> None:
    assert name_problem(name) is None
    assert display_name(name, "/srv/models/other.gguf") == name


def test_whitespace_inside_a_name_reads_as_one_space() -> None:
    assert display_name("  Llama\n3\u00a0 8B ", "/m/x.gguf") == "Llama 3 8B"


def test_file_label_drops_only_the_model_extension() -> None:
    assert file_label("/a/b/model.Q4_K_M.gguf") == "model.Q4_K_M"
    assert file_label("C:\\Models\\Mistral.GGUF") == "Mistral"
    assert file_label("/blobs/sha256-abcdef") == "sha256-abcdef"
    assert file_label("/a/.gguf") == ".gguf"
    assert file_label("") == ""


def test_a_bad_name_without_a_path_is_shown_as_it_is() -> None:
    assert display_name("abcdef0123456789abcdef", "") == "abcdef0123456789abcdef"


def test_distinct_names_are_left_alone() -> None:
    models = [("Llama", "/m/a.gguf"), ("Mistral", "/m/b.gguf"), ("", "/m/c.gguf")]
    assert display_names(models) == ["Llama", "Mistral", "c"]


def test_names_differing_only_in_case_are_told_apart() -> None:
    assert display_names([("Llama", "/m/a.gguf"), ("llama", "/m/b.gguf")]) == ["Llama (a)", "llama (b)"]


def test_a_model_named_as_its_file_keeps_its_name() -> None:
    assert display_names([("tiny", "/m/tiny.gguf"), ("tiny", "/m/tiny-v2.gguf")]) == ["tiny", "tiny (tiny-v2)"]


def test_same_file_name_in_two_folders_adds_the_folders_it_takes() -> None:
    models = [("Llama", "/hf/snapshots/aaa/q4/model.gguf"), ("Llama", "/hf/snapshots/bbb/q4/model.gguf"),
              ("Mistral", "/x/model.gguf")]
    assert display_names(models) == ["Llama (aaa/q4/model)", "Llama (bbb/q4/model)", "Mistral"]


def test_a_file_name_label_meeting_a_metadata_name() -> None:
    # the hash-named file falls back to "llama" and so reads as the other model's name
    models = [("0123456789abcdef0123456789abcdef", "/a/llama.gguf"), ("llama", "/b/other.gguf")]
    assert display_names(models) == ["llama", "llama (other)"]


def test_the_same_file_twice_is_numbered() -> None:
    models = [("tiny", "/m/t.gguf"), ("tiny", "/m/t.gguf"), ("tiny", "/m/u.gguf")]
    labels = display_names(models)
    assert labels == ["tiny (t) #1", "tiny (t) #2", "tiny (u)"]
    assert len(set(labels)) == 3


def test_every_label_differs_however_names_and_paths_repeat() -> None:
    models = [(n, p) for n in ("A", "a", "", "/x/A.gguf") for p in ("/1/A.gguf", "/2/A.gguf", "/2/a.gguf")]
    labels = display_names(models)
    assert len({label.casefold() for label in labels}) == len(models)


def test_nothing_to_name() -> None:
    assert display_names([]) == []


# ---- where the names are used outside the window ------------------------------------------


def test_cli_compare_table_and_exports_tell_qwen2_from_qwen35(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    q2, q35, gemma = vocab_path("qwen2"), vocab_path("qwen35"), vocab_path("gemma-4")
    assert main(["compare", q2, q35, gemma, "Hello world"]) == 0
    rows = capsys.readouterr().out.splitlines()[1:]
    assert [r.split("  ")[0] for r in rows] == ["qwen2 (ggml-vocab-qwen2)", "qwen2 (ggml-vocab-qwen35)",
                                                "ggml-vocab-gemma-4"]
    out = tmp_path / "t.csv"
    assert main(["compare", q2, q35, gemma, "Hi", "-o", str(out)]) == 0
    models = {r["model"] for r in csv.DictReader(io.StringIO(out.read_text("utf-8-sig")))}
    assert models == {"qwen2 (ggml-vocab-qwen2)", "qwen2 (ggml-vocab-qwen35)", "ggml-vocab-gemma-4"}


def test_table_cuts_long_names_in_the_middle(tmp_path: Path) -> None:
    # the end of a long label is the file name that tells it from its twin
    spm = vocab_path("llama-spm")
    model = open_model(spm)
    long = "A very long model name that goes on and on"
    lists = [replace(token_list(model, text="Hi"), model=replace(ModelRef.of(model), name=long, path=p))
             for p in ("/a/first.gguf", "/b/second.gguf")]
    table = render(lists, "table").splitlines()
    assert table[1].startswith("A very long model n…") and "(first)" in table[1]
    assert "(second)" in table[2]


def test_model_ref_describes_gemma4_by_its_file() -> None:
    ref = ModelRef.of(open_model(vocab_path("gemma-4")))
    assert ref.name == "47b6801b24d15ff9bcd8c96dfaea0be9ed3a0301"  # the file's own name stays on record
    assert ref.describe().startswith("ggml-vocab-gemma-4 (BPE, 262,144 tokens)")
