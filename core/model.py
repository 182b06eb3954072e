"""The public facade: :func:`open_model` and :class:`Model`.

The pipeline is one-way: GGUF file → :class:`Vocab` → tokenizer plugin →
:class:`Encoding`. ``Model.encode`` runs the algorithm-independent stages
(special-token splitting, BOS/EOS) around the plugin's model stage, and
``Model.decode`` is llama.cpp's detokenizer.
"""

from __future__ import annotations

import gc
import os
import threading
from functools import partial
from typing import TYPE_CHECKING, Any, Sequence

from .encoding import Encoding
from .errors import GGUFError, TokenPrismError
from .gguf_file import GGUFFile, read_gguf
from .memory import trim_heap
from .plugin_types import TokenizerSpec
from .plugins import find_spec, spec_for_model
from .columns import utf8_len
from .pipeline import encode_bytes, encode_segments, segments, special_ends, with_special_ends
from .special import Fragment, SpecialMatcher
from .tokenizer import Tokenizer, TokenizerConfig
from .tokenizer import merge_ranks as plugin_merge_ranks
from .tokenizer import prepare as plugin_prepare
from .vocab import KEY_MODEL, Attr, Vocab, vocab_from_gguf

if TYPE_CHECKING:
    from tokenprism.core.chat import ChatResult

    from .explain import Explanation, TraceMethod


def sanitize_text(text: str) -> str:
    """Replace lone surrogates (which have no UTF-8 form) by U+FFFD, one for
    one, so character offsets stay valid.

    Why U+FFFD and not the bytes ``'surrogatepass'`` would give: llama.cpp
    takes UTF-8 bytes, and no real caller can hand it a lone surrogate as
    text — llama-cpp-python's ``str.encode("utf-8")`` raises, llama.cpp's
    server rejects a lone ``\\ud800`` escape in JSON, and in the app Qt
    drops lone surrogates on the way into a QString (typed, pasted, dropped
    or loaded text never holds one; tests/app/test_textfile.py).
    Only a deliberate ``'surrogatepass'`` makes ill-formed UTF-8 (ED A0 80
    for U+D800), which llama.cpp then cuts into byte tokens (llama-spm
    ``<0xED><0xA0><0x80>``). Reproducing that would make every plugin take
    non-UTF-8 input for text nobody can type; U+FFFD is what a UTF-8 decoder
    shows for such data, so the tokens shown are llama.cpp's tokens of the
    text as displayed. ``decode(encode(s))`` therefore gives U+FFFD where
    ``s`` had a lone surrogate (tests/reliability/test_odd_text.py).
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)


EXPLAIN_MAX_CHARS = 20_000
"""The longest text ``Model.explain`` takes unless told otherwise."""
EXPLAIN_CEILING = 50_000
"""The longest text ``Model.explain`` takes whatever ``max_chars`` says: a
trace holds every step of every word, so its memory grows with the text
(nomic-bert-moe, pure Python: 20 000 characters 250 MB peak and 10 MB of
JSON, 50 000 440 MB and 25 MB, 100 000 611 MB and 41 MB)."""


class Model:
    """A tokenizer loaded from a GGUF file.

    >>> model = open_model("ggml-vocab-llama-spm.gguf")
    >>> model.encode("Hello world").ids
    [15043, 3186]
    """

    def __init__(self, path: str, gguf: GGUFFile, vocab: Vocab, spec: TokenizerSpec,
                 tokenizer: Tokenizer) -> None:
        self.path = path
        self.gguf = gguf
        self.vocab = vocab
        self.spec = spec
        self.tokenizer = tokenizer
        self.config: TokenizerConfig = tokenizer.config
        self._matchers: dict[bool, SpecialMatcher] = {}
        self._extras: dict[str, Sequence[int] | None] = {}
        self._lock = threading.Lock()

    # ---- description ------------------------------------------------------

    @property
    def name(self) -> str:
        return self.vocab.name or os.path.basename(self.path)

    @property
    def kind(self) -> str:
        return self.config.kind

    def __len__(self) -> int:
        return len(self.vocab.pieces)

    def __repr__(self) -> str:
        return f"<Model {self.name!r} {self.kind} {len(self)} tokens>"

    # ---- encoding ---------------------------------------------------------

    def _matcher(self, parse_special: bool) -> SpecialMatcher:
        with self._lock:
            m = self._matchers.get(parse_special)
            if m is None:
                m = SpecialMatcher(self.vocab, parse_special)
                self._matchers[parse_special] = m
            return m

    def encode(self, text: str, add_special: bool = False, parse_special: bool = False) -> Encoding:
        """Tokenize ``text`` exactly as llama.cpp's ``llama_tokenize`` does.

        >>> model = open_model("ggml-vocab-llama-spm.gguf")
        >>> model.encode("Hello", add_special=True).ids
        [1, 15043]
        """
        text = sanitize_text(text)
        # a long text allocates lists by the hundred thousand
        was = pause_gc()
        try:
            return self._encode(text, add_special, parse_special)
        finally:
            resume_gc(was)

    def _encode(self, text: str, add_special: bool, parse_special: bool) -> Encoding:
        # the pipeline (core.pipeline): special tokens, the plugin's model
        # stage with the span walk, then BOS/EOS
        segs = segments(self.fragments(text, parse_special))
        prefix, suffix = special_ends(self.config, add_special)
        if prefix or suffix:
            cols = with_special_ends(encode_segments(self.tokenizer, text, segs), prefix, suffix, len(text),
                                     utf8_len(text, 0, len(text)))
            return Encoding(text, self, *cols, add_special, parse_special)
        # the char spans and groups are made when first read
        ids, byte_starts, byte_ends, chars = encode_bytes(self.tokenizer, text, segs)
        return Encoding.with_char_spans_on_demand(text, self, ids, byte_starts, byte_ends,
                                                  partial(chars.columns, byte_starts, byte_ends),
                                                  add_special, parse_special)

    def fragments(self, text: str, parse_special: bool = False) -> list[Fragment]:
        """The pipeline's first stage: ``text`` cut into plain fragments and
        special tokens, as llama.cpp's ``tokenizer_st_partition`` cuts it."""
        return self._matcher(parse_special).partition(text)

    # ---- optional per-token columns ---------------------------------------

    def prepare(self) -> None:
        """Build the tables the tokenizer would otherwise make while
        encoding (BPE's merge ranks fill on demand). Results are the same
        either way; call it off the GUI thread before a lot of work."""
        plugin_prepare(self.tokenizer)

    def merge_ranks(self) -> Sequence[int] | None:
        """Per token id, the BPE merge rank that forms it (-1 where none, and
        for every token that is not NORMAL); None when the tokenizer has no
        ranks. Built once."""
        with self._lock:
            if "ranks" not in self._extras:
                table = plugin_merge_ranks(self.tokenizer)
                if table is not None:
                    attrs = self.vocab.attrs
                    table = [r if attrs[t] & Attr.NORMAL else -1 for t, r in enumerate(table)]
                self._extras["ranks"] = table
            return self._extras["ranks"]

    def word_indices(self, enc: Encoding) -> tuple[int, ...] | None:
        """Per token of ``enc``, the index of its word in the whole text
        (-1 for special tokens); None when the tokenizer has no words.

        The words are counted again per plain fragment, split the way
        ``encode`` split them, so nothing is kept while encoding."""
        method = getattr(self.tokenizer, "word_indices", None)
        if method is None:
            return None
        prefix, suffix = special_ends(self.config, enc.add_special)
        out: list[int] = [-1] * len(prefix)
        base = 0
        for frag in self.fragments(enc.text, enc.parse_special):
            if frag.token >= 0:
                out.append(-1)
                continue
            local: list[int] = method(enc.text[frag.start:frag.end])
            out.extend([base + w for w in local])
            if local:
                base += max(local) + 1
        out.extend([-1] * len(suffix))
        if len(out) != len(enc):
            raise RuntimeError(f"{self.spec.name}: word_indices gave {len(out)} words for {len(enc)} tokens")
        return tuple(out)

    def normalized(self, text: str) -> str:
        """The text as the model sees it after its normalizer."""
        return self.tokenizer.normalized(sanitize_text(text))

    # ---- chat templates ---------------------------------------------------

    def chat(self, messages: Any, *, template: str | None = None, add_generation_prompt: bool = False,
             add_special: bool = False, tools: Any = None, documents: Any = None,
             template_source: str | None = None, context: int | None = None,
             timeout: float | None = None) -> ChatResult:
        """The conversation ``messages`` (``{"role", "content"}`` dicts) as
        this model sees it: rendered by the file's chat template (or the
        named one), tokenized, each token traced to its origin. The same
        :class:`~tokenprism.core.chat.ChatResult` as
        ``tokenprism.core.chat.chat(model, messages, ...)``, which documents
        the options.

        >>> model = open_model("ggml-vocab-qwen2.gguf")
        >>> r = model.chat([{"role": "user", "content": "Hi"}], add_generation_prompt=True)
        >>> r.total, [m.tokens for m in r.messages], r.tokens[0].origin
        (19, [1], 'special')
        """
        # An accessor, as pandas' DataFrame.plot: the chat service (Jinja2,
        # the rendering bounds) is imported on first use, never when the
        # kernel loads. The one edge from the kernel up to a service,
        # declared in tests/core/test_layers.py and pyproject.toml.
        from tokenprism.core.chat import chat

        args = (self, messages, tools, documents, template, template_source, add_generation_prompt, add_special)
        if timeout is None:  # the service's own bound
            return chat(*args, context=context)
        return chat(*args, timeout=timeout, context=context)

    # ---- explaining -------------------------------------------------------

    def explain(self, text: str, add_special: bool = False, parse_special: bool = False,
                max_chars: int = EXPLAIN_MAX_CHARS) -> Explanation:
        """Every stage of ``encode(text, add_special, parse_special)``,
        replayed: the special tokens, the normalizer, the pre-tokenizer, the
        model's steps per word (merges, lattice, longest-match attempts) and
        BOS/EOS (``core.explain``). Its ids are ``encode``'s.

        >>> model = open_model("ggml-vocab-llama-spm.gguf")
        >>> model.explain("Hello world").ids
        (15043, 3186)

        Raises :class:`TokenPrismError` for a tokenizer that cannot trace
        (no ``trace_fragment``) and for a text over ``max_chars``
        characters or over :data:`EXPLAIN_CEILING` (50 000) whatever
        ``max_chars`` says: a trace holds every step of every word.
        """
        method = getattr(self.tokenizer, "trace_fragment", None)
        if method is None:
            raise TokenPrismError(f"no explanation available for this tokenizer ({self.spec.name})")
        if len(text) > EXPLAIN_CEILING:
            raise TokenPrismError(f"the text has {len(text):,} characters; explain takes at most "
                                  f"{EXPLAIN_CEILING:,} whatever max_chars says (explain a part of it)")
        if len(text) > max_chars:
            raise TokenPrismError(f"the text has {len(text):,} characters; explain takes at most {max_chars:,} "
                                  "(explain a part of it, or allow more with max_chars)")
        # imported here: the explanation's records are ~11 ms of imports
        # that encoding (and `tokenprism tokenize`) never needs
        from .explain import explanation, special_stage

        text = sanitize_text(text)
        trace: TraceMethod = method
        frags = self.fragments(text, parse_special)
        everything = self._matcher(True)
        special = special_stage(text, [(f.start, f.end, f.token) for f in frags], everything.occurrences(text), self.vocab.pieces,
                                self.vocab.attrs, everything.order, parse_special)
        prefix, suffix = special_ends(self.config, add_special)
        ex = explanation(text, add_special, parse_special, special, segments(frags), trace, prefix, suffix,
                         self.spec.name)
        expected = self._encode(text, add_special, parse_special).ids
        if list(ex.ids) != list(expected):
            # a trace that tells another story than the encoding is a
            # plugin bug; showing it would explain tokens nobody gets
            raise TokenPrismError(f"the {self.spec.name} tokenizer's explanation does not match its encoding "
                                  "of this text (a bug in its trace_fragment)")
        return ex

    # ---- decoding ---------------------------------------------------------

    def token_bytes(self, token_id: int, special: bool = True) -> bytes:
        """What one token contributes to decoded text (llama.cpp's
        ``token_to_piece``); control and unknown tokens give their text only
        when ``special`` is on."""
        vocab = self.vocab
        if not 0 <= token_id < len(vocab.pieces):
            raise IndexError(f"token id {token_id} is outside the vocabulary (0..{len(vocab.pieces) - 1})")
        attr = vocab.attrs[token_id]
        if attr & (Attr.UNKNOWN | Attr.CONTROL):
            return vocab.pieces[token_id].encode("utf-8", "surrogateescape") if special else b""
        if attr & Attr.USER_DEFINED:
            return vocab.pieces[token_id].encode("utf-8", "surrogateescape")
        if attr & Attr.NORMAL:
            return self.tokenizer.piece_bytes(token_id)
        if attr & Attr.BYTE:
            return bytes([byte_token_value(vocab.pieces[token_id])])
        return b""

    def decode_bytes(self, ids: Sequence[int], special: bool = True, remove_special: bool = False) -> bytes:
        """llama.cpp's ``llama_detokenize`` as bytes (may end mid-character)."""
        cfg = self.config
        bos = cfg.special_ids.get("bos", -1)
        eos = cfg.special_ids.get("eos", -1)
        seq = list(ids)
        remove_space = cfg.add_space_prefix
        if remove_special and cfg.add_bos and seq and seq[0] == bos:
            remove_space = False
            seq = seq[1:]
        if remove_special and cfg.add_eos and seq and seq[-1] == eos:
            seq = seq[:-1]
        parts: list[bytes] = []
        for tid in seq:
            piece = self.token_bytes(tid, special)
            if remove_space and piece.startswith(b" "):
                piece = piece[1:]
            remove_space = False
            parts.append(piece)
        out = b"".join(parts)
        if cfg.clean_spaces:
            out = clean_up_spaces(out)
        return out

    def decode(self, ids: Sequence[int], special: bool = True, remove_special: bool = False) -> str:
        """Detokenize ``ids`` as llama.cpp does; invalid UTF-8 (a sequence
        cut inside a character) becomes U+FFFD.

        >>> model = open_model("ggml-vocab-llama-spm.gguf")
        >>> model.decode([15043, 3186])
        'Hello world'
        """
        return self.decode_bytes(ids, special, remove_special).decode("utf-8", "replace")

    def display_piece(self, token_id: int) -> str:
        """A token's piece as a person wants to read it: byte-level glyphs
        decoded, ``<0xNN>`` and ``▁`` kept as they are."""
        vocab = self.vocab
        if self.config.byte_level and vocab.attrs[token_id] & Attr.NORMAL:
            return self.tokenizer.piece_bytes(token_id).decode("utf-8", "backslashreplace")
        return vocab.pieces[token_id]


def byte_token_value(piece: str) -> int:
    """The byte a ``<0xNN>`` piece stands for (llama.cpp reads characters 3-4)."""
    try:
        return int(piece[3:5], 16) & 0xFF
    except ValueError:
        return 0


def clean_up_spaces(text: bytes) -> bytes:
    """llama.cpp's ``clean_spaces`` passes over detokenized bytes."""
    if not text:
        return text
    b = bytearray(text)
    # 1: " ?", " !", " .", " ," lose the space
    out = bytearray(b[:1])
    for i in range(1, len(b)):
        if b[i - 1] == 0x20 and b[i] in b"?!.,":
            out.pop()
        out.append(b[i])
    # 2: a lone apostrophe between spaces loses both spaces
    # (llama.cpp overwrites the skipped space with NUL, so the character
    # after it never sees a space before it; the copy below does the same)
    b, out = bytearray(out), bytearray(out[:1])
    i = 1
    while i < len(b):
        x = b[i]
        if x == 0x27 and i + 1 < len(b) and b[i - 1] == 0x20 and b[i + 1] == 0x20:
            out.pop()
            out.append(x)
            b[i + 1] = 0
            i += 2
            continue
        out.append(x)
        i += 1
    # 3: " 's", " 'm", " 're", " 've" lose the space
    b, out = out, bytearray(out[:1])
    for i in range(1, len(b)):
        x = b[i]
        if b[i - 1] == 0x20 and x == 0x27 and i + 1 < len(b):
            x1 = b[i + 1]
            if x1 in b"sm" or (i + 2 < len(b) and bytes(b[i + 1:i + 3]) in (b"re", b"ve")):
                out.pop()
        out.append(x)
    return bytes(out)


def pause_gc() -> bool:
    """Pause the cyclic garbage collector, for work that makes objects by the
    hundred thousand, none of them in a cycle, where the collector would
    walk the whole heap (vocabularies included) again and again for
    nothing; returns whether it was running (for :func:`resume_gc`). A
    plain call, not a context manager: making the manager's object could
    itself start a collection before the pause (2-3 ms after a model's
    tables were built)."""
    was = gc.isenabled()
    if was:
        gc.disable()
    return was


def resume_gc(was: bool, freeze: bool = False) -> None:
    """Undo :func:`pause_gc`. ``freeze``: what was made meanwhile is frozen
    first, as the collector's first pass would walk all of it."""
    if was:
        if freeze:
            gc.freeze()
        gc.enable()


TRIM_FROM = 4 << 20
"""Opening a file at least this big gives freed heap memory back to the
system (``core.memory``): a smaller one frees little, and the trim's walk
of the heap was 0.15-0.2 ms of a 0.6 MB vocabulary's 5-7 ms open."""


def open_model(path: str | os.PathLike[str]) -> Model:
    """Open the tokenizer of a GGUF file.

    >>> model = open_model("ggml-vocab-gpt-2.gguf")
    >>> model.kind
    'BPE'

    Raises :class:`GGUFError` for a file that cannot be read or used.
    """
    # hundreds of thousands of new objects (pieces, tuples, a dict): the
    # collector's passes meanwhile were 5% of opening a 100k-token vocabulary
    was = pause_gc()
    try:
        return _open(os.fspath(path))
    finally:
        resume_gc(was)


def _open(p: str) -> Model:
    gguf = read_gguf(p)
    # the plugin is known from the model name before the vocabulary is
    # read: one whose tokenizer never reads the piece -> id table need not
    # have it built (an unknown model is reported after the vocabulary is
    # read, as a broken vocabulary is the more useful error)
    v = gguf.metadata.get(KEY_MODEL)
    known = spec_for_model(v.value) if v is not None and isinstance(v.value, str) else None
    try:
        vocab = vocab_from_gguf(gguf, known is None or known.reads_token_table)
    except GGUFError:
        raise
    except (ValueError, TypeError, IndexError, KeyError, OverflowError) as e:
        raise GGUFError(p, f"invalid tokenizer data: {e}") from None
    spec = known if known is not None else find_spec(vocab, p)
    try:
        tokenizer = spec.build(vocab)
    except TokenPrismError as e:
        if isinstance(e, GGUFError):
            if e.path:
                raise
            # a plugin does not know the file's path; the user needs it
            raise type(e)(p, e.reason, e.offset, e.field) from None
        raise GGUFError(p, str(e)) from None
    except (ValueError, TypeError, IndexError, KeyError, OverflowError, UnicodeError) as e:
        raise GGUFError(p, f"the {spec.name} tokenizer cannot use this vocabulary: {e}") from None
    if gguf.file_size >= TRIM_FROM:
        trim_heap()
    # a vocabulary is millions of long-lived objects (pieces, dicts, lists)
    # and none of them are cyclic garbage; left to the cyclic collector,
    # each full pass walks them all again (hundreds of ms with a few large
    # models open, a pause of whichever thread, the GUI's too, triggers
    # it). Frozen, the collector skips them; they are still freed by
    # reference counting when the model goes. (No gc.collect() first: it
    # costs 20 ms on gemma-4, and what it would free, a few garbage cycles
    # made while loading, only stays allocated.)
    gc.freeze()
    return Model(p, gguf, vocab, spec, tokenizer)
