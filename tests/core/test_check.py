"""``tokenprism check``: sources trained here with the tokenizers and
sentencepiece trainers, converted to GGUF, checked clean; then one stage of
each source altered, and the check must name that stage with short
minimal strings."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest
from hypothesis import given, settings, strategies as st

from tests.check_sources import (corpus_lines, edit_spm, save_hf, to_gguf, train_byte_level, train_spm,
                                 train_wordpiece)
from tokenprism.app.cli import main
from tokenprism.core import Model, open_model
from tokenprism.core.check import (BUILTIN_TEXTS, CheckError, check_texts, load_reference, random_texts,
                                   read_texts, shrink)
from tokenprism.core.check.metadata import metadata_warnings
from tokenprism.core.check.reference import HFReference
from tokenprism.core.check.run import STAGES, _Sides
from tokenprism.core.formats.convert_hf import LLAMA3_PATTERN

spm = pytest.importorskip("sentencepiece")
pytest.importorskip("google.protobuf")
tk = pytest.importorskip("tokenizers")

TEXTS = list(BUILTIN_TEXTS) + random_texts(25, 3)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("check")


def run(model: Model, source: Path, add_special: bool = False, texts: Sequence[str] = TEXTS) -> Any:
    return check_texts(model, load_reference(source), list(texts), add_special=add_special)


def assert_stage(result: Any, stage: str, short: int = 8) -> None:
    assert result.divergences, "the altered source should diverge"
    stages = {d.stage for d in result.divergences}
    assert stages == {stage}, [(d.text, d.stage, d.why) for d in result.divergences]
    assert min(len(d.text) for d in result.divergences) <= short
    for d in result.divergences:
        assert d.gguf_ids != d.reference_ids


# ---- byte-level BPE, two pre-tokenizers ------------------------------------------

@pytest.fixture(scope="module")
def bpe(work: Path) -> tuple[Any, Path, Model]:
    from tokenizers import pre_tokenizers

    tok = train_byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False))
    src = save_hf(tok, work / "bpe")
    return tok, src, to_gguf(src, work / "bpe.gguf")


def test_byte_level_bpe_is_clean(bpe: tuple[Any, Path, Model]) -> None:
    tok, src, model = bpe
    for add in (False, True):
        result = run(model, src, add)
        assert result.texts_checked == len(TEXTS) and result.divergences == []
        assert result.shared == 1.0


def test_llama3_split_bpe_is_clean_and_a_split_rule_change_is_the_pre_tokenizer(work: Path) -> None:
    from tokenizers import Regex, pre_tokenizers

    def pre(pattern: str) -> Any:
        return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
                                        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])

    tok = train_byte_level(pre(LLAMA3_PATTERN))
    src = save_hf(tok, work / "llama3")
    model = to_gguf(src, work / "llama3.gguf")
    assert run(model, src).divergences == []
    # the split rule altered: a word no longer takes the space before it
    rule = r"[^\r\n\p{L}\p{N}]?\p{L}+"
    assert rule in LLAMA3_PATTERN
    tok.pre_tokenizer = pre(LLAMA3_PATTERN.replace(rule, r"\p{L}+"))
    result = run(model, save_hf(tok, work / "llama3-digits"))
    assert_stage(result, "pre_tokenizer", short=3)


def test_digits_source_over_a_default_pre_gguf_diverges_on_quotes(work: Path) -> None:
    """Digits + ByteLevel in the source, llama.cpp's 'default' split rule in
    the GGUF: they cut a quote after a space differently. Both the built-in
    texts and the random ones must contain such a case."""
    from tokenizers import pre_tokenizers

    tok = train_byte_level(pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                    pre_tokenizers.ByteLevel(add_prefix_space=False)]))
    src = save_hf(tok, work / "digits")
    model = to_gguf(src, work / "digits.gguf")
    assert model.vocab.pre == "default"
    assert any('"' in t for t in BUILTIN_TEXTS)
    assert_stage(run(model, src, texts=BUILTIN_TEXTS), "pre_tokenizer", short=2)
    randoms = random_texts(40, 0)
    assert sum(' "' in t for t in randoms) >= 2
    assert_stage(run(model, src, texts=randoms), "pre_tokenizer", short=2)


def test_added_token_is_reported(bpe: tuple[Any, Path, Model], work: Path) -> None:
    tok, _, model = bpe
    altered = tk.Tokenizer.from_str(tok.to_str())
    piece = next(p for p in ("ou", "th", "er", "in") if altered.token_to_id(p) is not None)
    altered.add_tokens([piece])  # an existing piece, now matched as an added token inside words
    texts = TEXTS + ["about the other things within"]
    assert_stage(run(model, save_hf(altered, work / "bpe-added"), texts=texts), "added_tokens")


def test_special_token_is_reported(bpe: tuple[Any, Path, Model], work: Path) -> None:
    tok, _, model = bpe
    altered = tk.Tokenizer.from_str(tok.to_str())
    altered.add_special_tokens(["<s>"])
    result = run(model, save_hf(altered, work / "bpe-special"))
    assert_stage(result, "special_tokens", short=3)
    assert any(d.text == "<s>" for d in result.divergences)


def test_bos_rule_is_reported(bpe: tuple[Any, Path, Model], work: Path) -> None:
    from tokenizers import processors

    tok, _, model = bpe
    altered = tk.Tokenizer.from_str(tok.to_str())
    altered.post_processor = processors.TemplateProcessing(single="<|endoftext|> $A",
                                                           special_tokens=[("<|endoftext|>", 0)])
    src = save_hf(altered, work / "bpe-bos")
    assert run(model, src).divergences == []  # without BOS/EOS nothing changed
    result = run(model, src, add_special=True)
    assert_stage(result, "bos_eos", short=0)  # even the empty text diverges


def test_merge_order_is_the_model(bpe: tuple[Any, Path, Model], work: Path) -> None:
    _, src, model = bpe
    doc = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    doc["model"]["merges"] = doc["model"]["merges"][::-1]  # same pieces, other merge ranks
    folder = work / "bpe-merges"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    assert_stage(run(model, folder), "model", short=3)


def test_prefix_space_added_by_the_pre_tokenizer_is_the_pre_tokenizer(bpe: tuple[Any, Path, Model],
                                                                      work: Path) -> None:
    """ByteLevel(add_prefix_space=True) in the source: the space it adds
    shows in its words (not in offsets into the text), so the stage is the
    pre-tokenizer's, not the model's."""
    from tokenizers import pre_tokenizers

    tok, _, model = bpe
    altered = tk.Tokenizer.from_str(tok.to_str())
    altered.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    result = run(model, save_hf(altered, work / "bpe-prefix"))
    assert_stage(result, "pre_tokenizer", short=1)
    assert any("source [' " in d.why for d in result.divergences)


def test_one_removed_byte_token_is_byte_fallback(bpe: tuple[Any, Path, Model], work: Path) -> None:
    """Exactly one of the 256 byte tokens (0xF0, the lead byte of every
    emoji, which no merge uses) taken out of the source's vocabulary."""
    tok, src, model = bpe
    doc = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    glyph = "\u00f0"  # byte 0xF0 in the byte-level alphabet
    merges = [m if isinstance(m, list) else m.split(" ") for m in doc["model"]["merges"]]
    assert not any(glyph in m for m in merges)
    doc["model"]["vocab"]["<no byte 0xF0>"] = doc["model"]["vocab"].pop(glyph)
    folder = work / "bpe-one-byte-gone"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    result = run(model, folder)
    assert_stage(result, "byte_fallback", short=1)
    assert "\U0001f642" in {d.text for d in result.divergences}  # 🙂 of the built-in texts


def test_folder_config_bos_rule_is_the_reference(bpe: tuple[Any, Path, Model], work: Path) -> None:
    """A folder's tokenizer_config.json add_bos_token decides, on both sides."""
    tok, _, _ = bpe
    with_bos = save_hf(tok, work / "bpe-cfg-bos", {"bos_token": "<|endoftext|>", "add_bos_token": True})
    model = to_gguf(with_bos, work / "bpe-cfg-bos.gguf")
    assert model.encode("Hi", add_special=True).ids[0] == 0
    assert run(model, with_bos, add_special=True).divergences == []
    without = save_hf(tok, work / "bpe-cfg-nobos", {"bos_token": "<|endoftext|>", "add_bos_token": False})
    assert_stage(run(model, without, add_special=True), "bos_eos", short=0)


# ---- WordPiece -----------------------------------------------------------------

def test_wordpiece_is_clean_and_a_normalizer_step_is_the_normalizer(work: Path) -> None:
    from tokenizers import normalizers

    tok = train_wordpiece()
    src = save_hf(tok, work / "bert")
    model = to_gguf(src, work / "bert.gguf")
    for add in (False, True):
        assert run(model, src, add).divergences == []
    tok.normalizer = normalizers.BertNormalizer(lowercase=False)  # one step taken out
    result = run(model, save_hf(tok, work / "bert-cased"))
    assert_stage(result, "normalizer", short=1)


# ---- SentencePiece: unigram with a normalizer, BPE with byte fallback -----------

def test_unigram_with_normalizer_is_clean_and_its_normalizer_change_is_found(work: Path) -> None:
    src = train_spm(work / "uni" / "tokenizer.model", model_type="unigram", vocab_size=400,
                    normalization_rule_name="nmt_nfkc")
    model = to_gguf(src, work / "uni.gguf")
    for add in (False, True):
        assert run(model, src, add).divergences == []

    def identity(proto: Any) -> None:
        proto.normalizer_spec.name = "identity"
        proto.normalizer_spec.precompiled_charsmap = b""

    result = run(model, edit_spm(src, work / "uni-id" / "tokenizer.model", identity))
    assert_stage(result, "normalizer", short=1)


def test_hf_unigram_space_prefix_differs_by_design(work: Path) -> None:
    """Metaspace prepends U+2581 only to text that does not start with a
    space; llama.cpp's UGM normalizer always prepends it (as sentencepiece
    does). The check finds exactly that, as the normalizer's doing."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(corpus_lines(), trainers.UnigramTrainer(
        vocab_size=400, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>", show_progress=False))
    src = save_hf(tok, work / "hf-unigram")
    model = to_gguf(src, work / "hf-unigram.gguf")
    plain = [t for t in TEXTS if not t[0].isspace() and not any(s in t for s in ("<pad>", "</s>", "<unk>"))]
    assert run(model, src, texts=plain).divergences == []
    result = run(model, src)
    assert_stage(result, "normalizer", short=2)
    assert all(d.text[0].isspace() or d.text.startswith(("</s>", "<pad>", "<unk>")) for d in result.divergences)


@pytest.fixture(scope="module")
def spm_bpe(work: Path) -> tuple[Path, Model]:
    src = train_spm(work / "sbpe" / "tokenizer.model", model_type="bpe", vocab_size=500, byte_fallback=True,
                    normalization_rule_name="identity", remove_extra_whitespaces=False)
    return src, to_gguf(src, work / "sbpe.gguf")


def test_spm_bpe_is_clean(spm_bpe: tuple[Path, Model]) -> None:
    src, model = spm_bpe
    for add in (False, True):
        assert run(model, src, add).divergences == []


def test_spm_without_byte_tokens_is_byte_fallback(spm_bpe: tuple[Path, Model], work: Path) -> None:
    from sentencepiece import sentencepiece_model_pb2 as pb

    src, model = spm_bpe

    def no_bytes(proto: Any) -> None:
        # sentencepiece loads no model with some of the 256 byte pieces
        # gone, so all of them lose their BYTE type (ids stay)
        proto.trainer_spec.byte_fallback = False
        for p in proto.pieces:
            if p.type == pb.ModelProto.SentencePiece.BYTE:
                p.type = pb.ModelProto.SentencePiece.NORMAL

    result = run(model, edit_spm(src, work / "sbpe-nobytes" / "tokenizer.model", no_bytes))
    assert_stage(result, "byte_fallback", short=1)


def test_spm_bos_rule_from_the_folder_config(spm_bpe: tuple[Path, Model], work: Path) -> None:
    src, model = spm_bpe
    folder = work / "sbpe-nobos"
    folder.mkdir()
    (folder / "tokenizer.model").write_bytes(src.read_bytes())
    (folder / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": False}))
    assert run(model, folder).divergences == []
    assert_stage(run(model, folder, add_special=True), "bos_eos", short=0)


# ---- shrinking -----------------------------------------------------------------

def one_minimal(text: str, diverges: Callable[[str], bool]) -> None:
    assert diverges(text)
    for i in range(len(text)):
        assert not diverges(text[:i] + text[i + 1:]), f"{text!r} loses {text[i]!r} and still diverges"


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet="abcxy", min_size=1, max_size=40))
def test_shrink_gives_a_one_minimal_diverging_string(text: str) -> None:
    def diverges(s: str) -> bool:  # not monotone: the 'c' count must be exact
        return ("a" in s and "b" in s) or s.count("c") == 3 or "xyx" in s

    if not diverges(text):
        return
    small = shrink(text, diverges)
    one_minimal(small, diverges)
    assert len(small) <= 3


@settings(max_examples=25, deadline=None)
@given(text=st.text(alphabet="0123456789 ab.", min_size=1, max_size=30))
def test_shrink_on_a_real_divergence(text: str, split_pair: tuple[Model, Any]) -> None:
    model, ref = split_pair
    sides = _Sides(model, ref, 5.0)

    def diverges(s: str) -> bool:
        return sides.diverges(s, False)

    if not diverges(text):
        return
    one_minimal(shrink(text, diverges), diverges)


@pytest.fixture(scope="module")
def split_pair(work: Path) -> tuple[Model, Any]:
    """A GGUF whose source was altered to cut spaces off words."""
    from tokenizers import Regex, pre_tokenizers

    tok = train_byte_level(pre_tokenizers.ByteLevel(add_prefix_space=False))
    model = to_gguf(save_hf(tok, work / "split"), work / "split.gguf")
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(r"\p{L}+|\p{N}+|\s+|[^\p{L}\p{N}\s]+"), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    return model, load_reference(save_hf(tok, work / "split-words"))


# ---- bad input, bounds ------------------------------------------------------------

def test_a_hanging_or_raising_reference_is_reported_and_the_run_goes_on(bpe: tuple[Any, Path, Model]) -> None:
    _, src, model = bpe
    ref = load_reference(src)
    assert isinstance(ref, HFReference)
    release = threading.Event()
    real = ref.encode

    def encode(text: str, add_special: bool) -> list[int]:
        if text == "hang":
            release.wait(10)
        if text == "boom":
            raise RuntimeError("library bug")
        return real(text, add_special)

    ref.encode = encode  # type: ignore[method-assign]
    try:
        result = check_texts(model, ref, ["hang", "Hello", "boom", "world"], timeout=0.3)
    finally:
        release.set()
    assert result.texts_checked == 4 and result.divergences == []
    assert [(f.text, "0.3 s" in f.error or "library bug" in f.error) for f in result.reference_failures] == [
        ("hang", True), ("boom", True)]


def test_unrelated_vocabulary_is_refused_early(bpe: tuple[Any, Path, Model], spm_bpe: tuple[Path, Model]) -> None:
    _, hf_src, _ = bpe
    _, spm_model = spm_bpe
    with pytest.raises(CheckError, match=r"not the same vocabulary: \d+% of pieces shared"):
        run(spm_model, hf_src)


def test_bad_sources(tmp_path: Path) -> None:
    with pytest.raises(CheckError, match="holds no tokenizer.json"):
        load_reference(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{not json")
    with pytest.raises(CheckError, match="tokenizers cannot read it"):
        load_reference(tmp_path / "tokenizer.json")
    (tmp_path / "x.model").write_bytes(b"\x00garbage")
    with pytest.raises(CheckError, match="sentencepiece cannot read it"):
        load_reference(tmp_path / "x.model")


def test_missing_library_says_what_to_install(monkeypatch: pytest.MonkeyPatch, bpe: tuple[Any, Path, Model]) -> None:
    from tokenprism.core.check import reference

    def no(name: str) -> Any:
        raise ImportError(name)

    monkeypatch.setattr(reference.importlib, "import_module", no)
    with pytest.raises(CheckError, match=r"pip install 'tokenprism\[check\]'"):
        load_reference(bpe[1])


def test_texts() -> None:
    assert random_texts(5, 1) == random_texts(5, 1) != random_texts(5, 2)
    assert all(0 < len(t) <= 40 for t in random_texts(50, 0))


# ---- the command line ---------------------------------------------------------------

def test_cli_json_and_exit_codes(bpe: tuple[Any, Path, Model], work: Path, split_pair: tuple[Model, Any],
                                 capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, src, model = bpe
    before = sorted(os.listdir(src))
    texts = tmp_path / "texts.txt"
    texts.write_text("price 12345\nplain words\n", encoding="utf-8")
    assert read_texts(str(texts)) == ["price 12345", "plain words"]
    assert main(["check", model.path, "--format", "json", "--cases", "3", "--against", str(src)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["texts_checked"] == len(BUILTIN_TEXTS) + 3 and doc["divergences"] == []
    assert doc["metadata_warnings"] == []
    assert sorted(os.listdir(src)) == before  # nothing written beside the source

    split_model, _ = split_pair
    code = main(["check", split_model.path, "--against", str(work / "split-words"), "--texts", str(texts),
                 "--cases", "0", "--seed", "1", "--format", "json"])
    assert code == 4
    doc = json.loads(capsys.readouterr().out)
    d = doc["divergences"][0]
    assert set(d) >= {"text", "original_text", "gguf_ids", "reference_ids", "stage"}
    assert d["stage"] in STAGES and d["stage"] == "pre_tokenizer" and len(d["text"]) <= 3
    assert "the source's model on the GGUF's words gives the GGUF's ids" in d["why"]
    assert main(["check", split_model.path, "--against", str(work / "split-words"), "--cases", "0"]) == 4
    out = capsys.readouterr().out
    assert "stage: pre_tokenizer" in out and "to do:" in out

    assert main(["check", model.path, "--against", str(tmp_path / "missing")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no such file or folder" in err[0]
    assert main(["check", model.path, "--against", str(src), "--cases", "-1"]) == 1


def test_texts_file_modes_and_a_non_utf8_file(bpe: tuple[Any, Path, Model], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from tokenprism.app.cli.check import TEXTS_MODES
    from tokenprism.core.check.texts import TEXTS_MODES as CORE_MODES

    assert TEXTS_MODES == CORE_MODES
    f = tmp_path / "texts.txt"
    f.write_bytes(b"\xef\xbb\xbfpath C:\\new\\table\r\n\n  indented\tline \n\\\\n")
    assert read_texts(str(f)) == ["path C:\\new\\table", "  indented\tline ", "\\\\n"]
    assert read_texts(str(f), "file") == ["path C:\\new\\table\r\n\n  indented\tline \n\\\\n"]
    assert read_texts(str(f), "escaped") == ["path C:\new\table", "  indented\tline ", "\\n"]

    _, src, model = bpe
    argv = ["check", model.path, "--against", str(src), "--cases", "0", "--format", "json", "--texts", str(f)]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["texts_checked"] == len(BUILTIN_TEXTS) + 3
    assert main(argv + ["--texts-mode", "file"]) == 0
    assert json.loads(capsys.readouterr().out)["texts_checked"] == len(BUILTIN_TEXTS) + 1

    bad = tmp_path / "latin1.txt"
    bad.write_bytes("ok\ncaf\u00e9\n".encode("latin-1"))
    assert main(argv[:-1] + [str(bad)]) == 1
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert captured.out == "" and len(err) == 1
    assert "not UTF-8 (byte 0xE9 at offset 6, line 2)" in err[0]


# ---- metadata warnings (tests/core/test_check_metadata.py has the rest) ------------

def test_metadata_warnings_of_a_converted_source(bpe: tuple[Any, Path, Model]) -> None:
    assert metadata_warnings(bpe[2]) == []


# ---- gaps: the unknown stage, the HF cache, a SentencePiece folder's added tokens --

def test_a_divergence_no_stage_explains_is_unknown(bpe: tuple[Any, Path, Model], work: Path) -> None:
    """Merges reversed (the model's doing), but the source's pre-tokenizer
    cannot be run on its own: no stage can be shown to differ."""
    _, src, model = bpe
    doc = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    doc["model"]["merges"] = doc["model"]["merges"][::-1]
    folder = work / "bpe-merges-nowords"
    folder.mkdir()
    (folder / "tokenizer.json").write_text(json.dumps(doc), encoding="utf-8")
    ref = load_reference(folder)
    assert isinstance(ref, HFReference)
    ref.words = lambda text: None  # type: ignore[method-assign]
    result = check_texts(model, ref, TEXTS)
    assert_stage(result, "unknown", short=3)
    assert all("the words could not be compared" in d.why for d in result.divergences)


def test_reference_failing_without_bos_is_unknown(bpe: tuple[Any, Path, Model]) -> None:
    _, src, model = bpe
    ref = load_reference(src)
    real = ref.encode

    def encode(text: str, add_special: bool) -> list[int]:
        if not add_special:
            raise RuntimeError("no plain encoding")
        return real(text, False) + [1]  # an id the GGUF never adds

    ref.encode = encode  # type: ignore[method-assign]
    result = check_texts(model, ref, ["Hello world"], add_special=True, timeout=2)
    assert [(d.text, d.stage) for d in result.divergences] == [("", "unknown")]
    assert "the reference failed on the text without BOS/EOS" in result.divergences[0].why


def hf_cache(root: Path, src: Path, hashes: Sequence[str], main_hash: str | None) -> Path:
    """``models--org--name`` as huggingface_hub lays it out: blobs, one
    folder of symbolic links per snapshot, refs/main."""
    repo = root / "models--org--tiny"
    (repo / "blobs").mkdir(parents=True)
    blob = repo / "blobs" / "0123abcd"
    blob.write_bytes((src / "tokenizer.json").read_bytes())
    for k, h in enumerate(hashes):
        snap = repo / "snapshots" / h
        snap.mkdir(parents=True)
        (snap / "tokenizer.json").symlink_to(os.path.relpath(blob, snap))
        os.utime(snap, (1_000_000 + k, 1_000_000 + k))
    if main_hash is not None:
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text(main_hash)
    return repo


def test_hf_cache_root_picks_a_snapshot_and_says_which(bpe: tuple[Any, Path, Model], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _, src, model = bpe
    main_ref = hf_cache(tmp_path / "a", src, ["aaa111", "bbb222"], "aaa111")
    ref = load_reference(main_ref)
    assert ref.path == str(main_ref / "snapshots" / "aaa111" / "tokenizer.json")
    assert ref.note == "Hugging Face cache: snapshot aaa111 (refs/main)"
    newest = load_reference(hf_cache(tmp_path / "b", src, ["aaa111", "bbb222"], None))
    assert newest.note == "Hugging Face cache: snapshot bbb222 (the newest of 2)"
    only = load_reference(hf_cache(tmp_path / "c", src, ["ccc333"], "gone999"))
    assert only.note == "Hugging Face cache: snapshot ccc333 (the only one)"
    assert main(["check", model.path, "--against", str(main_ref), "--cases", "0", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["source_note"] == ref.note and doc["divergences"] == []
    assert main(["check", model.path, "--against", str(main_ref), "--cases", "0"]) == 0
    assert "snapshot aaa111 (refs/main)" in capsys.readouterr().out
    (tmp_path / "d" / "models--x--y" / "snapshots").mkdir(parents=True)
    with pytest.raises(CheckError, match="cache folder without snapshots"):
        load_reference(tmp_path / "d" / "models--x--y")


def test_spm_folder_added_tokens_decoder_is_honoured(spm_bpe: tuple[Path, Model], work: Path) -> None:
    src, model = spm_bpe
    n = model.vocab.n_tokens if hasattr(model.vocab, "n_tokens") else len(model.vocab.pieces)
    folder = work / "sbpe-added"
    folder.mkdir()
    (folder / "tokenizer.model").write_bytes(src.read_bytes())
    config = {"added_tokens_decoder": {str(n): {"content": "<|im_start|>", "special": True},
                                       "bad": {"content": "x"}},
              "bos_token": "<|im_start|>", "add_bos_token": True}
    (folder / "tokenizer_config.json").write_text(json.dumps(config))
    ref = load_reference(folder)
    plain = load_reference(src)
    assert ref.parse_special and not plain.parse_special
    assert ref.encode("a<|im_start|>b", False) == plain.encode("a", False) + [n] + plain.encode("b", False)
    assert ref.encode("Hi", True) == [n] + plain.encode("Hi", False)  # the config's BOS, not <s>
    assert ref.pieces()[n] == "<|im_start|>"
    assert [(t.content, t.id, t.special) for t in ref.added_tokens()][-1] == ("<|im_start|>", n, True)
    # the GGUF (converted from the bare .model) has no such token: the check says so
    result = run(model, folder, texts=TEXTS + ["x <|im_start|> y"])
    assert "<|im_start|>" in {d.text for d in result.divergences}
    assert {d.stage for d in result.divergences if "<|im_start|>" in d.text} == {"special_tokens"}


def test_a_mistyped_option_exits_1_with_one_line(bpe: tuple[Any, Path, Model],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    _, src, model = bpe
    for argv in (["check", model.path, "--bogus"], ["check", model.path, "--cases", "many"],
                 ["check", model.path, "--format", "xml"], ["check"]):
        assert main(argv) == 1, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("tokenprism: error: "), err
    assert main(["tokenize", "--bogus"]) == 2  # other commands keep argparse's 2


# ---- the source's tokens as a lane -------------------------------------------------

def test_source_tokens_have_the_ids_and_spans_of_the_text(bpe: tuple[Any, Path, Model],
                                                          spm_bpe: tuple[Path, Model]) -> None:
    text = "Hé 漢x 😀 a"
    for src, model in ((bpe[1], bpe[2]), spm_bpe):
        ref = load_reference(src)
        for add in (False, True):
            st_ = ref.tokens(text, add)
            assert st_.ids == ref.encode(text, add) == model.encode(text, add_special=add).ids
            enc = model.encode(text, add_special=add)
            # the GGUF's spans and groups are llama.cpp's: the source's must agree
            assert (st_.starts, st_.ends) == (list(enc.starts), list(enc.ends)), src
            assert [g >= 0 for g in st_.groups] == [g >= 0 for g in enc.groups]
            # a group carries its character's whole UTF-8 span (llama.cpp's, byte by byte)
            bs, be = st_.byte_spans()
            for i, g in enumerate(st_.groups):
                same = [j for j, h in enumerate(enc.groups) if h == g] if g >= 0 else [i]
                assert (bs[i], be[i]) == (min(enc.byte_starts[j] for j in same), max(enc.byte_ends[j] for j in same))
