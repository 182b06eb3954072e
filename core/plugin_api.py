"""Everything a tokenizer plugin may use from TokenPrism's core, in one place.

A plugin imports from this module only (plus the standard library and its
own third-party packages); the rest of ``tokenprism.core`` may change
between releases without notice. TokenPrism's own SPM, BPE, UGM and WPM
plugins keep to this rule, and a test fails when one of them does not.

A minimal plugin, registered under the entry-point group
``tokenprism.plugins`` (see ``core.hookspecs``)::

    from tokenprism.core.plugin_api import (
        FragmentResult, TokenizerSpec, Vocab, config_from_vocab, hookimpl)

    class CharTokenizer:
        def __init__(self, vocab: Vocab) -> None:
            self.vocab = vocab
            self.config = config_from_vocab(vocab, "CHAR", {"unk": 0},
                                            add_bos=False, add_eos=False)
            self.ids = {p: i for i, p in enumerate(vocab.pieces)}

        def encode_fragment(self, text: str, after_special: bool) -> FragmentResult:
            ...

    @hookimpl
    def tokenprism_tokenizers() -> list[TokenizerSpec]:
        return [TokenizerSpec("char", ("char",), CharTokenizer, "one token a character")]

What there is, by what a plugin needs it for:

The contract
    :class:`Tokenizer` is what ``TokenizerSpec.build`` returns: its
    ``encode_fragment`` gives a :class:`FragmentResult` (ids and UTF-8 byte
    spans of one plain-text fragment); the core does special tokens,
    BOS/EOS, spans, groups and decoding. Optional extras, found by the core
    when a tokenizer has them: :class:`ColumnTokenizer` (the tokens as
    native vectors), :class:`CuttableTokenizer` (where a fragment may be
    cut, for incremental retokenization), :class:`RankedTokenizer`,
    :class:`PreparedTokenizer`, :class:`WordTokenizer`.
    :func:`config_from_vocab` makes the :class:`TokenizerConfig` (special
    ids, BOS/EOS, display flags) the way llama.cpp sets a vocabulary up;
    :func:`resolve_special_ids` gives the special ids alone.

Explaining a fragment (optional)
    A :class:`TracingTokenizer` has ``trace_fragment(text, after_special)``,
    which ``Model.explain`` calls for each plain fragment of a short text:
    it returns a :class:`FragmentTrace` (the fragment's
    :class:`NormalizedFragment`, its :class:`PreTokenized` rules as
    :class:`RuleChunks`, and its :class:`Word` list), each word's steps
    being records of what the algorithm did: :class:`Symbols` and
    :class:`Merge` (merge loops), :class:`ByteFallback`, :class:`Lattice`
    of :class:`LatticeEdge` with :class:`Alternative` segmentations,
    :class:`Attempt` of :class:`Candidate` prefixes, :class:`Unknown`.
    :func:`merge_order` replays a merge loop (lowest key first, leftmost
    on a tie) for the :class:`Merge` records. The core checks that the
    words' tokens are ``encode_fragment``'s ids.
    Keep the tracing code out of the encoding loops (import it on first
    use): nothing of it should run while encoding.

The vocabulary
    :class:`Vocab` (pieces, scores, token types, flags, metadata),
    :class:`TokenType`, :class:`Attr`. A plugin whose spec says
    ``reads_token_table=False`` looks pieces up in :func:`piece_index`
    (a :class:`PieceIndex`: the id of a text, or of a slice of one,
    without making the slice) or walks :func:`piece_codes`
    (:class:`PieceCodes`: every piece as code points), both made from the
    file's bytes; :func:`decoded_pieces` gives the piece strings.
    :class:`StringArray` is how the file's string arrays (merges) come.
    :class:`BytesIndex` looks texts up in such an array's undecoded bytes
    (:func:`raw_index`: merges or pieces; :func:`piece_lookup`: the pieces
    in any form, with the longest piece at a position); :func:`piece_finder`
    gives a merge loop's piece lookup (:class:`PieceFinder`), over those
    bytes when the vocabulary still has them, else its :func:`piece_index`.

Long work
    A loop that may run long calls :func:`offer_gil` every :data:`STEP`
    steps (:data:`WORD_STEP` for loops over words) so that the GUI thread
    is not frozen, and :func:`checkpoint` in loops over one huge fragment,
    which also reports progress and lets the user cancel (it raises
    :class:`Cancelled`; let it pass). :func:`dispose` frees a huge list a
    slice at a time, :func:`trim_heap` gives freed memory back.

Merge loops
    :class:`PairCache`: a value per pair of token ids (a merge rank, the
    joined token), for merge loops that meet the same pairs again and
    again; :meth:`PairCache.joined` is the joined-token lookup itself.
    :func:`next_match`, :func:`entry_at` and :func:`with_entry` index a
    native cache whose keys are found where they lie in the text
    (``core.hash_slots``: open addressing over a vector of slots);
    :class:`TextCache` is such an index over ``str`` keys found as slices
    of a text, with a value each, :func:`chunk_end` and :func:`text_hash`
    their hash.

Unicode as llama.cpp sees it
    :mod:`unicode_data`: llama.cpp's own tables (categories as flag bits,
    whitespace, simple lowercase, first code point of the NFD), which its
    tokenizers use instead of the platform's Unicode database.
    :func:`flag_ranges`, :func:`whitespace`, :func:`lowercase_pairs`,
    :func:`nfd_first` read them; sets of code points are ``Ranges``
    lists, combined by :func:`merged`, :func:`points`, :func:`complement`,
    :func:`intersect`, :func:`subtract`, :func:`contains` and
    :class:`RangeSet`. :func:`utf8_width` is a code point's UTF-8 length.

Native vectors
    :class:`TokenColumns` holds a fragment's ids, starts and ends as
    ``librt.vecs`` ``vec[i64]`` for ``encode_columns``; :func:`packed`
    makes one vector of three lists. :func:`distinct_sorted` and
    :func:`as_tuple` are small array helpers, :func:`zeros64` a vector of
    zeros to store into; :func:`column_bytes` gives a
    vocabulary column's array as bytes, to read natively, and
    :class:`Scores` reads its scores so. :class:`Record`
    is the base of the kernel's frozen value types (``core.record`` says
    why not a dataclass: start-up time), for a plugin's own.

Errors
    :class:`GGUFError` for a vocabulary the plugin cannot use (the app shows
    its message and key), :class:`TokenPrismError` for the rest.

The plugins' hot modules are compiled by mypyc in one group with the core
modules they call (``setup.py``); a name imported from here is the core's
own object, so those calls stay native.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .columns import TokenColumns, packed
from .errors import GGUFError, TokenPrismError
from .frozen import Record, as_tuple, column_bytes
from .gil import STEP, WORD_STEP, Cancelled, checkpoint, dispose, offer_gil
from .hookspecs import hookimpl
from .memory import trim_heap
from .piece_codes import PieceCodes, PieceIndex
from .plugin_types import TokenizerSpec, TracingTokenizer
from .spans import utf8_width
from .string_array import StringArray
from .tokenizer import (ColumnTokenizer, CuttableTokenizer, FragmentResult, PreparedTokenizer,
                        RankedTokenizer, Tokenizer, TokenizerConfig, WordTokenizer, config_from_vocab,
                        resolve_special_ids)
from .vocab import Attr, Scores, TokenType, Vocab, decoded_pieces, piece_codes, piece_finder, piece_index

if TYPE_CHECKING:
    from . import unicode_data
    from .explain import (Alternative, Attempt, ByteFallback, Candidate, FragmentTrace, Lattice, LatticeEdge, Merge,
                          NormalizedFragment, PreTokenized, RuleChunks, Step, Symbols, Unknown, Word)
    from .merge_order import merge_order
    from .arrays import distinct_sorted
    from .bytes_index import BytesIndex, PieceFinder, piece_lookup, raw_index, zeros64
    from .hash_slots import TextCache, chunk_end, entry_at, next_match, text_hash, with_entry
    from .pair_cache import MISS, PairCache
    from .unicode_ranges import (MAX_CP, RangeSet, Ranges, complement, contains, flag_ranges, intersect,
                                 lowercase_pairs, merged, nfd_first, points, subtract, whitespace)

# Imported on first use (PEP 562): the plugin host imports every plugin's
# registration module, which needs only TokenizerSpec and hookimpl from
# here; the Unicode tables, merge-loop cache and array helpers below are
# loaded by the algorithm that uses them, when a file needs it (~15 ms of a
# process's first open otherwise). The explanation records and the merge
# replay too: only a plugin's trace module uses them, and the records' 22
# dataclasses took ~11 ms of every `tokenprism tokenize`
_LAZY = {
    "unicode_data": "", "distinct_sorted": "arrays", "MISS": "pair_cache", "PairCache": "pair_cache",
    **dict.fromkeys(("Alternative", "Attempt", "ByteFallback", "Candidate", "FragmentTrace", "Lattice",
                     "LatticeEdge", "Merge", "NormalizedFragment", "PreTokenized", "RuleChunks", "Step", "Symbols",
                     "Unknown", "Word"), "explain"),
    "merge_order": "merge_order",
    **dict.fromkeys(("BytesIndex", "PieceFinder", "piece_lookup", "raw_index", "zeros64"), "bytes_index"),
    **dict.fromkeys(("TextCache", "chunk_end", "entry_at", "next_match", "text_hash", "with_entry"), "hash_slots"),
    **dict.fromkeys(("MAX_CP", "RangeSet", "Ranges", "complement", "contains", "flag_ranges", "intersect",
                     "lowercase_pairs", "merged", "nfd_first", "points", "subtract", "whitespace"),
                    "unicode_ranges"),
}


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = (importlib.import_module(f".{name}", __package__) if not home
             else getattr(importlib.import_module(f".{home}", __package__), name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])

__all__ = [
    # the contract
    "ColumnTokenizer", "CuttableTokenizer", "FragmentResult", "PreparedTokenizer", "RankedTokenizer",
    "Tokenizer", "TokenizerConfig", "TokenizerSpec", "WordTokenizer", "config_from_vocab", "hookimpl",
    "resolve_special_ids",
    # explaining a fragment (optional)
    "Alternative", "Attempt", "ByteFallback", "Candidate", "FragmentTrace", "Lattice", "LatticeEdge", "Merge",
    "NormalizedFragment", "PreTokenized", "RuleChunks", "Step", "Symbols", "TracingTokenizer", "Unknown", "Word",
    "merge_order",
    # the vocabulary
    "Attr", "PieceCodes", "PieceIndex", "StringArray", "TokenType", "Vocab", "decoded_pieces",
    "piece_codes", "piece_finder", "piece_index",
    "BytesIndex", "PieceFinder", "piece_lookup", "raw_index",
    # long work
    "STEP", "WORD_STEP", "Cancelled", "checkpoint", "dispose", "offer_gil", "trim_heap",
    # merge loops, native caches
    "MISS", "PairCache", "TextCache", "chunk_end", "entry_at", "next_match", "text_hash", "with_entry",
    # Unicode as llama.cpp sees it
    "MAX_CP", "RangeSet", "Ranges", "complement", "contains", "flag_ranges", "intersect",
    "lowercase_pairs", "merged", "nfd_first", "points", "subtract", "unicode_data", "utf8_width",
    "whitespace",
    # native vectors and small helpers
    "Record", "Scores", "TokenColumns", "as_tuple", "column_bytes", "distinct_sorted", "packed",
    "zeros64",
    # errors
    "GGUFError", "TokenPrismError",
]
