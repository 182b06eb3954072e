"""The converter: SentencePiece ``.model`` / ``tokenizer.json`` → GGUF.

Round trips train tiny tokenizers with the reference libraries, convert
them, and require TokenPrism's ids (through the installed plugins) to equal
the library's ids. A plugin that is not installed yet skips its round trip
with the plugin host's reason instead of failing.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import struct
from pathlib import Path
from typing import Any, Sequence

import pytest

from tokenprism.core import Model, open_model, read_gguf
from tokenprism.core.formats.convert import ConvertError, ConvertReport, convert, load_vocab
from tokenprism.core.formats.convert_hf import GPT2_PATTERN, LLAMA3_PATTERN, QWEN2_PATTERN
from tokenprism.core.errors import TokenPrismError, UnsupportedTokenizerError
from tokenprism.core.formats.spm_proto import (
    MODEL_TYPE_BPE, PIECE_BYTE, PIECE_CONTROL, PIECE_NORMAL, PIECE_UNKNOWN, ProtoError, parse_model_proto,
    read_model_proto,
)

spm = pytest.importorskip("sentencepiece")
pytest.importorskip("google.protobuf")  # the .model reader's decoder
tk = pytest.importorskip("tokenizers")

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

CORPUS = Path(__file__).resolve().parents[2] / "resources" / "demo_corpus.txt"

SAMPLES: tuple[str, ...] = (
    "Hello world",
    "Tokenization is fun! 🙂 日本語 naïve café Zażółć",
    "Der schnelle braune Fuchs springt. Ελληνικά и русский текст.",
    "don't you're I'll 12345 3.14 $9.99 (a+b)*c",
    "tabs\tand\nnew\nlines",
    "  two  spaces  and trailing ",
    " leading space",
    "",
    " ",
    "ÅÆØ ﬁ ＡＢＣ ① Ⅳ",
    "<s> </s> <unk> [CLS] [SEP] <|endoftext|>",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "👍🏽🇩🇪 e\u0301 \u200d x",
)


def corpus_lines() -> list[str]:
    return [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def open_or_skip(path: Path) -> Model:
    try:
        return open_model(path)
    except UnsupportedTokenizerError as e:
        pytest.skip(f"tokenizer plugin not available yet: {e}")


def train_spm(path: Path, lines: Sequence[str], **options: Any) -> Path:
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=buf, num_threads=1,
                                   character_coverage=1.0, minloglevel=2, **options)
    path.write_bytes(buf.getvalue())
    return path


def assert_same_ids(model: Model, reference: Sequence[Sequence[int]], texts: Sequence[str],
                    parse_special: bool = False, add_special: bool = False) -> None:
    for text, ref in zip(texts, reference):
        ours = list(model.encode(text, add_special=add_special, parse_special=parse_special).ids)
        assert ours == list(ref), f"{text!r}: ours {ours} != reference {list(ref)}"


def meta(path: Path) -> dict[str, Any]:
    return {k: v.value for k, v in read_gguf(path).metadata.items()}


# ---- the protobuf reader ----------------------------------------------------

@pytest.fixture(scope="module")
def spm_bpe_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_spm(tmp_path_factory.mktemp("spm") / "bpe.model", corpus_lines(), model_type="bpe",
                     vocab_size=600, byte_fallback=True, normalization_rule_name="identity",
                     remove_extra_whitespaces=False)


def test_proto_reader_matches_sentencepiece(spm_bpe_model: Path) -> None:
    proto = read_model_proto(spm_bpe_model)
    sp = spm.SentencePieceProcessor(model_file=str(spm_bpe_model))
    assert len(proto.tokens) == len(proto.scores) == len(proto.types) == sp.get_piece_size() == 600
    for i, (piece, score, ptype) in enumerate(zip(proto.tokens, proto.scores, proto.types)):
        assert piece == sp.id_to_piece(i)
        assert score == sp.get_score(i)
        assert (ptype == PIECE_BYTE) == sp.is_byte(i)
        assert (ptype == PIECE_CONTROL) == sp.is_control(i)
        assert (ptype == PIECE_UNKNOWN) == sp.is_unknown(i)
    ts, ns = proto.trainer_spec, proto.normalizer_spec
    assert ts.model_type == MODEL_TYPE_BPE and ts.byte_fallback and ts.vocab_size == 600
    assert (ts.unk_id, ts.bos_id, ts.eos_id, ts.pad_id) == (sp.unk_id(), sp.bos_id(), sp.eos_id(), sp.pad_id())
    assert ns.name == "identity" and ns.add_dummy_prefix and not ns.remove_extra_whitespaces


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def _field(number: int, wire: int, payload: bytes) -> bytes:
    key = _varint(number << 3 | wire)
    if wire == 2:
        return key + _varint(len(payload)) + payload
    return key + payload


def test_proto_wire_details() -> None:
    piece = _field(1, 2, "▁a".encode()) + _field(2, 5, struct.pack("<f", -1.5)) + _field(3, 0, _varint(4))
    trainer = (_field(3, 0, _varint(2)) + _field(43, 0, _varint(-1)) + _field(40, 0, _varint(0))
               + _field(41, 0, _varint(-1)) + _field(35, 0, _varint(1))
               + _field(99, 1, bytes(8)) + _field(98, 5, bytes(4)) + _field(97, 2, b"skip me"))
    data = _field(1, 2, piece) + _field(2, 2, trainer) + _field(3, 2, _field(4, 0, _varint(0)))
    proto = parse_model_proto(data)
    assert (proto.tokens, proto.scores, proto.types) == (("▁a",), (-1.5,), (4,))
    ts = proto.trainer_spec
    assert (ts.model_type, ts.pad_id, ts.bos_id, ts.eos_id, ts.byte_fallback) == (2, -1, -1, 2, True)
    ns = proto.normalizer_spec
    assert not ns.remove_extra_whitespaces and ns.add_dummy_prefix and ns.escape_whitespaces
    # no trainer/normalizer spec: the proto defaults
    bare = parse_model_proto(_field(1, 2, _field(1, 2, b"x")))
    assert not bare.has_trainer_spec and bare.trainer_spec.model_type == 1 and bare.types == (1,)
    # an empty piece string that is there is a piece (sentencepiece decides
    # whether it is usable); a missing one is not
    assert parse_model_proto(_field(1, 2, _field(1, 2, b""))).tokens == ("",)


def test_proto_reads_out_of_range_values_like_sentencepiece() -> None:
    # proto2 enums are closed and int32 keeps the low 32 bits: a piece type
    # 9 reads as NORMAL, an unk_id of 2**40 + 1 as 1, as SentencePiece reads them
    data = (_field(1, 2, _field(1, 2, b"a") + _field(3, 0, _varint(9)))
            + _field(2, 2, _field(40, 0, _varint((1 << 40) + 1))))
    proto = parse_model_proto(data)
    assert proto.types == (PIECE_NORMAL,) and proto.trainer_spec.unk_id == 1
    # a model type the enum lacks is kept as its number, not read as UNIGRAM
    unknown_type = _field(1, 2, _field(1, 2, b"a")) + _field(2, 2, _field(3, 0, _varint(7)))
    assert parse_model_proto(unknown_type).trainer_spec.model_type == 7
    # ... unless a known value is written too: that one is what SentencePiece sees
    both = _field(1, 2, _field(1, 2, b"a")) + _field(2, 2, _field(3, 0, _varint(2)) + _field(3, 0, _varint(7)))
    assert parse_model_proto(both).trainer_spec.model_type == MODEL_TYPE_BPE


@pytest.mark.parametrize("data, reason", [
    (b"", "no vocabulary pieces"),
    (b"just some text, not a model\n", "protobuf decoder refuses it"),
    (_field(1, 2, b"\x0a\x05ab"), "protobuf decoder refuses it"),
    (b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "protobuf decoder refuses it"),
    (b"\x0a", "protobuf decoder refuses it"),
    (b"\x0b", "protobuf decoder refuses it"),
    (_field(1, 2, _field(2, 5, b"ab")), "protobuf decoder refuses it"),
    # an unknown field nested 100 000 groups deep: the decoder's depth limit
    (_field(1, 2, _field(1, 2, b"a")) + _varint(100 << 3 | 3) * 100_000, "protobuf decoder refuses it"),
    (_field(1, 2, _field(1, 2, b"\xff\xfe")), "piece #0 is not valid UTF-8"),
    (_field(1, 2, _field(1, 2, b"a")) + _field(3, 2, _field(1, 2, b"\xc3")),
     "normalizer_spec.name is not valid UTF-8"),
    (_field(1, 2, _field(1, 5, b"abcd")), "entry #0 has no piece string"),  # wrong wire type: an unknown field
    (_field(1, 2, _field(2, 5, bytes(4))), "entry #0 has no piece string"),
])
def test_proto_rejects_malformed(data: bytes, reason: str) -> None:
    with pytest.raises(ProtoError) as exc:
        parse_model_proto(data)
    assert reason in str(exc.value)
    assert exc.value.offset is None  # the decoder does not say where


def test_proto_reader_survives_mutations(spm_bpe_model: Path) -> None:
    # bounded fuzzing: a damaged model either still decodes or raises
    # ProtoError, never DecodeError/UnicodeDecodeError/a bytes token
    data = spm_bpe_model.read_bytes()
    rng = random.Random(1234)
    decoded = 0
    for _ in range(200):
        d = bytearray(data)
        if rng.random() < 0.3:
            d = d[:rng.randrange(len(d))]
        else:
            for _ in range(rng.randrange(1, 8)):
                d[rng.randrange(len(d))] = rng.randrange(256)
        try:
            proto = parse_model_proto(bytes(d))
        except ProtoError as e:
            assert e.offset is None
        else:
            decoded += 1
            assert all(isinstance(t, str) for t in proto.tokens) and isinstance(proto.normalizer_spec.name, str)
            assert len(proto.tokens) == len(proto.scores) == len(proto.types) > 0
    assert 0 < decoded < 200  # both outcomes were exercised


def test_convert_refuses_a_file_over_the_cap_before_decoding(spm_bpe_model: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from tokenprism.core.formats import spm_proto

    def never(data: bytes) -> None:
        raise AssertionError("decoded a file over the size cap")

    monkeypatch.setattr(spm_proto, "MAX_MODEL_BYTES", 1000)
    monkeypatch.setattr(spm_proto, "parse_model_proto", never)
    with pytest.raises(ConvertError) as exc:
        convert(spm_bpe_model, tmp_path / "big.gguf")
    assert "larger than" in str(exc.value) and "not a SentencePiece model" in str(exc.value)
    assert exc.value.offset == 1000 and not (tmp_path / "big.gguf").exists()


def test_convert_refuses_an_unknown_model_type(tmp_path: Path) -> None:
    src = tmp_path / "future.model"
    src.write_bytes(_field(1, 2, _field(1, 2, b"a")) + _field(2, 2, _field(3, 0, _varint(7))))
    with pytest.raises(ConvertError, match="model type 7 has no llama.cpp tokenizer"):
        convert(src, tmp_path / "future.gguf")


@pytest.mark.parametrize("failure, hint", [
    (ImportError("No module named 'google'"), "pip install 'tokenprism[convert]'"),
    # installed, but protobuf is older than the code sentencepiece generated
    # (VersionError), or much older (protobuf 4's multi-line TypeError)
    (TypeError("Descriptors cannot be created directly.\nIf this call came from a _pb2.py file, ..."),
     "pip install -U sentencepiece protobuf"),
])
def test_cli_convert_without_protobuf_says_what_to_install(
        failure: Exception, hint: str, spm_bpe_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from tokenprism.app.cli import main
    from tokenprism.core.formats import spm_proto

    real_import = spm_proto.importlib.import_module

    def import_module(name: str, package: str | None = None) -> Any:
        if name == "sentencepiece.sentencepiece_model_pb2":
            raise failure
        return real_import(name, package)

    monkeypatch.setattr(spm_proto, "_schema", None)  # forget the schema loaded by earlier tests
    monkeypatch.setattr(spm_proto.importlib, "import_module", import_module)
    out = tmp_path / "x.gguf"
    assert main(["convert", str(spm_bpe_model), "-o", str(out)]) != 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1, captured.err
    assert captured.err.startswith(f"tokenprism: error: {spm_bpe_model}: ")
    assert "needs the sentencepiece and protobuf packages" in captured.err
    assert captured.err.rstrip().endswith(hint), captured.err
    assert not out.exists()
    # a tokenizer.json needs neither package
    hf = tmp_path / "tokenizer.json"
    hf.write_text(json.dumps({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "a": 1}, "unk_token": "[UNK]"}}))
    assert main(["convert", str(hf), "-o", str(out), "-q"]) == 0 and out.is_file()


def test_convert_rejects_truncated_and_garbage(spm_bpe_model: Path, tmp_path: Path) -> None:
    data = spm_bpe_model.read_bytes()
    rng = random.Random(7)
    cases = {
        "truncated.model": data[: len(data) // 2],
        "cut-in-header.model": data[:3],
        "garbage.model": bytes(rng.randrange(256) for _ in range(4096)),
        "zeros.model": bytes(1000),
    }
    for name, content in cases.items():
        src = tmp_path / name
        src.write_bytes(content)
        out = tmp_path / (name + ".gguf")
        with pytest.raises(ConvertError) as exc:
            convert(src, out)
        msg = str(exc.value)
        assert msg.startswith(str(src)) and "not a SentencePiece model" in msg, msg
        assert isinstance(exc.value, TokenPrismError)
        assert not out.exists() and not list(tmp_path.glob("*.tmp*"))


# ---- SentencePiece round trips ---------------------------------------------

def test_spm_bpe_byte_fallback_round_trip(spm_bpe_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "bpe.gguf"
    report = convert(spm_bpe_model, out)
    assert isinstance(report, ConvertReport) and report.model == "llama" and report.kind == "SPM"
    assert report.warnings == () and report.n_tokens == 600 and report.size == out.stat().st_size
    m = meta(out)
    assert m["general.architecture"] == "llama" and m["tokenizer.ggml.pre"] == "default"
    assert m["tokenizer.ggml.add_bos_token"] is True and m["tokenizer.ggml.add_eos_token"] is False
    assert m["tokenizer.ggml.add_space_prefix"] is True
    assert "tokenizer.ggml.precompiled_charsmap" not in m
    model = open_or_skip(out)
    assert model.kind == "SPM"
    sp = spm.SentencePieceProcessor(model_file=str(spm_bpe_model))
    texts = SAMPLES + tuple(corpus_lines()[:40])
    assert_same_ids(model, [sp.encode(t) for t in texts], texts)
    # BOS as sentencepiece's add_bos does it
    assert list(model.encode("Hello", add_special=True).ids) == sp.encode("Hello", add_bos=True)


def test_spm_bpe_without_byte_fallback(tmp_path: Path) -> None:
    src = train_spm(tmp_path / "nobf.model", corpus_lines(), model_type="bpe", vocab_size=400,
                    normalization_rule_name="identity", remove_extra_whitespaces=False)
    report = convert(src, tmp_path / "nobf.gguf")
    assert any("no byte pieces" in w for w in report.warnings)
    model = open_or_skip(tmp_path / "nobf.gguf")
    sp = spm.SentencePieceProcessor(model_file=str(src))
    known = set(CORPUS.read_text(encoding="utf-8"))
    # llama.cpp aborts on a character outside such a vocabulary, so there is
    # no llama.cpp behaviour to compare with for those texts
    texts = [t for t in SAMPLES + tuple(corpus_lines()[:40]) if set(t) <= known]
    assert len(texts) > 30
    assert_same_ids(model, [sp.encode(t) for t in texts], texts)


@pytest.mark.parametrize("rule", ["nmt_nfkc", "identity"])
def test_spm_unigram_round_trip(rule: str, tmp_path: Path) -> None:
    src = train_spm(tmp_path / "uni.model", corpus_lines(), model_type="unigram", vocab_size=500,
                    normalization_rule_name=rule)
    out = tmp_path / "uni.gguf"
    report = convert(src, out)
    assert report.model == "t5" and report.kind == "UGM" and report.warnings == ()
    m = meta(out)
    assert m["general.architecture"] == "t5"
    assert m["tokenizer.ggml.add_eos_token"] is True and m["tokenizer.ggml.add_bos_token"] is False
    assert m["tokenizer.ggml.remove_extra_whitespaces"] is True
    charsmap = read_model_proto(src).normalizer_spec.precompiled_charsmap
    assert m.get("tokenizer.ggml.precompiled_charsmap", b"") == charsmap
    assert bool(charsmap) == (rule == "nmt_nfkc")
    model = open_or_skip(out)
    assert model.kind == "UGM"
    sp = spm.SentencePieceProcessor(model_file=str(src))
    texts = SAMPLES + tuple(corpus_lines()[:40])
    assert_same_ids(model, [sp.encode(t) for t in texts], texts)


def test_spm_special_ids_and_flags(tmp_path: Path) -> None:
    src = train_spm(tmp_path / "ids.model", corpus_lines(), model_type="unigram", vocab_size=300,
                    pad_id=0, eos_id=1, unk_id=2, bos_id=-1, add_dummy_prefix=False)
    report = convert(src, tmp_path / "ids.gguf", name="custom name")
    assert report.special_ids == {"pad": 0, "eos": 1, "unk": 2}
    m = meta(tmp_path / "ids.gguf")
    assert m["general.name"] == "custom name"
    assert m["tokenizer.ggml.padding_token_id"] == 0 and m["tokenizer.ggml.eos_token_id"] == 1
    assert m["tokenizer.ggml.unknown_token_id"] == 2 and "tokenizer.ggml.bos_token_id" not in m
    assert m["tokenizer.ggml.add_space_prefix"] is False
    assert list(m["tokenizer.ggml.token_type"][:3]) == [3, 3, 2]


def test_spm_tokenizer_config_overrides_flags(spm_bpe_model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "tokenizer.model").write_bytes(spm_bpe_model.read_bytes())
    (folder / "tokenizer_config.json").write_text(json.dumps({"add_bos_token": False, "add_eos_token": True}))
    report = convert(folder, tmp_path / "cfg.gguf")  # a folder finds tokenizer.model
    assert report.flags["add_bos"] is False and report.flags["add_eos"] is True


def test_spm_warnings_for_what_llama_cpp_ignores(tmp_path: Path) -> None:
    src = train_spm(tmp_path / "nfkc-bpe.model", corpus_lines(), model_type="bpe", vocab_size=700,
                    byte_fallback=True)  # nmt_nfkc and remove_extra_whitespaces by default
    warnings = convert(src, tmp_path / "w.gguf").warnings
    assert any("nmt_nfkc" in w for w in warnings)
    assert any("remove_extra_whitespaces" in w for w in warnings)


def test_spm_word_model_is_unsupported(tmp_path: Path) -> None:
    src = train_spm(tmp_path / "word.model", corpus_lines(), model_type="word", vocab_size=200)
    with pytest.raises(ConvertError, match="model type WORD"):
        convert(src, tmp_path / "word.gguf")


# ---- tokenizer.json round trips ---------------------------------------------

def train_hf_bpe(pre_tokenizer: Any) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus_lines(), trainer)
    return tok


def save_hf(tok: Any, folder: Path, config: dict[str, object] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder / "tokenizer.json"


def hf_ids(tok: Any, texts: Sequence[str], add_special: bool = False) -> list[list[int]]:
    return [tok.encode(t, add_special_tokens=add_special).ids for t in texts]


def test_hf_byte_level_bpe_round_trip(tmp_path: Path) -> None:
    from tokenizers import pre_tokenizers

    tok = train_hf_bpe(pre_tokenizers.ByteLevel(add_prefix_space=False))
    src = save_hf(tok, tmp_path / "gpt2like", {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"})
    out = tmp_path / "bpe.gguf"
    report = convert(src.parent, out)  # a folder finds its tokenizer.json
    assert (report.model, report.pre, report.kind, report.warnings) == ("gpt2", "gpt-2", "BPE", ())
    doc = json.loads(src.read_text(encoding="utf-8"))
    assert report.n_merges == len(doc["model"]["merges"]) > 0
    m = meta(out)
    assert m["general.name"] == "gpt2like" and m["general.architecture"] == "gpt2"
    assert m["tokenizer.ggml.bos_token_id"] == m["tokenizer.ggml.eos_token_id"] == 0
    assert m["tokenizer.ggml.token_type"][0] == 3  # the special token is CONTROL
    merges = m["tokenizer.ggml.merges"]
    assert all(len(x.split(" ")) == 2 for x in merges)
    model = open_or_skip(out)
    assert model.kind == "BPE"
    texts = SAMPLES + tuple(corpus_lines()[:40])
    # tokenizers always splits out added tokens, llama.cpp only with parse_special
    assert_same_ids(model, hf_ids(tok, texts), texts, parse_special=True)


@pytest.mark.parametrize("pattern, expected", [
    (GPT2_PATTERN, "gpt-2"), (LLAMA3_PATTERN, "llama-bpe"), (QWEN2_PATTERN, "qwen2"),
    (r"\p{L}+|\p{N}+|[^\p{L}\p{N}]+", "default"),
])
def test_hf_bpe_pre_tokenizer_is_identified(pattern: str, expected: str, tmp_path: Path) -> None:
    from tokenizers import Regex, pre_tokenizers

    pre = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok = train_hf_bpe(pre)
    src = save_hf(tok, tmp_path / "bpe")
    report = convert(src, tmp_path / "bpe.gguf")
    assert report.pre == expected
    assert bool(report.warnings) == (expected == "default")
    if expected != "default":
        model = open_or_skip(tmp_path / "bpe.gguf")
        texts = SAMPLES + tuple(corpus_lines()[:20])
        assert_same_ids(model, hf_ids(tok, texts), texts, parse_special=True)


def train_hf_wordpiece(lowercase: bool) -> Any:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=700, show_progress=False,
                                        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(corpus_lines(), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))])
    return tok


@pytest.mark.parametrize("lowercase", [True, False])
def test_hf_wordpiece_round_trip(lowercase: bool, tmp_path: Path) -> None:
    tok = train_hf_wordpiece(lowercase)
    src = save_hf(tok, tmp_path / "bert")
    out = tmp_path / "wpm.gguf"
    report = convert(src, out)
    assert (report.model, report.kind, report.warnings) == ("bert", "WPM", ())
    assert report.special_ids == {"unk": 1, "sep": 3, "pad": 0, "mask": 4, "bos": 2}
    assert report.flags == {"normalizer_lowercase": lowercase, "add_bos": True, "add_sep": True,
                            "add_eos": False}
    m = meta(out)
    tokens = m["tokenizer.ggml.tokens"]
    specials = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
    # phantom-space layout: word starts get "▁", "##" continuations lose it,
    # special (CONTROL) tokens stay as they are
    for text, tid in tok.get_vocab().items():
        want = text if text in specials else text[2:] if text.startswith("##") else "\u2581" + text
        assert tokens[tid] == want
    model = open_or_skip(out)
    assert model.kind == "WPM"
    texts = SAMPLES + tuple(corpus_lines()[:40])
    assert_same_ids(model, hf_ids(tok, texts), texts, parse_special=True)
    assert_same_ids(model, hf_ids(tok, texts, add_special=True), texts, parse_special=True,
                    add_special=True)


def test_hf_unigram_round_trip(tmp_path: Path) -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=500, special_tokens=["<pad>", "</s>", "<unk>"],
                                      unk_token="<unk>", show_progress=False)
    tok.train_from_iterator(corpus_lines(), trainer)
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    src = save_hf(tok, tmp_path / "t5like")
    out = tmp_path / "ugm.gguf"
    report = convert(src, out)
    assert (report.model, report.kind, report.warnings) == ("t5", "UGM", ())
    assert report.special_ids == {"eos": 1, "pad": 0, "unk": 2}
    assert report.flags == {"add_space_prefix": True, "remove_extra_whitespaces": False,
                            "add_bos": False, "add_eos": True}
    m = meta(out)
    assert list(m["tokenizer.ggml.token_type"][:3]) == [3, 3, 2]
    model = open_or_skip(out)
    # Metaspace prepends "▁" only when a fragment does not already start
    # with a space; llama.cpp (like sentencepiece) always prepends it. Texts
    # that start with whitespace, or have it after a special token, are
    # therefore tokenized differently by design.
    texts = [t for t in SAMPLES + tuple(corpus_lines()[:40])
             if t and not t[0].isspace() and not any(s in t for s in ("<pad>", "</s>", "<unk>"))]
    assert len(texts) > 40
    assert_same_ids(model, hf_ids(tok, texts), texts, parse_special=True)
    assert_same_ids(model, hf_ids(tok, texts, add_special=True), texts, parse_special=True,
                    add_special=True)


def test_hf_added_tokens_and_gaps(tmp_path: Path) -> None:
    doc = {
        "added_tokens": [
            {"id": 5, "content": "<|im_start|>", "special": False},
            {"id": 6, "content": "\u2581user", "special": False},
        ],
        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
        "post_processor": {"type": "TemplateProcessing", "single": [
            {"SpecialToken": {"id": "a", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}]},
        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 3}, "merges": [["a", "b"]]},
    }
    src = tmp_path / "tok.json"
    src.write_text(json.dumps(doc))
    data = load_vocab(src)
    assert data.tokens == ("a", "b", "[PAD2]", "ab", "[PAD4]", "<|im_start|>", " user")
    assert data.types == (1, 1, 5, 1, 5, 3, 4)  # looks special → CONTROL; user-defined ▁ → space
    assert data.merges == ("a b",)
    assert data.special_ids == {"bos": 0} and data.flags == {"add_bos": True, "add_eos": False}
    assert data.name == "tok"


def test_hf_merges_with_spaces_are_escaped(tmp_path: Path) -> None:
    doc = {"model": {"type": "BPE", "vocab": {"a": 0, " ": 1, "a ": 2}, "merges": [["a", " "]]},
           "pre_tokenizer": {"type": "ByteLevel"}}
    src = tmp_path / "tokenizer.json"
    src.write_text(json.dumps(doc))
    assert load_vocab(src).merges == ("a \u0120",)


@pytest.mark.parametrize("content, message", [
    ("{not json", "invalid JSON"),
    ("[]", "expected an object"),
    ('{"model": {"type": "WordLevel", "vocab": {}}}', "'WordLevel' cannot be converted"),
    ('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []}, '
     '"pre_tokenizer": {"type": "Metaspace"}}', "convert its tokenizer.model instead"),
    ('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}, "merges": []}, '
     '"pre_tokenizer": {"type": "ByteLevel"}}', "share id 0"),
    ('{"model": {"type": "BPE", "vocab": {"a": -1}}, "pre_tokenizer": {"type": "ByteLevel"}}',
     "out of range"),
    ('{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["ab"]}, '
     '"pre_tokenizer": {"type": "ByteLevel"}}', "malformed merge"),
    ('{"model": {"type": "Unigram", "vocab": [["a"]]}}', "expected [piece, score]"),
    ('{"model": {"type": "WordPiece", "vocab": {}}}', "vocabulary is empty"),
    ('{"model": {"type": "Unigram", "vocab": [["a", 0]], "unk_id": 3}}', "outside the vocabulary"),
    ('{"model": {"type": "Unigram", "vocab": [["\\ud800", 0]]}}', "token #0 '\\ud800' is not valid Unicode"),
])
def test_hf_malformed_input(content: str, message: str, tmp_path: Path) -> None:
    src = tmp_path / "tokenizer.json"
    src.write_text(content)
    with pytest.raises(ConvertError) as exc:
        convert(src, tmp_path / "out.gguf")
    assert message in str(exc.value) and str(src) in str(exc.value)
    assert not (tmp_path / "out.gguf").exists()


# ---- the entry points ---------------------------------------------------------

def test_convert_input_errors(spm_bpe_model: Path, tmp_path: Path) -> None:
    with pytest.raises(ConvertError, match="no such file"):
        convert(tmp_path / "missing.model", tmp_path / "x.gguf")
    with pytest.raises(ConvertError, match="no tokenizer.json"):
        convert(tmp_path, tmp_path / "x.gguf")
    out = tmp_path / "ok.gguf"
    convert(spm_bpe_model, out)
    with pytest.raises(ConvertError, match="already a GGUF file"):
        convert(out, tmp_path / "again.gguf")
    with pytest.raises(ConvertError, match="cannot write"):
        convert(spm_bpe_model, tmp_path / "no-such-dir" / "x.gguf")


def test_convert_is_deterministic(spm_bpe_model: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    convert(spm_bpe_model, a, name="same")
    convert(spm_bpe_model, b, name="same")
    assert a.read_bytes() == b.read_bytes()


def test_cli_convert_subcommand(spm_bpe_model: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    from tokenprism.app.cli.convert import add_subcommand

    parser = argparse.ArgumentParser(prog="tokenprism")
    add_subcommand(parser.add_subparsers(dest="command"))
    out = tmp_path / "cli.gguf"
    args = parser.parse_args(["convert", str(spm_bpe_model), "-o", str(out)])
    assert args.func(args) == 0
    line = capsys.readouterr().out
    assert line.count("\n") == 1 and str(out) in line and "600 tokens" in line and "SPM" in line
    assert out.is_file()
    with pytest.raises(SystemExit):
        parser.parse_args(["convert", str(spm_bpe_model)])  # -o is required
