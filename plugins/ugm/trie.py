"""The pieces of a vocabulary as a trie over code points: one hash table of
edges in a ``bytes`` object, built level by level with numpy and walked
with native ints.

A ``dict`` holding every piece and every prefix of one is quick to query
but costs one ``str`` per prefix (half a million for a 250k vocabulary):
~0.4 s to build when the model opens, ~100 MB, and a slice plus a hash of
it at every step of the Viterbi pass. Here a node is a number, a step is
a few byte reads, and the whole table is built from arrays.

Layout: ``size`` slots (a power of two, at most half full) of
:data:`RECORD` bytes, linear probing. The edge from node ``parent`` by
code point ``cp`` sits in slot ``s`` and leads to node ``s + 1`` (the root
is node 0). A slot holds three little-endian ``uint32``: ``cp + 1`` (0:
an empty slot) with 1 in its top byte when the node has children, then
``parent``, then ``token id + 1`` (0: the prefix is not a piece).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Sequence

import numpy as np
import numpy.typing as npt

from tokenprism.core.gil import offer_gil

if TYPE_CHECKING:
    from mypy_extensions import i64

# (Final: mypyc puts the literals in the compiled loops)
RECORD: Final = 12
NO_NODE: Final = -1
_SPAN: Final = 0x110000  # code points


def slot_of(node: i64, cp: i64, mask: i64) -> i64:
    """Where the probe for edge (``node``, ``cp``) starts (the same formula
    as :func:`_slots`, which builds the table)."""
    h: i64 = (node * 0x9E3779B1) ^ (cp * 0x85EBCA6B)
    return (h ^ (h >> 21)) & mask


def _u32(t: bytes, o: i64) -> i64:
    b0: i64 = t[o]
    b1: i64 = t[o + 1]
    b2: i64 = t[o + 2]
    b3: i64 = t[o + 3]
    return b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)


def _slots(node: npt.NDArray[np.int64], cp: npt.NDArray[np.int64], mask: int) -> npt.NDArray[np.int64]:
    h = (node * 0x9E3779B1) ^ (cp * 0x85EBCA6B)
    return (h ^ (h >> 21)) & mask


class PieceTrie:
    """``table``/``mask`` as the module docstring lays them out; ``first``:
    per code point below ``len(first)``, the root's child by it (-1 for
    none), which spares the hash probe at the start of every position."""

    def __init__(self, table: bytes, mask: int, first: list[int]) -> None:
        self.table = table
        self.mask: i64 = mask
        self.first = first

    def child(self, node: i64, cp: i64) -> i64:
        """The node reached from ``node`` by ``cp``; :data:`NO_NODE` when no
        piece goes on that way."""
        t = self.table
        mask = self.mask
        s = slot_of(node, cp, mask)
        want: i64 = cp + 1
        while True:
            o: i64 = s * RECORD
            c1 = _u32(t, o) & 0xFFFFFF
            if c1 == 0:
                return NO_NODE
            if c1 == want and _u32(t, o + 4) == node:
                return s + 1
            s = (s + 1) & mask

    def token(self, node: i64) -> i64:
        """The token id whose piece is the prefix ``node`` spells, or -1."""
        return _u32(self.table, (node - 1) * RECORD + 8) - 1

    def has_children(self, node: i64) -> bool:
        b: i64 = self.table[(node - 1) * RECORD + 3]
        return b != 0

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


def code_points(pieces: Sequence[str], ids: list[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The length of ``pieces[t]`` for every ``t`` in ``ids``, and all their
    code points end to end (no piece may hold a lone surrogate)."""
    strs = [pieces[t] for t in ids]
    lens = np.fromiter(map(len, strs), dtype=np.int64, count=len(strs))
    cps = np.frombuffer("".join(strs).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
    return lens, cps


def build_trie(lens: npt.NDArray[np.int64], cps: npt.NDArray[np.int64], ids: list[int],
               first_below: int) -> PieceTrie:
    """The trie of the pieces ``code_points`` gives for ``ids`` (ascending;
    a piece listed twice keeps the last id, as llama.cpp's trie does; empty
    pieces match nothing). ``first`` covers code points below ``first_below``."""
    tids = np.asarray(ids, dtype=np.int64)
    starts = np.zeros(len(lens), dtype=np.int64)
    if len(lens) > 1:
        np.cumsum(lens[:-1], out=starts[1:])

    # every piece puts at most len(piece) edges in the table, far fewer
    # as pieces share prefixes: at most half full for real vocabularies
    size = 2
    while size <= int(lens.sum()):
        size *= 2
    if size >= 1 << 31:
        raise ValueError("too many pieces for the piece trie")
    mask = size - 1
    keys = np.zeros(size, dtype=np.int64)  # parent * _SPAN + cp + 1; 0: free
    tok = np.full(size, -1, dtype=np.int64)
    active = np.nonzero(lens > 0)[0]
    node_of = np.zeros(len(lens), dtype=np.int64)  # each piece's prefix so far
    depth = 0
    while active.size:
        offer_gil()  # built in the loader thread: the GUI must not wait for it
        parents = node_of[active]
        want = parents * _SPAN + cps[starts[active] + depth] + 1
        pos = _slots(parents, want - parents * _SPAN - 1, mask)
        slot = np.full(len(active), -1, dtype=np.int64)
        pending = np.arange(len(active), dtype=np.int64)
        # linear probing for all of a level's prefixes at once: free slots
        # get one of their claimants' keys (whichever the scatter keeps),
        # then every prefix stops at the slot that holds it or moves on
        while pending.size:
            p = pos[pending]
            w = want[pending]
            k = keys[p]
            free = k == 0
            if free.any():
                keys[p[free]] = w[free]
                k = keys[p]
            hit = k == w
            slot[pending[hit]] = p[hit]
            miss = ~hit
            pending = pending[miss]
            pos[pending] = (p[miss] + 1) & mask
        node_of[active] = slot + 1
        depth += 1
        done = lens[active] == depth
        np.maximum.at(tok, slot[done], tids[active[done]])
        active = active[~done]
    used = np.nonzero(keys)[0]
    parent = (keys[used] - 1) // _SPAN
    v = (keys[used] - 1) % _SPAN + 1
    has_kids = np.zeros(size, dtype=np.int64)
    has_kids[parent[parent > 0] - 1] = 1 << 24
    rec = np.zeros((size, 3), dtype="<u4")
    rec[used, 0] = v | has_kids[used]
    rec[used, 1] = parent
    rec[used, 2] = tok[used] + 1
    table = rec.tobytes()
    first = [NO_NODE] * first_below
    at_root = used[(parent == 0) & (v - 1 < first_below)]
    for c0, node in zip(((keys[at_root] - 1) % _SPAN).tolist(), (at_root + 1).tolist()):
        first[c0] = node
    return PieceTrie(table, mask, first)
