"""The UGM plugin's cache of chunk paths (compiled): the best path of ``▁``
+ a space-delimited chunk, found by the chunk's characters where they lie
in the text.

Keyed by the chunk as a ``str`` (``UgmTokenizer.chunk_path``), every
chunk of a text needs a ``str`` sliced out, hashed with SipHash and looked
up: ~650 instructions a chunk, a fifth of encoding 0.11 MB of prose on
nomic-bert-moe, first time or not. Here a chunk is hashed and compared
natively in the text itself, and only a new one is sliced out.

Each chunk and its path sit at one number, the chunk in the core's
:class:`TextIndex` (``hash_slots``, in the plugin API) and the path in a
list here. The pure
Python build keeps the ``str``-keyed dict (its character loops would be
~50x slower): see :data:`NATIVE`.
"""

from __future__ import annotations

from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import TextIndex

NATIVE: Final = not __file__.endswith(".py")
"""Whether this module is compiled (the tokenizer uses it only then)."""


@final
class ChunkCache:
    """Chunk -> best path for at most ``limit`` chunks (then emptied): see
    the module doc. :meth:`clear` puts a new list and index in place, so a
    reader holding the old ones finishes on them."""

    def __init__(self, limit: int) -> None:
        self.limit: i64 = limit
        self.index = TextIndex()
        self.paths: list[vec[i64]] = []

    def __len__(self) -> int:
        return len(self.index)

    @property
    def keys(self) -> list[str]:
        return self.index.keys

    def clear(self) -> None:
        self.index = TextIndex()
        self.paths = []

    def find(self, text: str, a: i64, b: i64, h: i64) -> i64:
        """The index in :attr:`paths` of the chunk ``text[a:b]`` (hash
        ``h``, the core's ``chunk_end``), or -1."""
        return self.index.find(text, a, b, h)

    def put(self, chunk: str, h: i64, path: vec[i64]) -> None:
        """Keep ``path`` for ``chunk`` (hash ``h``), which was not found.
        Past the limit, the cache is emptied first."""
        if len(self.index) >= self.limit:
            self.clear()
        self.paths.append(path)
        self.index.add(chunk, h)
