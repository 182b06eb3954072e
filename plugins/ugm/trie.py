"""The pieces of a vocabulary as a trie over code points: one hash table of
edges in native vectors, built a piece at a time and walked with native
ints.

A ``dict`` holding every piece and every prefix of one is quick to query
but costs one ``str`` per prefix (half a million for a 250k vocabulary):
~0.4 s to build when the model opens, ~100 MB, and a slice plus a hash of
it at every step of the Viterbi pass. Here a node is a number and a step
is a probe or two of a vector, with no object made.

Layout: ``size`` slots (a power of two, at most :data:`_MAX_LOAD` full),
linear probing, in two native vectors. The edge from node ``parent`` by
code point ``cp`` sits in slot ``s`` and leads to node ``s + 1`` (the root
is node 0). ``keys[s]`` is ``parent << 32 | cp + 1`` (0: an empty slot),
with bit 24 set when the node has children; ``tokens[s]`` is the token id
of the prefix the node spells, or -1.
"""

from __future__ import annotations

from typing import Final, Sequence, final

from librt.vecs import append, vec

from tokenprism.core.plugin_api import PieceCodes, offer_gil

from mypy_extensions import i32, i64, u8

# (Final: mypyc puts the literals in the compiled loops)
NO_NODE: Final = -1
JOINS_SIZE: Final = 128 * 128


@final
class PieceTrie:
    """``keys``/``tokens``/``mask`` as the module docstring lays them out;
    ``first``: per code point below ``len(first)``, :meth:`step` from the
    root by it, which spares the hash probe at the start of every
    position; ``joins``: a byte per pair of ASCII code points
    ``a * 128 + b``, 1 when some piece has ``b`` right after ``a`` (see
    :meth:`joined`)."""

    def __init__(self, keys: vec[i64], tokens: vec[i32], mask: int, first: vec[i64], joins: bytes) -> None:
        self.keys = keys
        self.tokens = tokens
        self.mask: i64 = mask
        self.first = first
        self.joins = joins

    def child(self, node: i64, cp: i64) -> i64:
        """The node reached from ``node`` by ``cp``; :data:`NO_NODE` when no
        piece goes on that way."""
        r = self.step(node, cp)
        return NO_NODE if r == NO_NODE else step_node(r)

    def step(self, node: i64, cp: i64) -> i64:
        """:meth:`child`, :meth:`token` and :meth:`has_children` in one call
        and one slot read (the Viterbi pass's step): :data:`NO_NODE`, or
        ``(token + 1) << 32 | has_children << 31 | child`` (see :func:`step_node`)."""
        keys = self.keys
        mask = self.mask
        h: i64 = (node * 0x9E3779B1) ^ (cp * 0x85EBCA6B)  # (the slot formula, the same in _place)
        s: i64 = (h ^ (h >> 21)) & mask
        want: i64 = (node << 32) | (cp + 1)
        while True:
            key = keys[s]
            if key == 0:
                return NO_NODE
            if key & _NOT_CHILDREN == want:
                tok: i64 = i64(self.tokens[s])
                return ((tok + 1) << 32) | (((key >> 24) & 1) << 31) | (s + 1)
            s = (s + 1) & mask

    def joined(self, a: i64, b: i64) -> bool:
        """Whether some piece holds code point ``b`` right after ``a``
        (True when either is not ASCII: only those pairs are in the table).
        When not, no piece spans the two, so every split of a text goes
        between them."""
        if a >= 128 or b >= 128:
            return True
        j: i64 = self.joins[a * 128 + b]
        return j != 0

    def token(self, node: i64) -> i64:
        """The token id whose piece is the prefix ``node`` spells, or -1."""
        return i64(self.tokens[node - 1])

    def has_children(self, node: i64) -> bool:
        return self.keys[node - 1] & _CHILDREN != 0

    def lookup(self, piece: str) -> int:
        """The token id of ``piece``, -1 for a proper prefix of a piece, -2
        for neither (as a ``dict`` of prefixes would say; for tests)."""
        node: i64 = 0
        for ch in piece:
            node = self.child(node, ord(ch))
            if node == NO_NODE:
                return -2
        if node == 0:
            return -2
        return int(self.token(node))


_CHILDREN: Final = 1 << 24
_NOT_CHILDREN: Final = ~(1 << 24)


def step_node(r: i64) -> i64:
    """The node of a :meth:`PieceTrie.step` result."""
    return r & 0x7FFFFFFF


class PieceFacts:
    """What the tokenizer needs to know of the pieces it puts in the trie,
    from one pass over their code points."""

    def __init__(self, lens: vec[i64], surrogates: bool, inner_space: bool) -> None:
        self.lens_vec = lens
        """Each piece's length in code points."""
        self.surrogates = surrogates
        """Some piece holds a lone surrogate (not valid UTF-8)."""
        self.inner_space = inner_space
        """Some piece holds ``space`` past its first character."""


def without_surrogates(codes: PieceCodes, ids: vec[i64]) -> vec[i64]:
    """The ids of ``ids`` whose pieces hold no lone surrogate."""
    cps = codes.cps
    offs = codes.offs
    out = vec[i64]()
    for tid in ids:
        j = offs[tid]
        b = offs[tid + 1]
        while j < b and not 0xD800 <= cps[j] <= 0xDFFF:
            j += 1
        if j == b:
            out = append(out, tid)
    return out


def build_trie(codes: PieceCodes, ids: vec[i64], space: i64, first_below: int) -> tuple[PieceTrie, PieceFacts]:
    """The trie of piece ``t`` for every ``t`` in ``ids`` (ascending; a
    piece listed twice keeps the last id, as llama.cpp's trie does; empty
    pieces match nothing), and the pieces' :class:`PieceFacts` (``space``:
    see there), learnt in the same pass over their code points. ``first``
    covers code points below ``first_below``."""
    # a piece adds at most len(piece) nodes, far fewer as pieces share
    # prefixes (about two per piece in SentencePiece vocabularies): room
    # for four per piece (or for every code point), doubled while more
    # than _MAX_LOAD of the slots fill up
    offs = codes.offs
    total: i64 = 0
    for tid in ids:
        total += offs[tid + 1] - offs[tid]
    size: i64 = 1024
    while size < 4 * len(ids) and size <= total:
        size *= 2
    while True:
        if size >= 1 << 31:
            raise ValueError("too many pieces for the piece trie")
        built = _place(codes, ids, size, space)
        if built is not None:
            break
        size *= 2
    trie = built[0]
    # (native ints: a list's items were boxed and unboxed at every position)
    first = vec[i64](capacity=first_below)
    c: i64 = 0
    while c < first_below:
        first = append(first, trie.step(0, c))
        c += 1
    trie.first = first
    return trie, built[1]


_MAX_LOAD: Final = 0.6


def _place(codes: PieceCodes, ids: vec[i64], size: i64, space: i64) -> tuple[PieceTrie, PieceFacts] | None:
    """The trie in a table of ``size`` slots, its pieces inserted one at a
    time, and their facts; None when it would be more than ``_MAX_LOAD``
    full. (The facts come with the walk, where the walk waits on the
    table's memory anyway: a pass of their own was 4 ms of a 250k-token
    open.)

    Compiled, a code point costs a hash and a probe or two in native
    memory, and the table is the trie's own: placing a whole level of
    prefixes at once with numpy (a pass over the arrays per probe step),
    then packing the records, took 125 ms for nomic-bert-moe."""
    mask: i64 = size - 1
    keys = vec[i64](capacity=size)
    tokens = vec[i32](capacity=size)
    k: i64 = 0
    while k < size:
        keys = append(keys, 0)
        tokens = append(tokens, -1)
        k += 1
    # the ASCII pairs (see PieceTrie.joined), one byte each, set as edges
    # are made (a native vector: a bytearray item is set through Python)
    joins = vec[u8](capacity=JOINS_SIZE)
    k = 0
    while k < JOINS_SIZE:
        joins = append(joins, 0)
        k += 1
    limit: i64 = int(_MAX_LOAD * float(size))
    used: i64 = 0
    done: i64 = 0
    lens = vec[i64](capacity=len(ids))
    surrogates = False
    inner_space = False
    cps = codes.cps
    offs = codes.offs
    for tid in ids:
        done += 1
        if done & 0x3FFF == 0:
            offer_gil()  # built in the loader thread: the GUI must not wait for it
        j: i64 = offs[tid]
        m: i64 = offs[tid + 1]
        lens = append(lens, m - j)
        if m == j:
            continue
        node: i64 = 0
        prev: i64 = 0x7FFFFFFF  # (the root's "code point": no pair)
        while j < m:
            cp: i64 = i64(cps[j])
            if 0xD800 <= cp <= 0xDFFF:
                surrogates = True
            elif cp == space and node != 0:
                inner_space = True
            want: i64 = (node << 32) | (cp + 1)
            h: i64 = (node * 0x9E3779B1) ^ (cp * 0x85EBCA6B)  # (the slot formula, the same in PieceTrie.step)
            slot: i64 = (h ^ (h >> 21)) & mask
            while True:
                kv = keys[slot]
                if kv & _NOT_CHILDREN == want:
                    break
                if kv == 0:
                    keys[slot] = want
                    used += 1
                    if node > 0:
                        keys[node - 1] = keys[node - 1] | _CHILDREN
                        if prev < 128 and cp < 128:
                            joins[prev * 128 + cp] = 1
                    break
                slot = (slot + 1) & mask
            node = slot + 1
            prev = cp
            j += 1
        tokens[node - 1] = i32(tid)
        if used > limit:
            return None
    return PieceTrie(keys, tokens, mask, vec[i64](), bytes(memoryview(joins))), PieceFacts(lens, surrogates, inner_space)
