"""A vocabulary's pieces as code points in native memory, and a piece -> id
hash index over them, made straight from the bytes of a GGUF file.

Opening a small vocabulary was mostly objects: a ``str`` per piece (~120
ns each with its memory) and a dict entry and an ``int`` per id (~110 ns),
two thirds of a 32k-piece open. A tokenizer only has to find ids by text,
so here a piece is a run of code points in one ``vec[i32]`` and the index
is one ``vec[i64]`` of slots: a pass of native reads over the file's bytes
builds both, and a lookup hashes the query's code points in place
(``get(s, start, end)``: no slice of ``s`` is made).

Decoding follows ``bytes.decode("utf-8", "surrogateescape")``, as the
reader does: a byte that starts no valid UTF-8 sequence (overlong forms,
surrogates and values past U+10FFFF are invalid) becomes U+DC00 + byte,
and decoding resumes at the next byte. Escaping byte by byte makes this
the same result as CPython's, which escapes each byte of an invalid
sequence's maximal prefix: the continuation bytes it covers start no
sequence either.

Compiled. The slot of a piece is ``tag << 32 | id + 1`` (0: empty), with
``tag`` 31 bits of the piece's hash, so a probe reads one native value
and compares code points only when the tags agree.
"""

from __future__ import annotations

from typing import Final, Sequence, final

from librt.strings import BytesWriter, read_i64_le
from librt.vecs import append, vec
from mypy_extensions import i32, i64

from .gil import offer_gil

_HASH_MASK: Final = 0xFFFFFFFFFFFF  # 48 bits: h * 31 + c never overflows an i64
_ID_MASK: Final = 0xFFFFFFFF


@final
class PieceCodes:
    """Piece ``i`` is ``cps[offs[i]:offs[i + 1]]``."""

    def __init__(self, cps: vec[i32], offs: vec[i64]) -> None:
        self.cps = cps
        self.offs = offs

    def __len__(self) -> int:
        return len(self.offs) - 1

    def max_length(self) -> i64:
        """The longest piece's length in code points (0 when none)."""
        offs = self.offs
        best: i64 = 0
        i: i64 = 1
        while i < len(offs):
            d = offs[i] - offs[i - 1]
            if d > best:
                best = d
            i += 1
        return best

    def has_empty(self) -> bool:
        """Whether some piece is empty."""
        offs = self.offs
        i: i64 = 1
        while i < len(offs):
            if offs[i] == offs[i - 1]:
                return True
            i += 1
        return False

    def text(self, i: i64) -> str:
        """Piece ``i`` as a ``str`` (for tests and error messages)."""
        return "".join([chr(c) for c in self.cps[self.offs[i]:self.offs[i + 1]]])


def codes_of(pieces: Sequence[str]) -> PieceCodes:
    """The code points of ``pieces`` (decoded strings)."""
    cps = vec[i32]()
    offs = vec[i64](capacity=len(pieces) + 1)
    offs = append(offs, 0)
    for p in pieces:
        m: i64 = len(p)
        j: i64 = 0
        while j < m:
            cps = append(cps, i32(ord(p[j])))
            j += 1
        offs = append(offs, len(cps))
    return PieceCodes(cps, offs)


def codes_from_bytes(region: bytes, first: i64, end: i64, n: i64, capacity: i64 = -1) -> PieceCodes:
    """The code points of the ``n`` GGUF strings that follow one another
    from offset ``first`` of ``region`` (each an 8-byte little-endian
    length, then its bytes), the last one ending at ``end``: what
    ``StringArray`` holds undecoded. Raises ValueError when the lengths
    do not add up to ``end`` (the reader checked them already).
    ``capacity``: how many code points to make room for at once (the
    vector is zeroed: each unused slot costs a page's share of a fault);
    by default one per string byte, the most there can be."""
    cps = vec[i32](capacity=capacity if capacity >= 0 else max(end - first - 8 * n, 0))
    offs = vec[i64](capacity=n + 1)
    offs = append(offs, 0)
    pos: i64 = first
    i: i64 = 0
    while i < n:
        if pos + 8 > end:
            raise ValueError("string array shorter than its count")
        ln = read_i64_le(region, pos)
        pos += 8
        stop = pos + ln
        if ln < 0 or stop > end:
            raise ValueError("string length past the array")
        while pos < stop:
            b0: i64 = region[pos]
            if b0 < 0x80:
                cps = append(cps, i32(b0))
                pos += 1
                continue
            cp = _sequence_at(region, pos, stop, b0)
            if cp < 0:
                cps = append(cps, i32(0xDC00 + b0))
                pos += 1
            else:
                cps = append(cps, i32(cp))
                pos += 1 + (1 if cp < 0x800 else 2 if cp < 0x10000 else 3)
        offs = append(offs, len(cps))
        i += 1
        if i & 0x3FFF == 0:
            offer_gil()  # built in the loader thread: the GUI must not wait for it
    if pos != end:
        raise ValueError("string array longer than its count")
    return PieceCodes(cps, offs)


def _sequence_at(buf: bytes, pos: i64, stop: i64, b0: i64) -> i64:
    """The code point of the valid multi-byte UTF-8 sequence that lead
    byte ``b0`` starts at ``pos`` (ending by ``stop``), else -1."""
    if 0xC2 <= b0 <= 0xDF:
        if pos + 1 >= stop:
            return -1
        b1: i64 = buf[pos + 1]
        if b1 & 0xC0 != 0x80:
            return -1
        return (b0 & 0x1F) << 6 | (b1 & 0x3F)
    if 0xE0 <= b0 <= 0xEF:
        if pos + 2 >= stop:
            return -1
        b1 = buf[pos + 1]
        lo: i64 = 0xA0 if b0 == 0xE0 else 0x80
        hi: i64 = 0x9F if b0 == 0xED else 0xBF
        if b1 < lo or b1 > hi:
            return -1
        b2: i64 = buf[pos + 2]
        if b2 & 0xC0 != 0x80:
            return -1
        return (b0 & 0x0F) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F)
    if 0xF0 <= b0 <= 0xF4:
        if pos + 3 >= stop:
            return -1
        b1 = buf[pos + 1]
        lo = 0x90 if b0 == 0xF0 else 0x80
        hi = 0x8F if b0 == 0xF4 else 0xBF
        if b1 < lo or b1 > hi:
            return -1
        b2 = buf[pos + 2]
        b3: i64 = buf[pos + 3]
        if b2 & 0xC0 != 0x80 or b3 & 0xC0 != 0x80:
            return -1
        return (b0 & 0x07) << 18 | (b1 & 0x3F) << 12 | (b2 & 0x3F) << 6 | (b3 & 0x3F)
    return -1


def _hash_span(cps: vec[i32], a: i64, b: i64) -> i64:
    """The hash of ``cps[a:b]`` (:meth:`PieceIndex.get` hashes a ``str``'s
    code points the same way)."""
    h: i64 = 0
    while a < b:
        h = ((h * 31) ^ i64(cps[a])) & _HASH_MASK
        a += 1
    return h


def _slot_of(h: i64, mask: i64) -> i64:
    # the 48-bit hash folded and spread; the multiplier keeps it in an i64
    x = (h ^ (h >> 21)) & 0x7FFFFFFF
    return ((x * 0x9E3779B1) >> 15) & mask


def _tag_of(h: i64) -> i64:
    return (h >> 17) & 0x7FFFFFFF


@final
class PieceIndex:
    """Piece -> id over :class:`PieceCodes` (the last of duplicate pieces
    wins, as in llama.cpp's ``token_to_id``). Lookups give -1 for a text
    that is no piece, and for the empty text: empty pieces are left out
    (a vocabulary renames its own, and one made from some other mapping
    marks the ids it lacks with them)."""

    def __init__(self, codes: PieceCodes) -> None:
        self.codes = codes
        n: i64 = len(codes)
        size: i64 = 16
        while size < 2 * n:
            size *= 2
        self.mask: i64 = size - 1
        slots = vec[i64](capacity=size)
        k: i64 = 0
        while k < size:
            slots = append(slots, 0)
            k += 1
        self.slots = slots
        cps = codes.cps
        offs = codes.offs
        i: i64 = 0
        while i < n:
            a = offs[i]
            b = offs[i + 1]
            if b > a:
                self._put(_hash_span(cps, a, b), i, a, b)
            i += 1
            if i & 0x3FFF == 0:
                offer_gil()

    def _put(self, h: i64, tid: i64, a: i64, b: i64) -> None:
        # a duplicate's slot is the earlier one's: the later id wins
        self.slots[self._slot_for(h, self.codes.cps, a, b)] = (_tag_of(h) << 32) | (tid + 1)

    def _slot_for(self, h: i64, other: vec[i32], a: i64, b: i64) -> i64:
        """The slot of the piece ``other[a:b]`` (hash ``h``), or the empty
        slot where it would go."""
        slots = self.slots
        mask = self.mask
        tag = _tag_of(h)
        s = _slot_of(h, mask)
        while True:
            e = slots[s]
            if e == 0 or (e >> 32 == tag and self._equal((e & _ID_MASK) - 1, other, a, b)):
                return s
            s = (s + 1) & mask

    def _equal(self, tid: i64, other: vec[i32], a: i64, b: i64) -> bool:
        """Whether piece ``tid`` is ``other[a:b]``."""
        cps = self.codes.cps
        offs = self.codes.offs
        c = offs[tid]
        if offs[tid + 1] - c != b - a:
            return False
        while a < b:
            if other[a] != cps[c]:
                return False
            a += 1
            c += 1
        return True

    def get(self, s: str, start: i64, end: i64) -> i64:
        """The id of the piece ``s[start:end]``, or -1."""
        h: i64 = 0
        j = start
        while j < end:
            h = ((h * 31) ^ ord(s[j])) & _HASH_MASK
            j += 1
        slots = self.slots
        mask = self.mask
        tag = _tag_of(h)
        slot = _slot_of(h, mask)
        cps = self.codes.cps
        offs = self.codes.offs
        n = end - start
        while True:
            e = slots[slot]
            if e == 0:
                return -1
            if e >> 32 == tag:
                tid = (e & _ID_MASK) - 1
                c = offs[tid]
                if offs[tid + 1] - c == n:
                    k: i64 = 0
                    while k < n and cps[c + k] == ord(s[start + k]):
                        k += 1
                    if k == n:
                        return tid
            slot = (slot + 1) & mask

    def char(self, cp: i64) -> i64:
        """The id of the one-code-point piece ``chr(cp)``, or -1."""
        return self.get(chr(cp), 0, 1)

    def find(self, text: str) -> i64:
        """The id of the piece ``text``, or -1."""
        return self.get(text, 0, len(text))

    def _find_codes(self, cps: vec[i32], a: i64, b: i64, h: i64) -> i64:
        # an empty slot is 0: its "id" is -1
        return (self.slots[self._slot_for(h, cps, a, b)] & _ID_MASK) - 1

    def __len__(self) -> int:
        return len(self.codes)


def last_ids(codes: PieceCodes, texts: list[str]) -> dict[str, int]:
    """The id :class:`PieceIndex` would give each of ``texts`` that is a
    piece of ``codes``, without building it (a vocabulary's load-time
    fix-ups look up a few dozen texts; a 250k-piece index costs ~10 ms).
    A piece is hashed and looked up in a small index of ``texts`` only
    when its first two code points are those of some text (a 64k-entry
    byte map of them), so the pass is a few native reads per piece."""
    wanted = PieceIndex(codes_of(texts))
    pairs = bytearray(_PAIR_KEYS)
    for t in texts:
        if t:
            pairs[_pair_key(ord(t[0]), ord(t[1]) if len(t) > 1 else _NO_CP)] = 1
    keys = bytes(pairs)
    found: dict[str, int] = {}
    cps = codes.cps
    offs = codes.offs
    n: i64 = len(offs) - 1
    i: i64 = 0
    while i < n:
        a = offs[i]
        b = offs[i + 1]
        if b > a and keys[_pair_key(i64(cps[a]), i64(cps[a + 1]) if b > a + 1 else _NO_CP)] != 0:
            k = wanted._find_codes(cps, a, b, _hash_span(cps, a, b))
            if k >= 0:
                found[texts[k]] = int(i)
        i += 1
    return found


_PAIR_KEYS: Final = 65536
_NO_CP: Final = 0x110000  # (the "second code point" of a one-character text)


def _pair_key(first: i64, second: i64) -> i64:
    return (first * 40503 + second) & (_PAIR_KEYS - 1)


# Separators tried in turn: ASCII control bytes that real vocabularies
# rarely hold. ASCII, so that one decodes to itself and cannot join a UTF-8
# sequence around it.
_SEPARATORS = (0x1E, 0x1F, 0x1D, 0x1C, 0x01, 0x02)


_SPLIT_CHUNK = 8192  # strings per decode: small temporaries, and one emoji widens only its chunk's text


def split_strings(buf: bytes, end: int, starts: Sequence[int]) -> list[str]:
    """The strings of ``buf`` whose length prefixes are at ``starts``
    (offsets into ``buf``, checked by the reader, one string right after
    another), the last one ending at ``end``.

    Unless some string holds the separator byte, a native pass copies a
    chunk's strings with one separator byte in place of each 8-byte
    prefix, and one decode and one split make the chunk's strings at once,
    instead of a slice and a decode per string (~800k on large
    vocabularies)."""
    out: list[str] = []
    n: i64 = len(starts)
    if n == 0:
        return out
    pos: i64 = int(starts[0])
    stop: i64 = end
    a: i64 = 0
    while a < n:
        k: i64 = min(n - a, _SPLIT_CHUNK)
        part: list[str] | None = None
        for sep in _SEPARATORS:
            packed = _packed(buf, pos, stop, k, sep)
            if packed is not None:
                # no string holds the byte: each part decodes as its string
                # alone would (ASCII never joins a UTF-8 sequence around it)
                part = packed.decode("utf-8", "surrogateescape").split(chr(sep))
                del part[0]
                break
        if part is None:
            part = []
            p = pos
            for _ in range(k):
                ln = _length_at(buf, p, stop)
                part.append(buf[p + 8:p + 8 + ln].decode("utf-8", "surrogateescape"))
                p += 8 + ln
        pos = _skip(buf, pos, stop, k)
        out.extend(part)
        a += k
        offer_gil()  # a worker opening a big vocabulary must not freeze the GUI thread
    return out


def _length_at(buf: bytes, pos: i64, stop: i64) -> i64:
    """The length in the 8-byte prefix at ``pos``, checked against ``stop``
    (the reader checked it; a wrong one here would read past the array)."""
    if pos + 8 > stop:
        raise ValueError("string array shorter than its count")
    ln = read_i64_le(buf, pos)
    if ln < 0 or ln > stop - pos - 8:
        raise ValueError("string length past the array")
    return ln


def _skip(buf: bytes, pos: i64, stop: i64, k: i64) -> i64:
    """The offset just past the ``k`` strings from ``pos``."""
    for _ in range(k):
        pos += 8 + _length_at(buf, pos, stop)
    return pos


def _packed(buf: bytes, pos: i64, stop: i64, k: i64, sep: i64) -> bytes | None:
    """The ``k`` strings from ``pos``, each after one ``sep`` byte; None
    when one of them holds that byte."""
    w = BytesWriter()
    for _ in range(k):
        ln = _length_at(buf, pos, stop)
        pos += 8
        w.append(sep)
        last = pos + ln
        while pos < last:
            b: i64 = buf[pos]
            if b == sep:
                return None
            w.append(b)
            pos += 1
    return w.getvalue()
