"""Generate ``unicode_tables.py``: the Unicode data llama.cpp's WPM tokenizer uses.

Usage (from the repository root)::

    python plugins/wpm/gen_tables.py > plugins/wpm/unicode_tables.py
    python plugins/wpm/gen_tables.py --check path/to/llama.cpp/src/unicode-data.cpp

llama.cpp's ``unicode-data.cpp`` is made by its ``scripts/gen-unicode-data.py``
from ``UnicodeData.txt`` (categories, simple lowercase) and Python's
``unicodedata`` (NFD). The tables here are derived the same way from Python's
``unicodedata``, then corrected by ``OVERRIDES`` so they equal the tables of
the llama.cpp version TokenPrism follows (llama-cpp-python 0.3.36, Unicode
15.1 categories).

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

``--check`` parses a ``unicode-data.cpp`` and verifies that the generated
tables equal the ones derived from it. A Python whose Unicode version is
newer than 15.1 would assign more code points than llama.cpp knows; the
generator refuses to run there unless ``--check`` passes.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from typing import Iterable

MAX_CODEPOINTS = 0x110000

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


def render(t: dict[str, object]) -> str:
    def rows(items: object, per: int) -> str:
        assert isinstance(items, list)
        seq: list[tuple[int, ...]] = items
        lines = []
        for i in range(0, len(seq), per):
            lines.append("    " + " ".join(
                "(" + ", ".join(f"0x{v:X}" for v in item) + ")," for item in seq[i:i + per]))
        return "\n".join(lines)

    ws = t["whitespace"]
    assert isinstance(ws, list)
    out = [
        '"""Unicode tables of llama.cpp\'s WPM tokenizer (Unicode 15.1 categories).',
        "",
        "GENERATED by gen_tables.py: do not edit. Ranges are inclusive.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "# general category C without Cn (Cc, Cf, Co, Cs): dropped",
        "CONTROL: tuple[tuple[int, int], ...] = (",
        rows(t["control"], 6),
        ")",
        "",
        "# general category M: dropped with strip_accents",
        "MARK: tuple[tuple[int, int], ...] = (",
        rows(t["mark"], 6),
        ")",
        "",
        "# general category P: split off as one-character words",
        "PUNCT: tuple[tuple[int, int], ...] = (",
        rows(t["punct"], 6),
        ")",
        "",
        "# general category S below U+007F: split off as well",
        f"ASCII_SYMBOL: str = {t['ascii_symbol']!r}",
        "",
        "# llama.cpp's whitespace set (White_Space)",
        "WHITESPACE: tuple[int, ...] = (",
        "    " + ", ".join(f"0x{c:X}" for c in ws) + ",",
        ")",
        "",
        "# simple lowercase mapping (code point, lowercase)",
        "LOWER: tuple[tuple[int, int], ...] = (",
        rows(t["lower"], 6),
        ")",
        "",
        "# first code point of the NFD: (first, last, target)",
        "NFD: tuple[tuple[int, int, int], ...] = (",
        rows(t["nfd"], 4),
        ")",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    ours = derive()
    if len(argv) >= 2 and argv[0] == "--check":
        theirs = from_llama_cpp(argv[1])
        bad = [k for k in ours if ours[k] != theirs[k]]
        for k in bad:
            a, b = ours[k], theirs[k]
            print(f"{k}: differs", file=sys.stderr)
            if isinstance(a, list) and isinstance(b, list):
                sa, sb = set(a), set(b)
                print(f"  only ours: {sorted(sa - sb)[:20]}", file=sys.stderr)
                print(f"  only llama.cpp: {sorted(sb - sa)[:20]}", file=sys.stderr)
        print("tables match llama.cpp" if not bad else "MISMATCH", file=sys.stderr)
        return 1 if bad else 0
    major = tuple(int(x) for x in unicodedata.unidata_version.split(".")[:2])
    if major > (15, 1):
        print(f"Python's Unicode {unicodedata.unidata_version} is newer than llama.cpp's 15.1; "
              "run with --check against unicode-data.cpp and extend OVERRIDES", file=sys.stderr)
        return 1
    sys.stdout.write(render(ours))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
