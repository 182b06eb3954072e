"""``tokenprism check`` without a source: the metadata warnings, on
llama.cpp's reference vocabularies (no false warning), on the bundled demo
vocabularies with their metadata patched, and on SentencePiece-style
vocabularies written here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tokenprism.core import Model, open_model
from tokenprism.core.check.metadata import metadata_warnings


# ---- metadata warnings -----------------------------------------------------------

# the reference vocabularies' warnings, each true of the file: two were
# converted before tokenizer.ggml.pre existed; aquila's BOS/EOS/UNK is typed
# NORMAL (and, being NORMAL, is formed by no merge); command-r writes 1403
# pieces as raw characters rather than in the byte-level alphabet, so
# llama.cpp can never produce them
EXPLAINED = {
    "aquila": {"bpe_pre_missing", "control_typed_normal"},
    "gpt-neox": {"bpe_pre_missing"},
    "command-r": {"unreachable_tokens"},
}


def reference_vocabs() -> Path | None:
    from tests import refdata
    d = refdata.VOCAB_DIR
    return Path(d) if d else None


def test_reference_vocabularies_get_no_false_warning() -> None:
    folder = reference_vocabs()
    if folder is None:
        pytest.skip("reference vocabularies not available")
    files = sorted(folder.glob("ggml-vocab-*.gguf"))
    assert len(files) == 19
    for f in files:
        name = f.name.removeprefix("ggml-vocab-").removesuffix(".gguf")
        codes = {w.code for w in metadata_warnings(open_model(f))}
        assert codes == EXPLAINED.get(name, set()), name


def test_stale_default_pre_over_a_llama3_vocabulary(tmp_path: Path) -> None:
    folder = reference_vocabs()
    if folder is None:
        pytest.skip("reference vocabularies not available")
    from tests.gguf_patch import patched_gguf

    stale = patched_gguf(folder / "ggml-vocab-llama-bpe.gguf", tmp_path / "stale.gguf",
                         {"tokenizer.ggml.pre": "default"})
    warnings = metadata_warnings(open_model(stale))
    assert [w.code for w in warnings] == ["bpe_pre_stale"]
    assert "llama-3" in warnings[0].message and "#7476" in warnings[0].message


DEMO = Path(__file__).resolve().parents[2] / "resources"


@pytest.mark.parametrize(("changes", "code", "says"), [
    ({"tokenizer.ggml.bos_token_id": None, "tokenizer.ggml.add_bos_token": True}, "add_bos_without_token",
     "tokenizer.ggml.bos_token_id is missing"),
    ({"tokenizer.ggml.eos_token_id": None, "tokenizer.ggml.add_eos_token": True}, "add_eos_without_token",
     "tokenizer.ggml.eos_token_id is missing"),
    ({"tokenizer.ggml.bos_token_id": 1_000_000, "tokenizer.ggml.add_bos_token": True}, "bos_token_out_of_range",
     "1000000, outside the 1500-token vocabulary"),
    ({"tokenizer.ggml.eos_token_id": 1500, "tokenizer.ggml.add_eos_token": True}, "eos_token_out_of_range",
     "1500, outside the 1500-token vocabulary"),
    ({"tokenizer.ggml.bos_token_id": 1_000_000, "tokenizer.ggml.add_bos_token": False}, None, ""),
    ({"tokenizer.ggml.eos_token_id": 2, "tokenizer.ggml.add_eos_token": True}, None, ""),  # a valid one
])
def test_add_bos_eos_without_a_valid_token(changes: dict[str, Any], code: str | None, says: str,
                                           tmp_path: Path) -> None:
    """The bundled SPM demo (1500 pieces, add_bos on, BOS 1) with its
    BOS/EOS metadata patched: llama.cpp falls back to its default ids."""
    from tests.gguf_patch import patched_gguf

    assert metadata_warnings(open_model(DEMO / "demo-spm.gguf")) == []
    model = open_model(patched_gguf(DEMO / "demo-spm.gguf", tmp_path / "v.gguf", changes))
    warnings = metadata_warnings(model)
    assert [w.code for w in warnings] == ([code] if code else [])
    if code:
        assert says in warnings[0].message and "default id" in warnings[0].message


def test_add_space_prefix_on_a_byte_level_vocabulary_is_ignored(tmp_path: Path) -> None:
    from tests.gguf_patch import patched_gguf

    model = open_model(patched_gguf(DEMO / "demo-bpe.gguf", tmp_path / "v.gguf",
                                    {"tokenizer.ggml.add_space_prefix": True}))
    assert [w.code for w in metadata_warnings(model)] == ["add_space_prefix_ignored"]


def spm_vocab(path: Path, marked: int, plain: int, space_prefix: bool | None) -> Model:
    """An SPM vocabulary (<unk>, <s>, </s>, 256 bytes) with ``marked`` word
    pieces that start with U+2581 and ``plain`` ones that do not."""
    from tests.ggufmaker import write_vocab_gguf

    words = [f"\u2581w{chr(0x61 + k % 26)}{k}" for k in range(marked)] + [f"q{chr(0x61 + k % 26)}{k}"
                                                                          for k in range(plain)]
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + ["\u2581", "a", "q", "w"] + words
    types = [2, 3, 3] + [6] * 256 + [1] * (4 + len(words))
    extra: dict[str, object] = {"tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2}
    if space_prefix is not None:
        extra["tokenizer.ggml.add_space_prefix"] = space_prefix
    return open_model(write_vocab_gguf(path, tokens, "llama", types=types,
                                       scores=[-float(i) for i in range(len(tokens))], extra=extra))


@pytest.mark.parametrize(("marked", "plain", "space_prefix", "codes"), [
    (190, 10, False, ["add_space_prefix_off"]),   # 95 % marked, no prefix
    (190, 10, True, []),
    (100, 100, False, []),                        # half and half: both are seen in real files
    (100, 100, None, []),
    (10, 190, True, ["add_space_prefix_unmarked"]),
    (10, 190, None, ["add_space_prefix_unmarked"]),  # SPM's default is to add the prefix
    (10, 190, False, []),
    (60, 0, False, []),                           # too few word pieces to judge
])
def test_space_prefix_against_the_word_marker(marked: int, plain: int, space_prefix: bool | None,
                                              codes: list[str], tmp_path: Path) -> None:
    model = spm_vocab(tmp_path / "spm.gguf", marked, plain, space_prefix)
    assert [w.code for w in metadata_warnings(model)] == codes
