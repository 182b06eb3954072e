"""Token lists as files: the one place that writes and reads them, for the
command line and the desktop app alike.

A :class:`TokenList` is an :class:`~tokenprism.core.Encoding` made
self-contained: the model is kept as a :class:`ModelRef` (where it was, what
it is, and a fingerprint of its tokenizer) and every token field is copied,
so a list read back from a file needs no model. Like ``Encoding`` it keeps
its tokens in parallel columns; :meth:`TokenList.token` builds one
:class:`TokenRow` on request.

Formats (:func:`render`, :func:`iter_render`):

- ``json``: one object (model, flags, text, stats, ids, tokens with every
  field), one token a line; several lists give one ``tokenprism-compare``
  object holding them all. :func:`load_json` reads both back exactly.
- ``jsonl``: one token a line (with ``list`` and ``model`` when several).
- ``csv``: header row, one token a row; cells that a spreadsheet would run
  as a formula are defused (:func:`spreadsheet_cell`).
- ``ids``: ``[1, 15043, 3186]``, one line per list (llama-tokenize's form).
- ``pieces``: ``id -> 'piece'`` lines; ``table``: one row of counts per list.

Files are written with :func:`write_atomic`: a failed write leaves the
previous file as it was.

>>> tl = token_list(model, text="Hello", add_special=True)
>>> write_export("hello.json", [tl], "json")
>>> load_json("hello.json")[0] == tl
True
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
import threading
import weakref
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np

from .encoding import Encoding
from .errors import TokenPrismError
from .gguf_file import MetadataValue
from .model import Model, sanitize_text
from .vocab import Attr

FORMAT_TOKENS = "tokenprism-tokens"
FORMAT_COMPARE = "tokenprism-compare"
FORMAT_VERSION = 1
FORMATS = ("ids", "pieces", "json", "jsonl", "csv", "table")
"""Every format :func:`render` knows; ``FILE_FORMATS`` are the ones worth a file."""
FILE_FORMATS = ("json", "jsonl", "csv", "ids")
EXTENSIONS: Mapping[str, str] = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
                                 ".txt": "ids", ".ids": "ids"}
TOKEN_FIELDS = ("index", "id", "piece", "piece_raw", "score", "type", "attr", "start", "end",
                "byte_start", "byte_end", "group", "char")
MAX_IMPORT_BYTES = 1 << 30
"""Larger files are refused before reading: a JSON export of a 10 MB text is
about 0.4 GB, and parsing takes several times the file's size in memory."""


class ExportError(TokenPrismError):
    """A token list cannot be written."""


class TokenFileError(TokenPrismError):
    """A file is not a token list TokenPrism can import; the message says
    where (``tokens[12].start``) and what is wrong."""


# ---- data ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelRef:
    """Which model made a token list.

    ``tokenizer_sha256`` is the SHA-256 of the file's ``tokenizer.ggml.*``
    metadata (keys, types and values, sorted by key; see
    :func:`tokenizer_fingerprint`): everything that decides tokenization and
    nothing else, so a re-quantized model with the same tokenizer has the
    same fingerprint, and computing it reads no tensor data.
    """

    path: str
    name: str
    kind: str
    tokenizer: str
    pre: str
    vocab_size: int
    file_size: int
    unk_id: int
    tokenizer_sha256: str

    @staticmethod
    def of(model: Model) -> ModelRef:
        unk = model.config.special_ids.get("unk", -1)
        return ModelRef(
            path=model.path, name=model.name, kind=model.kind, tokenizer=model.vocab.model,
            pre=model.vocab.pre, vocab_size=len(model), file_size=model.gguf.file_size,
            unk_id=unk if 0 <= unk < len(model) else -1, tokenizer_sha256=tokenizer_fingerprint(model))

    def describe(self) -> str:
        """``name (KIND, 32,000 tokens)``."""
        return f"{self.name} ({self.kind}, {self.vocab_size:,} tokens)"


@dataclass(frozen=True)
class TokenRow:
    """Every field of one token. ``piece`` is what a person reads (byte-level
    glyphs decoded, as :meth:`Model.display_piece`), ``piece_raw`` the
    vocabulary entry as stored; ``char`` is the text of the character(s) a
    group of tokens spells together (byte fallback), else ``None``."""

    index: int
    id: int
    piece: str
    piece_raw: str
    score: float
    type: int
    attr: int
    start: int
    end: int
    byte_start: int
    byte_end: int
    group: int
    char: str | None


@dataclass(frozen=True)
class TokenList:
    """The tokens of one text by one model, independent of the model."""

    model: ModelRef
    text: str
    add_special: bool
    parse_special: bool
    ids: tuple[int, ...]
    pieces: tuple[str, ...]
    pieces_raw: tuple[str, ...]
    scores: tuple[float, ...]
    types: tuple[int, ...]
    attrs: tuple[int, ...]
    starts: tuple[int, ...]
    ends: tuple[int, ...]
    byte_starts: tuple[int, ...]
    byte_ends: tuple[int, ...]
    groups: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.ids)

    def token(self, i: int) -> TokenRow:
        g = self.groups[i]
        char = None
        if g >= 0:
            j = i
            while j + 1 < len(self.groups) and self.groups[j + 1] == g:
                j += 1
            char = self.text[min(self.starts[g:j + 1]):max(self.ends[g:j + 1])]
        return TokenRow(i, self.ids[i], self.pieces[i], self.pieces_raw[i], self.scores[i], self.types[i],
                        self.attrs[i], self.starts[i], self.ends[i], self.byte_starts[i], self.byte_ends[i],
                        g, char)

    def __iter__(self) -> Iterator[TokenRow]:
        # group characters computed once per group, not once per token
        n = len(self.ids)
        i = 0
        while i < n:
            g = self.groups[i]
            if g < 0:
                yield TokenRow(i, self.ids[i], self.pieces[i], self.pieces_raw[i], self.scores[i],
                               self.types[i], self.attrs[i], self.starts[i], self.ends[i],
                               self.byte_starts[i], self.byte_ends[i], -1, None)
                i += 1
                continue
            j = i
            while j < n and self.groups[j] == g:
                j += 1
            char = self.text[min(self.starts[i:j]):max(self.ends[i:j])]
            for k in range(i, j):
                yield TokenRow(k, self.ids[k], self.pieces[k], self.pieces_raw[k], self.scores[k],
                               self.types[k], self.attrs[k], self.starts[k], self.ends[k],
                               self.byte_starts[k], self.byte_ends[k], g, char)
            i = j

    @property
    def tokens(self) -> tuple[TokenRow, ...]:
        return tuple(self)


@dataclass(frozen=True)
class ListStats:
    """The counts people compare models by."""

    tokens: int
    chars: int
    bytes: int
    byte_fallback: int
    unknown: int

    @property
    def chars_per_token(self) -> float:
        return self.chars / self.tokens if self.tokens else 0.0

    @property
    def bytes_per_token(self) -> float:
        return self.bytes / self.tokens if self.tokens else 0.0


def stats(tl: TokenList) -> ListStats:
    unk = tl.model.unk_id
    return ListStats(
        tokens=len(tl), chars=len(tl.text), bytes=_utf8_size(tl.text),
        byte_fallback=sum(1 for a in tl.attrs if a & Attr.BYTE),
        unknown=sum(1 for a, t in zip(tl.attrs, tl.ids) if a & Attr.UNKNOWN or t == unk))


# ---- building ---------------------------------------------------------------------------------

_fingerprints: weakref.WeakKeyDictionary[Model, str] = weakref.WeakKeyDictionary()
_fingerprint_lock = threading.Lock()


def tokenizer_fingerprint(model: Model) -> str:
    """SHA-256 (hex) of the model's ``tokenizer.ggml.*`` metadata; computed
    once per model (a 256k vocabulary takes a few tens of milliseconds)."""
    with _fingerprint_lock:
        cached = _fingerprints.get(model)
    if cached is not None:
        return cached
    h = hashlib.sha256()
    meta = model.gguf.metadata
    for key in sorted(k for k in meta if k.startswith("tokenizer.ggml.")):
        mv = meta[key]
        h.update(f"{key}\0{mv.type}\0{mv.elem_type}\0".encode("utf-8", "surrogateescape"))
        h.update(_value_bytes(mv))
    digest = h.hexdigest()
    with _fingerprint_lock:
        _fingerprints[model] = digest
    return digest


def _value_bytes(mv: MetadataValue) -> bytes:
    v = mv.value
    if isinstance(v, np.ndarray):
        return b"np\0" + str(v.dtype).encode() + b"\0" + v.tobytes()
    if isinstance(v, (bytes, bytearray)):
        return b"b\0" + bytes(v)
    # lists of strings (pieces, merges) and scalars; json escapes lone
    # surrogates, so every string has exactly one form
    return b"j\0" + json.dumps(v, default=repr).encode("ascii")


def token_list(model: Model, encoding: Encoding | None = None, text: str | None = None,
               add_special: bool | None = None, parse_special: bool | None = None) -> TokenList:
    """The :class:`TokenList` of ``encoding`` (an encoding by ``model``), or
    of ``text`` encoded with the given flags when no encoding is passed.

    >>> token_list(model, text="Hello", add_special=True).ids
    (1, 15043)
    """
    if encoding is None:
        if text is None:
            raise ValueError("token_list needs an encoding or a text")
        encoding = model.encode(text, add_special=bool(add_special), parse_special=bool(parse_special))
    else:
        if encoding.model is not model:
            raise ValueError("the encoding was made by another model")
        if text is not None and sanitize_text(text) != encoding.text:
            raise ValueError("the text is not the encoding's text")
        if (add_special is not None and add_special != encoding.add_special) or \
                (parse_special is not None and parse_special != encoding.parse_special):
            raise ValueError("the flags are not the encoding's flags")
    v = model.vocab
    ids = encoding.token_ids
    display: dict[int, str] = {}
    pieces: list[str] = []
    for tid in ids:
        p = display.get(tid)
        if p is None:
            p = display[tid] = model.display_piece(tid)
        pieces.append(p)
    return TokenList(
        model=ModelRef.of(model), text=encoding.text, add_special=encoding.add_special,
        parse_special=encoding.parse_special, ids=tuple(ids), pieces=tuple(pieces),
        pieces_raw=tuple(v.pieces[t] for t in ids), scores=tuple(v.scores[t] for t in ids),
        types=tuple(v.types[t] for t in ids), attrs=tuple(v.attrs[t] for t in ids),
        starts=encoding.starts, ends=encoding.ends, byte_starts=encoding.byte_starts,
        byte_ends=encoding.byte_ends, groups=encoding.groups)


def first_difference(a: TokenList, b: TokenList) -> int:
    """Index of the first token where ``a`` and ``b`` differ in id or span
    (``min(len)`` when one is a prefix of the other), or -1 when they agree."""
    n = min(len(a), len(b))
    for i in range(n):
        if (a.ids[i] != b.ids[i] or a.starts[i] != b.starts[i] or a.ends[i] != b.ends[i]):
            return i
    return -1 if len(a) == len(b) else n


# ---- rendering ---------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def _json_safe(s: str) -> str:
    """JSON text with lone surrogates (raw bytes kept by ``surrogateescape``
    in a vocabulary) as ``\\uDCxx`` escapes: valid UTF-8, read back exactly."""
    if s.isascii():
        return s
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", s)


def _js(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _score_json(x: float) -> str:
    # JSON has no inf/nan; a string keeps the value exact and the file standard
    return json.dumps(x) if math.isfinite(x) else json.dumps(repr(x))


def _token_json(t: TokenRow, extra: str = "") -> str:
    char = "null" if t.char is None else _js(t.char)
    return (f'{{{extra}"index": {t.index}, "id": {t.id}, "piece": {_js(t.piece)}, '
            f'"piece_raw": {_js(t.piece_raw)}, "score": {_score_json(t.score)}, "type": {t.type}, '
            f'"attr": {t.attr}, "start": {t.start}, "end": {t.end}, "byte_start": {t.byte_start}, '
            f'"byte_end": {t.byte_end}, "group": {t.group}, "char": {char}}}')


def _model_json(m: ModelRef) -> dict[str, object]:
    return {"path": m.path, "name": m.name, "kind": m.kind, "tokenizer": m.tokenizer, "pre": m.pre,
            "vocab_size": m.vocab_size, "file_size": m.file_size, "unk_id": m.unk_id,
            "tokenizer_sha256": m.tokenizer_sha256}


def _stats_json(tl: TokenList) -> dict[str, object]:
    s = stats(tl)
    return {"tokens": s.tokens, "chars": s.chars, "bytes": s.bytes,
            "chars_per_token": round(s.chars_per_token, 4), "bytes_per_token": round(s.bytes_per_token, 4),
            "byte_fallback": s.byte_fallback, "unknown": s.unknown}


def _json_list_body(tl: TokenList, with_text: bool, indent: str) -> Iterator[str]:
    """The members of one list object, each chunk ending in a line break."""
    head: dict[str, object] = {"model": _model_json(tl.model), "add_special": tl.add_special,
                               "parse_special": tl.parse_special}
    if with_text:
        head["text"] = tl.text
    head["stats"] = _stats_json(tl)
    for k, v in head.items():
        yield f'{indent}{json.dumps(k)}: {json.dumps(v, ensure_ascii=False)},\n'
    yield f'{indent}"ids": [{", ".join(map(str, tl.ids))}],\n'
    yield f'{indent}"tokens": [\n'
    sep = ""
    for t in tl:
        yield f"{sep}{indent} {_token_json(t)}"
        sep = ",\n"
    yield ("\n" if len(tl) else "") + f"{indent}]\n"


def _iter_json(lists: Sequence[TokenList]) -> Iterator[str]:
    if len(lists) == 1:
        yield f'{{\n "format": "{FORMAT_TOKENS}",\n "version": {FORMAT_VERSION},\n'
        yield from _json_list_body(lists[0], True, " ")
        yield "}\n"
        return
    shared = all(tl.text == lists[0].text for tl in lists)
    yield f'{{\n "format": "{FORMAT_COMPARE}",\n "version": {FORMAT_VERSION},\n'
    if shared:
        yield f' "text": {json.dumps(lists[0].text, ensure_ascii=False)},\n'
    yield ' "lists": [\n'
    for k, tl in enumerate(lists):
        yield "  {\n"
        yield from _json_list_body(tl, not shared, "   ")
        yield "  }" + (",\n" if k < len(lists) - 1 else "\n")
    yield " ]\n}\n"


def _iter_jsonl(lists: Sequence[TokenList]) -> Iterator[str]:
    names = labels(lists)
    for k, tl in enumerate(lists):
        extra = f'"list": {k}, "model": {_js(names[k])}, ' if len(lists) > 1 else ""
        for t in tl:
            yield _token_json(t, extra) + "\n"


# Cells starting with these are formulas to Excel, LibreOffice or Google
# Sheets (OWASP's list: = + - @ tab CR; also LF and NUL, and the full-width
# forms that some East-Asian locales convert); a leading ' makes them text.
FORMULA_TRIGGERS = frozenset("=+-@\t\r\n\0\uff1d\uff0b\uff0d\uff20")


def spreadsheet_cell(value: str) -> str:
    """A text cell a spreadsheet shows as text: a leading formula trigger
    gets a ``'`` in front, and NUL and raw bytes (lone surrogates), which no
    spreadsheet keeps, are written as ``\\x00``/``\\xNN``. Quoting of commas,
    quotes and line breaks is left to the CSV writer."""
    if not value.isascii() or "\0" in value:
        value = "".join(_csv_char(c) for c in value)
    if value[:1] in FORMULA_TRIGGERS:
        return "'" + value
    return value


def _csv_char(c: str) -> str:
    if c == "\0":
        return "\\x00"
    if "\udc80" <= c <= "\udcff":
        return f"\\x{ord(c) - 0xDC00:02X}"
    if "\ud800" <= c <= "\udfff":
        return f"\\u{ord(c):04X}"
    return c


def _csv_line(cells: Sequence[str]) -> str:
    # RFC 4180 quoting, by hand so a row costs one join (the csv module needs
    # a file object per call)
    out = []
    for c in cells:
        if c and (c[0] in " \t" or any(ch in c for ch in ',"\r\n') or c[-1] in " \t"):
            c = '"' + c.replace('"', '""') + '"'
        out.append(c)
    return ",".join(out) + "\n"


def _iter_csv(lists: Sequence[TokenList]) -> Iterator[str]:
    several = len(lists) > 1
    names = labels(lists)
    yield _csv_line((("model",) if several else ()) + TOKEN_FIELDS)
    for k, tl in enumerate(lists):
        lead = [spreadsheet_cell(names[k])] if several else []
        for t in tl:
            yield _csv_line(lead + [
                str(t.index), str(t.id), spreadsheet_cell(t.piece), spreadsheet_cell(t.piece_raw),
                repr(t.score), str(t.type), str(t.attr), str(t.start), str(t.end), str(t.byte_start),
                str(t.byte_end), str(t.group), "" if t.char is None else spreadsheet_cell(t.char)])


def _iter_ids(lists: Sequence[TokenList]) -> Iterator[str]:
    for tl in lists:
        yield "[" + ", ".join(map(str, tl.ids)) + "]\n"


def _iter_pieces(lists: Sequence[TokenList]) -> Iterator[str]:
    names = labels(lists)
    for k, tl in enumerate(lists):
        if len(lists) > 1:
            yield ("\n" if k else "") + f"# {names[k]}\n"
        for tid, piece in zip(tl.ids, tl.pieces):
            yield f"{tid:>8} -> {piece!r}\n"


def _iter_table(lists: Sequence[TokenList]) -> Iterator[str]:
    names = labels(lists)
    width = max([5, *(min(len(n), 40) for n in names)])
    yield (f"{'model':<{width}}  {'kind':<4} {'tokens':>9} {'vs 1st':>7} {'chars/tok':>9} {'bytes/tok':>9} "
           f"{'byte-fb':>8} {'unk':>6}\n")
    base = stats(lists[0]).tokens if lists else 0
    for name, tl in zip(names, lists):
        s = stats(tl)
        diff = f"{(s.tokens - base) / base:+.0%}" if base else "-"
        shown = name if len(name) <= width else name[:width - 1] + "…"
        yield (f"{shown:<{width}}  {tl.model.kind:<4} {s.tokens:>9,} {diff:>7} {s.chars_per_token:>9.3f} "
               f"{s.bytes_per_token:>9.3f} {s.byte_fallback:>8,} {s.unknown:>6,}\n")


_RENDERERS = {"json": _iter_json, "jsonl": _iter_jsonl, "csv": _iter_csv, "ids": _iter_ids,
              "pieces": _iter_pieces, "table": _iter_table}


def labels(lists: Sequence[TokenList]) -> list[str]:
    """One name per list, made unique (``name #2``) when names repeat."""
    names = [tl.model.name for tl in lists]
    out: list[str] = []
    for k, n in enumerate(names):
        out.append(f"{n} #{k + 1}" if names.count(n) > 1 else n)
    return out


def iter_render(lists: Sequence[TokenList], fmt: str) -> Iterator[str]:
    """:func:`render` in chunks, so a large list is written without building
    the whole text in memory. Every chunk is valid UTF-8 text."""
    if fmt not in _RENDERERS:
        raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    if not lists:
        raise ValueError("nothing to render: no token lists")
    for chunk in _RENDERERS[fmt](lists):
        yield _json_safe(chunk)


def render(lists: Sequence[TokenList], fmt: str) -> str:
    """``lists`` as text in format ``fmt`` (see the module docstring).

    >>> render([tl], "ids")
    '[1, 15043]\\n'
    """
    return "".join(iter_render(lists, fmt))


def format_for_path(path: str | os.PathLike[str]) -> str | None:
    """The file format a file name's extension asks for, or ``None``."""
    return EXTENSIONS.get(os.path.splitext(os.fspath(path))[1].lower())


def write_export(path: str | os.PathLike[str], lists: Sequence[TokenList], fmt: str) -> None:
    """Write ``lists`` to ``path`` atomically. CSV files start with a UTF-8
    byte-order mark, without which Excel reads them in the local code page."""
    chunks = iter_render(lists, fmt)
    if fmt == "csv":
        chunks = _prefixed("\ufeff", chunks)
    write_atomic(path, chunks)


def _prefixed(first: str, rest: Iterable[str]) -> Iterator[str]:
    yield first
    yield from rest


# ---- writing ----------------------------------------------------------------------------------

def _default_mode() -> int:
    # the umask can only be read by setting it; done once, at import
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


_NEW_FILE_MODE = _default_mode()
_WRITE_CHUNK = 1 << 20


def write_atomic(path: str | os.PathLike[str], data: str | bytes | Iterable[str | bytes]) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) all at once.

    The data goes to a temporary file in the same folder, is flushed to disk
    and renamed over ``path``, so readers see the old file or the new one,
    never a part. On any failure the old file is untouched, the temporary
    file is removed and :class:`ExportError` says why (an exception raised
    by ``data`` itself passes through, after the same clean-up).
    """
    target = os.path.realpath(os.fspath(path))  # write through a symlink, keep the link
    folder = os.path.dirname(target) or "."
    name = os.path.basename(target)
    if os.path.isdir(target):
        raise ExportError(f"Cannot write “{name}”: it is a folder.")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    except OSError as e:
        raise ExportError(f"Cannot write “{name}” in {folder}: {e.strerror or e}.") from e
    try:
        try:
            mode = os.stat(target).st_mode & 0o7777
        except OSError:
            mode = _NEW_FILE_MODE
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, (str, bytes)):
                data = (data,)
            buf: list[bytes] = []
            size = 0
            for chunk in data:
                b = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
                buf.append(b)
                size += len(b)
                if size >= _WRITE_CHUNK:
                    f.write(b"".join(buf))
                    buf, size = [], 0
            f.write(b"".join(buf))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise ExportError(f"Cannot write “{name}”: {e.strerror or e}. "
                              "The previous file (if any) is unchanged.") from e
        if isinstance(e, UnicodeEncodeError):
            raise ExportError(f"Cannot write “{name}”: the text holds characters without a UTF-8 form.") from e
        raise
    _fsync_folder(folder)


def _fsync_folder(folder: str) -> None:
    """Make the rename itself durable (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ---- reading ----------------------------------------------------------------------------------

def load_json(source: str | bytes | os.PathLike[str]) -> list[TokenList]:
    """The token lists of a JSON export: a file path, or the JSON text itself
    (a string starting with ``{``). Raises :class:`TokenFileError` with a
    readable reason for anything that is not a valid export.
    """
    where = "the text"
    if isinstance(source, bytes):
        raw = source
    elif isinstance(source, str) and source.lstrip()[:1] == "{":
        raw = source.encode("utf-8", "surrogatepass")
    else:
        p = os.fspath(source)
        where = os.path.basename(p) or p
        try:
            with open(p, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if size > MAX_IMPORT_BYTES:
                    raise TokenFileError(f"“{where}” is {size:,} bytes; token files up to "
                                         f"{MAX_IMPORT_BYTES:,} bytes can be imported.")
                raw = f.read(MAX_IMPORT_BYTES + 1)
        except OSError as e:
            raise TokenFileError(f"Cannot read “{where}”: {e.strerror or e}.") from None
    if len(raw) > MAX_IMPORT_BYTES:
        raise TokenFileError(f"{where} is larger than {MAX_IMPORT_BYTES:,} bytes.")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TokenFileError(f"“{where}” is not UTF-8 text (byte {e.start:,}).") from None
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as e:
        raise TokenFileError(f"“{where}” is not valid JSON: {e.msg} (line {e.lineno}, column {e.colno}).") \
            from None
    except RecursionError:
        raise TokenFileError(f"“{where}” is nested too deeply to be a token list.") from None
    except ValueError as e:  # NaN/Infinity literals, over-long integers
        raise TokenFileError(f"“{where}” is not valid JSON: {e}.") from None
    try:
        return _read_doc(doc)
    except _Bad as e:
        raise TokenFileError(f"“{where}” is not a TokenPrism token list: {e}.") from None


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not standard JSON")


class _Bad(Exception):
    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}" if path else reason)
        self.path = path
        self.reason = reason


def _at(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _describe(v: object) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    if isinstance(v, str):
        return f"the text {v[:30]!r}" + ("…" if len(v) > 30 else "")
    if isinstance(v, list):
        return "a list"
    return "an object"


def _obj(v: object, path: str) -> dict[str, object]:
    if not isinstance(v, dict):
        raise _Bad(path, f"expected an object, found {_describe(v)}")
    return v


def _get(d: dict[str, object], key: str, path: str) -> object:
    if key not in d:
        raise _Bad(path, f"missing “{key}”")
    return d[key]


def _int(d: dict[str, object], key: str, path: str, lo: int, hi: int) -> int:
    v = _get(d, key, path)
    if not isinstance(v, int) or isinstance(v, bool):
        raise _Bad(_at(path, key), f"expected an integer, found {_describe(v)}")
    if not lo <= v <= hi:
        raise _Bad(_at(path, key), f"{v} is outside {lo}..{hi}")
    return v


def _str(d: dict[str, object], key: str, path: str) -> str:
    v = _get(d, key, path)
    if not isinstance(v, str):
        raise _Bad(_at(path, key), f"expected text, found {_describe(v)}")
    return v


def _bool(d: dict[str, object], key: str, path: str) -> bool:
    v = _get(d, key, path)
    if not isinstance(v, bool):
        raise _Bad(_at(path, key), f"expected true or false, found {_describe(v)}")
    return v


def _float(d: dict[str, object], key: str, path: str) -> float:
    v = _get(d, key, path)
    if isinstance(v, str) and v in ("inf", "-inf", "nan"):
        return float(v)
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise _Bad(_at(path, key), f"expected a number, found {_describe(v)}")
    return float(v)


_BIG = (1 << 63) - 1


def _read_doc(doc: object) -> list[TokenList]:
    d = _obj(doc, "")
    fmt = d.get("format")
    if fmt not in (FORMAT_TOKENS, FORMAT_COMPARE):
        found = f"its “format” is {_describe(fmt)}" if "format" in d else "it has no “format”"
        raise _Bad("", f"{found}, expected “{FORMAT_TOKENS}” or “{FORMAT_COMPARE}”")
    version = _int(d, "version", "", 0, _BIG)
    if version > FORMAT_VERSION:
        raise _Bad("version", f"version {version} is newer than this TokenPrism reads ({FORMAT_VERSION})")
    if fmt == FORMAT_TOKENS:
        return [_read_list(d, "", None)]
    text = _str(d, "text", "") if "text" in d else None
    lists = _get(d, "lists", "")
    if not isinstance(lists, list) or not lists:
        raise _Bad("lists", f"expected a non-empty list, found {_describe(lists)}")
    return [_read_list(_obj(x, _at("lists", k)), _at("lists", k), text) for k, x in enumerate(lists)]


def _read_model(v: object, path: str) -> ModelRef:
    m = _obj(v, path)
    return ModelRef(
        path=_str(m, "path", path), name=_str(m, "name", path), kind=_str(m, "kind", path),
        tokenizer=_str(m, "tokenizer", path), pre=_str(m, "pre", path),
        vocab_size=_int(m, "vocab_size", path, 0, _BIG), file_size=_int(m, "file_size", path, 0, _BIG),
        unk_id=_int(m, "unk_id", path, -1, _BIG), tokenizer_sha256=_str(m, "tokenizer_sha256", path))


def _read_list(d: dict[str, object], path: str, shared_text: str | None) -> TokenList:
    model = _read_model(_get(d, "model", path), _at(path, "model"))
    text = _str(d, "text", path) if "text" in d or shared_text is None else shared_text
    text = sanitize_text(text)  # hand-written \\udxxx escapes; offsets unchanged
    n_chars = len(text)
    n_bytes = _utf8_size(text)
    add_special = _bool(d, "add_special", path)
    parse_special = _bool(d, "parse_special", path)
    toks = _get(d, "tokens", path)
    if not isinstance(toks, list):
        raise _Bad(_at(path, "tokens"), f"expected a list, found {_describe(toks)}")
    ids: list[int] = []
    pieces: list[str] = []
    raws: list[str] = []
    scores: list[float] = []
    types: list[int] = []
    attrs: list[int] = []
    starts: list[int] = []
    ends: list[int] = []
    bstarts: list[int] = []
    bends: list[int] = []
    groups: list[int] = []
    vmax = model.vocab_size - 1
    for i, raw in enumerate(toks):
        tp = _at(_at(path, "tokens"), i)
        t = _obj(raw, tp)
        index = _int(t, "index", tp, 0, _BIG)
        if index != i:
            raise _Bad(_at(tp, "index"), f"is {index}, expected {i} (tokens are listed in order)")
        ids.append(_int(t, "id", tp, 0, vmax))
        pieces.append(_str(t, "piece", tp))
        raws.append(_str(t, "piece_raw", tp))
        scores.append(_float(t, "score", tp))
        types.append(_int(t, "type", tp, -(1 << 31), _BIG))
        attrs.append(_int(t, "attr", tp, 0, _BIG))
        s, e = _int(t, "start", tp, 0, n_chars), _int(t, "end", tp, 0, n_chars)
        if e < s:
            raise _Bad(_at(tp, "end"), f"{e} is before start {s}")
        bs, be = _int(t, "byte_start", tp, 0, n_bytes), _int(t, "byte_end", tp, 0, n_bytes)
        if be < bs:
            raise _Bad(_at(tp, "byte_end"), f"{be} is before byte_start {bs}")
        g = _int(t, "group", tp, -1, i)
        if 0 <= g < i and groups[g] != g:
            raise _Bad(_at(tp, "group"), f"token {g} does not start a group")
        starts.append(s)
        ends.append(e)
        bstarts.append(bs)
        bends.append(be)
        groups.append(g)
    if "ids" in d and d["ids"] != ids:
        raise _Bad(_at(path, "ids"), "does not match the ids of the tokens")
    return TokenList(
        model=model, text=text, add_special=add_special, parse_special=parse_special, ids=tuple(ids),
        pieces=tuple(pieces), pieces_raw=tuple(raws), scores=tuple(scores), types=tuple(types),
        attrs=tuple(attrs), starts=tuple(starts), ends=tuple(ends), byte_starts=tuple(bstarts),
        byte_ends=tuple(bends), groups=tuple(groups))


def _utf8_size(text: str) -> int:
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


# ---- plain ids (decode) -----------------------------------------------------------------------

_ID_WORD = re.compile(r"[^\s,\[\]]+")
_INT = re.compile(r"[+-]?[0-9]{1,30}")


@dataclass(frozen=True)
class IdItem:
    """One word of pasted ids with its place in the input (``str`` offsets);
    ``value`` is ``None`` when the word is not an integer."""

    start: int
    end: int
    text: str
    value: int | None

    def problem(self, vocab_size: int) -> str:
        """Why this id cannot be decoded by a model with ``vocab_size``
        tokens, or ``""``."""
        if self.value is None:
            return "not a token id"
        if not 0 <= self.value < vocab_size:
            return f"outside the vocabulary (0..{vocab_size - 1})"
        return ""


def scan_ids(text: str) -> tuple[IdItem, ...]:
    """The words of ``text`` read as token ids: ``1 2 3``, ``1,2,3`` and
    ``[1, 2, 3]`` (a JSON list) all work; anything else becomes an item
    with ``value=None`` at its place, so a caller can point at it."""
    out: list[IdItem] = []
    for m in _ID_WORD.finditer(text):
        w = m.group()
        out.append(IdItem(m.start(), m.end(), w, int(w) if _INT.fullmatch(w) else None))
    return tuple(out)


def id_problems(items: Sequence[IdItem], vocab_size: int) -> list[tuple[IdItem, str]]:
    """The items a model with ``vocab_size`` tokens cannot decode, with why."""
    return [(it, p) for it in items if (p := it.problem(vocab_size))]


def describe_id_problems(problems: Sequence[tuple[IdItem, str]], limit: int = 5) -> str:
    """``'abc' is not a token id; 99999 is outside the vocabulary (0..31999)``."""
    parts = [f"{it.text[:20]!r} is {why}" if it.value is None else f"{it.text} is {why}"
             for it, why in problems[:limit]]
    if len(problems) > limit:
        parts.append(f"and {len(problems) - limit} more")
    return "; ".join(parts)
