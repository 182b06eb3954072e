"""ByT5's byte-level tokenizer as a TokenPrism plugin.

ByT5 (Xue et al., 2021) has no learned vocabulary: every UTF-8 byte of the
text is one token. Google's vocabulary puts three special tokens first
(0 ``<pad>``, 1 ``</s>``, 2 ``<unk>``), then byte ``b`` at id ``b + 3``, and
appends ``</s>`` to every input. llama.cpp has no tokenizer for it, so a
GGUF file of a ByT5 model opens in TokenPrism only through a plugin like
this one. The file names its tokenizer ``tokenizer.ggml.model = "byt5"``.
A byte's token is the piece ``<0xNN>``, or for an ASCII byte the character
itself (the two spellings llama.cpp's SentencePiece looks bytes up by).
The demo file (``demo.py``) spells printable ASCII as characters, NORMAL
tokens, and every other byte as ``<0xNN>``, a BYTE token: the core decodes
those, and the app draws a letter as a token of its own and the bytes of
one non-ASCII character as one group, with no help from here.

Everything this module takes from TokenPrism is imported in the block
below and nowhere else.
"""

from __future__ import annotations

from tokenprism.core.plugin_api import (FragmentResult, TokenizerConfig, TokenizerSpec, Vocab, hookimpl,
                                        resolve_special_ids)

MODEL_TYPE = "byt5"
"""The ``tokenizer.ggml.model`` value this plugin handles."""
DEFAULT_SPECIAL_IDS = {"pad": 0, "eos": 1, "unk": 2}
"""Google's layout, used where the file names no id of its own."""


def byte_piece(b: int) -> str:
    """A byte token's piece: ``<0xNN>``, upper-case hex."""
    return f"<0x{b:02X}>"


def byte_token_ids(vocab: Vocab) -> list[int]:
    """Each byte's token id: its ``<0xNN>`` piece, else, for an ASCII byte,
    its character. Raises ValueError naming a byte with neither."""
    lookup = vocab.token_to_id
    ids: list[int] = []
    for b in range(256):
        tid = lookup.get(byte_piece(b))
        if tid is None and b < 0x80:
            tid = lookup.get(chr(b))
        if tid is None:
            # open_model turns a ValueError into a GGUFError naming the file
            raise ValueError(f"a byt5 vocabulary needs a token for every byte, and has none for {byte_piece(b)}")
        ids.append(tid)
    return ids


class ByT5Tokenizer:
    """One token per UTF-8 byte.

    The ids are read from the vocabulary rather than computed as ``b + 3``,
    so a file with another layout (extra special tokens first) still gets
    its own ids; a byte with no token is an error at open, not a wrong id
    later. Holds no per-call state, so worker threads may share it.
    """

    def __init__(self, vocab: Vocab) -> None:
        self.vocab = vocab
        self._byte_ids = byte_token_ids(vocab)
        self._id_byte = {tid: bytes([b]) for b, tid in enumerate(self._byte_ids)}
        special = resolve_special_ids(vocab, DEFAULT_SPECIAL_IDS)
        # ByT5 appends </s> and puts nothing before the text; a file may
        # say otherwise with tokenizer.ggml.add_eos_token / add_bos_token
        add_eos = vocab.flag("add_eos", True) and "eos" in special
        add_bos = vocab.flag("add_bos", False) and "bos" in special
        self.config = TokenizerConfig(
            kind="BYT5",
            special_ids=special,
            special_prefix=(special["bos"],) if add_bos else (),
            special_suffix=(special["eos"],) if add_eos else (),
            add_bos=add_bos,
            add_eos=add_eos,
        )

    def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
        # token k is byte k of the fragment; the core widens the tokens of a
        # multi-byte character to its span and groups them
        data = text.encode("utf-8")
        ids = [self._byte_ids[b] for b in data]
        return FragmentResult(ids, list(range(len(data))), list(range(1, len(data) + 1)))

    def cut_points(self, text: str, lo: int, hi: int) -> list[int]:
        # optional (CuttableTokenizer): no token crosses a character
        # boundary and each side's tokens are its own bytes, so every
        # position is a cut and an edit is retokenized around itself only
        return list(range(max(lo, 1), min(hi, len(text))))

    def piece_bytes(self, token_id: int) -> bytes:
        # called for NORMAL tokens only (the core decodes BYTE ones): the
        # ASCII characters, and <0xNN> pieces a file typed NORMAL
        found = self._id_byte.get(token_id)
        return found if found is not None else self.vocab.pieces[token_id].encode("utf-8")

    def normalized(self, text: str) -> str:
        return text  # ByT5 reads the bytes as given


@hookimpl
def tokenprism_tokenizers() -> list[TokenizerSpec]:
    return [TokenizerSpec("byt5", (MODEL_TYPE,), ByT5Tokenizer, "ByT5 byte-level: one token per UTF-8 byte")]
