"""A small word-level tokenizer plugin for the GUI tests, registered at run
time, and the GGUF file it reads.

It handles its own ``tokenizer.ggml.model`` value, so it never takes over a
real vocabulary from the real plugins in the same test session. Words and
characters in the vocabulary become one token each; anything else falls
back to ``<0xNN>`` byte tokens, like SentencePiece's byte fallback.
"""

from __future__ import annotations

import re
from pathlib import Path

import gguf

from tokenprism.core.hookspecs import hookimpl
from tokenprism.core.plugin_types import TokenizerSpec
from tokenprism.core.tokenizer import FragmentResult, TokenizerConfig
from tokenprism.core.vocab import Vocab

MODEL_TYPE = "tokenprism-app-test"
WORDS = ("the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "hello", "world", "token",
         "tokens", "text", "is", "a", "and", "of", "to", "in")
SPECIAL = ["<unk>", "<s>", "</s>"]
BYTES = [f"<0x{b:02X}>" for b in range(256)]
CHARS = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'\"()-\n ")
TOKENS = SPECIAL + BYTES + CHARS + [f"▁{w}" for w in WORDS] + list(WORDS) + ["<|user|>"]
BOS, EOS, UNK = 1, 2, 0
_PIECES = re.compile(r" ?[A-Za-z]+|\d|\s|[^\sA-Za-z\d]")


def token_types() -> list[int]:
    t = gguf.TokenType
    types = [int(t.UNKNOWN), int(t.CONTROL), int(t.CONTROL)] + [int(t.BYTE)] * 256
    types += [int(t.NORMAL)] * (len(TOKENS) - len(types) - 1) + [int(t.USER_DEFINED)]
    return types


def write_gguf(path: Path, name: str = "app-test vocab", add_bos: bool = True,
               model_type: str = MODEL_TYPE) -> Path:
    """The test vocabulary as a vocab-only GGUF file."""
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name(name)
    w.add_tokenizer_model(model_type)
    w.add_token_list(TOKENS)
    w.add_token_scores([-float(i) for i in range(len(TOKENS))])
    w.add_token_types(token_types())
    w.add_bos_token_id(BOS)
    w.add_eos_token_id(EOS)
    w.add_unk_token_id(UNK)
    w.add_add_bos_token(add_bos)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


class WordTokenizer:
    """Whole known words (``▁``-prefixed after a space), else characters,
    else UTF-8 bytes."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        add_bos = vocab.flag("add_bos", True)
        self.config = TokenizerConfig(
            kind="TEST", special_ids={"bos": BOS, "eos": EOS, "unk": UNK},
            special_prefix=(BOS,) if add_bos else (), special_suffix=(EOS,),
            add_bos=add_bos, add_eos=True)
        self._ids = vocab.token_to_id

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        ascii_only = text.isascii()
        pos = 0  # UTF-8 offset of character index ``last``
        last = 0
        get = self._ids.get
        for m in _PIECES.finditer(text):
            s, e = m.span()
            if ascii_only:
                pos = s
            else:
                pos += len(text[last:s].encode("utf-8"))
                last = s
            piece = m.group()
            word = "▁" + piece[1:] if piece.startswith(" ") and len(piece) > 1 else piece
            tid = get(word)
            if tid is not None:
                ids.append(tid)
                starts.append(pos)
                ends.append(pos + (e - s if ascii_only else len(piece.encode("utf-8"))))
                continue
            b = pos
            for ch in piece:
                data = ch.encode("utf-8")
                tid = get(ch)
                if tid is not None:
                    ids.append(tid)
                    starts.append(b)
                    ends.append(b + len(data))
                else:
                    for k, byte in enumerate(data):
                        ids.append(get(f"<0x{byte:02X}>", UNK))
                        starts.append(b + k)
                        ends.append(b + k + 1)
                b += len(data)
        return FragmentResult(ids, starts, ends)

    def piece_bytes(self, token_id: int) -> bytes:
        return self.vocab.pieces[token_id].replace("▁", " ").encode("utf-8")

    def normalized(self, text: str) -> str:
        return text


class AppTestPlugin:
    """The plugin object registered with ``plugin_manager().register``."""

    @hookimpl
    def tokenprism_tokenizers(self) -> list[TokenizerSpec]:
        return [TokenizerSpec("app-test", (MODEL_TYPE,), WordTokenizer, "word-level test tokenizer")]


def register() -> None:
    from tokenprism.core.plugins import plugin_manager

    pm = plugin_manager()
    if pm.get_plugin("app-test") is None:
        pm.register(AppTestPlugin(), name="app-test")
