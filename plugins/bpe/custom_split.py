"""Hand-written splitters for the common pre-tokenizer regexes.

llama.cpp splits GPT-2's and LLaMA-3/Qwen2/Qwen3.5's regexes with
hand-written code (``unicode_regex_split_custom_gpt2``/``_llama3``...);
``pretokenize`` reproduces them as Python regexes run on the collapsed
text. Matching those regexes is most of a long text's first encode, so
this module finds the same pieces with a loop over the collapsed text's
bytes: every character of it is ASCII or one of the few class
characters (``pretokenize.COLLAPSED_REP``), so one byte says what it is.

The rules below are what the translated regexes match, alternative by
alternative (``re`` takes the first alternative that matches and the
greediest repeat that lets the rest match): the tests compare the pieces
with the regex path on random text of every script. The module is
compiled with mypyc; as pure Python it gives the same pieces, slower.
"""

from __future__ import annotations

from typing import Callable, Final, final

from librt.strings import BytesWriter
from librt.vecs import append, vec
from mypy_extensions import i64, u8

from tokenprism.core.plugin_api import zeros64

# a byte's classes (``class_table``)
LETTER: Final = 1
NUMBER: Final = 2
SPACE: Final = 4  # \s of the translated regexes
MARK: Final = 8

# which splitter a stage uses
KIND_GPT2: Final = 0
KIND_LLAMA3: Final = 1  # \p{N}{1,3}
KIND_QWEN2: Final = 2  # \p{N}
KIND_QWEN35: Final = 3  # \p{N}, marks go with letters

_APOS: Final = 0x27
_CR: Final = 0x0D
_LF: Final = 0x0A
_BLANK: Final = 0x20


def class_table(letters: list[int], numbers: list[int], spaces: list[int], marks: list[int]) -> bytes:
    """The 256-byte table of classes of the collapsed text's bytes: the
    bytes that stand for letters, numbers, ``\\s`` and marks."""
    t = bytearray(256)
    for b in letters:
        t[b] |= LETTER
    for b in numbers:
        t[b] |= NUMBER
    for b in spaces:
        t[b] |= SPACE
    for b in marks:
        t[b] |= MARK
    return bytes(t)


def _contraction(data: bytes, pos: i64, end: i64, fold: i64) -> i64:
    """The end of ``'s 't 'm 'd 're 've 'll`` at ``pos`` (which holds an
    apostrophe), or -1; ``fold`` 0x20 makes ASCII letters match either case
    (``'[sS]``: only ASCII letters give an ASCII letter or'd with 0x20)."""
    if pos + 1 >= end:
        return -1
    c1: i64 = data[pos + 1] | fold
    if c1 == 0x73 or c1 == 0x74 or c1 == 0x6D or c1 == 0x64:  # s t m d
        return pos + 2
    if pos + 2 >= end:
        return -1
    c2: i64 = data[pos + 2] | fold
    if (c1 == 0x72 and c2 == 0x65) or (c1 == 0x76 and c2 == 0x65) or (c1 == 0x6C and c2 == 0x6C):  # re ve ll
        return pos + 3
    return -1


def _spaces_end(tab: bytes, data: bytes, pos: i64, end: i64) -> i64:
    """``\\s+(?!\\S)|\\s+`` at ``pos`` (a space): the run, less its last
    space when something other than a space follows, but one at least."""
    e: i64 = pos + 1
    while e < end and tab[data[e]] & SPACE:
        e += 1
    if e == end or e - pos == 1:
        return e
    return e - 1


def gpt2_end(tab: bytes, data: bytes, pos: i64, end: i64) -> i64:
    """The end of the piece at ``pos`` of ``data[:end]`` for GPT-2's regex
    ``'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+``."""
    c: i64 = data[pos]
    if c == _APOS:
        e: i64 = _contraction(data, pos, end, 0)
        if e >= 0:
            return e
    p: i64 = pos
    if c == _BLANK and pos + 1 < end and not tab[data[pos + 1]] & SPACE:
        p = pos + 1  # " ?" takes the blank when letters, digits or others follow
    k: i64 = tab[data[p]] & (LETTER | NUMBER | SPACE)
    if k == 0:  # [^\s\p{L}\p{N}]+
        e = p + 1
        while e < end and not tab[data[e]] & (LETTER | NUMBER | SPACE):
            e += 1
        return e
    if k & SPACE:
        return _spaces_end(tab, data, pos, end)
    # \p{L}+ or \p{N}+ (a byte is one or the other)
    e = p + 1
    while e < end and tab[data[e]] & k:
        e += 1
    return e


def llama3_end(tab: bytes, data: bytes, pos: i64, end: i64, max_digits: i64, letter: i64) -> i64:
    """The end of the piece at ``pos`` of ``data[:end]`` for LLaMA-3's regex
    ``(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|
    \\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`` and its
    Qwen2 (``\\p{N}``, ``max_digits`` 1) and Qwen3.5 (``[\\p{L}\\p{M}]`` for
    ``\\p{L}``, ``letter`` = LETTER | MARK) variants."""
    c: i64 = data[pos]
    if c == _APOS:
        e: i64 = _contraction(data, pos, end, 0x20)
        if e >= 0:
            return e
    k: i64 = tab[c]
    word: i64 = letter | NUMBER | SPACE
    # [^\r\n\p{L}\p{N}]?\p{L}+
    if k & letter or (c != _CR and c != _LF and not k & NUMBER and pos + 1 < end and tab[data[pos + 1]] & letter):
        e = pos + 1
        while e < end and tab[data[e]] & letter:
            e += 1
        return e
    if k & NUMBER:
        e = pos + 1
        stop: i64 = pos + max_digits if pos + max_digits < end else end
        while e < stop and tab[data[e]] & NUMBER:
            e += 1
        return e
    # " ?[^\s\p{L}\p{N}]+[\r\n]*"
    p: i64 = -1
    if not k & word:
        p = pos
    elif c == _BLANK and pos + 1 < end and not tab[data[pos + 1]] & word:
        p = pos + 1
    if p >= 0:
        e = p + 1
        while e < end and not tab[data[e]] & word:
            e += 1
        while e < end and (data[e] == _CR or data[e] == _LF):
            e += 1
        return e
    # a space: \s*[\r\n]+ up to the run's last line break, else as GPT-2
    e = pos
    last: i64 = -1
    while e < end and tab[data[e]] & SPACE:
        if data[e] == _CR or data[e] == _LF:
            last = e
        e += 1
    if last >= 0:
        return last + 1
    if e == end or e - pos == 1:
        return e
    return e - 1


def piece_end(kind: i64, tab: bytes, data: bytes, pos: i64, end: i64) -> i64:
    """The end of the piece of splitter ``kind`` at ``pos`` of ``data[:end]``."""
    if kind == KIND_GPT2:
        return gpt2_end(tab, data, pos, end)
    if kind == KIND_LLAMA3:
        return llama3_end(tab, data, pos, end, 3, LETTER)
    if kind == KIND_QWEN2:
        return llama3_end(tab, data, pos, end, 1, LETTER)
    return llama3_end(tab, data, pos, end, 1, LETTER | MARK)


def split_ends(kind: i64, tab: bytes, data: bytes, a: i64, b: i64, shift: i64, out: list[int]) -> None:
    """Append the end of every piece of ``data[a:b]``, plus ``shift``, to ``out``."""
    pos = a
    while pos < b:
        pos = piece_end(kind, tab, data, pos, b)
        out.append(pos + shift)


def split_words(kind: i64, tab: bytes, data: bytes, text: str) -> list[str]:
    """The pieces of ``text`` (``data``: its collapsed bytes, one per char)."""
    out: list[str] = []
    n: i64 = len(text)
    pos: i64 = 0
    if kind == KIND_GPT2:
        while pos < n:
            e = gpt2_end(tab, data, pos, n)
            out.append(text[pos:e])
            pos = e
        return out
    digits: i64 = 3 if kind == KIND_LLAMA3 else 1
    letter: i64 = LETTER | MARK if kind == KIND_QWEN35 else LETTER
    while pos < n:
        e = llama3_end(tab, data, pos, n, digits, letter)
        out.append(text[pos:e])
        pos = e
    return out


_MEMO_SIZE: Final = 4096
_MEMO_MISSES: Final = 4096
"""Non-ASCII characters classed one by one (:func:`collapse`) before the
whole table is asked for."""


def new_memo() -> vec[i64]:
    """The empty memo :func:`collapse` keeps a code point's byte in."""
    return zeros64(_MEMO_SIZE)


def collapse(text: str, memo: vec[i64], rep_of: Callable[[int], int], table_of: Callable[[], bytes],
             table: bytes) -> bytes:
    """``text`` collapsed, one byte a character: ASCII as it is, any other
    code point the byte ``rep_of`` gives it (its class's), kept in ``memo``
    (direct-mapped: ``cp << 8 | byte``) or read from ``table`` (every code
    point's byte, ``table_of()``: asked for after :data:`_MEMO_MISSES`
    misses, a text of many distinct characters). Numpy's pass (the text as
    UTF-32, masks, a unique of the non-ASCII characters) faulted in several
    times the text's size and took ~1.9 ms of a first encode of 0.11 MB.

    The text's latin-1 bytes first (``?`` for the code points above
    U+00FF), in one C call; then a pass over the bytes, where only those
    above 0x7F and the ``?`` need their character: reading every
    character from compiled code cost ~30 instructions each."""
    raw = text.encode("latin-1", "replace")
    w = BytesWriter()
    w.write(raw)
    st = _Reps(memo, rep_of, table_of, table)
    n: i64 = len(raw)
    i: i64 = 0
    while i < n:
        b: i64 = raw[i]
        if b >= 0x80:
            w[i] = u8(st.rep(b))
        elif b == 0x3F:
            cp: i64 = ord(text[i])
            if cp != 0x3F:
                w[i] = u8(st.rep(cp))
        i += 1
    return w.getvalue()


@final
class _Reps:
    """The byte of each non-ASCII code point, for :func:`collapse`."""

    def __init__(self, memo: vec[i64], rep_of: Callable[[int], int], table_of: Callable[[], bytes],
                 table: bytes) -> None:
        self.memo = memo
        self.rep_of = rep_of
        self.table_of = table_of
        self.table = table
        self.misses: i64 = 0

    def rep(self, cp: i64) -> i64:
        table = self.table
        if len(table) > 0:
            return table[cp]
        memo = self.memo
        s = cp & (_MEMO_SIZE - 1)
        e = memo[s]
        if e >> 8 == cp:
            return e & 0xFF
        r: i64 = self.rep_of(cp)
        memo[s] = (cp << 8) | r
        self.misses += 1
        if self.misses == _MEMO_MISSES:
            self.table = self.table_of()
        return r
