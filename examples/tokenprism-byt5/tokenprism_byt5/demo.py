"""Write a vocab-only ByT5 GGUF file to try the plugin on.

    tokenprism-byt5-demo byt5-demo.gguf      (or python -m tokenprism_byt5.demo)
    tokenprism byt5-demo.gguf

The file holds Google's ByT5 vocabulary: ``<pad>``, ``</s>``, ``<unk>``,
then the 256 bytes (ids 3-258): printable ASCII as its character, a NORMAL
token, every other byte as ``<0xNN>``, a BYTE token, so that the app shows
the bytes of a non-ASCII character as one byte group. It has no tensors:
TokenPrism reads only the tokenizer. Needs only the ``gguf``
package, which TokenPrism depends on anyway.
"""

from __future__ import annotations

import argparse
import os
from typing import Sequence

import gguf

from .plugin import DEFAULT_SPECIAL_IDS, MODEL_TYPE, byte_piece

SPECIAL_PIECES = ("<pad>", "</s>", "<unk>")


def demo_tokens() -> tuple[list[str], list[int]]:
    """The pieces and GGUF token types of the ByT5 vocabulary."""
    t = gguf.TokenType
    pieces = list(SPECIAL_PIECES)
    types = [int(t.CONTROL), int(t.CONTROL), int(t.UNKNOWN)]
    for b in range(256):
        printable = 0x20 <= b < 0x7F
        pieces.append(chr(b) if printable else byte_piece(b))
        types.append(int(t.NORMAL if printable else t.BYTE))
    return pieces, types


def write_demo_gguf(path: str | os.PathLike[str], name: str = "ByT5 demo vocab") -> str:
    """Write the demo vocabulary to ``path`` and return the path."""
    pieces, types = demo_tokens()
    out = os.fspath(path)
    w = gguf.GGUFWriter(out, "t5")  # ByT5 is a T5 model with this vocabulary
    w.add_name(name)
    w.add_tokenizer_model(MODEL_TYPE)
    w.add_token_list(pieces)
    w.add_token_types(types)
    w.add_pad_token_id(DEFAULT_SPECIAL_IDS["pad"])
    w.add_eos_token_id(DEFAULT_SPECIAL_IDS["eos"])
    w.add_unk_token_id(DEFAULT_SPECIAL_IDS["unk"])
    w.add_add_bos_token(False)
    w.add_add_eos_token(True)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tokenprism-byt5-demo", description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default="byt5-demo.gguf", help="file to write (byt5-demo.gguf)")
    args = parser.parse_args(argv)
    print(write_demo_gguf(args.path))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
