"""Writing small GGUF files in tests with ``gguf.GGUFWriter``, and a tiny
character-level test plugin that exercises the plugin host."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Sequence

import gguf
import numpy as np

from tokenprism.core.hookspecs import hookimpl
from tokenprism.core.plugin_types import TokenizerSpec
from tokenprism.core.tokenizer import FragmentResult, TokenizerConfig, resolve_special_ids
from tokenprism.core.string_array import StringArray
from tokenprism.core.vocab import Vocab


def string_array(items: Sequence[bytes], lead: bytes = b"") -> StringArray:
    """An undecoded GGUF string array of ``items`` (after ``lead`` bytes),
    as the reader makes one."""
    region = bytearray(lead)
    starts = []
    for it in items:
        starts.append(len(region))
        region += struct.pack("<Q", len(it)) + it
    return StringArray(bytes(region), np.array(starts, dtype=np.int64))


def write_vocab_gguf(path: Path, tokens: Sequence[str], model: str = "test-chars", *,
                     scores: Sequence[float] | None = None, types: Sequence[int] | None = None,
                     merges: Sequence[str] | None = None, extra: dict[str, object] | None = None,
                     arch: str = "llama", name: str = "tiny test vocab") -> Path:
    """A vocab-only GGUF with the given tokens (and optional extra keys)."""
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(name)
    w.add_tokenizer_model(model)
    w.add_token_list(list(tokens))
    w.add_token_scores(list(scores) if scores is not None else [0.0] * len(tokens))
    w.add_token_types(list(types) if types is not None else [int(gguf.TokenType.NORMAL)] * len(tokens))
    if merges is not None:
        w.add_token_merges(list(merges))
    for key, value in (extra or {}).items():
        if isinstance(value, bool):
            w.add_bool(key, value)
        elif isinstance(value, int):
            w.add_uint32(key, value)
        elif isinstance(value, float):
            w.add_float32(key, value)
        elif isinstance(value, str):
            w.add_string(key, value)
        elif isinstance(value, bytes):
            w.add_array(key, np.frombuffer(value, dtype=np.uint8))
        else:
            w.add_array(key, value)  # type: ignore[arg-type]
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


class CharTokenizer:
    """One token per character (unknown characters become one byte token
    per UTF-8 byte when the vocab has them); enough to exercise everything
    the core does around a plugin."""

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        ids = resolve_special_ids(vocab, {})
        bos = ids.get("bos", -1)
        eos = ids.get("eos", -1)
        add_bos = vocab.flag("add_bos", bos >= 0)
        add_eos = vocab.flag("add_eos", False)
        self.config = TokenizerConfig(
            kind="CHARS", special_ids=ids,
            special_prefix=(bos,) if add_bos and bos >= 0 else (),
            special_suffix=(eos,) if add_eos and eos >= 0 else (),
            add_bos=add_bos, add_eos=add_eos)

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        ids: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        pos = 0
        unk = self.vocab.special_ids.get("unk", 0)
        for ch in text:
            b = ch.encode("utf-8")
            tid = self.vocab.token_to_id.get(ch)
            if tid is not None:
                ids.append(tid)
                starts.append(pos)
                ends.append(pos + len(b))
            else:
                for k, byte in enumerate(b):
                    ids.append(self.vocab.token_to_id.get(f"<0x{byte:02X}>", unk))
                    starts.append(pos + k)
                    ends.append(pos + k + 1)
            pos += len(b)
        return FragmentResult(ids, starts, ends)

    def piece_bytes(self, token_id: int) -> bytes:
        return self.vocab.pieces[token_id].encode("utf-8")

    def normalized(self, text: str) -> str:
        return text


class CharPlugin:
    """A plugin object registered at run time in tests."""

    @hookimpl
    def tokenprism_tokenizers(self) -> list[TokenizerSpec]:
        return [TokenizerSpec("test-chars", ("test-chars",), CharTokenizer, "one token per character")]


CHAR_TOKENS = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)] + \
    list("abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ.,!?\n\t0123456789") + ["<|special|>", "<user>"]


def char_types() -> list[int]:
    t = gguf.TokenType
    types = [int(t.UNKNOWN), int(t.CONTROL), int(t.CONTROL)] + [int(t.BYTE)] * 256
    types += [int(t.NORMAL)] * (len(CHAR_TOKENS) - len(types) - 2) + [int(t.CONTROL), int(t.USER_DEFINED)]
    return types
