"""Tokenizer sources trained in code with the ``tokenizers`` and
``sentencepiece`` trainers, and their GGUF conversions: what the check's
tests (command line and window) run against."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Callable

from tokenprism.core import Model, open_model
from tokenprism.core.formats.convert import convert

CORPUS = Path(__file__).resolve().parents[1] / "resources" / "demo_corpus.txt"


def corpus_lines() -> list[str]:
    return [line for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


# ---- sources, trained in code ------------------------------------------------

def train_byte_level(pre: Any) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>", "<|im_start|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus_lines(), trainer)
    return tok


def train_wordpiece() -> Any:
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=600, show_progress=False,
                                        special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"])
    tok.train_from_iterator(corpus_lines(), trainer)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", tok.token_to_id("[CLS]")),
                                                 ("[SEP]", tok.token_to_id("[SEP]"))])
    return tok


def train_spm(path: Path, **options: Any) -> Path:
    import sentencepiece as spm

    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(corpus_lines()), model_writer=buf, num_threads=1,
                                   character_coverage=1.0, minloglevel=2, **options)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buf.getvalue())
    return path


def edit_spm(src: Path, dest: Path, change: Callable[[Any], None]) -> Path:
    from sentencepiece import sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(src.read_bytes())
    change(proto)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(proto.SerializeToString())
    return dest


def save_hf(tok: Any, folder: Path, config: dict[str, object] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    tok.save(str(folder / "tokenizer.json"))
    if config is not None:
        (folder / "tokenizer_config.json").write_text(json.dumps(config))
    return folder


def to_gguf(source: Path, out: Path) -> Model:
    convert(source, out)
    return open_model(out)
