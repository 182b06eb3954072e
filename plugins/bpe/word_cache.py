"""The BPE plugin's word cache (compiled): a word's tokens, found for an
ASCII word by its bytes where they lie in the text's collapsed bytes.

Most words of a long text were met before. Keyed by the word as a
``str``, every word needs a ``str`` sliced out of the text, hashed with
SipHash and compared: ~380 instructions a word, a quarter of a 5.2 MB
first encode (1.3M words, 31k distinct). The collapsed bytes the splitter
reads (one a character, below 0x80 exactly where the character is ASCII)
are the text of an ASCII word; such a word is hashed and compared there,
and only a new one is sliced out. Other words, and every word in the
pure-Python build (whose byte loops are ~50x slower), go to a dict.

Each ASCII word's bytes and result sit in two lists at one index, found
through the core's open addressing (``hash_slots`` in the plugin API). A
reader takes the three into locals and checks an index against the lists
it holds; :meth:`WordCache.clear` swaps in new ones, so a thread holding
the old ones finishes on them.
"""

from __future__ import annotations

from typing import Final, Optional, final

from librt.vecs import vec
from mypy_extensions import i64

from tokenprism.core.plugin_api import entry_at, next_match, with_entry

NATIVE: Final = not __file__.endswith(".py")
"""Whether this module is compiled (see the module doc)."""
_M32: Final = 0xFFFFFFFF
_MUL: Final = 0x5BD1E995  # below 2**31: a 32-bit value times it stays below 2**63


class WordResult:
    """Tokens of one word: ids and byte spans relative to the word, and the
    word's length in UTF-8 bytes. Kept in the word cache as one native
    vector (``cols``: id, start, end of each token in turn)."""

    cols: vec[i64]
    n: i64
    nbytes: int

    def __init__(self, cols: vec[i64], nbytes: int) -> None:
        self.cols = cols
        self.n = len(cols) // 3
        self.nbytes = nbytes

    @property
    def ids(self) -> list[int]:
        return [self.cols[3 * t] for t in range(self.n)]

    @property
    def starts(self) -> list[int]:
        return [self.cols[3 * t + 1] for t in range(self.n)]

    @property
    def ends(self) -> list[int]:
        return [self.cols[3 * t + 2] for t in range(self.n)]


def ascii_hash(data: bytes, a: i64, b: i64) -> i64:
    """The 31-bit hash of the bytes ``data[a:b]``, or -1 when one of them
    stands for a non-ASCII character (0x80 and up)."""
    h: i64 = (b - a) & _M32
    x = a
    while x < b:
        c: i64 = data[x]
        if c >= 0x80:
            return -1
        t = (h ^ c) * _MUL
        h = (t ^ (t >> 29)) & _M32
        x += 1
    return h >> 1  # (31 bits, as hash_slots takes them)


def _same(key: bytes, data: bytes, a: i64, b: i64) -> bool:
    """Whether ``key`` is ``data[a:b]``."""
    n: i64 = len(key)
    if n != b - a:
        return False
    k: i64 = 0
    while k < n:
        if key[k] != data[a + k]:
            return False
        k += 1
    return True


@final
class WordCache:
    """Word -> :class:`WordResult` for at most ``limit`` words (then
    emptied): see the module doc."""

    def __init__(self, limit: int) -> None:
        self.limit: i64 = limit
        self.table: dict[str, WordResult] = {}
        self.keys: list[bytes] = []
        self.results: list[WordResult] = []
        self.slots = vec[i64]()  # made on the first ASCII word

    def __len__(self) -> int:
        return len(self.table) + len(self.keys)

    def clear(self) -> None:
        self.table = {}
        self.keys = []
        self.results = []
        self.slots = vec[i64]()

    def get(self, word: str) -> Optional[WordResult]:
        """The result of ``word`` from the dict (a word not found by its bytes)."""
        return self.table.get(word)

    def get_ascii(self, data: bytes, a: i64, b: i64, h: i64) -> Optional[WordResult]:
        """The result of the ASCII word whose bytes are ``data[a:b]`` (hash
        ``h``, :func:`ascii_hash`), or None."""
        slots = self.slots
        keys = self.keys
        results = self.results
        s = next_match(slots, h, h)
        while s >= 0:
            j = entry_at(slots, s)
            if j < len(keys) and j < len(results) and _same(keys[j], data, a, b):
                return results[j]
            s = next_match(slots, h, s + 1)
        return None

    def put(self, word: str, key: bytes, h: i64, r: WordResult) -> None:
        """Keep ``r`` for ``word``, which was not found: by its bytes
        ``key`` and hash ``h`` when ``h >= 0``, else in the dict. Past the
        limit, the cache is emptied first."""
        if len(self.table) + len(self.keys) >= self.limit:
            self.clear()
        if h < 0:
            self.table[word] = r
            return
        j: i64 = len(self.keys)
        self.keys.append(key)
        self.results.append(r)
        self.slots = with_entry(self.slots, h, j)
