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
class _Kept:
    """One generation of the cache: chunks and their paths at the same numbers."""

    def __init__(self) -> None:
        self.index = TextIndex()
        self.paths: list[vec[i64]] = []


_NO_PATH: Final = vec[i64]()


@final
class ChunkCache:
    """Chunk -> best path for at most ``limit`` chunks (then emptied): see
    the module doc. Emptying puts a new generation in place (one attribute):
    a reader holding the old one finishes on it, and never pairs a number
    from one generation's index with the other's paths."""

    def __init__(self, limit: int) -> None:
        self.limit: i64 = limit
        self._kept = _Kept()

    def __len__(self) -> int:
        return len(self._kept.index)

    @property
    def keys(self) -> list[str]:
        return self._kept.index.keys

    @property
    def paths(self) -> list[vec[i64]]:
        return self._kept.paths

    def clear(self) -> None:
        self._kept = _Kept()

    def find(self, text: str, a: i64, b: i64, h: i64) -> i64:
        """The number in :attr:`paths` of the chunk ``text[a:b]`` (hash
        ``h``, the core's ``chunk_end``), or -1."""
        return self._kept.index.find(text, a, b, h)

    def path_of(self, text: str, a: i64, b: i64, h: i64) -> vec[i64]:
        """The path kept for the chunk ``text[a:b]`` (hash ``h``), or an
        empty one (a kept path never is: a chunk has a token)."""
        kept = self._kept
        at = kept.index.find(text, a, b, h)
        # (a path is appended before its chunk is numbered: see put)
        return kept.paths[at] if 0 <= at < len(kept.paths) else _NO_PATH

    def put(self, chunk: str, h: i64, path: vec[i64]) -> None:
        """Keep ``path`` for ``chunk`` (hash ``h``), which was not found.
        Past the limit, the cache is emptied first."""
        kept = self._kept
        if len(kept.index) >= self.limit:
            kept = _Kept()
            self._kept = kept
        kept.paths.append(path)
        kept.index.add(chunk, h)
