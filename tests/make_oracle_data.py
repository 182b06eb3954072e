"""Make the llama.cpp-pinned fixtures in tests/data/ (run again to refresh).

    TOKENPRISM_ORACLE_PY=/path/to/python-with-llama-cpp-python-0.3.36 \\
    python -m tests.make_oracle_data [--vocab-dir DIR]

Every expected value comes from llama.cpp (``tests/llama_oracle.py``),
never from TokenPrism. The texts and id sequences are fixed by seeds, so a
second run with the same llama.cpp gives the same files.

- ``pretokenizers.jsonl``: every pre-tokenizer name llama.cpp knows, on a
  copy of gpt-2's vocab (gemma-4's for the names without byte encoding)
  whose ``tokenizer.ggml.pre`` is rewritten; 20 texts each.
- ``decode.jsonl``: detokenization of id sequences (encodings of tricky
  texts and random ids) for SPM, BPE (clean_spaces on and off), UGM and
  WPM vocabs, with ``special`` and ``remove_special`` both ways.
- ``gemma4_bos.jsonl``: gemma-4 with ``add_bos_token`` set false, true and
  absent, encoded with add_special on.
- ``ugm_options.jsonl``: nomic-bert-moe with its whitespace keys rewritten
  (and with escape/suffix keys llama.cpp ignores).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

from tests.gguf_patch import patched_gguf
from tests.refdata import DATA_DIR, VOCAB_DIR, run_oracle

PRE_TEXTS_PER_NAME = 20

# hand-picked: each pre-tokenizer family splits these differently
FIXED_TEXTS = [
    "Hello world! It's 2024-01-01, isn't it? I'm fine; we've 3.14159 apples.",
    "  leading spaces\n\n\ttabs\r\nCRLF   trailing   ",
    "Привет, мир! Γειά σου Κόσμε. שלום עולם 123 مرحبا بالعالم ٣٤٥",
    "你好世界，中文字符测试。こんにちは、カタカナ漢字！안녕하세요 세계",
    "नमस्ते दुनिया १२३ สวัสดีชาวโลก ກາງ ကမ္ဘာ",
    "emoji 🦙🚀 👍🏽 👨‍👩‍👧 ❤️ flags 🇩🇪 and ZWJ\u200d here",
    "def foo(x):\n    return x**2 + 1_000_000  # comment\n",
    "CamelCaseWord ALLCAPS snake_case kebab-case 'quoted' \"double\" `tick`",
    "numbers 1 12 123 1234 12345 123456 1234567 3,141,592 0x1F ½ ² ①",
    "Ａｂｃ１２３ ﬁﬂ café naïve ÉCOLE e\u0301 a\u0308 \u00a0nbsp\u3000ideo",
]


def _pre_names() -> list[tuple[str, str]]:
    from tokenprism.plugins.bpe.pretokenizers import PRE_NAMES, PRE_TYPES

    # model gpt2 with pre "whitespace" makes llama.cpp abort on any space
    return [(n, "gpt-2" if PRE_TYPES[PRE_NAMES[n].pre_type].byte_encode else "gemma-4")
            for n in PRE_NAMES if n != "whitespace"]


def pre_texts(seed: int) -> list[str]:
    from tests.plugins.test_bpe_oracle import rand_text

    rng = random.Random(seed)
    out = list(FIXED_TEXTS)
    while len(out) < PRE_TEXTS_PER_NAME:
        t = rand_text(rng)
        if t and len(t) < 400:
            out.append(t)
    return out


def make_pretokenizers(vocab_dir: Path, tmp: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i, (pre, base) in enumerate(_pre_names()):
        path = patched_gguf(vocab_dir / f"ggml-vocab-{base}.gguf", tmp / f"{pre}.gguf",
                            {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": pre})
        texts = pre_texts(1000 + i)
        for text, ids in zip(texts, run_oracle(path, texts)):
            rows.append({"pre": pre, "base": base, "text": text, "ids": ids})
        print(f"  {pre}", file=sys.stderr)
    return rows


DECODE_VOCABS = ["llama-spm", "phi-3", "baichuan", "gpt-2", "llama-bpe", "qwen2", "gemma-4", "nomic-bert-moe",
                 "bert-bge"]
DECODE_TEXTS = [
    "Hello world", " Hello world", "  two leading", "Hello ?world ! a . b , c", "he 's I 'm they 're we 've",
    "a ' b", "' '", "don't won't", "x  ,  y", "trailing space ", "\n\nnew lines\n", "\t tab",
    "<s> inside </s> text", "[CLS] [SEP] [MASK] [UNK] [PAD]", "<mask> <unk> <pad>", "<|endoftext|>",
    "<bos><eos><start_of_turn>", "é ü ß ñ 你好 🦙 \u0301", "ＡＢＣ ﬁ ①", "\u2581literal\u2581marks",
    "\x00\x01 controls \x7f", "\u200b\u200d zero width", "I'm   here .", "Ok,ok .ok", "a\u3000b",
]


def _decode_ids(vocab_dir: Path, name: str, rng: random.Random) -> list[list[int]]:
    from tokenprism.core import read_gguf

    path = vocab_dir / f"ggml-vocab-{name}.gguf"
    meta = read_gguf(str(path)).metadata
    n_vocab = len(meta["tokenizer.ggml.tokens"].value)
    # each special id the file names (bos, eos, unknown, sep, ...) alone, and all in a row around text ids
    special = sorted({int(v.value) for k, v in meta.items() if k.endswith("_token_id")})
    seqs_special = [[i] for i in special] + [special + [rng.randrange(n_vocab)] + special]
    seqs = [ids for ids in run_oracle(path, DECODE_TEXTS, "--add-special", "--parse-special") if ids]
    seqs += [ids for ids in run_oracle(path, DECODE_TEXTS[:8]) if ids]  # no BOS: the prefix space goes
    seqs += seqs_special
    low = list(range(min(n_vocab, 300)))  # specials, unknown and byte tokens live here
    for _ in range(20):
        k = rng.randint(1, 10)
        seqs.append([rng.choice(low) if rng.random() < 0.4 else rng.randrange(n_vocab) for _ in range(k)])
    return seqs


def make_decode(vocab_dir: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    rng = random.Random(7)
    for name in DECODE_VOCABS:
        path = vocab_dir / f"ggml-vocab-{name}.gguf"
        seqs = _decode_ids(vocab_dir, name, rng)
        for special in (True, False):
            for remove in (False, True):
                flags = (["--remove-special"] if remove else []) + ([] if special else ["--no-special"])
                for ids, hx in zip(seqs, run_oracle(path, seqs, "--decode", *flags)):
                    if hx is not None:
                        rows.append({"vocab": name, "ids": ids, "special": special, "remove_special": remove,
                                     "hex": hx})
        print(f"  {name}", file=sys.stderr)
    return rows


GEMMA_BOS_TEXTS = ["Hello world", "", "<bos>already there", "\n\n", "<start_of_turn>user\nhi"]


def make_gemma4_bos(vocab_dir: Path, tmp: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for setting in (False, True, None):
        path = patched_gguf(vocab_dir / "ggml-vocab-gemma-4.gguf", tmp / f"g4-{setting}.gguf",
                            {"tokenizer.ggml.add_bos_token": setting})
        for parse in (False, True):
            flags = ["--add-special"] + (["--parse-special"] if parse else [])
            for text, ids in zip(GEMMA_BOS_TEXTS, run_oracle(path, GEMMA_BOS_TEXTS, *flags)):
                rows.append({"add_bos_token": setting, "parse_special": parse, "text": text, "ids": ids})
    return rows


UGM_TEXTS = ["Hello world", "  two  leading and   inner  spaces ", "a\tb\nc", " ", "", "x", "ﬁ ① Ａ", "end ",
             "<mask> and <unk> text", "  \u3000wide\u3000space", "trailing\n\n"]
# keys llama.cpp reads for UGM (add_space_prefix, remove_extra_whitespaces),
# and two it does not read at all: escape_whitespaces and
# treat_whitespace_as_suffix are fixed for UGM in llama.cpp 0.3.36 (true and
# false), whatever a file says
UGM_VARIANTS: list[dict[str, bool | int | str | None]] = [
    {"tokenizer.ggml.add_space_prefix": False},
    {"tokenizer.ggml.remove_extra_whitespaces": False},
    {"tokenizer.ggml.add_space_prefix": False, "tokenizer.ggml.remove_extra_whitespaces": False},
    {"tokenizer.ggml.escape_whitespaces": False, "tokenizer.ggml.treat_whitespace_as_suffix": True},
]


def make_ugm_options(vocab_dir: Path, tmp: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for k, changes in enumerate(UGM_VARIANTS):
        path = patched_gguf(vocab_dir / "ggml-vocab-nomic-bert-moe.gguf", tmp / f"ugm{k}.gguf", changes)
        for add_special in (False, True):
            flags = ["--add-special"] if add_special else []
            for text, ids in zip(UGM_TEXTS, run_oracle(path, UGM_TEXTS, *flags)):
                rows.append({"changes": changes, "add_special": add_special, "text": text, "ids": ids})
    return rows


def write_jsonl(name: str, rows: list[dict[str, Any]]) -> None:
    DATA_DIR.mkdir(exist_ok=True)
    with open(DATA_DIR / name, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=True) + "\n")
    print(f"{DATA_DIR / name}: {len(rows)} rows", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab-dir", default=VOCAB_DIR, help="the reference vocabs (default: as the tests find them)")
    ap.add_argument("--only", choices=["pretokenizers", "decode", "gemma4_bos", "ugm_options"])
    args = ap.parse_args(argv)
    if not args.vocab_dir:
        ap.error("reference vocabs not found; pass --vocab-dir")
    vocab_dir = Path(args.vocab_dir)
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        if args.only in (None, "gemma4_bos"):
            write_jsonl("gemma4_bos.jsonl", make_gemma4_bos(vocab_dir, tmp))
        if args.only in (None, "ugm_options"):
            write_jsonl("ugm_options.jsonl", make_ugm_options(vocab_dir, tmp))
        if args.only in (None, "decode"):
            write_jsonl("decode.jsonl", make_decode(vocab_dir))
        if args.only in (None, "pretokenizers"):
            write_jsonl("pretokenizers.jsonl", make_pretokenizers(vocab_dir, tmp))
    return 0


if __name__ == "__main__":
    sys.exit(main())
