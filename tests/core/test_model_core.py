"""The algorithm-independent stages around a plugin: special-token
splitting, BOS/EOS, spans and groups, decoding — driven through the
character-level test plugin."""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest

from tests.ggufmaker import CHAR_TOKENS, char_types, write_vocab_gguf
from tokenprism.core import GGUFError, Model, UnsupportedTokenizerError, open_model
from tokenprism.core.model import clean_up_spaces
from tokenprism.core.plugins import tokenizer_specs


@pytest.fixture
def model(char_model_path: Path) -> Model:
    return open_model(char_model_path)


def tid(model: Model, piece: str) -> int:
    return model.vocab.token_to_id[piece]


def test_plugin_registered_at_run_time_is_found(model: Model) -> None:
    assert model.spec.name == "test-chars"
    assert "test-chars" in [s.name for s in tokenizer_specs()]
    assert model.kind == "CHARS"


def test_unsupported_tokenizer_names_type_and_installed_plugins(tmp_path: Path, char_plugin: object) -> None:
    path = write_vocab_gguf(tmp_path / "x.gguf", ["a", "b"], model="klingon")
    with pytest.raises(UnsupportedTokenizerError) as info:
        open_model(path)
    msg = str(info.value)
    assert "'klingon'" in msg and "test-chars" in msg
    assert isinstance(info.value, GGUFError)


def test_plain_text_spans(model: Model) -> None:
    enc = model.encode("ab c")
    assert enc.ids == [tid(model, c) for c in "ab c"]
    assert list(zip(enc.starts, enc.ends)) == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert enc.groups == (-1, -1, -1, -1)


def test_byte_fallback_group_spans_whole_character(model: Model) -> None:
    enc = model.encode("a€b")  # € is 3 UTF-8 bytes, not in the vocab
    assert enc.ids == [tid(model, "a"), tid(model, "<0xE2>"), tid(model, "<0x82>"), tid(model, "<0xAC>"), tid(model, "b")]
    assert list(zip(enc.starts, enc.ends)) == [(0, 1), (1, 2), (1, 2), (1, 2), (2, 3)]
    assert list(zip(enc.byte_starts, enc.byte_ends)) == [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5)]
    assert enc.groups == (-1, 1, 1, 1, -1)
    assert enc.group_range(2) == (1, 4)
    assert enc.token_at(1) == 1
    assert model.decode(enc.ids) == "a€b"


def test_add_special_adds_bos_with_empty_span(model: Model) -> None:
    enc = model.encode("ab", add_special=True)
    assert enc.ids[0] == 1 and enc.ids[1:] == [tid(model, "a"), tid(model, "b")]
    assert (enc.starts[0], enc.ends[0]) == (0, 0)


def test_control_tokens_split_only_with_parse_special(model: Model) -> None:
    text = "a<|special|>b"
    plain = model.encode(text).ids
    assert tid(model, "<|special|>") not in plain
    parsed = model.encode(text, parse_special=True)
    assert parsed.ids == [tid(model, "a"), tid(model, "<|special|>"), tid(model, "b")]
    assert (parsed.starts[1], parsed.ends[1]) == (1, 12)


def test_user_defined_tokens_always_split(model: Model) -> None:
    enc = model.encode("x<user>y")
    assert enc.ids == [tid(model, "x"), tid(model, "<user>"), tid(model, "y")]
    assert (enc.byte_starts[1], enc.byte_ends[1]) == (1, 7)


def test_lstrip_rstrip_swallow_ascii_whitespace(tmp_path: Path, char_plugin: object) -> None:
    # phi-3 models get RSTRIP on their special tokens (llama.cpp, by name)
    path = write_vocab_gguf(tmp_path / "phi.gguf", CHAR_TOKENS, types=char_types(), name="Phi-3 mini")
    m = open_model(path)
    enc = m.encode("a <|special|>  b", parse_special=True)
    assert enc.ids == [tid(m, "a"), tid(m, " "), tid(m, "<|special|>"), tid(m, "b")]


def test_longer_special_tokens_win(tmp_path: Path, char_plugin: object) -> None:
    toks = CHAR_TOKENS + ["<a>", "<a><b>"]
    types = char_types() + [int(gguf.TokenType.USER_DEFINED)] * 2
    m = open_model(write_vocab_gguf(tmp_path / "v.gguf", toks, types=types))
    assert m.encode("<a><b><a>").ids == [len(toks) - 1, len(toks) - 2]


def test_lone_surrogates_become_replacement_characters(model: Model) -> None:
    enc = model.encode("a\ud800b")
    assert len(enc.text) == 3 and enc.text[1] == "\ufffd"
    assert (enc.starts[-1], enc.ends[-1]) == (2, 3)


def test_missing_tokens_key_is_a_gguf_error(tmp_path: Path) -> None:
    w = gguf.GGUFWriter(str(tmp_path / "n.gguf"), "llama")
    w.add_tokenizer_model("llama")
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.close()
    with pytest.raises(GGUFError, match="tokenizer.ggml.tokens"):
        open_model(tmp_path / "n.gguf")


def test_too_few_scores_is_a_gguf_error(tmp_path: Path) -> None:
    path = write_vocab_gguf(tmp_path / "s.gguf", ["a", "b", "c"], scores=[0.0])
    with pytest.raises(GGUFError, match="1 scores for 3 tokens"):
        open_model(path)


@pytest.mark.parametrize("raw,clean", [
    (b"Hello , world !", b"Hello, world!"),
    (b"it ' s", b"it's"),
    (b"I 'm here", b"I'm here"),
    (b"we 're they 've", b"we're they've"),
    (b"don 't", b"don 't"),
    (b"a ' ' b", b"a'' b"),  # llama.cpp 0.3.36's own output for this input
    (b"", b""),
])
def test_clean_up_spaces_matches_llama_cpp(raw: bytes, clean: bytes) -> None:
    assert clean_up_spaces(raw) == clean


def test_an_opened_vocabulary_is_out_of_the_cyclic_collectors_way() -> None:
    """open_model freezes what it built (gc.freeze), so full collections no
    longer walk the vocabulary's objects: a pause of whichever thread
    triggers them, the GUI thread's too. Frozen objects are in no
    generation the collector scans (gc.get_objects lists those)."""
    import gc

    from tokenprism.core.library.resources import demo_models

    model = open_model(demo_models()["bpe"])
    scanned = {id(o) for o in gc.get_objects()}
    for part in (model.vocab, model.tokenizer, model.gguf):
        assert gc.is_tracked(part) and id(part) not in scanned, f"{type(part).__name__} is not frozen"
    assert model.encode("still usable").ids


@pytest.mark.parametrize("enabled", [True, False])
def test_opening_and_encoding_pause_the_cyclic_collector(monkeypatch: pytest.MonkeyPatch, enabled: bool) -> None:
    # the collector is off while a vocabulary is built and while a text is
    # tokenized, and afterwards as it was before (off stays off)
    import gc

    from tokenprism.core import model as model_mod
    from tokenprism.core.library.resources import demo_models

    seen: list[bool] = []
    real_vocab = model_mod.vocab_from_gguf
    real_spans = model_mod.encode_bytes  # (the model stage; the char spans come on first read)

    def vocab_spy(*a: object) -> object:
        seen.append(gc.isenabled())
        return real_vocab(*a)  # type: ignore[arg-type]

    def spans_spy(*a: object) -> object:
        seen.append(gc.isenabled())
        return real_spans(*a)  # type: ignore[arg-type]

    monkeypatch.setattr(model_mod, "vocab_from_gguf", vocab_spy)
    monkeypatch.setattr(model_mod, "encode_bytes", spans_spy)
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        m = open_model(demo_models()["spm"])
        assert gc.isenabled() == enabled
        m.encode("héllo")
        assert gc.isenabled() == enabled
    finally:
        gc.enable() if was else gc.disable()
    assert seen == [False, False]
