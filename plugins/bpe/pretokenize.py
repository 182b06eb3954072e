"""Pre-tokenization exactly as llama.cpp's ``unicode_regex_split`` does it.

llama.cpp splits text with a list of regexes, each one applied inside every
piece the previous one produced. It does not run them through a Unicode
regex engine:

* a few well-known regexes (GPT-2, LLaMA-3, Qwen2, Qwen3.5, Kimi-K2,
  AFMoE digits, newline runs) go to hand-written splitters that classify
  code points with llama.cpp's own Unicode tables (``unicode_data``);
* every other regex runs through C++ ``std::regex`` (ECMAScript). When it
  uses ``\\p{..}`` categories, the text is first "collapsed": every
  non-ASCII code point becomes one byte standing for its category
  (whitespace -> ``\\v``, number, letter, punctuation, mark, symbol, other)
  and each ``\\p{X}`` becomes that byte plus an ASCII range. Without
  categories, non-ASCII whitespace is replaced by ``\\v``.

Python's ``re`` gives the same matches as ``std::regex`` for these
patterns (both are backtracking, first-alternative-wins engines), so each
llama.cpp regex is translated once into a Python regex whose character
classes are exactly the code points the collapsed or substituted text
would let through. The hand-written splitters for GPT-2/LLaMA-3/Qwen2/
Qwen3.5 behave like their regexes with llama.cpp's tables (``|\\s+`` added
for GPT-2), so they are translated the same way; Kimi-K2 and AFMoE digits
are reimplemented as code.

Speed: a category regex runs on our own collapsed copy of the text (ASCII
kept, every other code point replaced by one character per class, one
``str.translate``), so its classes stay tiny; ``exact=True`` writes the
full Unicode classes instead (the tests check both agree). A piece is split
by the later regexes independently of its neighbours, so the words of short
pieces are remembered per stage.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # (numpy.typing at run time was ~0.7 ms of every BPE file's first open)
    import numpy as np
    import numpy.typing as npt

from tokenprism.core.plugin_api import (
    MAX_CP, Ranges, complement, contains, flag_ranges, intersect, lowercase_pairs, merged, subtract,
    unicode_data as ud, whitespace)

from . import custom_split as cs

# the hand-written splitters of unicode.cpp, keyed by the regex text that
# selects them (unicode_regex_split_custom)
GPT2_REGEX = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)"
LLAMA3_REGEX = ("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
                "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
LLAMA3_REGEX_ORIG = ("(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
                     " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN2_REGEX = ("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
               "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
QWEN35_REGEX = ("(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|"
                "\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+")
KIMI_K2_REGEX = "\\p{Han}+"
AFMOE_REGEX = "\\p{AFMoE_digits}"
TINY_AYA_DIGITS_REGEX = "\\d{1,3}(?=(?:\\d{3})*\\b)"
NEWLINES_REGEX = "[^\\n]+|[\\n]+"

# what the custom splitters are equivalent to (a regex with llama.cpp's tables)
_CUSTOM_AS_REGEX: dict[str, str] = {
    GPT2_REGEX: GPT2_REGEX + "|\\s+",
    LLAMA3_REGEX: LLAMA3_REGEX,
    LLAMA3_REGEX_ORIG: LLAMA3_REGEX,
    QWEN2_REGEX: QWEN2_REGEX,
    QWEN35_REGEX: QWEN35_REGEX,
    NEWLINES_REGEX: NEWLINES_REGEX,
}

# the regexes custom_split finds the pieces of without re (from what they
# are equivalent to)
_CUSTOM_KIND: dict[str, int] = {
    GPT2_REGEX: cs.KIND_GPT2,
    LLAMA3_REGEX: cs.KIND_LLAMA3,
    LLAMA3_REGEX_ORIG: cs.KIND_LLAMA3,
    QWEN2_REGEX: cs.KIND_QWEN2,
    QWEN35_REGEX: cs.KIND_QWEN35,
}
# custom_split is faster than re only compiled (pure Python: 2x slower)
NATIVE_CUSTOM_SPLIT: bool = not cs.__file__.endswith(".py")

# unicode_regex_split: the categories that trigger the collapsed text
_UCAT_ENUM: dict[str, int] = {
    "\\p{N}": ud.NUMBER, "\\p{L}": ud.LETTER, "\\p{P}": ud.PUNCTUATION, "\\p{M}": ud.ACCENT_MARK,
    "\\p{S}": ud.SYMBOL, "\\p{Lu}": ud.LETTER, "\\p{Ll}": ud.LETTER, "\\p{Lt}": ud.LETTER,
    "\\p{Lm}": ud.LETTER, "\\p{Lo}": ud.LETTER,
}
_UCAT_CPT: dict[int, int] = {
    ud.NUMBER: 0xD1, ud.LETTER: 0xD2, ud.PUNCTUATION: 0xD3, ud.ACCENT_MARK: 0xD4, ud.SYMBOL: 0xD5,
}
_UCAT_MAP: dict[int, str] = {
    ud.NUMBER: "\x30-\x39",
    ud.LETTER: "\x41-\x5A\x61-\x7A",
    ud.PUNCTUATION: "\x21-\x23\x25-\x2A\x2C-\x2F\x3A-\x3B\x3F-\x40\\\x5B-\\\x5D\x5F\\\x7B\\\x7D",
    ud.ACCENT_MARK: "",
    ud.SYMBOL: "\\\x24\\\x2B\x3C-\x3E\x5E\x60\\\x7C\\\x7E",
}
_COLLAPSED_OTHER = 0xD0
# the char that stands for each class of non-ASCII code points in our own
# collapsed text (keyed by llama.cpp's collapsed byte; 0x0B = whitespace)
COLLAPSED_REP: dict[int, int] = {0x0B: 0x80, 0xD0: 0x81, 0xD1: 0x82, 0xD2: 0x83, 0xD3: 0x84, 0xD4: 0x85, 0xD5: 0x86}
# every character, as a class Python's re compiles at once: a range over
# every code point made it fill a 64k-entry map char by char (~5 ms for
# one ``$``)
_ANY_CHAR = "[\\s\\S]"
_C_SPACE: list[tuple[int, int]] = [(0x09, 0x0D), (0x20, 0x20)]  # isspace() in the "C" locale
# a text with more non-ASCII chars, or more distinct ones, than this is
# collapsed with the whole table (made once a process)
_SPARSE_CHARS = 1 << 16
_SPARSE_MIN = 4096  # (shorter texts: the table)
_TRANSLATE_CHARS = 1 << 22  # (shorter texts before the table is made: str.translate, no numpy)
_SPARSE_DISTINCT = 2048
# the classes of the collapsed text's bytes for custom_split: ASCII as the
# translated \p{L}, \p{N}, \s see it, and the class chars
CLASS_TABLE: bytes = cs.class_table(
    [*range(0x41, 0x5B), *range(0x61, 0x7B), COLLAPSED_REP[0xD2]],
    [*range(0x30, 0x3A), COLLAPSED_REP[0xD1]],
    [*range(0x09, 0x0E), 0x20, COLLAPSED_REP[0x0B]],
    [COLLAPSED_REP[0xD4]])


class UnicodeTables:
    """llama.cpp's code point flags, as range sets and a lookup."""

    def __init__(self) -> None:
        data = ud.FLAG_RANGES
        self.starts: list[int] = list(data[0::2])
        self.flags: list[int] = list(data[1::2])
        ws = whitespace()
        self.whitespace: frozenset[int] = frozenset(ws)
        self.lower: dict[int, int] = dict(lowercase_pairs())
        self.nonascii_ws: Ranges = merged([(c, c) for c in ws if c >= 0x80])
        # the range sets of the categories are made when a regex first
        # needs them (~1.2 ms; a category regex over ASCII text needs none)
        self._cats: Optional[dict[int, Ranges]] = None
        self._collapsed: Optional[dict[int, Ranges]] = None
        self._collapse_bytes: Optional[npt.NDArray[np.uint8]] = None
        self._collapse_raw = b""  # the same table as bytes (compiled code reads them)
        self._memo = cs.new_memo()
        # the pure build's collapse(): a str.translate table, ASCII to
        # itself, then each non-ASCII char met, to its rep (grows by the few
        # a text brings)
        self._reps: dict[int, int] = {c: c for c in range(128)}

    def categories(self) -> dict[int, Ranges]:
        """The code points of each category bit, as merged ranges."""
        cats = self._cats
        if cats is None:
            cats = {bit: flag_ranges(bit)
                    for bit in (ud.NUMBER, ud.LETTER, ud.PUNCTUATION, ud.ACCENT_MARK, ud.SYMBOL)}
            self._cats = cats
        return cats

    def collapsed_classes(self) -> dict[int, Ranges]:
        """The non-ASCII code points each collapsed byte stands for
        (llama.cpp's byte for a category, ``_COLLAPSED_OTHER`` for the
        rest), whitespace left out of all of them."""
        sets = self._collapsed
        if sets is None:
            cats = self.categories()
            nonascii: Ranges = [(0x80, MAX_CP)]
            known: Ranges = list(self.nonascii_ws)
            sets = {}
            for bit, val in _UCAT_CPT.items():
                part = subtract(intersect(cats[bit], nonascii), self.nonascii_ws)
                sets[val] = part
                known.extend(part)
            sets[_COLLAPSED_OTHER] = subtract(nonascii, known)
            self._collapsed = sets
        return sets

    def collapse_bytes(self) -> npt.NDArray[np.uint8]:
        """The collapsed char of every code point, as its latin-1 byte: ASCII
        stays, every other code point becomes the representative char of
        its class (``COLLAPSED_REP``)."""
        b = self._collapse_bytes
        if b is None:
            runs = [(lo, hi, COLLAPSED_REP[val]) for val, part in self.collapsed_classes().items() for lo, hi in part]
            runs += [(lo, hi, COLLAPSED_REP[0x0B]) for lo, hi in self.nonascii_ws]
            b = _paint_runs(runs)
            self._collapse_bytes = b
        return b

    def collapse(self, text: str) -> bytes:
        """:func:`collapse_text` as the latin-1 bytes of its chars. Until the
        whole table is needed (a text of many distinct non-ASCII chars) the
        chars a text holds are classed one by one: the 1.1M-entry table took
        ~15M instructions, most of a short text's split. Compiled, one
        native pass over the characters (``custom_split.collapse``); pure,
        ``str.translate`` until the table exists, then numpy."""
        if NATIVE_CUSTOM_SPLIT:
            return cs.collapse(text, self._memo, self.collapsed_rep, self._table_raw, self._collapse_raw)
        if self._collapse_bytes is None and len(text) < _TRANSLATE_CHARS:
            # until the table exists, by str.translate with the reps of the
            # chars met so far: numpy's import (~65 ms) would be most of a
            # command line's run and of a first encode of 0.1 MB
            known = self._reps
            new = [c for c in map(ord, set(text)) if c not in known]
            if len(new) <= _SPARSE_DISTINCT:
                for c in new:
                    known[c] = self.collapsed_rep(c)
                return text.translate(known).encode("latin-1")
        import numpy as np

        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        table = self._collapse_bytes
        if table is not None or len(cps) < _SPARSE_MIN:
            # (a short text, a keystroke's: numpy's per-call costs of the
            # char-at-a-time path tripled its split)
            return self.collapse_bytes()[cps].tobytes()
        far = np.flatnonzero(cps >= 0x80)
        if len(far) > _SPARSE_CHARS:
            return self.collapse_bytes()[cps].tobytes()
        out = cps.astype(np.uint8)
        if len(far):
            distinct, where = np.unique(cps[far], return_inverse=True)
            if len(distinct) > _SPARSE_DISTINCT:
                return self.collapse_bytes()[cps].tobytes()
            reps = [self.collapsed_rep(c) for c in distinct.tolist()]
            out[far] = np.array(reps, dtype=np.uint8)[where]
        return out.tobytes()

    def _table_raw(self) -> bytes:
        """:meth:`collapse_bytes` as bytes (made once)."""
        raw = self._collapse_raw
        if not raw:
            raw = self.collapse_bytes().tobytes()
            self._collapse_raw = raw
        return raw

    def collapsed_rep(self, cpt: int) -> int:
        """The char that stands for non-ASCII ``cpt`` in the collapsed text,
        as :meth:`collapse_bytes` has it: whitespace first, else its
        category (the last of :data:`_UCAT_CPT`'s order, as painted there),
        else the "other" char."""
        f = self.flag(cpt)
        if f & 0x100:
            return COLLAPSED_REP[0x0B]
        rep = COLLAPSED_REP[_COLLAPSED_OTHER]
        for bit, val in _UCAT_CPT.items():
            if f & bit:
                rep = COLLAPSED_REP[val]
        return rep

    def flag(self, cpt: int) -> int:
        """``unicode_cpt_flags_from_cpt`` (categories and the whitespace bit 0x100)."""
        if cpt > MAX_CP:
            return ud.UNDEFINED
        f = self.flags[bisect_right(self.starts, cpt) - 1]
        if cpt in self.whitespace:
            f |= 0x100
        return f

    def tolower(self, cpt: int) -> int:
        return self.lower.get(cpt, cpt)


def _paint_runs(runs: list[tuple[int, int, int]]) -> npt.NDArray[np.uint8]:
    """The 0..MAX_CP table of :meth:`UnicodeTables.collapse_bytes`: ASCII
    maps to itself and each ``(lo, hi, byte)`` run to its byte, later runs
    over earlier ones. The classes partition the non-ASCII code points
    (one category each, whitespace taken out of all), so sorted they tile
    0x80..MAX_CP and the table is one ``np.repeat`` (painting 1.1M entries
    range by range took ~1.8 ms of every first load)."""
    import numpy as np

    table = np.array(runs, dtype=np.int64).reshape(-1, 3)
    table = table[np.argsort(table[:, 0], kind="stable")]
    los, his = table[:, 0], table[:, 1]
    if len(table) and los[0] == 0x80 and his[-1] == MAX_CP and bool((los[1:] == his[:-1] + 1).all()):
        # ASCII as 128 runs of one: the table is allocated once
        reps = np.concatenate((np.arange(128, dtype=np.uint8), table[:, 2].astype(np.uint8)))
        return np.repeat(reps, np.concatenate((np.ones(128, dtype=np.int64), his - los + 1)))
    # overlapping or gapped classes (not llama.cpp's tables): in order
    out = np.full(MAX_CP + 1, COLLAPSED_REP[_COLLAPSED_OTHER], dtype=np.uint8)
    out[:128] = np.arange(128, dtype=np.uint8)
    for lo, hi, rep in runs:
        out[lo:hi + 1] = rep
    return out


def collapse_text(table: npt.NDArray[np.uint8], text: str) -> str:
    """``text`` collapsed by ``table`` (:meth:`UnicodeTables.collapse_bytes`),
    looked up for the whole text at once: ``str.translate`` with the same
    table as a 1.1M-char string calls back into it for every character
    (7.5 ms against 0.9 ms for 0.5 MB of mixed scripts)."""
    import numpy as np

    cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    return table[cps].tobytes().decode("latin-1")


_tables: Optional[UnicodeTables] = None


def tables() -> UnicodeTables:
    global _tables
    if _tables is None:
        _tables = UnicodeTables()
    return _tables


# ---------------------------------------------------- ECMAScript -> Python

def _collapse_regex(regex: str) -> str:
    """llama.cpp's rewriting of a regex for the collapsed text (categories
    become their marker byte, here a char U+00D1..U+00D5, plus ASCII ranges),
    including its simple-minded tracking of ``[...]``."""
    out: list[str] = []
    inside = False
    i = 0
    n = len(regex)
    while i < n:
        c = regex[i]
        if c == "[" and (i == 0 or regex[i - 1] != "\\"):
            out.append("[")
            inside = True
            i += 1
            continue
        if inside and c == "]" and regex[i - 1] != "\\":
            out.append("]")
            inside = False
            i += 1
            continue
        if c == "\\" and i + 3 < n and regex[i + 1] == "p" and regex[i + 2] == "{":
            close = regex.find("}", i + 3)
            if close != -1 and close <= i + 10:
                pat = regex[i:close + 1]
                if pat in _UCAT_ENUM:
                    cat = _UCAT_ENUM[pat]
                    if not inside:
                        out.append("[")
                    out.append(chr(_UCAT_CPT[cat]))
                    out.append(_UCAT_MAP[cat])
                    if not inside:
                        out.append("]")
                    i = close + 1
                    continue
        out.append(c)
        i += 1
    return "".join(out)


class _Translator:
    """Parses one ECMAScript regex (as ``std::regex`` sees it) and writes the
    Python regex that matches the same code points of the original text."""

    def __init__(self, regex: str, collapsed: bool, exact: bool) -> None:
        self.src = regex
        self.collapsed = collapsed
        self.exact = exact
        self.pos = 0
        self.tab = tables()
        self.top = 0xFF if collapsed else MAX_CP
        self.uses_anchor_start = False

    def error(self, msg: str) -> ValueError:
        return ValueError(f"unsupported regex {self.src!r} at {self.pos}: {msg}")

    # sets over the values std::regex compares: chars of the collapsed text
    # (0..0xFF) or code points of the substituted wide text
    def to_unicode(self, s: Ranges) -> Ranges:
        tab = self.tab
        s = merged(s)
        if self.collapsed and not self.exact:
            # over our collapsed text: ASCII plus one char per class
            out = intersect(s, [(0, 0x7F)])
            for val, rep in COLLAPSED_REP.items():
                if contains(s, val):
                    out.append((rep, rep))
            return merged(out)
        if self.collapsed:
            out = intersect(s, [(0, 0x7F)])
            if contains(s, 0x0B):
                out.extend(tab.nonascii_ws)
            for val, part in tab.collapsed_classes().items():
                if contains(s, val):
                    out.extend(part)
            return merged(out)
        out = subtract(s, tab.nonascii_ws)
        if contains(s, 0x0B):
            out.extend(tab.nonascii_ws)
        return merged(out)

    def emit_set(self, s: Ranges) -> str:
        u = self.to_unicode(s)
        if not u:
            return "(?!)"
        comp = complement(u, MAX_CP)
        if len(u) == 1 and u[0][0] == u[0][1]:
            return re.escape(chr(u[0][0]))
        if len(comp) < len(u):
            if not comp:
                return _ANY_CHAR
            return "[^" + _class_body(comp) + "]"
        return "[" + _class_body(u) + "]"

    def class_escape(self, c: str) -> Ranges:
        """A ``\\d \\D \\s \\S \\w \\W`` class as values."""
        word: Ranges = [(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)]
        if c == "d":
            return [(0x30, 0x39)]
        if c == "D":
            return complement([(0x30, 0x39)], self.top)
        if c == "s":
            return list(_C_SPACE)
        if c == "S":
            return complement(_C_SPACE, self.top)
        if c == "w":
            return word
        if c == "W":
            return complement(word, self.top)
        raise self.error("bad class escape")

    def char_escape(self) -> int:
        """The value of a character escape after the backslash (pos at the
        char after ``\\``); advances past it."""
        src = self.src
        c = src[self.pos]
        self.pos += 1
        simple = {"n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B, "f": 0x0C, "0": 0x00}
        if c in simple:
            return simple[c]
        if c == "x":
            v = int(src[self.pos:self.pos + 2], 16)
            self.pos += 2
            return v
        if c == "u":
            v = int(src[self.pos:self.pos + 4], 16)
            self.pos += 4
            return v
        if c == "c":
            v = ord(src[self.pos]) % 32
            self.pos += 1
            return v
        if c.isdigit() or c.isalpha():
            raise self.error(f"escape \\{c}")
        return ord(c)

    def parse_class(self) -> str:
        # pos is after '['
        src = self.src
        negate = False
        if self.pos < len(src) and src[self.pos] == "^":
            negate = True
            self.pos += 1
        items: Ranges = []
        while True:
            if self.pos >= len(src):
                raise self.error("unterminated class")
            c = src[self.pos]
            if c == "]":
                self.pos += 1
                break
            lo = self.class_atom(items)
            if lo < 0:
                continue
            if self.pos + 1 < len(src) and src[self.pos] == "-" and src[self.pos + 1] != "]":
                self.pos += 1
                hi = self.class_atom(items)
                if hi < 0:
                    raise self.error("class escape in range")
                if hi < lo:
                    raise self.error("bad range")
                items.append((lo, hi))
            else:
                items.append((lo, lo))
        if negate:
            items = complement(items, self.top)
        return self.emit_set(items)

    def class_atom(self, items: Ranges) -> int:
        """One class atom: returns its value, or -1 after adding a class
        escape's set to ``items``."""
        src = self.src
        c = src[self.pos]
        self.pos += 1
        if c != "\\":
            return ord(c)
        e = src[self.pos]
        if e in "dDsSwW":
            self.pos += 1
            items.extend(self.class_escape(e))
            return -1
        if e == "b":
            self.pos += 1
            return 0x08
        return self.char_escape()

    def translate(self) -> str:
        src = self.src
        out: list[str] = []
        n = len(src)
        while self.pos < n:
            c = src[self.pos]
            if c == "\\":
                self.pos += 1
                e = src[self.pos]
                if e in "dDsSwW":
                    self.pos += 1
                    out.append(self.emit_set(self.class_escape(e)))
                elif e in "bB":
                    self.pos += 1
                    w = self.emit_set(self.class_escape("w"))
                    if e == "b":
                        out.append(f"(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
                    else:
                        out.append(f"(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
                    self.uses_anchor_start = True
                else:
                    v = self.char_escape()
                    out.append(self.emit_set([(v, v)]))
            elif c == "[":
                self.pos += 1
                out.append(self.parse_class())
            elif c == "(":
                self.pos += 1
                if src.startswith("?:", self.pos) or src.startswith("?=", self.pos) or src.startswith("?!", self.pos):
                    out.append("(" + src[self.pos:self.pos + 2])
                    self.pos += 2
                elif src.startswith("?", self.pos):
                    raise self.error("group kind")
                else:
                    out.append("(?:")
            elif c in ")|*+?":
                out.append(c)
                self.pos += 1
            elif c == "{":
                close = src.find("}", self.pos)
                if close < 0 or not re.fullmatch(r"\{\d+(,\d*)?\}", src[self.pos:close + 1]):
                    raise self.error("brace")
                out.append(src[self.pos:close + 1])
                self.pos = close + 1
            elif c == ".":
                self.pos += 1
                out.append(self.emit_set(complement([(0x0A, 0x0A), (0x0D, 0x0D)], self.top)))
            elif c == "$":
                self.pos += 1
                out.append(f"(?!{_ANY_CHAR})")
            elif c == "^":
                self.pos += 1
                out.append(f"(?<!{_ANY_CHAR})")
                self.uses_anchor_start = True
            else:
                self.pos += 1
                v = ord(c)
                out.append(self.emit_set([(v, v)]))
        return "".join(out)


def _class_body(rs: Ranges) -> str:
    parts: list[str] = []
    for lo, hi in rs:
        if lo == hi:
            parts.append(_class_char(lo))
        elif hi == lo + 1:
            parts.append(_class_char(lo) + _class_char(hi))
        else:
            parts.append(_class_char(lo) + "-" + _class_char(hi))
    return "".join(parts)


def _class_char(c: int) -> str:
    if (0x30 <= c <= 0x39) or (0x41 <= c <= 0x5A) or (0x61 <= c <= 0x7A):
        return chr(c)
    if c <= 0xFFFF:
        return f"\\u{c:04x}"
    return f"\\U{c:08x}"


def uses_categories(regex: str) -> bool:
    return any(k in regex for k in _UCAT_ENUM)


def translate_regex(regex: str, exact: bool = False) -> tuple[str, bool, bool]:
    """The Python regex equivalent to one llama.cpp regex run through
    ``std::regex``, whether it runs on the collapsed text (it uses
    categories; with ``exact`` it is written for the original text
    instead), and whether it must run on a sliced piece (it looks behind
    its start)."""
    collapsed = uses_categories(regex)
    if collapsed:
        if any(ord(c) >= 128 for c in regex):
            raise ValueError(f"regex {regex!r} mixes Unicode categories and non-ASCII characters "
                             "(llama.cpp rejects it)")
        src = _collapse_regex(regex)
    else:
        src = regex
    t = _Translator(src, collapsed, exact)
    return t.translate(), collapsed and not exact, t.uses_anchor_start


# ---------------------------------------------------------------- splitting

_MEMO_MAX_CHARS = 48  # pieces up to this long have their words remembered
_MEMO_LIMIT = 32_768
STAGE_REGEX = 0
STAGE_KIMI_K2 = 1
STAGE_AFMOE_DIGITS = 2
STAGE_CUSTOM = 3


class Stage:
    """One regex of the list: a compiled Python regex or a custom splitter."""

    def __init__(self, source: str, kind: int, pattern: Optional[re.Pattern[str]], tiles: bool,
                 slice_pieces: bool, collapsed: bool, py: str = "", custom: int = -1) -> None:
        self.source = source
        self.kind = kind
        self.custom = custom
        """The ``custom_split`` kind of a :data:`STAGE_CUSTOM` stage."""
        self.pattern = pattern
        self.py = py
        """The Python regex of a :data:`STAGE_REGEX` stage whose ``pattern``
        is compiled on the first text that is not ASCII (see
        :func:`non_ascii_class`); else empty."""
        self.collapsed = collapsed
        """``pattern`` runs on the collapsed text."""
        self.tiles = tiles
        """The matches of ``pattern`` always cover the whole text."""
        self.slice_pieces = slice_pieces


def make_stage(regex: str, exact: bool = False, custom: bool = False) -> Stage:
    """The stage of one llama.cpp regex; with ``custom``, GPT-2's and
    LLaMA-3's family run through ``custom_split`` (not with ``exact``,
    which checks the translation)."""
    kind = _CUSTOM_KIND.get(regex, -1)
    if custom and kind >= 0 and not exact:
        return Stage(regex, STAGE_CUSTOM, None, True, False, True, "", kind)
    if regex == KIMI_K2_REGEX:
        return Stage(regex, STAGE_KIMI_K2, None, True, False, False)
    if regex == AFMOE_REGEX or regex == TINY_AYA_DIGITS_REGEX:
        return Stage(regex, STAGE_AFMOE_DIGITS, None, True, False, False)
    as_regex = _CUSTOM_AS_REGEX.get(regex)
    py, collapsed, anchored = translate_regex(as_regex if as_regex is not None else regex, exact)
    if as_regex is None and not collapsed and non_ascii_class(regex):
        # re fills a 64k-entry map for such a class (deepseek's CJK
        # ranges: ~1.8 ms of an open), and ASCII text never needs it
        return Stage(regex, STAGE_REGEX, None, False, anchored, False, py)
    return Stage(regex, STAGE_REGEX, re.compile(py), as_regex is not None, anchored, collapsed)


def non_ascii_class(regex: str) -> bool:
    """Whether ``regex`` is one character class, repeated or not, of
    characters and ranges at or above U+0080 only (``[一-龥가-힣]+``): it
    matches nothing in ASCII text. Anything less plain (escapes, negation,
    a literal ``-``) says no."""
    if regex.endswith("+"):
        regex = regex[:-1]
    if len(regex) < 3 or regex[0] != "[" or regex[-1] != "]":
        return False
    body = regex[1:-1]
    i = 0
    n = len(body)
    while i < n:
        if ord(body[i]) < 0x80:
            return False  # ASCII, '-' , '^', '\\', '[' or ']' included
        if i + 1 < n and body[i + 1] == "-":
            if i + 2 >= n or ord(body[i + 2]) < 0x80:
                return False
            i += 3
        else:
            i += 1
    return n > 0


class Splitter:
    """Splits text into words like ``unicode_regex_split`` (without the
    byte encoding). Words tile the text; empty words are dropped."""

    def __init__(self, regexes: tuple[str, ...], exact: bool = False,
                 custom: bool = NATIVE_CUSTOM_SPLIT) -> None:
        self.stages: list[Stage] = [make_stage(r, exact, custom) for r in regexes]
        self.tab = tables()
        self.collapses = any(st.collapsed for st in self.stages)
        self.memos: list[dict[str, list[str]]] = [{} for _ in range(len(self.stages) + 1)]
        self.custom_kind: int = self.stages[0].custom if len(self.stages) == 1 else -1
        """The ``custom_split`` kind when that is the one stage, else -1."""

    def collapsed_bytes(self, text: str) -> bytes:
        """The collapsed text as the bytes ``custom_split`` reads (one a char)."""
        if text.isascii():
            return text.encode("ascii")
        return self.tab.collapse(text)

    def split(self, text: str) -> list[str]:
        if not text:
            return []
        if self.custom_kind >= 0:
            return cs.split_words(self.custom_kind, CLASS_TABLE, self.collapsed_bytes(text), text)
        stages = self.stages
        is_ascii = text.isascii()
        # the 1.1 MB table is made on the first non-ASCII text (1.3 ms,
        # once a process), not on every first open
        ctext = text if is_ascii or not self.collapses else self.tab.collapse(text).decode("latin-1")
        first = stages[0]
        pat = first.pattern
        if len(stages) == 1 and first.tiles and pat is not None:
            if not stages[0].collapsed or is_ascii:
                return pat.findall(text)
            cwords: list[str] = pat.findall(ctext)
            out: list[str] = []
            pos = 0
            for cw in cwords:
                n = len(cw)
                out.append(text[pos:pos + n])
                pos += n
            return out
        out = []
        self.split_from(text, ctext, 0, len(text), 0, out)
        return out

    def split_from(self, text: str, ctext: str, a: int, b: int, level: int, out: list[str]) -> None:
        """Split ``text[a:b]`` (a piece produced by the stages before
        ``level``) with the remaining stages, appending the words to ``out``.

        A piece is split independently of its neighbours, so the words of a
        short piece are remembered per level."""
        st = self.stages[level]
        bounds: list[int] = [a]
        self.split_piece(st, ctext if st.collapsed else text, a, b, bounds)
        last = level + 1 == len(self.stages)
        memo = self.memos[level + 1] if not last else None
        for k in range(len(bounds) - 1):
            s = bounds[k]
            e = bounds[k + 1]
            if e <= s:
                continue
            if memo is None:
                out.append(text[s:e])
            elif e - s <= _MEMO_MAX_CHARS:
                seg = text[s:e]
                words = memo.get(seg)
                if words is None:
                    words = []
                    self.split_from(text, ctext, s, e, level + 1, words)
                    if len(memo) >= _MEMO_LIMIT:
                        memo.clear()
                    memo[seg] = words
                out.extend(words)
            else:
                self.split_from(text, ctext, s, e, level + 1, out)

    def split_piece(self, st: Stage, text: str, a: int, b: int, out: list[int]) -> None:
        """Split the piece ``[a, b)`` with one stage, appending piece ends
        (pieces may be empty)."""
        if st.kind == STAGE_CUSTOM:
            # (text: the collapsed text, one byte a char)
            cs.split_ends(st.custom, CLASS_TABLE, text[a:b].encode("latin-1"), 0, b - a, a, out)
        elif st.kind == STAGE_KIMI_K2:
            kimi_k2_split(self.tab, text, a, b, out)
        elif st.kind == STAGE_AFMOE_DIGITS:
            afmoe_split(self.tab, text, a, b, out)
        else:
            pat = st.pattern
            if pat is None:
                if text.isascii():  # (O(1) for a str) nothing here to match
                    if b > a:
                        out.append(b)
                    return
                pat = re.compile(st.py)
                st.pattern = pat  # (two threads may both compile it: the same pattern)
            if st.slice_pieces:
                regex_split(pat, text[a:b], 0, b - a, a, out)
            else:
                regex_split(pat, text, a, b, 0, out)


def regex_split(pat: re.Pattern[str], text: str, a: int, b: int, shift: int, out: list[int]) -> None:
    """``unicode_regex_split_stl`` on ``text[a:b]``: matches and the gaps
    between them each become a piece (appends piece ends to ``out``)."""
    prev = a
    for m in pat.finditer(text, a, b):
        s = m.start()
        e = m.end()
        if s > prev:
            out.append(s + shift)
        out.append(e + shift)
        prev = e
    if prev < b:
        out.append(b + shift)


def _is_han(c: int) -> bool:
    return ((0x4E00 <= c <= 0x9FFF) or (0x3400 <= c <= 0x4DBF) or (0x20000 <= c <= 0x2A6DF)
            or (0x2A700 <= c <= 0x2B73F) or (0x2B740 <= c <= 0x2B81F) or (0x2B820 <= c <= 0x2CEAF)
            or (0x2CEB0 <= c <= 0x2EBEF) or (0xF900 <= c <= 0xFAFF) or (0x2F800 <= c <= 0x2FA1F))


_WS = 0x100
_OUT = 0xFFFFFFFF


def kimi_k2_split(tab: UnicodeTables, text: str, ini: int, end: int, out: list[int]) -> None:
    """``unicode_regex_split_custom_kimi_k2`` on ``text[ini:end]``."""
    cpts: list[int] = [ord(ch) for ch in text[ini:end]]
    flg: list[int] = [tab.flag(c) for c in cpts]
    n = len(cpts)
    cpts.append(_OUT)
    cpts.append(_OUT)
    cpts.append(_OUT)
    flg.append(0)
    flg.append(0)
    flg.append(0)
    prev_end = 0
    pos = 0
    L = ud.LETTER
    N = ud.NUMBER
    while pos < n:
        cpt = cpts[pos]
        flags = flg[pos]
        if _is_han(cpt):
            while pos < n and _is_han(cpts[pos]):
                pos += 1
            prev_end = _add(out, ini, prev_end, pos)
            continue
        is_letter_pattern = ((flags & L) != 0 and not _is_han(cpt)) or (
            not (cpt == 13 or cpt == 10 or (flags & L) != 0 or (flags & N) != 0)
            and (flg[pos + 1] & L) != 0 and not _is_han(cpts[pos + 1]))
        if is_letter_pattern:
            has_leading = False
            if not (cpt == 13 or cpt == 10 or (flags & L) != 0 or (flags & N) != 0):
                has_leading = True
                pos += 1
            has_letters = False
            while (flg[pos] & L) != 0 and not _is_han(cpts[pos]):
                has_letters = True
                pos += 1
            if has_letters or (not has_leading and (flg[pos] & L) != 0 and not _is_han(cpts[pos])):
                if not has_letters:
                    pos += 1
                while (flg[pos] & L) != 0 and not _is_han(cpts[pos]):
                    pos += 1
                if cpts[pos] == 0x27 and pos + 1 < n:
                    nx = tab.tolower(cpts[pos + 1])
                    if nx == 0x73 or nx == 0x74 or nx == 0x6D or nx == 0x64:
                        pos += 2
                    elif pos + 2 < n:
                        nn = tab.tolower(cpts[pos + 2])
                        if (nx == 0x72 and nn == 0x65) or (nx == 0x76 and nn == 0x65) or (nx == 0x6C and nn == 0x6C):
                            pos += 3
                prev_end = _add(out, ini, prev_end, pos)
                continue
            elif has_leading:
                pos -= 1
        if flags & N:
            start = pos
            while (flg[pos] & N) != 0:
                pos += 1
                if pos - start >= 3:
                    prev_end = _add(out, ini, prev_end, pos)
                    start = pos
            prev_end = _add(out, ini, prev_end, pos)
            continue
        flags2 = flg[pos + 1] if cpt == 0x20 else flags
        if not (flags2 & (_WS | L | N)) and flags2 != 0:
            if cpt == 0x20:
                pos += 1
            while not (flags2 & (_WS | L | N)) and flags2 != 0:
                pos += 1
                flags2 = flg[pos]
            c2 = cpts[pos]
            while c2 == 13 or c2 == 10:
                pos += 1
                c2 = cpts[pos]
            prev_end = _add(out, ini, prev_end, pos)
            continue
        nws = 0
        last_rn = 0
        while flg[pos + nws] & _WS:
            c2 = cpts[pos + nws]
            if c2 == 13 or c2 == 10:
                last_rn = pos + nws + 1
            nws += 1
        if last_rn > 0:
            pos = last_rn
            prev_end = _add(out, ini, prev_end, pos)
            continue
        if nws > 1 and cpts[pos + nws] != _OUT:
            pos += nws - 1
            prev_end = _add(out, ini, prev_end, pos)
            continue
        if nws > 0:
            pos += nws
            prev_end = _add(out, ini, prev_end, pos)
            continue
        pos += 1
        prev_end = _add(out, ini, prev_end, pos)


def _add(out: list[int], ini: int, prev_end: int, end: int) -> int:
    if end > prev_end:
        out.append(ini + end)
    return end


def afmoe_split(tab: UnicodeTables, text: str, ini: int, end: int, out: list[int]) -> None:
    """``unicode_regex_split_custom_afmoe`` on ``text[ini:end]`` (the
    non-digit text before a digit run goes with its first group, as there)."""
    n = end - ini
    isnum: list[bool] = [(tab.flag(ord(ch)) & ud.NUMBER) != 0 for ch in text[ini:end]]
    prev_end = 0
    pos = 0
    while pos < n:
        if isnum[pos]:
            start = pos
            while pos < n and isnum[pos]:
                pos += 1
            count = pos - start
            rem = count % 3
            cur = start
            if rem > 0:
                prev_end = _add(out, ini, prev_end, cur + rem)
                cur += rem
            while cur < start + count:
                prev_end = _add(out, ini, prev_end, cur + 3)
                cur += 3
            continue
        pos += 1
    if prev_end < n:
        _add(out, ini, prev_end, n)
