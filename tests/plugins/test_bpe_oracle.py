"""Dev-only: the BPE plugin against a live llama.cpp on random mixed-script
texts (every reference BPE vocab, and every pre-tokenizer name llama.cpp
knows on a copy of gpt-2's or gemma-4's vocabulary).

Opt-in, it needs llama-cpp-python 0.3.36 in another Python::

    TOKENPRISM_BPE_ORACLE=1 \\
    TOKENPRISM_ORACLE_PY=/path/to/python-with-llama_cpp \\
    TOKENPRISM_BPE_ORACLE_N=300 TOKENPRISM_BPE_ORACLE_SEED=1 \\
    python -m pytest tests/plugins/test_bpe_oracle.py -q

The oracle is ``tests/llama_oracle.py``, run through ``tests.refdata.run_oracle``.
The default (not opt-in) parity tests on fixed texts are in
test_oracle_data.py.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from tests.refdata import ORACLE_PY, VOCAB_DIR, run_oracle

N = int(os.environ.get("TOKENPRISM_BPE_ORACLE_N", "200"))
SEED = int(os.environ.get("TOKENPRISM_BPE_ORACLE_SEED", "1"))

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(os.environ.get("TOKENPRISM_BPE_ORACLE") != "1", reason="set TOKENPRISM_BPE_ORACLE=1"),
    pytest.mark.skipif(VOCAB_DIR is None, reason="reference vocabs not found"),
    pytest.mark.skipif(ORACLE_PY is None, reason="set TOKENPRISM_ORACLE_PY"),
]

VOCABS = ["gpt-2", "llama-bpe", "qwen2", "qwen35", "deepseek-coder", "deepseek-llm", "falcon", "mpt", "starcoder",
          "refact", "command-r", "aquila", "gpt-neox", "gemma-4"]

POOLS = [
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", "0123456789", "٠١٢٣٤٥٦٧٨٩", "०१२३", "½¼²³①⑩Ⅻ",
    " ", "  ", "\t", "\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c\x1d\x1e\x1f", "\x85", "\xa0", "\u1680",
    "\u2000\u2003\u200a", "\u2028\u2029", "\u202f\u205f\u3000", "\u200b\u200c\u200d\ufeff\u180e",
    "'s't're've'm'll'd'S'T'RE'VE'M'LL'D", "'", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
    "éèêëàâäôöûüçñßøåæœ", "ÀÉÎÕÜÇ", "ǅǈǋ", "ʰʲˆ", "\u0301\u0308\u0327\u0303\u064b\u0651",
    "абвгдежзийклмнопрстуфхцчшщъыьэюяАБВГД", "αβγδεζηθικλμνξοπρστυφχψωΣΩ", "אבגדהוזחטיכלמנסעפצקרשת",
    "مرحبا بالعالم", "नमस्ते दुनिया", "สวัสดีชาวโลก", "こんにちは世界カタカナ", "你好世界中文字符測試", "안녕하세요세계",
    "កាន់តែពិសេស", "ሰላም", "ᏣᎳᎩ", "😀😁🦙🚀✅❤️👍🏽👨‍👩‍👧", "←→↑↓∀∂∃∅∇∈≤≥≠±×÷€£¥©®™°§¶•…—–“”‘’«»„",
    "\x00\x01\x07\x7f\x80\x9f", "\ue000\uf8ff", "\U00010000\U0001d400\U0001f600\U00020000\U0002a700",
    "▁", "<0x41>", "<s></s>", "<|endoftext|>", "<bos><eos>", "ﬁﬂ", "Ａｂｃ１２３", "Ꙁꙁ", "ⰀⰁ", "𐐀𐐨",
]
WORDS = ["Hello", "world", "the", "quick", "brown", "fox", "don't", "it's", "I'm", "we're", "they've", "you'll",
         "he'd", "3.14159", "1234567", "2024-01-01", "http://example.com/a?b=c", "foo_bar", "CamelCase", "ALLCAPS",
         "   ", "\n\n", "...", "!!!", "???", "--"]


def _rand_cp(rng: random.Random) -> str:
    while True:
        c = rng.choice([rng.randint(0x80, 0x2FFF), rng.randint(0x3000, 0xFFFF), rng.randint(0x10000, 0x10FFFF),
                        rng.randint(0, 0x7F)])
        if not 0xD800 <= c <= 0xDFFF:
            return chr(c)


def rand_text(rng: random.Random) -> str:
    parts: list[str] = []
    n = rng.randint(1, 12) if rng.random() < 0.8 else rng.randint(30, 200)
    for _ in range(n):
        r = rng.random()
        if r < 0.08:
            parts.append("".join(_rand_cp(rng) for _ in range(rng.randint(1, 6))))
        elif r < 0.12:
            parts.append(rng.choice(["a", "ab", "abc", "é", "🦙", "!", " ", "0", "你"]) * rng.randint(20, 120))
        elif r < 0.45:
            parts.append(rng.choice(WORDS))
        elif r < 0.9:
            pool = rng.choice(POOLS)
            parts.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 8))))
        else:
            parts.append(rng.choice(POOLS))
        if rng.random() < 0.5:
            parts.append(rng.choice([" ", " ", "  ", "\n", "\t", " \n ", "\u3000", ""]))
    return "".join(parts)


def _texts(seed: int) -> list[str]:
    rng = random.Random(seed)
    return [t for t in (rand_text(rng) for _ in range(N)) if t]


def _oracle(path: str, texts: list[str], *flags: str) -> list[list[int]]:
    return run_oracle(path, texts, *flags)


def _compare(path: str, texts: list[str], add_special: bool, parse_special: bool) -> None:
    from tokenprism.core import open_model

    flags = (["--add-special"] if add_special else []) + (["--parse-special"] if parse_special else [])
    expected = _oracle(path, texts, *flags)
    model = open_model(path)
    bad = [t for t, e in zip(texts, expected)
           if model.encode(t, add_special=add_special, parse_special=parse_special).ids != e]
    assert not bad, f"{len(bad)}/{len(texts)} differ, first: {bad[0]!r}"


@pytest.mark.parametrize("flags", [(False, False), (True, True)], ids=["ap", "AP"])
@pytest.mark.parametrize("vocab", VOCABS)
def test_reference_vocab_vs_llama_cpp(vocab: str, flags: tuple[bool, bool]) -> None:
    assert VOCAB_DIR is not None
    _compare(os.path.join(VOCAB_DIR, f"ggml-vocab-{vocab}.gguf"), _texts(SEED), *flags)


def _pre_names() -> list[str]:
    from tokenprism.plugins.bpe.pretokenizers import PRE_NAMES

    # model gpt2 with pre "whitespace" makes llama.cpp abort on any space
    return [n for n in PRE_NAMES if n != "whitespace"]


@pytest.mark.parametrize("pre", _pre_names())
def test_every_pre_tokenizer_vs_llama_cpp(pre: str, tmp_path: Path) -> None:
    from tests.gguf_patch import patched_gguf
    from tokenprism.plugins.bpe.pretokenizers import PRE_NAMES, PRE_TYPES

    assert VOCAB_DIR is not None
    base = "gpt-2" if PRE_TYPES[PRE_NAMES[pre].pre_type].byte_encode else "gemma-4"
    path = patched_gguf(os.path.join(VOCAB_DIR, f"ggml-vocab-{base}.gguf"), tmp_path / f"{pre}.gguf",
                        {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre})
    _compare(str(path), _texts(SEED + 1000)[: max(1, N // 2)], False, False)
