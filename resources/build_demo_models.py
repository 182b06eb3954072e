#!/usr/bin/env python3
"""Rebuild TokenPrism's bundled demo models from ``demo_corpus.txt``.

    python resources/build_demo_models.py            # rewrite resources/ in place
    python resources/build_demo_models.py --out DIR  # build somewhere else

Four small tokenizers are trained with the reference libraries
(``sentencepiece`` and ``tokenizers``, test dependencies only) and converted
with :func:`tokenprism.core.formats.convert.convert`:

- ``demo-spm.gguf``: SentencePiece BPE, byte fallback, identity normalizer;
- ``demo-bpe.gguf``: byte-level BPE with the GPT-2 pre-tokenizer;
- ``demo-ugm.gguf``: SentencePiece unigram with the ``nmt_nfkc`` normalizer;
- ``demo-wpm.gguf``: lower-casing WordPiece (BERT-style).

The trainers' own files are kept under ``trained/`` so tests can compare
TokenPrism's ids with the libraries' ids. Every step is deterministic (one
thread, fixed seed, corpus lines in file order, no paths or times stored),
so running the script twice gives identical bytes; ``trained/BUILD_INFO.json``
records the library versions and the SHA-256 of every file written.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import sys
from pathlib import Path
from typing import Any, Sequence

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "demo_corpus.txt"
SEED = 20240601

# kind -> (GGUF file, trainer output under trained/)
OUTPUTS = {
    "spm": ("demo-spm.gguf", "demo-spm.model"),
    "bpe": ("demo-bpe.gguf", "demo-bpe/tokenizer.json"),
    "ugm": ("demo-ugm.gguf", "demo-ugm.model"),
    "wpm": ("demo-wpm.gguf", "demo-wpm/tokenizer.json"),
}
NAMES = {
    "spm": "TokenPrism demo SPM (SentencePiece BPE, byte fallback)",
    "bpe": "TokenPrism demo BPE (byte-level, GPT-2 pre-tokenizer)",
    "ugm": "TokenPrism demo UGM (SentencePiece unigram, nmt_nfkc)",
    "wpm": "TokenPrism demo WPM (WordPiece, lowercase)",
}
SPM_VOCAB = 1500
BPE_VOCAB = 1000
UGM_VOCAB = 800   # the corpus is too small for a larger unigram vocabulary
WPM_VOCAB = 1000
WPM_SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


def corpus_lines(path: Path = CORPUS) -> list[str]:
    """The training text, one sentence per line, in file order."""
    text = path.read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def train_sentencepiece(lines: Sequence[str], **options: Any) -> bytes:
    """A serialized SentencePiece model trained on ``lines``.

    The text is passed as an iterator and the model written to memory, so
    no file path ends up inside the model (it would make the bytes depend
    on where the script runs).
    """
    import sentencepiece as spm

    spm.set_random_generator_seed(SEED)
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines), model_writer=buf, num_threads=1,
        shuffle_input_sentence=False, input_sentence_size=0, character_coverage=1.0,
        minloglevel=2, **options)
    return buf.getvalue()


def train_spm(lines: Sequence[str]) -> bytes:
    # identity normalization and kept whitespace: llama.cpp's SPM tokenizer
    # runs no normalizer, so this is the setting under which it matches
    # sentencepiece exactly (Llama's own tokenizer.model is trained the same way)
    return train_sentencepiece(
        lines, model_type="bpe", vocab_size=SPM_VOCAB, byte_fallback=True, split_digits=True,
        normalization_rule_name="identity", remove_extra_whitespaces=False)


def train_ugm(lines: Sequence[str]) -> bytes:
    return train_sentencepiece(lines, model_type="unigram", vocab_size=UGM_VOCAB,
                               normalization_rule_name="nmt_nfkc")


def train_bpe(lines: Sequence[str]) -> tuple[str, dict[str, object]]:
    """tokenizer.json and tokenizer_config.json of a GPT-2-style byte-level BPE."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    # the full byte alphabet is given up front (sorted by the trainer), so
    # symbol ids, and with them the tie-breaking between equal merges, do not
    # depend on hash-map order
    trainer = trainers.BpeTrainer(vocab_size=BPE_VOCAB, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(list(lines), trainer)
    config: dict[str, object] = {
        "tokenizer_class": "GPT2Tokenizer", "add_bos_token": False, "add_eos_token": False,
        "bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "unk_token": "<|endoftext|>",
        "model_max_length": 1024,
    }
    return tok.to_str(pretty=True), config


def _bert_words(lines: Sequence[str]) -> list[str]:
    """The corpus as BERT sees it: normalized, split into words and
    punctuation, joined by single spaces."""
    from tokenizers import normalizers, pre_tokenizers

    norm = normalizers.BertNormalizer(lowercase=True)
    pre = pre_tokenizers.BertPreTokenizer()
    out = []
    for line in lines:
        words = [w for w, _ in pre.pre_tokenize_str(norm.normalize_str(line))]
        if words:
            out.append(" ".join(words))
    return out


def wordpiece_vocab(lines: Sequence[str]) -> list[str]:
    """A WordPiece vocabulary learnt by BPE merges, as WordPiece trainers do.

    ``tokenizers``' WordPieceTrainer is not reproducible: it numbers the
    ``##`` continuation symbols in hash-map order, which changes how equal
    merge counts are broken, so every run gives a different vocabulary.
    The merges are therefore learnt by SentencePiece's BPE trainer
    (deterministic) on the BERT-normalized words; pieces that start a word
    (``▁x``) become ``x``, the others ``##x``. Every character of the corpus
    is included both ways, so no word of the corpus is unknown.
    """
    import sentencepiece as spm

    words = _bert_words(lines)
    model = train_sentencepiece(words, model_type="bpe", vocab_size=WPM_VOCAB,
                                normalization_rule_name="identity")
    sp = spm.SentencePieceProcessor(model_proto=model)
    chars = sorted({c for w in words for c in w if not c.isspace()})
    vocab: list[str] = list(WPM_SPECIALS)
    vocab += chars
    vocab += ["##" + c for c in chars]
    seen = set(vocab)
    for i in range(sp.get_piece_size()):
        if sp.is_control(i) or sp.is_unknown(i) or sp.is_byte(i):
            continue
        piece = sp.id_to_piece(i)
        entry = piece[1:] if piece.startswith("\u2581") else "##" + piece
        if entry and entry != "##" and entry not in seen:
            seen.add(entry)
            vocab.append(entry)
    return vocab[:WPM_VOCAB]


def train_wpm(lines: Sequence[str]) -> tuple[str, dict[str, object]]:
    """tokenizer.json and tokenizer_config.json of a lower-casing BERT WordPiece."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    vocab = wordpiece_vocab(lines)
    tok = Tokenizer(models.WordPiece({t: i for i, t in enumerate(vocab)}, unk_token="[UNK]"))
    tok.add_special_tokens(list(WPM_SPECIALS))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    cls, sep = vocab.index("[CLS]"), vocab.index("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    config: dict[str, object] = {
        "tokenizer_class": "BertTokenizer", "do_lower_case": True,
        "unk_token": "[UNK]", "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]",
        "mask_token": "[MASK]", "model_max_length": 512,
    }
    return tok.to_str(pretty=True), config


def _write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _json_bytes(doc: object) -> bytes:
    return (json.dumps(doc, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {pkg: version(pkg) for pkg in ("sentencepiece", "tokenizers", "gguf")}


def build(out_dir: Path, corpus: Path = CORPUS) -> dict[str, Path]:
    """Train, convert and write everything into ``out_dir``; returns the
    GGUF path of each kind."""
    from tokenprism.core.formats.convert import convert

    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    lines = corpus_lines(corpus)
    trained = out_dir / "trained"
    written: list[Path] = []

    sources: dict[str, Path] = {}
    sources["spm"] = _write(trained / OUTPUTS["spm"][1], train_spm(lines))
    sources["ugm"] = _write(trained / OUTPUTS["ugm"][1], train_ugm(lines))
    for kind, trainer in (("bpe", train_bpe), ("wpm", train_wpm)):
        tok_json, config = trainer(lines)
        sources[kind] = _write(trained / OUTPUTS[kind][1], tok_json.encode("utf-8"))
        written.append(_write(sources[kind].with_name("tokenizer_config.json"), _json_bytes(config)))
    written.extend(sources.values())

    models: dict[str, Path] = {}
    for kind in OUTPUTS:
        gguf_path = out_dir / OUTPUTS[kind][0]
        report = convert(sources[kind], gguf_path, name=NAMES[kind])
        if report.warnings:
            raise RuntimeError(f"{kind}: the converter warned: {report.warnings}")
        models[kind] = gguf_path
        written.append(gguf_path)

    info = {
        "versions": _versions(),
        "sha256": {p.relative_to(out_dir).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
                   for p in sorted(written)},
    }
    _write(trained / "BUILD_INFO.json", _json_bytes(info))
    return models


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--out", type=Path, default=HERE, help="output folder (default: this folder)")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="training text")
    args = ap.parse_args(argv)
    models = build(args.out, args.corpus)
    for kind, path in models.items():
        print(f"{kind}: {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
