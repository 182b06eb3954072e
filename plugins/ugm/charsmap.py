"""SentencePiece's precompiled charsmap and the UGM normalizer, as llama.cpp
runs them (``llm_tokenizer_ugm_session::normalize``).

The charsmap itself (the blob, its check and its lookups) is
:class:`.xcda.Charsmap`.

The normalizer has two paths that give the same result:

* ``normalize_str`` works on characters and maps every normalized character
  to the range of original *characters* it came from. Runs of characters no
  rule can touch are found with one regular expression and copied whole;
  only spaces, possible charsmap keys and user-defined tokens are looked at
  one by one. It is used whenever the result is valid Unicode, which is the
  case for every real model and every valid input.
* ``normalize_bytes`` is a literal transcription of llama.cpp, byte by
  byte, including its handling of invalid UTF-8 (one byte becomes U+FFFD).
  It is used for the rare inputs whose normalized form is not valid UTF-8
  (a user-defined token that matches half of a character, a charsmap with
  strings that are not UTF-8, text with lone surrogates).
"""

from __future__ import annotations

import re
from typing import Final

from tokenprism.core.plugin_api import STEP, WORD_STEP, checkpoint, merged

from librt.strings import BytesWriter, read_i16_le, write_i16_le
from librt.vecs import append, vec
from mypy_extensions import i16, i64, u8

from .xcda import Charsmap

ESCAPED_SPACE = "\u2581"
REPLACEMENT_UTF8 = b"\xef\xbf\xbd"

_SURROGATE_RE = re.compile("[\\ud800-\\udfff]")
_STEP: Final = STEP  # (Final: a native constant, not a dict lookup per step)
# pieces of the normalized text joined at a time (normalize_range)
_JOIN_SLICE: Final = 1 << 16


def utf8_lead_byte(ch: str) -> int:
    """The first UTF-8 byte of a character (a ``surrogateescape`` surrogate
    as the byte it stands for)."""
    cp = ord(ch)
    if cp < 0x80:
        return cp
    if 0xDC80 <= cp <= 0xDCFF:
        return cp - 0xDC00
    if cp < 0x800:
        return 0xC0 | (cp >> 6)
    if cp < 0x10000:
        return 0xE0 | (cp >> 12)
    return 0xF0 | (cp >> 18)


def _lead_range(lead: int) -> tuple[int, int] | None:
    """The code points whose UTF-8 form starts with ``lead``."""
    if 0xC2 <= lead <= 0xDF:
        lo = (lead & 0x1F) << 6
        return lo, lo + 0x3F
    if 0xE0 <= lead <= 0xEF:
        lo = (lead & 0x0F) << 12
        return lo, lo + 0xFFF
    if 0xF0 <= lead <= 0xF4:
        lo = (lead & 0x07) << 18
        return lo, min(lo + 0x3FFFF, 0x10FFFF)
    return None


def _class_item(cp: int) -> str:
    if cp < 0x80 or 0xD800 <= cp <= 0xDFFF:
        return f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}"
    if cp > 0xFFFF:
        return f"\\U{cp:08x}"
    return chr(cp) if chr(cp) not in "\\]^-[" else "\\" + chr(cp)


def _class_body(ranges: list[tuple[int, int]]) -> str:
    return "".join(_class_item(lo) if lo == hi else _class_item(lo) + "-" + _class_item(hi) for lo, hi in ranges)


def _char_class(chars: set[str], ranges: list[tuple[int, int]]) -> str:
    """A regular expression matching one character of ``chars`` or of the
    code point ``ranges`` (empty when both are empty).

    ``re`` tests a class of BMP characters with a bitmap but walks a list
    for characters outside it, at every position of the text. So astral
    characters get their own class behind a cheap test that the character
    is astral at all; when they make too many ranges, every astral
    character is taken (a wider set only sends a few more characters to the
    exact slow path)."""
    # runs of consecutive code points from the sorted ints (no tuple per
    # character to sort: the 4 837 single keys of a T5 charsmap)
    runs: list[tuple[int, int]] = []
    lo = -2
    hi = -2
    for cp in sorted([ord(c) for c in chars]):
        if cp == hi + 1:
            hi = cp
            continue
        if hi >= 0:
            runs.append((lo, hi))
        lo = cp
        hi = cp
    if hi >= 0:
        runs.append((lo, hi))
    cover = merged(runs + ranges) if ranges else runs
    bmp = [(lo, min(hi, 0xFFFF)) for lo, hi in cover if lo <= 0xFFFF]
    astral = [(max(lo, 0x10000), hi) for lo, hi in cover if hi >= 0x10000]
    if len(astral) > 1024:
        astral = [(0x10000, 0x10FFFF)]
    parts: list[str] = []
    if bmp:
        parts.append("[" + _class_body(bmp) + "]")
    if astral:
        body = "[" + _class_body(astral) + "]"
        parts.append(body if astral == [(0x10000, 0x10FFFF)] else "(?=[\\U00010000-\\U0010ffff])" + body)
    if not parts:
        return ""
    return parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"


class StrNorm:
    """Normalized text with, for every normalized character, the range of
    original characters ``[src_start[i], src_end[i])`` it came from, and the
    run of dropped spaces still pending at the end (``run_start`` < 0 for
    none; only with ``remove_extra_whitespaces``)."""

    def __init__(self, text: str, src_start: list[int], src_end: list[int], run_start: int = -1,
                 run_end: int = -1) -> None:
        self.text = text
        self.src_start = src_start
        self.src_end = src_end
        self.run_start = run_start
        self.run_end = run_end


class BytesNorm:
    """Normalized bytes with, for every byte, the original byte range."""

    def __init__(self, data: bytes, src_start: list[int], src_end: list[int]) -> None:
        self.data = data
        self.src_start = src_start
        self.src_end = src_end


class Normalizer:
    """llama.cpp's UGM ``normalize``: at every position a user-defined token
    first (the longest trie path, even one that is not a whole token), then
    the charsmap's longest key, then one UTF-8 character (U+FFFD for an
    invalid byte); the output then goes through the whitespace options."""

    def __init__(self, charsmap: Charsmap, user_defined: list[str], add_space_prefix: bool,
                 remove_extra_whitespaces: bool, escape_whitespaces: bool = True,
                 treat_whitespace_as_suffix: bool = False) -> None:
        self.charsmap = charsmap
        self.space = ESCAPED_SPACE if escape_whitespaces else " "
        self.space_bytes = self.space.encode("utf-8")
        self.prepend_space = add_space_prefix and not treat_whitespace_as_suffix
        self.append_space = add_space_prefix and treat_whitespace_as_suffix
        self.merge_spaces = remove_extra_whitespaces

        # user-defined tokens as bytes (llama.cpp's naive_trie) ...
        self.ud_bytes_prefix: set[bytes] = set()
        # ... and as characters, with the lead bytes that would take the
        # byte walk half-way into the next character
        self.ud_prefix: set[str] = set()
        self.ud_first: set[str] = set()
        self.ud_next_leads: dict[str, set[int]] = {}
        for piece in user_defined:
            if not piece:
                continue
            b = piece.encode("utf-8", "surrogateescape")
            for k in range(1, len(b) + 1):
                self.ud_bytes_prefix.add(b[:k])
            self.ud_first.add(piece[0])
            for k in range(len(piece)):
                self.ud_prefix.add(piece[:k + 1])
                if piece[k] >= "\x80":
                    leads = self.ud_next_leads.get(piece[:k])
                    if leads is None:
                        leads = set()
                        self.ud_next_leads[piece[:k]] = leads
                    leads.add(utf8_lead_byte(piece[k]))
        self.has_ud = bool(self.ud_bytes_prefix)

        self.str_ok = charsmap.utf8_ok
        cm_first: set[str] = charsmap.single | charsmap.multi_first
        self.cm_first = cm_first
        # a space that no rule but the whitespace options touches is found
        # with str.find; everything else that needs a look is found once per
        # text with one regular expression
        self.simple_space = " " not in cm_first and " " not in self.ud_first
        look: set[str] = set(charsmap.single) | self.ud_first
        if not self.simple_space:
            look.add(" ")
        ranges: list[tuple[int, int]] = []
        for lead in sorted(self.ud_next_leads.get("", set())):
            r = _lead_range(lead)
            if r is not None:
                ranges.append(r)
        alternatives: list[str] = []
        one = _char_class(look, ranges)
        if one:
            alternatives.append(one)
        if charsmap.multi_first and charsmap.second:
            alternatives.append(_char_class(charsmap.multi_first, []) + "(?="
                                + _char_class(charsmap.second, []) + ")")
        # matches nothing when there is nothing to look at
        self.look_re = re.compile("|".join(alternatives) if alternatives else "(?!)")
        self._look = look
        self._look_ranges = ranges

    def look_flags(self, extra: str) -> bytes:
        """``look_re`` (or one of the characters of ``extra``) as a table:
        per code point, bit 1 when it matches by itself, bit 2 when it
        matches before a character with bit 4; bit 8 marks the lone
        surrogates (the byte path's). One byte read per character instead
        of a regular expression's classes (see ``stop_starts``).

        Two levels (see :func:`flag_table`): the flat table of 1.1 M
        bytes was ~550 fresh pages and ~2 ms of a first encode."""
        cps = vec[i64]()
        bits = vec[i64]()
        for c in self._look | set(extra):
            cps = append(cps, ord(c))
            bits = append(bits, 1)
        for lo, hi in self._look_ranges:
            cps, bits = _add_range(cps, bits, lo, hi, 1)
        cm = self.charsmap
        if cm.multi_first and cm.second:
            for c in cm.multi_first:
                cps = append(cps, ord(c))
                bits = append(bits, 2)
            for c in cm.second:
                cps = append(cps, ord(c))
                bits = append(bits, 4)
        cps, bits = _add_range(cps, bits, 0xD800, 0xDFFF, _SURROGATE)
        return flag_table(cps, bits)

    # ---- characters -------------------------------------------------------

    def cm_match(self, text: str, i: int) -> tuple[int, str] | None:
        """The charsmap's longest key at ``text[i:]``: (characters, replacement),
        (0, "") for none, ``None`` when the key ends inside a character."""
        cm = self.charsmap
        n = len(text)
        width = 8
        while True:
            end = min(n, i + width)
            data = text[i:end].encode("utf-8")
            length, value, at_end = cm.walk(data, 0)
            if at_end and end < n:
                width *= 4
                continue
            break
        if length == 0:
            return 0, ""
        try:
            chars = len(data[:length].decode("utf-8"))
        except UnicodeDecodeError:
            return None
        rep = cm.repl_text(value)
        if rep is None:
            return None
        return chars, rep

    def normalize_str(self, text: str, passes: int = 0) -> StrNorm | None:
        """Normalize ``text``; ``None`` when the result would not be valid
        UTF-8 (then ``normalize_bytes`` gives the exact answer). With
        ``passes > 0`` this is the first of that many equal passes over the
        text, as far as progress reports go (see ``core.gil.checkpoint``)."""
        if not self.str_ok:
            return None
        if not text.isascii() and _SURROGATE_RE.search(text) is not None:
            return None
        return self.normalize_range(text, 0, len(text), -1, -1, passes)

    def _segment_at(self, text: str, i: int, n: int) -> tuple[str, int, bool]:
        """What the input at ``text[i]`` (a position that needs a look, ``i <
        n``) turns into before the whitespace options: ``(output, end of
        the input it consumes, whether the output is that input itself)``;
        an end of -1 when the result is not valid UTF-8 (the byte path is
        needed). A user-defined token's prefix first, then the charsmap's
        longest key, else the character itself."""
        ch = text[i]
        if self.has_ud:
            length = 0
            if ch in self.ud_first:
                length = 1
                ud_prefix = self.ud_prefix
                while i + length < n and text[i:i + length + 1] in ud_prefix:
                    length += 1
            if i + length < n and text[i + length] >= "\x80":
                # the byte walk would go on into the next character's lead
                leads = self.ud_next_leads.get(text[i:i + length])
                if leads is not None and utf8_lead_byte(text[i + length]) in leads:
                    return "", -1, False
            if length > 0:
                return text[i:i + length], i + length, True
        if ch in self.cm_first:
            res = self.cm_match(text, i)
            if res is None:
                return "", -1, False
            if res[0] > 0:
                return res[1], i + res[0], False
        return ch, i + 1, True

    def _word_start(self, out: list[str], ss: list[int], se: list[int], run_s: int, run_e: int,
                    at: int, prepended: bool) -> bool:
        """The ``space`` that starts a word, with the first word's prefix
        space, or every word's with merged spaces; it stands for the dropped
        run of spaces ``[run_s, run_e)`` before it, or for the empty range at
        ``at`` when there is none. Whether a prefix space has been written."""
        if not ((self.prepend_space and not prepended) or self.merge_spaces):
            return prepended
        out.append(self.space)
        if run_s >= 0:
            ss.append(run_s)
            se.append(run_e)
        else:
            ss.append(at)
            se.append(at)
        return True

    def normalize_range(self, text: str, start: int, end: int, run_s: int, run_e: int,
                        passes: int = 0) -> StrNorm | None:
        """Normalize ``text[start:end]`` (no lone surrogates) from the state
        at the start of a text, except for a pending run of dropped spaces
        ``[run_s, run_e)``; offsets are into ``text``. With
        ``remove_extra_whitespaces`` that is the whole state after a space,
        so a text can be normalized piece by piece between spaces.
        ``passes``: as in :meth:`normalize_str` (0: a piece of a bigger
        job, which reports no progress of its own)."""
        out: list[str] = []
        done: list[str] = []  # out joined so far, a slice at a time
        ss: list[int] = []
        se: list[int] = []
        space = self.space
        merge = self.merge_spaces
        simple_space = self.simple_space
        # every position that needs a look, other than simple spaces
        stops = match_starts(self.look_re, text, start, end)
        n_stops = len(stops)
        si = 0
        prepended = False
        non_ws = False
        n = end
        i = start
        steps = 0
        span = (end - start) * passes
        while i < n:
            steps += 1
            if steps % _STEP == 0:
                # a long text: let the GUI thread in now and then, and the
                # caller hear how far it got (or cancel)
                checkpoint(i - start if span else 0, span)
                if len(out) >= _JOIN_SLICE:
                    # one join of millions of pieces at the end would hold
                    # the GIL for ~0.1 s
                    done.append("".join(out))
                    out.clear()
            while si < n_stops and stops[si] < i:
                si += 1
            stop = stops[si] if si < n_stops else n
            j = stop
            if simple_space:
                sp = text.find(" ", i, stop)
                if sp >= 0:
                    j = sp
            if j > i:
                # characters no rule touches: copy them whole
                if not non_ws:
                    non_ws = True
                    prepended = self._word_start(out, ss, se, run_s, run_e, i, prepended)
                run_s = -1
                out.append(text[i:j])
                ss.extend(range(i, j))
                se.extend(range(i + 1, j + 1))
                i = j
                if i >= n:
                    break
            if j < stop:
                # a run of simple spaces
                k = j + 1
                while k < n and text[k] == " ":
                    k += 1
                non_ws = False
                if merge:
                    if run_s < 0:
                        run_s = j
                    run_e = k
                else:
                    out.append(space * (k - j))
                    ss.extend(range(j, k))
                    se.extend(range(j + 1, k + 1))
                i = k
                continue
            seg, seg_end, identity = self._segment_at(text, i, n)
            if seg_end < 0:
                return None
            for k in range(len(seg)):
                c = seg[k]
                if identity:
                    a = i + k
                    b = a + 1
                else:
                    a = i
                    b = seg_end
                if c != " ":
                    if not non_ws:
                        non_ws = True
                        prepended = self._word_start(out, ss, se, run_s, run_e, a, prepended)
                    run_s = -1
                    out.append(c)
                    ss.append(a)
                    se.append(b)
                else:
                    non_ws = False
                    if not merge:
                        out.append(space)
                        ss.append(a)
                        se.append(b)
                    elif run_s < 0:
                        run_s = a
                        run_e = b
                    else:
                        run_e = b
            i = seg_end
        if self.append_space:
            out.append(space)
            ss.append(n)
            se.append(n)
        if done:
            done.append("".join(out))
            return StrNorm("".join(done), ss, se, run_s, run_e)
        return StrNorm("".join(out), ss, se, run_s, run_e)

    # ---- bytes (llama.cpp, literally) -------------------------------------

    def _prefix_bytes(self, data: bytes, pos: int) -> tuple[bytes, int, bool]:
        """``normalize_prefix``: (output, bytes consumed, whether the output
        is the input itself)."""
        n = len(data)
        if self.has_ud:
            udp = self.ud_bytes_prefix
            length = 0
            while pos + length < n and data[pos:pos + length + 1] in udp:
                length += 1
            if length > 0:
                return data[pos:pos + length], length, True
        length, value, _ = self.charsmap.walk(data, pos)
        if length > 0:
            return self.charsmap.replacement(value), length, False
        c = data[pos]
        if c < 0x80:
            return data[pos:pos + 1], 1, True
        if not c & 0x40:
            return REPLACEMENT_UTF8, 1, False
        if not c & 0x20:
            need = 1
        elif not c & 0x10:
            need = 2
        elif not c & 0x08:
            need = 3
        else:
            return REPLACEMENT_UTF8, 1, False
        if pos + need >= n:
            return REPLACEMENT_UTF8, 1, False
        for k in range(1, need + 1):
            if data[pos + k] & 0xC0 != 0x80:
                return REPLACEMENT_UTF8, 1, False
        return data[pos:pos + need + 1], need + 1, True

    def normalize_bytes(self, data: bytes, passes: int = 0) -> BytesNorm:
        """llama.cpp's normalizer over UTF-8 bytes, with the source byte
        range of each output byte; ``passes`` as in :meth:`normalize_str`."""
        out = bytearray()
        ss: list[int] = []
        se: list[int] = []
        space = self.space_bytes
        nsp = len(space)
        prepend = self.prepend_space
        merge = self.merge_spaces
        prepended = False
        non_ws = False
        run_s = -1
        run_e = -1
        n = len(data)
        pos = 0
        span = n * passes
        steps = 0
        while pos < n:
            steps += 1
            if steps % _STEP == 0:
                checkpoint(pos if span else 0, span)  # a long text: let the GUI thread in (or cancel)
            seg, consumed, identity = self._prefix_bytes(data, pos)
            end = pos + consumed
            for k in range(len(seg)):
                c = seg[k]
                if identity:
                    a = pos + k
                    b = a + 1
                else:
                    a = pos
                    b = end
                if c != 0x20:
                    if not non_ws:
                        non_ws = True
                        if (prepend and not prepended) or merge:
                            out += space
                            if run_s >= 0:
                                ss.extend([run_s] * nsp)
                                se.extend([run_e] * nsp)
                            else:
                                ss.extend([a] * nsp)
                                se.extend([a] * nsp)
                            prepended = True
                    run_s = -1
                    out.append(c)
                    ss.append(a)
                    se.append(b)
                else:
                    non_ws = False
                    if not merge:
                        out += space
                        ss.extend([a] * nsp)
                        se.extend([b] * nsp)
                    elif run_s < 0:
                        run_s = a
                        run_e = b
                    else:
                        run_e = b
            pos = end
        if self.append_space:
            out += space
            ss.extend([n] * nsp)
            se.extend([n] * nsp)
        return BytesNorm(bytes(out), ss, se)


# look_flags' layout: the block numbers of the 0x1100 blocks of 256 code
# points (int16, little-endian), then the blocks; the lone surrogates' bit
_BLOCKS: Final = 0x1100
_SURROGATE: Final = 8


def _add_range(cps: vec[i64], bits: vec[i64], lo: i64, hi: i64, bit: i64) -> tuple[vec[i64], vec[i64]]:
    cp: i64 = lo
    while cp <= hi:
        cps = append(cps, cp)
        bits = append(bits, bit)
        cp += 1
    return cps, bits


def flag_table(cps: vec[i64], bits: vec[i64]) -> bytes:
    """Flags by code point, or-ed from ``bits[k]`` for ``cps[k]``, in two
    levels: a block number per 256 code points (block 0: all zeros, shared
    by the blocks nothing touches), then the blocks (read with
    :func:`look_flag`). Built natively in one pass over the pairs."""
    numbers = vec[i64](capacity=_BLOCKS)
    k: i64 = 0
    while k < _BLOCKS:
        numbers = append(numbers, 0)
        k += 1
    used: i64 = 1
    n: i64 = len(cps)
    k = 0
    while k < n:
        b: i64 = cps[k] >> 8
        if numbers[b] == 0:
            numbers[b] = used
            used += 1
        k += 1
    body = vec[u8](capacity=used * 256)
    k = 0
    while k < used * 256:
        body = append(body, 0)
        k += 1
    k = 0
    while k < n:
        cp = cps[k]
        at: i64 = (numbers[cp >> 8] << 8) + (cp & 0xFF)
        body[at] = body[at] | u8(bits[k])
        k += 1
    w = BytesWriter()
    for x in numbers:
        write_i16_le(w, i16(x))
    w.write(bytes(memoryview(body)))
    return w.getvalue()


def look_flag(flags: bytes, cp: i64) -> i64:
    """The flags of code point ``cp`` in a ``look_flags`` table."""
    k: i64 = i64(read_i16_le(flags, (cp >> 8) * 2))
    f: i64 = flags[2 * _BLOCKS + (k << 8) + (cp & 0xFF)]
    return f


def stop_starts(flags: bytes, text: str) -> list[int] | None:
    """Where the pattern that ``Normalizer.look_flags`` made ``flags`` from
    matches in ``text`` (every match is one character, so they cannot
    overlap); None when ``text`` holds a lone surrogate (the same pass
    tells: a regular expression's search for one was a tenth of the
    instructions of encoding a mixed-script text)."""
    out: list[int] = []
    n: i64 = len(text)
    i: i64 = 0
    block: i64 = -1
    at: i64 = 0
    while i < n:
        if i & 0xFFFF == 0xFFFF:
            checkpoint(0, 0)
        cp: i64 = ord(text[i])
        if cp >> 8 != block:
            # (look_flag, inlined: text mostly stays in one block a while)
            block = cp >> 8
            at = 2 * _BLOCKS + (i64(read_i16_le(flags, block * 2)) << 8)
        f: i64 = flags[at + (cp & 0xFF)]
        if f != 0:
            if f & 1:
                out.append(i)
            elif f & 2 and i + 1 < n:
                # (most letters start a key with a combining mark after
                # them: the follower is read here, mostly from this block)
                c2: i64 = ord(text[i + 1])
                g: i64
                if c2 >> 8 == block:
                    g = flags[at + (c2 & 0xFF)]
                else:
                    g = look_flag(flags, c2)
                if g & 4:
                    out.append(i)
            if f & _SURROGATE:
                return None
        i += 1
    return out


def match_starts(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[int]:
    """Where ``pattern`` matches in ``text[start:end]``. A loop that offers
    the GIL, not a comprehension: over a pasted 10 MB text there are millions
    of matches, and compiled code would hold the GIL (and the GUI thread)
    for the whole scan."""
    out: list[int] = []
    for m in pattern.finditer(text, start, end):
        out.append(m.start())
        if len(out) % WORD_STEP == 0:  # (a match object costs what a word does: 4096 held the GIL 17 ms)
            checkpoint(0, 0)
    return out
