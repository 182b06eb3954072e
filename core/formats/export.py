"""Token lists as files: the one place that writes and reads them, for the
command line and the desktop app alike.

The data (:class:`TokenList`, :func:`token_list`) lives in
``core/formats/token_list.py`` and the reading side (:func:`load_json`,
:func:`scan_ids`) in ``core/formats/token_import.py``; both are re-exported here, so
callers import from this one module.

Formats (:func:`render`, :func:`iter_render`):

- ``json``: one object (model, flags, text, stats, ids, tokens with every
  field), one token a line; several lists give one ``tokenprism-compare``
  object holding them all. :func:`load_json` reads both back exactly.
  JSON Lines, CSV and ids files keep no text or model: :func:`load_token_file`
  reads their tokens back (:class:`TokenRows`) and :func:`restore_text`
  decodes the text with a model.
- ``jsonl``: one token a line (with ``list`` and ``model`` when several).
- ``csv``: header row, one token a row; cells that a spreadsheet would run
  as a formula are defused (:func:`spreadsheet_cell`).

The optional per-token columns (``rank`` of a BPE model, ``word`` of a
WordPiece one; :data:`OPTIONAL_FIELDS`) are written only for a list whose
model has them, so other models' files stay as they were: in JSON as token
fields plus a ``ranks``/``words`` array next to ``ids`` (which also says an
empty list has them), in CSV as trailing columns (empty cells for the lists
of a model without them).
- ``ids``: ``[1, 15043, 3186]``, one line per list (llama-tokenize's form).
- ``pieces``: ``id -> 'piece'`` lines; ``table``: one row of counts per list.

Files are written with :func:`write_atomic`: a failed write leaves the
previous file as it was.

>>> model = open_model("ggml-vocab-llama-spm.gguf")
>>> tl = token_list(model, text="Hello", add_special=True)
>>> write_export("hello.json", [tl], "json")
>>> load_json("hello.json")[0] == tl
True
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from typing import Iterable, Iterator, Mapping, Sequence

from ..errors import TokenPrismError
from ..library.names import display_names
from .token_import import (FORMAT_COMPARE, FORMAT_TOKENS, FORMAT_VERSION, IMPORTABLE, MAX_IMPORT_BYTES, IdItem,
                           TokenFileError, TokenRows, describe_id_problems, id_problems, load_json, load_token_file,
                           restore_text, scan_ids)
from .token_list import (ListStats, ModelRef, TokenList, TokenRow, first_difference, stats, token_list,
                         tokenizer_fingerprint)

__all__ = [
    "EXTENSIONS", "ExportError", "FILE_FORMATS", "FORMATS", "FORMAT_COMPARE", "FORMAT_TOKENS", "FORMAT_VERSION",
    "IMPORTABLE", "IdItem", "ListStats", "MAX_IMPORT_BYTES", "ModelRef", "OPTIONAL_FIELDS", "TOKEN_FIELDS",
    "TokenFileError", "TokenList", "TokenRow", "TokenRows", "describe_id_problems", "first_difference",
    "format_for_path", "id_problems", "iter_render", "labels", "load_json", "load_token_file", "render",
    "restore_text", "scan_ids", "spreadsheet_cell", "stats", "token_list",
    "tokenizer_fingerprint", "write_atomic", "write_export",
]

FORMATS = ("ids", "pieces", "json", "jsonl", "csv", "table")
"""Every format :func:`render` knows; ``FILE_FORMATS`` are the ones worth a file."""
FILE_FORMATS = ("json", "jsonl", "csv", "ids")
EXTENSIONS: Mapping[str, str] = {".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv",
                                 ".txt": "ids", ".ids": "ids"}
TOKEN_FIELDS = ("index", "id", "piece", "piece_raw", "score", "type", "attr", "start", "end",
                "byte_start", "byte_end", "group", "char")
OPTIONAL_FIELDS = ("rank", "word")
"""Token fields only some models have; they follow ``TOKEN_FIELDS``."""


class ExportError(TokenPrismError):
    """A token list cannot be written."""


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


def _token_json(t: TokenRow, extra: str = "", rank: bool = False, word: bool = False) -> str:
    char = "null" if t.char is None else _js(t.char)
    tail = (f', "rank": {t.rank}' if rank else "") + (f', "word": {t.word}' if word else "")
    return (f'{{{extra}"index": {t.index}, "id": {t.id}, "piece": {_js(t.piece)}, '
            f'"piece_raw": {_js(t.piece_raw)}, "score": {_score_json(t.score)}, "type": {t.type}, '
            f'"attr": {t.attr}, "start": {t.start}, "end": {t.end}, "byte_start": {t.byte_start}, '
            f'"byte_end": {t.byte_end}, "group": {t.group}, "char": {char}{tail}}}')


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
    if tl.ranks is not None:
        yield f'{indent}"ranks": [{", ".join(map(str, tl.ranks))}],\n'
    if tl.words is not None:
        yield f'{indent}"words": [{", ".join(map(str, tl.words))}],\n'
    yield f'{indent}"tokens": [\n'
    sep = ""
    rank, word = tl.ranks is not None, tl.words is not None
    for t in tl:
        yield f"{sep}{indent} {_token_json(t, '', rank, word)}"
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
        rank, word = tl.ranks is not None, tl.words is not None
        for t in tl:
            yield _token_json(t, extra, rank, word) + "\n"


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
    rank_col = any(tl.ranks is not None for tl in lists)
    word_col = any(tl.words is not None for tl in lists)
    yield _csv_line((("model",) if several else ()) + TOKEN_FIELDS + (("rank",) if rank_col else ())
                    + (("word",) if word_col else ()))
    for k, tl in enumerate(lists):
        lead = [spreadsheet_cell(names[k])] if several else []
        has_rank, has_word = tl.ranks is not None, tl.words is not None
        for t in tl:
            row = lead + [
                str(t.index), str(t.id), spreadsheet_cell(t.piece), spreadsheet_cell(t.piece_raw),
                repr(t.score), str(t.type), str(t.attr), str(t.start), str(t.end), str(t.byte_start),
                str(t.byte_end), str(t.group), "" if t.char is None else spreadsheet_cell(t.char)]
            if rank_col:
                row.append(str(t.rank) if has_rank else "")
            if word_col:
                row.append(str(t.word) if has_word else "")
            yield _csv_line(row)


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
        # cut in the middle: the end holds the file name that tells repeated names apart
        shown = name if len(name) <= width else name[:width // 2 - 1] + "…" + name[-(width - width // 2):]
        yield (f"{shown:<{width}}  {tl.model.kind:<4} {s.tokens:>9,} {diff:>7} {s.chars_per_token:>9.3f} "
               f"{s.bytes_per_token:>9.3f} {s.byte_fallback:>8,} {s.unknown:>6,}\n")


_RENDERERS = {"json": _iter_json, "jsonl": _iter_jsonl, "csv": _iter_csv, "ids": _iter_ids,
              "pieces": _iter_pieces, "table": _iter_table}


def labels(lists: Sequence[TokenList]) -> list[str]:
    """One name per list, as the app shows it (:func:`~tokenprism.core.library.names.display_names`):
    the file's name for a model named by a hash or a path, file names added
    where names repeat, ``name #2`` for the same file twice."""
    return display_names([(tl.model.name, tl.model.path) for tl in lists])


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

    >>> tl = token_list(open_model("ggml-vocab-llama-spm.gguf"), text="Hello", add_special=True)
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
    except FileNotFoundError as e:
        raise ExportError(f"Cannot write “{name}”: the folder {folder} does not exist.") from e
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


