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

from typing import TYPE_CHECKING, Final, Sequence, final

import numpy as np
import numpy.typing as npt

from librt.strings import read_i64_le

from tokenprism.core.gil import offer_gil

if TYPE_CHECKING:
    from mypy_extensions import i64

# (Final: mypyc puts the literals in the compiled loops)
RECORD: Final = 12
NO_NODE: Final = -1
_BITS: Final = 21  # a code point's
JOINS_SIZE: Final = 128 * 128


def slot_of(node: i64, cp: i64, mask: i64) -> i64:
    """Where the probe for edge (``node``, ``cp``) starts (the same formula
    as :func:`_slots`, which builds the table)."""
    h: i64 = (node * 0x9E3779B1) ^ (cp * 0x85EBCA6B)
    return (h ^ (h >> 21)) & mask


def _slots(node: npt.NDArray[np.int64], cp: npt.NDArray[np.int64], mask: int) -> npt.NDArray[np.int64]:
    h = (node * 0x9E3779B1) ^ (cp * 0x85EBCA6B)
    return (h ^ (h >> 21)) & mask


@final
class PieceTrie:
    """``table``/``mask`` as the module docstring lays them out; ``first``:
    per code point below ``len(first)``, :meth:`step` from the root by it,
    which spares the hash probe at the start of every position;
    ``joins``: a byte per pair of ASCII code points ``a * 128 + b``, 1 when
    some piece has ``b`` right after ``a`` (see :meth:`joined`)."""

    def __init__(self, table: bytes, mask: int, first: list[int], joins: bytes) -> None:
        self.table = table
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
        and one record read (the Viterbi pass's step): :data:`NO_NODE`, or
        ``(token + 1) << 32 | has_children << 31 | child`` (see :func:`unpack`)."""
        t = self.table
        mask = self.mask
        h: i64 = (node * 0x9E3779B1) ^ (cp * 0x85EBCA6B)  # slot_of, written out too
        s: i64 = (h ^ (h >> 21)) & mask
        want: i64 = cp + 1
        while True:
            o: i64 = s * RECORD
            # cp + 1 (low 24 bits), the has-children byte, then the parent
            key: i64 = read_i64_le(t, o)
            c1 = key & 0xFFFFFF
            if c1 == 0:
                return NO_NODE
            if c1 == want and key >> 32 == node:
                # parent and token + 1: the token is the high half
                tok: i64 = read_i64_le(t, o + 4) >> 32
                return (tok << 32) | (((key >> 24) & 1) << 31) | (s + 1)
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
        return (read_i64_le(self.table, (node - 1) * RECORD + 4) >> 32) - 1

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


def step_node(r: i64) -> i64:
    """The node of a :meth:`PieceTrie.step` result."""
    return r & 0x7FFFFFFF


def code_points(pieces: Sequence[str], ids: list[int]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The length of ``pieces[t]`` for every ``t`` in ``ids``, and all their
    code points end to end (lone surrogates included: :func:`build_trie`
    takes none)."""
    strs = [pieces[t] for t in ids]
    lens = np.fromiter(map(len, strs), dtype=np.int64, count=len(strs))
    cps = np.frombuffer("".join(strs).encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(np.int64)
    return lens, cps


def build_trie(lens: npt.NDArray[np.int64], cps: npt.NDArray[np.int64], ids: list[int] | npt.NDArray[np.int64],
               first_below: int) -> PieceTrie:
    """The trie of the pieces ``code_points`` gives for ``ids`` (ascending;
    a piece listed twice keeps the last id, as llama.cpp's trie does; empty
    pieces match nothing). ``first`` covers code points below ``first_below``."""
    tids = np.asarray(ids, dtype=np.int32)
    starts = np.zeros(len(lens), dtype=np.int64)
    if len(lens) > 1:
        np.cumsum(lens[:-1], out=starts[1:])
    # a piece adds at most len(piece) nodes, far fewer as pieces share
    # prefixes (about two per piece in SentencePiece vocabularies): room
    # for four per piece (or for every code point), doubled while more
    # than _MAX_LOAD of the slots fill up
    total = int(lens.sum())
    size = 1024
    while size < 4 * len(lens) and size <= total:
        size *= 2
    while True:
        if size >= 1 << 31:
            raise ValueError("too many pieces for the piece trie")
        keys = _place(lens, cps, starts, tids, size)
        if keys is not None:
            break
        size *= 2
    return _pack(keys[0], keys[1], size, first_below)


_MAX_LOAD: Final = 0.6


def _place(lens: npt.NDArray[np.int64], cps: npt.NDArray[np.int64], starts: npt.NDArray[np.int64],
           tids: npt.NDArray[np.int32],
           size: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32]] | None:
    """Every prefix's key (``parent << _BITS | cp + 1``, 0 for a free slot)
    and token id (-1: none) in a table of ``size`` slots; None when it
    would be more than ``_MAX_LOAD`` full."""
    mask = size - 1
    keys = np.zeros(size, dtype=np.int64)
    tok = np.full(size, -1, dtype=np.int32)
    # the pieces still being walked, level by level: where their next code
    # point is, the node of their prefix so far, their length and id
    live = lens > 0
    at_cp = starts[live]
    parents = np.zeros(int(live.sum()), dtype=np.int64)
    left = lens[live]
    ids_left = tids[live]
    bound = 0  # at most this many slots are taken
    while parents.size:
        offer_gil()  # built in the loader thread: the GUI must not wait for it
        cp = cps[at_cp]
        want = (parents << _BITS) + cp + 1
        pos = _slots(parents, cp, mask)
        # linear probing for all of a level's prefixes at once: free slots
        # get one of their claimants' keys (whichever the scatter keeps),
        # then every prefix stops at the slot that holds it or moves on
        k = keys[pos]
        free = k == 0
        keys[pos[free]] = want[free]
        slot = pos  # where each prefix is; fixed below for those not there
        pending = np.nonzero(keys[pos] != want)[0]
        while pending.size:
            p = (pos[pending] + 1) & mask
            pos[pending] = p
            w = want[pending]
            k = keys[p]
            free = k == 0
            if free.any():
                keys[p[free]] = w[free]
                k = keys[p]
            pending = pending[k != w]
        left -= 1
        done = left == 0
        at = slot[done]
        t = ids_left[done]
        tok[at] = t
        dup = tok[at] != t
        if dup.any():
            # a piece listed twice: the largest id wins whatever order the
            # scatter above kept
            np.maximum.at(tok, at[dup], t[dup])
        bound += len(slot)
        if bound > _MAX_LOAD * size:
            # (a level adds at most a quarter of the slots, see build_trie,
            # so the table never fills up before this check)
            bound = int(np.count_nonzero(keys))
            if bound > _MAX_LOAD * size:
                return None
        more = ~done
        parents = slot[more] + 1
        at_cp = at_cp[more] + 1
        left = left[more]
        ids_left = ids_left[more]
    return keys, tok


def _pack(keys: npt.NDArray[np.int64], tok: npt.NDArray[np.int32], size: int, first_below: int) -> PieceTrie:
    """The table as the module docstring lays it out."""
    used = np.nonzero(keys)[0]
    parent = keys[used] >> _BITS
    v = keys[used] & ((1 << _BITS) - 1)
    rec = np.zeros((size, 3), dtype="<u4")
    rec[used, 0] = v
    has_parent = parent > 0
    inner = parent[has_parent] - 1
    rec[inner, 0] = rec[inner, 0] | (1 << 24)  # has children (repeats write the same)
    rec[used, 1] = parent
    rec[used, 2] = tok[used] + 1
    # the pairs of ASCII code points some piece holds one after the other:
    # the edges from a node reached by the first to a child by the second
    a = (rec[inner, 0] & 0xFFFFFF).astype(np.int64) - 1
    b = v[has_parent] - 1
    both = (a < 128) & (b < 128)
    joins = np.zeros(JOINS_SIZE, dtype=np.uint8)
    joins[a[both] * 128 + b[both]] = 1
    first = [NO_NODE] * first_below
    at_root = used[(parent == 0) & (v - 1 < first_below)]
    steps = (((tok[at_root].astype(np.int64) + 1) << 32) | ((rec[at_root, 0] >> 24).astype(np.int64) << 31)
             | (at_root + 1))
    for c0, r in zip(((keys[at_root] & ((1 << _BITS) - 1)) - 1).tolist(), steps.tolist()):
        first[c0] = r
    table = rec.tobytes()
    del rec
    return PieceTrie(table, size - 1, first, joins.tobytes())
