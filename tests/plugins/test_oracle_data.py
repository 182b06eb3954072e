"""Parity with llama.cpp on the fixtures in tests/data/ (expected values made
by llama.cpp 0.3.36 through tests/make_oracle_data.py; no llama.cpp needed
to run these).

- every pre-tokenizer name on a copy of gpt-2's or gemma-4's vocab;
- detokenization (SPM, BPE with and without clean_spaces, UGM, WPM);
- gemma-4's rule that BOS is added even when ``add_bos_token`` is false.
"""

from __future__ import annotations

from tokenprism.core.record import replace
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.gguf_patch import patched_gguf
from tests.refdata import VOCAB_DIR, read_jsonl, vocab_path

pytestmark = pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found")

_PRE_ROWS = read_jsonl("pretokenizers.jsonl")
_BY_PRE: dict[str, list[dict[str, Any]]] = defaultdict(list)
for _row in _PRE_ROWS:
    _BY_PRE[_row["pre"]].append(_row)


@pytest.fixture(scope="module")
def base_models() -> dict[str, Any]:
    from tokenprism.core import open_model

    return {base: open_model(vocab_path(base)) for base in ("gpt-2", "gemma-4")}


def _with_pre(base: Any, pre: str) -> Any:
    """``base`` as if its file said ``tokenizer.ggml.model = gpt2`` and
    ``tokenizer.ggml.pre = pre`` (what the fixture's GGUF copies say).

    Rebuilding from the already-read vocab is ~50x cheaper than reading a
    patched file; the only load-time rule that looks at ``pre`` marks a
    ``<mask>`` token, which neither base vocab has, and
    test_patched_file_equals_shortcut checks the two paths agree."""
    from tokenprism.core.model import Model
    from tokenprism.core.plugins import find_spec

    vocab = replace(base.vocab, model="gpt2", pre=pre)
    spec = find_spec(vocab, base.path)
    return Model(base.path, base.gguf, vocab, spec, spec.build(vocab))


def test_every_pre_tokenizer_name_is_pinned() -> None:
    from tokenprism.plugins.bpe.pretokenizers import PRE_NAMES

    # "whitespace" is left out: llama.cpp aborts on any space with it on a gpt2 model
    assert set(_BY_PRE) == set(PRE_NAMES) - {"whitespace"}
    assert all(len(rows) >= 20 for rows in _BY_PRE.values())


@pytest.mark.parametrize("pre", sorted(_BY_PRE))
def test_pre_tokenizer_matches_llama_cpp(pre: str, base_models: dict[str, Any]) -> None:
    rows = _BY_PRE[pre]
    model = _with_pre(base_models[rows[0]["base"]], pre)
    bad = [(r["text"], model.encode(r["text"]).ids, r["ids"]) for r in rows if model.encode(r["text"]).ids != r["ids"]]
    assert not bad, f"{len(bad)}/{len(rows)} differ; first text {bad[0][0]!r}: ours {bad[0][1]} llama.cpp {bad[0][2]}"


@pytest.mark.parametrize("pre", ["qwen2", "llama3", "sarvam-moe"])
def test_patched_file_equals_shortcut(pre: str, tmp_path: Path) -> None:
    """The same rows through a real GGUF copy with the keys rewritten."""
    from tokenprism.core import open_model

    rows = _BY_PRE[pre]
    path = patched_gguf(vocab_path(rows[0]["base"]), tmp_path / f"{pre}.gguf",
                        {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre})
    model = open_model(path)
    assert model.vocab.pre == pre
    for r in rows:
        assert model.encode(r["text"]).ids == r["ids"], r["text"]


# ---- decoding ---------------------------------------------------------------

_DECODE_ROWS = read_jsonl("decode.jsonl")
_DECODE_BY_VOCAB: dict[str, list[dict[str, Any]]] = defaultdict(list)
for _row in _DECODE_ROWS:
    _DECODE_BY_VOCAB[_row["vocab"]].append(_row)


@pytest.mark.parametrize("vocab", sorted(_DECODE_BY_VOCAB))
def test_decode_matches_llama_cpp(vocab: str, ref_model: Any) -> None:
    model = ref_model(vocab)
    bad = []
    for r in _DECODE_BY_VOCAB[vocab]:
        got = model.decode_bytes(r["ids"], special=r["special"], remove_special=r["remove_special"])
        if got != bytes.fromhex(r["hex"]):
            bad.append((r["ids"], r["special"], r["remove_special"], got, bytes.fromhex(r["hex"])))
    assert not bad, f"{len(bad)}/{len(_DECODE_BY_VOCAB[vocab])} differ; first: {bad[0]}"


def test_decode_fixture_covers_what_it_should(ref_model: Any) -> None:
    """The pinned cases reach the paths they are meant to pin."""
    from tokenprism.core.vocab import Attr

    def rows_with(vocab: str, attr: int) -> int:
        m = ref_model(vocab)
        return sum(1 for r in _DECODE_BY_VOCAB[vocab] if any(m.vocab.attrs[i] & attr for i in r["ids"]))

    def rows_with_id(vocab: str, key: str) -> int:
        tid = ref_model(vocab).config.special_ids[key]
        return sum(1 for r in _DECODE_BY_VOCAB[vocab] if tid in r["ids"])

    assert ref_model("gpt-2").config.clean_spaces and not ref_model("qwen2").config.clean_spaces
    cleaned = [r for r in _DECODE_BY_VOCAB["gpt-2"] if b" ?" not in bytes.fromhex(r["hex"])
               and any(ref_model("gpt-2").vocab.pieces[i] in ("Ġ?", "Ġ'", "Ġ,", "Ġ.", "Ġ!") for i in r["ids"])]
    assert cleaned, "no gpt-2 case where clean_spaces removes a space"
    for vocab in ("nomic-bert-moe", "bert-bge", "llama-spm"):
        assert rows_with_id(vocab, "unk") >= 8 and rows_with(vocab, Attr.CONTROL) >= 8, vocab
    assert rows_with("llama-spm", Attr.BYTE)
    # the UGM prefix space: text decoded from an encoding starts without it
    assert any(bytes.fromhex(r["hex"]).startswith(b"Hello") for r in _DECODE_BY_VOCAB["nomic-bert-moe"])


# ---- gemma-4's BOS rule -----------------------------------------------------------

_BOS_ROWS = read_jsonl("gemma4_bos.jsonl")


@pytest.fixture(scope="module")
def gemma_no_bos(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from tokenprism.core import open_model

    path = patched_gguf(vocab_path("gemma-4"), tmp_path_factory.mktemp("g4") / "g4.gguf",
                        {"tokenizer.ggml.add_bos_token": False})
    return open_model(path)


def test_gemma4_bos_is_forced_on(gemma_no_bos: Any, ref_model: Any) -> None:
    """llama.cpp 0.3.36 overrides ``add_bos_token = false`` for gemma4
    (llama-vocab.cpp, "workaround for Gemma 4"): BOS (id 2) still leads."""
    assert gemma_no_bos.vocab.flags.get("add_bos") is False
    rows = [r for r in _BOS_ROWS if r["add_bos_token"] is False]
    assert rows and all(r["ids"][:1] == [2] for r in rows)  # the fixture says so too
    for r in rows:
        assert gemma_no_bos.encode(r["text"], add_special=True, parse_special=r["parse_special"]).ids == r["ids"]
    for r in _BOS_ROWS:
        if r["add_bos_token"] is None:
            assert ref_model("gemma-4").encode(r["text"], add_special=True,
                                               parse_special=r["parse_special"]).ids == r["ids"]
