"""A small test corpus made in the test, and what llama.cpp-exact encoding
says its counts must be (computed here with ``Model.encode`` and plain
Python, not with the corpus service)."""

from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from tokenprism.core import Model, open_model
from tokenprism.core.vocab import Attr

WORDS = ("the quick brown fox jumps over a lazy dog Привет мир как дела 東京 大きい 日本語 مرحبا بالعالم नमस्ते "
         "café naïve Zürich 42 3.14 (x) def return self.value == None").split()


def mixed_text(seed: int, n_words: int, breaks: str = " \n") -> str:
    rng = random.Random(seed)
    return "".join(rng.choice(WORDS) + rng.choice(breaks) for _ in range(n_words))


@dataclass
class Expected:
    """Per model: tokens, byte-fallback and unknown tokens, ids used."""

    tokens: int = 0
    byte_fallback: int = 0
    unknown: int = 0
    ids: set[int] = field(default_factory=set)


def make_corpus(root: Path, parquet: bool = True) -> list[str]:
    """Write the corpus under ``root``; return its documents' texts (what
    each single ``Model.encode`` call gets)."""
    docs: list[str] = []
    (root / "sub").mkdir(parents=True)
    a = mixed_text(1, 300)
    (root / "a.txt").write_text(a, encoding="utf-8")
    docs.append(a)
    md = "# Title\n\nSome *markdown* with `code` and émoji 🙂.\n" + mixed_text(2, 80)
    (root / "sub" / "b.md").write_text(md, encoding="utf-8")
    docs.append(md)
    records = [mixed_text(3 + i, 15) for i in range(6)]
    lines = [json.dumps({"text": r, "id": i}, ensure_ascii=False) for i, r in enumerate(records)]
    lines.insert(2, json.dumps({"other": "no text here"}))
    lines.insert(4, "{not json")
    (root / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs.extend(records)
    if parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        cells = [mixed_text(20 + i, 10) for i in range(5)]
        pq.write_table(pa.table({"text": cells, "n": list(range(5))}), root / "d.parquet", row_group_size=2)
        docs.extend(cells)
    raw = b"invalid \xff\xfe bytes, caf\xe9\nand more text\n"
    (root / "bad.txt").write_bytes(raw)
    docs.append(raw.decode("utf-8", "replace"))
    (root / "blob.bin").write_bytes(b"\x7fELF\x00\x00\x01" + bytes(range(256)) * 8)
    os.symlink(root / "gone.txt", root / "dangling.txt")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "skip.txt").write_text("never read")
    return docs


# invalid sequences in bad.txt: \xff, \xfe, \xe9
INVALID = 3
SKIPPED = {"blob.bin": "binary", "dangling.txt": "no such file"}


def expected(model: Model, docs: list[str], add_special: bool = False) -> Expected:
    out = Expected()
    attrs = model.vocab.attrs
    for d in docs:
        ids = model.encode(d, add_special=add_special).ids
        out.tokens += len(ids)
        out.byte_fallback += sum(1 for i in ids if attrs[i] & Attr.BYTE)
        out.unknown += sum(1 for i in ids if attrs[i] & Attr.UNKNOWN)
        out.ids.update(ids)
    return out


def text_totals(docs: list[str]) -> tuple[int, int, int]:
    """Bytes (UTF-8), characters and words (runs of non-space) of ``docs``."""
    return (sum(len(d.encode("utf-8")) for d in docs), sum(len(d) for d in docs),
            sum(len(re.findall(r"\S+", d)) for d in docs))


def models(paths: list[str]) -> list[Model]:
    return [open_model(p) for p in paths]
