"""llama.cpp's Unicode tables in the shape the WPM tests read them, and the
same tables derived from Python's ``unicodedata``.

The tables themselves are ``tokenprism.core.unicode_data`` (copied from
llama.cpp's ``unicode-data.cpp``); WPM reads them through the plugin API as
range sets. ``CONTROL``, ``MARK``, ``PUNCT``, ``ASCII_SYMBOL``,
``WHITESPACE``, ``LOWER`` and ``NFD`` below are those sets.

:func:`derive` makes the same sets the way llama.cpp's
``scripts/gen-unicode-data.py`` does, from Python's ``unicodedata``
(categories, simple lowercase, NFD), corrected by ``OVERRIDES``: that
the two agree documents every difference between Python's Unicode and
llama.cpp's (Unicode 15.1 categories, llama-cpp-python 0.3.36).

Differences between Python 3.11's ``unicodedata`` (Unicode 14.0) and
llama.cpp's tables, all fixed by ``OVERRIDES``:

* code points assigned in Unicode 15.0 and 15.1 (unassigned, category Cn, in
  14.0). Only marks, punctuation and format controls change what WPM does
  (marks are dropped with ``strip_accents``, punctuation splits words,
  controls are dropped); new letters, digits and non-ASCII symbols behave
  like unassigned code points (both are kept inside words), so only the
  first three kinds are listed.
* U+0130 LATIN CAPITAL LETTER I WITH DOT ABOVE: llama.cpp uses the simple
  lowercase mapping from UnicodeData.txt (U+0069); Python's ``str.lower``
  gives the full mapping "i" + U+0307.

NFD: llama.cpp keeps only the FIRST code point of each character's NFD
(``unicode_cpts_normalize_nfd`` maps one code point to one code point), so
"é" becomes "e" and a Hangul syllable becomes its leading consonant jamo.

:func:`from_llama_cpp` parses a ``unicode-data.cpp`` into the same sets.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from tokenprism.core import unicode_data as ud
from tokenprism.core.unicode_ranges import flag_ranges, intersect, lowercase_pairs, nfd_first, whitespace

MAX_CODEPOINTS = 0x110000

# general category C without Cn (Cc, Cf, Co, Cs): dropped
CONTROL = tuple(flag_ranges(ud.CONTROL))
# general category M: dropped with strip_accents
MARK = tuple(flag_ranges(ud.ACCENT_MARK))
# general category P: split off as one-character words
PUNCT = tuple(flag_ranges(ud.PUNCTUATION))
# general category S below U+007F: split off as well
ASCII_SYMBOL = "".join(chr(c) for lo, hi in intersect(flag_ranges(ud.SYMBOL), [(0, 0x7E)])
                       for c in range(lo, hi + 1))
# llama.cpp's whitespace set (White_Space)
WHITESPACE = tuple(whitespace())
# simple lowercase mapping (code point, lowercase)
LOWER = tuple(lowercase_pairs())
# first code point of the NFD: (first, last, target)
NFD = tuple(nfd_first())


def ours() -> dict[str, object]:
    """The sets above, keyed as :func:`derive` and :func:`from_llama_cpp` key them."""
    return {"control": list(CONTROL), "mark": list(MARK), "punct": list(PUNCT), "ascii_symbol": ASCII_SYMBOL,
            "whitespace": list(WHITESPACE), "lower": list(LOWER), "nfd": list(NFD)}

# (first, last, category) for code points unassigned in Unicode 14.0 (Python
# 3.11) that llama.cpp's tables (Unicode 15.1) make a mark (M), punctuation
# (P) or control/format (C). Found by ``--check``; each is a Unicode 15.0
# addition.
OVERRIDES: tuple[tuple[int, int, str], ...] = (
    (0x0CF3, 0x0CF3, "M"),    # KANNADA SIGN COMBINING ANUSVARA ABOVE RIGHT
    (0x0ECE, 0x0ECE, "M"),    # LAO YAMAKKAN
    (0x10EFD, 0x10EFF, "M"),  # ARABIC SMALL LOW WORD SAKTA .. MADDA
    (0x11241, 0x11241, "M"),  # KHOJKI VOWEL SIGN VOCALIC R
    (0x11B00, 0x11B09, "P"),  # DEVANAGARI HEAD MARK .. SIGN MINDU
    (0x11F00, 0x11F01, "M"),  # KAWI SIGN CANDRABINDU, ANUSVARA
    (0x11F03, 0x11F03, "M"),  # KAWI SIGN VISARGA
    (0x11F34, 0x11F3A, "M"),  # KAWI VOWEL SIGNS
    (0x11F3E, 0x11F42, "M"),  # KAWI VOWEL SIGNS, CONJOINER
    (0x11F43, 0x11F4F, "P"),  # KAWI DANDA .. CLOSING SPIRAL
    (0x13439, 0x1343F, "C"),  # EGYPTIAN HIEROGLYPH format controls
    (0x13440, 0x13440, "M"),  # EGYPTIAN HIEROGLYPH MIRROR HORIZONTALLY
    (0x13447, 0x13455, "M"),  # EGYPTIAN HIEROGLYPH MODIFIER DAMAGED ..
    (0x1E08F, 0x1E08F, "M"),  # COMBINING CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I
    (0x1E4EC, 0x1E4EF, "M"),  # NAG MUNDARI SIGNs
)

# code point -> lowercase where llama.cpp (simple mapping) differs from str.lower()
LOWER_OVERRIDES: dict[int, int] = {0x0130: 0x0069}

_KINDS = {"C": "C", "M": "M", "P": "P", "S": "S"}


def derive() -> dict[str, object]:
    """The tables from Python's unicodedata plus the overrides."""
    # one letter per code point: C (control, format, private use, surrogate),
    # M, P, S, or "." for everything else (letters, numbers, separators,
    # unassigned), which WPM treats alike
    cat: list[str] = ["."] * MAX_CODEPOINTS
    for c in range(MAX_CODEPOINTS):
        full = unicodedata.category(chr(c))
        if full != "Cn":
            cat[c] = _KINDS.get(full[0], ".")
    for first, last, kind in OVERRIDES:
        for c in range(first, last + 1):
            cat[c] = kind

    whitespace = sorted(list(range(0x09, 0x0E)) + list(range(0x2000, 0x200B))
                        + [0x20, 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000])

    lower: list[tuple[int, int]] = []
    for c in range(MAX_CODEPOINTS):
        if c in LOWER_OVERRIDES:
            lower.append((c, LOWER_OVERRIDES[c]))
            continue
        lc = chr(c).lower()
        if len(lc) == 1 and lc != chr(c):
            lower.append((c, ord(lc)))

    nfd: list[tuple[int, int]] = []
    for c in range(MAX_CODEPOINTS):
        n = ord(unicodedata.normalize("NFD", chr(c))[0])
        if n != c:
            nfd.append((c, n))

    return {
        "control": _ranges(c for c in range(MAX_CODEPOINTS) if cat[c] == "C"),
        "mark": _ranges(c for c in range(MAX_CODEPOINTS) if cat[c] == "M"),
        "punct": _ranges(c for c in range(MAX_CODEPOINTS) if cat[c] == "P"),
        "ascii_symbol": "".join(chr(c) for c in range(0x7F) if cat[c] == "S"),
        "whitespace": whitespace,
        "lower": lower,
        "nfd": _nfd_ranges(nfd),
    }


def _ranges(cps: Iterable[int]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for c in cps:
        if out and out[-1][1] == c - 1:
            out[-1][1] = c
        else:
            out.append([c, c])
    return [(a, b) for a, b in out]


def _nfd_ranges(pairs: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    """(first, last, target) for runs of consecutive code points with the
    same NFD first code point (the grouping llama.cpp's generator uses)."""
    out: list[list[int]] = []
    for c, n in pairs:
        if out and out[-1][1] == c - 1 and out[-1][2] == n:
            out[-1][1] = c
        else:
            out.append([c, c, n])
    return [(a, b, t) for a, b, t in out]


def from_llama_cpp(path: str) -> dict[str, object]:
    """The same tables, parsed from llama.cpp's ``unicode-data.cpp``."""
    with open(path, encoding="utf-8") as f:
        src = f.read()

    def block(name: str) -> str:
        i = src.index(name)
        return src[src.index("\n", i) + 1:src.index("};", i)]

    pairs = [(int(a, 16), int(b, 16)) for a, b in re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}",
                                                             block("unicode_ranges_flags"))]
    flags = [0] * MAX_CODEPOINTS
    for (a, fl), (b, _) in zip(pairs, pairs[1:]):
        for c in range(a, b):
            flags[c] = fl
    ws = sorted(int(x, 16) for x in re.findall(r"0x([0-9A-F]+)", block("unicode_set_whitespace")))
    lower = [(int(a, 16), int(b, 16)) for a, b in re.findall(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\}",
                                                             block("unicode_map_lowercase"))]
    nfd = [(int(a, 16), int(b, 16), int(t, 16)) for a, b, t in re.findall(
        r"\{0x([0-9A-F]+), 0x([0-9A-F]+), 0x([0-9A-F]+)\}", block("unicode_ranges_nfd"))]
    return {
        "control": _ranges(c for c in range(MAX_CODEPOINTS) if flags[c] & 0x80),
        "mark": _ranges(c for c in range(MAX_CODEPOINTS) if flags[c] & 0x10),
        "punct": _ranges(c for c in range(MAX_CODEPOINTS) if flags[c] & 0x20),
        "ascii_symbol": "".join(chr(c) for c in range(0x7F) if flags[c] & 0x40),
        "whitespace": ws,
        "lower": sorted(lower),
        "nfd": [r for r in nfd if r != (0, 0, 0)],
    }
