"""SentencePiece's precompiled charsmap as llama.cpp reads it: the blob is
a little-endian ``uint32`` byte count, that many bytes of XOR-compressed
compact double array (XCDA) units, then NUL-terminated replacement
strings. The XCDA maps input byte sequences to replacement offsets; at
every input position the longest matching sequence wins.

:class:`Charsmap` checks the blob once, when the model is opened: every
node an input could reach, every index a lookup could touch and every
replacement string, so that a malformed blob is reported as a
:class:`GGUFError` and never turns into an out-of-range read later. The
check and the walks that classify the keys' first characters run in
native vectors (compiled): they are part of every UGM model's open.
(:mod:`.charsmap` normalizes text with it.)
"""

from __future__ import annotations

import struct
from librt.vecs import append, pop, vec
from mypy_extensions import i64, u8

from tokenprism.core.plugin_api import GGUFError, offer_gil

CHARSMAP_KEY = "tokenizer.ggml.precompiled_charsmap"


def _malformed(message: str) -> GGUFError:
    return GGUFError("", f"malformed precompiled charsmap: {message}", None, CHARSMAP_KEY)


def _zeros_u8(n: i64) -> vec[u8]:
    """``n`` zero bytes as a native vector (flags by index)."""
    out = vec[u8](capacity=n)
    k: i64 = 0
    while k < n:
        out = append(out, 0)
        k += 1
    return out


def _xcda_base(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


class Charsmap:
    """A checked precompiled charsmap.

    Besides the XCDA itself it keeps what the character path needs:
    ``single`` (characters that are keys by themselves), ``multi_first``
    (characters that start longer keys), ``second`` (characters that follow
    the first character in some key), ``inner_ascii`` (ASCII bytes found in
    keys past their first character) and the replacement strings (decoded
    on first use, see :meth:`repl_text`).
    ``utf8_ok`` is false when keys or replacements are not UTF-8 in a way
    the character path cannot reproduce.
    """

    def __init__(self, blob: bytes) -> None:
        self.units: list[int] = []
        self.size = 0
        self.repl = b""
        self.root = 0
        self.utf8_ok = True
        self.single: set[str] = set()
        self.multi_first: set[str] = set()
        self.second: set[str] = set()
        # the replacement strings decoded so far, by offset (see repl_text)
        self.repl_str: dict[int, str] = {}
        self.n_values = 0
        # the longest replacement string in characters (of those that decode)
        self.longest = 0
        # ASCII bytes that occur in keys past their first character
        self.inner_ascii: set[int] = set()
        self.space_in_keys = False
        # the children of node offset o are units kid_at[kid_start[o]:kid_start[o + 1]]
        # (see _index_children)
        self._kid_start = vec[i64]()
        self._kid_at = vec[i64]()
        if not blob:
            # no charsmap in the file: llama.cpp copies text unchanged
            return
        if len(blob) < 4:
            raise _malformed(f"{len(blob)} bytes is too small for the 4-byte XCDA size header")
        blob_size = int.from_bytes(blob[:4], "little")
        if blob_size + 4 >= len(blob):
            raise _malformed(f"the XCDA claims {blob_size} bytes but only {len(blob) - 4} follow the header "
                             "(at least one byte of replacement strings must follow it)")
        n_units = blob_size // 4
        self.size = n_units
        self.repl = bytes(blob[4 + blob_size:])
        if n_units:
            self.units = list(struct.unpack_from(f"<{n_units}I", blob, 4))
            self.root = _xcda_base(self.units[0])
            self._index_children()
            self._check()
            self._first_chars()

    # ---- checking the double array ------------------------------------------

    def _index_children(self) -> None:
        """Unit ``p`` with a label ``c`` in 1..255 is a child of the node
        whose children sit at offset ``p ^ c``: a counting sort of the units
        by that offset, in native vectors (numpy's sort and searches, and
        lists and dicts for the visits, were 20 ms of opening a 250k-token
        vocabulary whose charsmap has 44k units)."""
        units = self.units
        size: i64 = self.size
        # p ^ c < size rounded up to a multiple of 256
        n_off: i64 = (size | 0xFF) + 1
        counts = vec[i64](capacity=n_off + 1)
        k: i64 = 0
        while k <= n_off:
            counts = append(counts, 0)
            k += 1
        p: i64 = 0
        while p < size:
            c: i64 = i64(units[p]) & 0x800000FF
            if 1 <= c <= 255:
                counts[(p ^ c) + 1] += 1
            p += 1
        k = 0
        while k < n_off:
            counts[k + 1] += counts[k]
            k += 1
        fill = vec[i64](counts)
        at = vec[i64](capacity=counts[n_off])
        k = 0
        while k < counts[n_off]:
            at = append(at, 0)
            k += 1
        p = 0
        while p < size:
            c = i64(units[p]) & 0x800000FF
            if 1 <= c <= 255:
                o = p ^ c
                at[fill[o]] = p  # (ascending p within a node, as a stable sort gives)
                fill[o] += 1
            p += 1
        self._kid_start = counts
        self._kid_at = at

    def _check(self) -> None:
        """Visit every node reachable from the root with input bytes 1..255
        (a level at a time) and check every index and replacement offset a
        lookup would use. Native vectors throughout: a list or set item per
        child was most of the 10 ms this took for a 44k-unit charsmap."""
        units = self.units
        size: i64 = self.size
        starts = self._kid_start
        at = self._kid_at
        repl = self.repl
        n_repl: i64 = len(repl)
        # a replacement at offset v ends when some NUL is at or after v
        last_nul: i64 = repl.rfind(b"\0")
        root: i64 = self.root
        # nodes queued once: a node is visited at the first level that reaches it
        queued = _zeros_u8(size)
        if root < size:  # (else the first level reports it)
            queued[root] = 1
        is_value = _zeros_u8(n_repl)
        values = vec[i64]()
        # ASCII labels of the root's children, and of children below it
        ascii_root = _zeros_u8(0x80)
        ascii_inner = _zeros_u8(0x80)
        first_level = True
        frontier = vec[i64]()
        frontier = append(frontier, root)
        while len(frontier) > 0:
            for o in frontier:
                if (o | 0xFF) >= size:
                    raise _malformed(f"a node's children fall outside the {size}-unit XCDA")
            kids = vec[i64]()
            for o in frontier:
                k: i64 = starts[o]
                while k < starts[o + 1]:
                    kids = append(kids, at[k])
                    k += 1
            if len(kids) == 0:
                break
            offsets = vec[i64](capacity=len(kids))
            ascii_seen = ascii_root if first_level else ascii_inner
            for q in kids:
                u: i64 = units[q]
                label: i64 = u & 0x800000FF
                if label < 0x80:
                    ascii_seen[label] = 1
                off: i64 = q ^ ((u >> 10) << ((u & 512) >> 6))
                if off >= size:
                    raise _malformed(f"a node points outside the {size}-unit XCDA")
                offsets = append(offsets, off)
            first_level = False
            # (every offset is checked, then every value, as one error is reported)
            vals = vec[i64]()
            back_to_root = False
            i: i64 = 0
            while i < len(kids):
                off = offsets[i]
                if (i64(units[kids[i]]) >> 8) & 1:
                    val: i64 = i64(units[off]) & 0x7FFFFFFF
                    if val >= n_repl:
                        raise _malformed(f"a replacement offset is outside the {n_repl} bytes of strings")
                    vals = append(vals, val)
                if off == root:
                    back_to_root = True
                i += 1
            for val in vals:
                if val > last_nul:
                    raise _malformed("a replacement string has no terminating NUL")
                if is_value[val] == 0:
                    is_value[val] = 1
                    values = append(values, val)
            if back_to_root:
                # a path back to the root: its labels occur inside keys too
                c: i64 = 0
                while c < 0x80:
                    if ascii_root[c]:
                        ascii_inner[c] = 1
                    c += 1
            frontier = vec[i64]()
            for off in offsets:
                if queued[off] == 0:
                    queued[off] = 1
                    frontier = append(frontier, off)
        c = 0
        while c < 0x80:
            if ascii_inner[c]:
                self.inner_ascii.add(int(c))
            c += 1
        self.space_in_keys = 0x20 in self.inner_ascii
        self.n_values = len(values)
        self._read_strings(values)

    def _read_strings(self, values: vec[i64]) -> None:
        """``utf8_ok`` and ``longest`` from the replacement strings at
        ``values``, none of them decoded (``repl_text`` does that on
        first use): a dict of 15k strings made when the model opens was 15
        ms of a 250k-token vocabulary's open.

        When all the strings decode as one, a string that starts at a
        character's first byte is whole characters up to its NUL (a NUL
        is never inside a character), so its length is its count of bytes
        that do not continue a character; any other is decoded alone."""
        repl = self.repl
        whole_ok = True
        try:
            repl.decode("utf-8")
        except UnicodeDecodeError:
            whole_ok = False
        longest: i64 = 0
        for v in values:
            k: i64 = v
            if whole_ok and not 0x80 <= repl[k] <= 0xBF:
                chars: i64 = 0
                while repl[k] != 0:
                    if not 0x80 <= repl[k] <= 0xBF:
                        chars += 1
                    k += 1
            else:
                text = self.repl_text(v)
                if text is None:
                    self.utf8_ok = False
                    continue
                chars = len(text)
            if chars > longest:
                longest = chars
        self.longest = int(longest)

    def repl_text(self, value: int) -> str | None:
        """The replacement string at offset ``value`` (one the check
        reached), None when it is not UTF-8."""
        text = self.repl_str.get(value)
        if text is None:
            repl = self.repl
            try:
                text = repl[value:repl.find(b"\0", value)].decode("utf-8")
            except UnicodeDecodeError:
                return None
            self.repl_str[value] = text
        return text

    def _chars(self, offset: i64) -> tuple[vec[i64], vec[i64], vec[u8]]:
        """Every character a key can go on with below the node at
        ``offset`` (its children's ASCII labels, and the valid UTF-8
        sequences of its descendants): the code points, the offsets of the
        nodes they reach and whether those are leaves. Clears ``utf8_ok``
        where a key ends inside a character.

        Native, a code point built as the bytes go down (a sequence is
        valid UTF-8 when its lead byte is one and its code point is not
        overlong, a surrogate or past U+10FFFF), where lists of tuples and a
        decode per sequence were 5 ms of opening a 44k-unit charsmap."""
        cps = vec[i64]()
        offs = vec[i64]()
        leaves = vec[u8]()
        units = self.units
        starts = self._kid_start
        at = self._kid_at
        if offset < 0 or offset + 1 >= len(starts):
            return cps, offs, leaves
        # pending sequences: code point so far, the node's offset, bytes still needed, bytes in all
        s_cp = vec[i64]()
        s_off = vec[i64]()
        s_need = vec[i64]()
        s_len = vec[i64]()
        k: i64 = starts[offset]
        while k < starts[offset + 1]:
            q = at[k]
            u: i64 = units[q]
            k += 1
            label: i64 = u & 0x800000FF
            off: i64 = q ^ ((u >> 10) << ((u & 512) >> 6))
            leaf: i64 = (u >> 8) & 1
            if label < 0x80:
                cps = append(cps, label)
                offs = append(offs, off)
                leaves = append(leaves, u8(leaf))
                continue
            need: i64 = 1 if 0xC2 <= label <= 0xDF else 2 if 0xE0 <= label <= 0xEF else 3 if 0xF0 <= label <= 0xF4 else 0
            if need == 0:
                continue  # valid UTF-8 never starts with this byte
            if leaf:
                self.utf8_ok = False  # a key ending inside a character
            s_cp = append(s_cp, label & (0x1F if need == 1 else 0x0F if need == 2 else 0x07))
            s_off = append(s_off, off)
            s_need = append(s_need, need)
            s_len = append(s_len, need + 1)
        popped: i64 = 0
        while len(s_cp) > 0:
            popped += 1
            if popped % 256 == 0:
                offer_gil()  # built in the loader thread: the GUI must not wait for it
            s_cp, cp = pop(s_cp)
            s_off, node = pop(s_off)
            s_need, need = pop(s_need)
            s_len, n = pop(s_len)
            if node < 0 or node + 1 >= len(starts):
                continue
            k = starts[node]
            while k < starts[node + 1]:
                q = at[k]
                u = units[q]
                k += 1
                label = u & 0x800000FF
                if not 0x80 <= label <= 0xBF:
                    continue  # never follows this prefix in valid UTF-8
                off = q ^ ((u >> 10) << ((u & 512) >> 6))
                leaf = (u >> 8) & 1
                c: i64 = (cp << 6) | (label & 0x3F)
                if need > 1:
                    if leaf:
                        self.utf8_ok = False
                    s_cp = append(s_cp, c)
                    s_off = append(s_off, off)
                    s_need = append(s_need, need - 1)
                    s_len = append(s_len, n)
                    continue
                if n == 2 and c < 0x80 or n == 3 and (c < 0x800 or 0xD800 <= c <= 0xDFFF) \
                        or n == 4 and not 0x10000 <= c <= 0x10FFFF:
                    continue  # overlong, a surrogate or too big: never in valid input
                cps = append(cps, c)
                offs = append(offs, off)
                leaves = append(leaves, u8(leaf))
        return cps, offs, leaves

    def _has_children(self, offset: i64) -> bool:
        starts = self._kid_start
        return 0 <= offset and offset + 1 < len(starts) and starts[offset] < starts[offset + 1]

    def _first_chars(self) -> None:
        """Classify every character a key can start with."""
        cps, offs, leaves = self._chars(self.root)
        i: i64 = 0
        while i < len(cps):
            ch = chr(cps[i])
            if leaves[i]:
                self.single.add(ch)
            off = offs[i]
            if self._has_children(off):
                self.multi_first.add(ch)
                # the characters that can follow: a key can only be longer
                # than one character where the next character is one of these
                for c in self._chars(off)[0]:
                    self.second.add(chr(c))
            i += 1

    # ---- lookups -------------------------------------------------------------

    def walk(self, data: bytes, start: int) -> tuple[int, int, bool]:
        """llama.cpp's XCDA walk at ``data[start:]``: the length of the
        longest matching key (0 for none), its replacement offset, and
        whether the walk ran to the end of ``data`` (so more input could
        give a longer key)."""
        size = self.size
        if size == 0:
            return 0, 0, False
        units = self.units
        n = len(data)
        node = self.root
        best_len = 0
        best_val = 0
        pos = start
        while pos < n:
            c = data[pos]
            if c == 0:
                return best_len, best_val, False
            node ^= c
            if node >= size:
                raise _malformed("index outside the XCDA")
            unit = units[node]
            if (unit & 0x800000FF) != c:
                return best_len, best_val, False
            node ^= (unit >> 10) << ((unit & 512) >> 6)
            if unit & 256:
                if node >= size:
                    raise _malformed("index outside the XCDA")
                best_len = pos - start + 1
                best_val = units[node] & 0x7FFFFFFF
            pos += 1
        return best_len, best_val, True

    def replacement(self, offset: int) -> bytes:
        repl = self.repl
        if offset >= len(repl):
            raise _malformed("replacement offset outside the strings")
        end = repl.find(b"\0", offset)
        if end < 0:
            raise _malformed("unterminated replacement string")
        return repl[offset:end]
