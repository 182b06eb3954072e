"""The UGM plugin's cache of chunk paths (compiled): the best path of ``▁``
+ a space-delimited chunk, found by the chunk's characters where they lie
in the text.

Keyed by the chunk as a ``str`` (``UgmTokenizer.chunk_path``), every
chunk of a text needs a ``str`` sliced out, hashed with SipHash and looked
up: ~650 instructions a chunk, a fifth of encoding 0.11 MB of prose on
nomic-bert-moe, first time or not. Here a chunk is hashed and compared
natively in the text itself, and only a new one is sliced out.

Each chunk and its path sit in two lists at one index, found through the
core's open addressing (``hash_slots`` in the plugin API). The pure
Python build keeps the ``str``-keyed dict (its character loops would be
~50x slower): see :data:`NATIVE`.
"""

from __future__ import annotations

from typing import Final, final

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import entry_at, next_match, with_entry

NATIVE: Final = not __file__.endswith(".py")
"""Whether this module is compiled (the tokenizer uses it only then)."""
_M32: Final = 0xFFFFFFFF
_MUL: Final = 0x5BD1E995  # below 2**31: a 32-bit value times it stays below 2**63


def chunk_end(text: str, a: i64, n: i64) -> tuple[i64, i64]:
    """The end of the chunk starting at ``text[a]`` (the next space, or
    ``n``) and a 31-bit hash of its code points, in one scan."""
    h: i64 = 0
    x = a
    while x < n:
        c: i64 = ord(text[x])
        if c == 32:
            break
        t = (h ^ c) * _MUL
        h = (t ^ (t >> 29)) & _M32
        x += 1
    return x, h >> 1  # (31 bits, as hash_slots takes them)


def _same(key: str, text: str, a: i64, b: i64) -> bool:
    """Whether ``key`` is ``text[a:b]``."""
    n: i64 = len(key)
    if n != b - a:
        return False
    k: i64 = 0
    while k < n:
        if ord(key[k]) != ord(text[a + k]):
            return False
        k += 1
    return True


@final
class ChunkCache:
    """Chunk -> best path for at most ``limit`` chunks (then emptied): see
    the module doc. A reader takes the lists into locals; :meth:`clear`
    puts new ones in place, so a reader holding the old ones finishes on
    them."""

    def __init__(self, limit: int) -> None:
        self.limit: i64 = limit
        self.keys: list[str] = []
        self.paths: list[vec[i64]] = []
        self.slots = vec[i64]()  # made on the first chunk

    def __len__(self) -> int:
        return len(self.keys)

    def clear(self) -> None:
        self.keys = []
        self.paths = []
        self.slots = vec[i64]()

    def find(self, text: str, a: i64, b: i64, h: i64) -> i64:
        """The index in :attr:`paths` of the chunk ``text[a:b]`` (hash
        ``h``, :func:`chunk_end`), or -1."""
        slots = self.slots
        keys = self.keys
        s = next_match(slots, h, h)
        while s >= 0:
            j = entry_at(slots, s)
            if j < len(keys) and _same(keys[j], text, a, b):
                return j
            s = next_match(slots, h, s + 1)
        return -1

    def put(self, chunk: str, h: i64, path: vec[i64]) -> None:
        """Keep ``path`` for ``chunk`` (hash ``h``), which was not found.
        Past the limit, the cache is emptied first."""
        if len(self.keys) >= self.limit:
            self.clear()
        j: i64 = len(self.keys)
        self.keys.append(chunk)
        self.paths.append(path)
        self.slots = with_entry(self.slots, h, j)
