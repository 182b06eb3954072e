"""Turning tokens into text a person can read: escaped pieces, type names,
byte dumps, tooltips and the clipboard formats of token ids.

Pieces can hold anything a vocabulary stores: control characters, lone
surrogates (from invalid UTF-8), zero-width and bidi characters. Everything
shown to the user goes through :func:`readable` so that no invisible or
unencodable character reaches Qt.
"""

from __future__ import annotations

import html
import json
import unicodedata
from typing import Sequence

from tokenprism.core import Attr, Model

from .analysis import Analysis

VISIBLE_SPACE = "\u2423"  # ␣
# whitespace that matters in a token gets a visible symbol, as editors show it
_SHORT_ESCAPES = {"\n": "\u21b5", "\t": "\u21e5", "\r": "\u240d"}
_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def _escape_char(c: str) -> str:
    cp = ord(c)
    if 0xDC80 <= cp <= 0xDCFF:  # a raw byte kept by surrogateescape
        return f"\\x{cp - 0xDC00:02X}"
    if cp <= 0xFF:
        return f"\\x{cp:02X}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04X}"
    return f"\\U{cp:08X}"


def readable(text: str, visible_spaces: bool = True) -> str:
    """``text`` with line breaks and tabs shown as ``↵``/``⇥``, other control,
    format and invisible characters escaped (``\\x00``, ``\\u200B``) and, if
    asked, spaces shown as ``␣``."""
    if text.isascii() and text.isprintable():
        return text.replace(" ", VISIBLE_SPACE) if visible_spaces else text
    out: list[str] = []
    for c in text:
        if c == " ":
            out.append(VISIBLE_SPACE if visible_spaces else c)
        elif c in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[c])
        elif c.isprintable():
            out.append(c)
        else:
            cat = unicodedata.category(c)
            if cat in _HIDDEN_CATEGORIES or cat.startswith("Z"):
                out.append(_escape_char(c))
            else:
                out.append(c)
    return "".join(out)


def piece_label(model: Model, token_id: int) -> str:
    """The readable piece of one token (``▁`` kept, byte tokens as ``<0xNN>``)."""
    return readable(model.display_piece(token_id))


def type_name(attr: int) -> str:
    """A short name for a token's kind, from llama.cpp attribute bits."""
    if attr & Attr.UNKNOWN:
        return "unknown"
    if attr & Attr.CONTROL:
        return "control"
    if attr & Attr.USER_DEFINED:
        return "user-defined"
    if attr & Attr.BYTE:
        return "byte"
    if attr & Attr.UNUSED:
        return "unused"
    if attr & Attr.NORMAL:
        return "normal"
    return "undefined"


def type_label(analysis: Analysis, token_id: int) -> str:
    """:func:`type_name`, noting the model's unknown token when its type
    does not say so (BERT's ``[UNK]`` is a control token)."""
    name = type_name(analysis.model.vocab.attrs[token_id])
    if token_id == analysis.info.unk_id and name != "unknown":
        name += " (unk)"
    return name


def hex_bytes(data: bytes, limit: int = 48) -> str:
    """``F0 9F 99 82``, shortened with an ellipsis past ``limit`` bytes."""
    shown = " ".join(f"{b:02X}" for b in data[:limit])
    return shown + (" …" if len(data) > limit else "")


def format_score(score: float) -> str:
    return f"{score:.6g}"


def group_text(analysis: Analysis, first: int, last: int) -> str:
    """The original text covered by tokens ``[first, last)``."""
    enc = analysis.encoding
    s = min(enc.starts[first:last])
    e = max(enc.ends[first:last])
    return enc.text[s:e]


def piece_cell(analysis: Analysis, index: int, with_group: bool = True) -> str:
    """The table's piece column: the readable piece, and for a token that is
    part of a group (byte fallback) the group's character and position."""
    enc = analysis.encoding
    model = analysis.model
    label = piece_label(model, enc.token_ids[index])
    if with_group and enc.groups[index] >= 0:
        first, last = enc.group_range(index)
        label += f"   {readable(group_text(analysis, first, last))}  {index - first + 1}/{last - first}"
    return label


MAX_TOOLTIP_TOKENS = 8


def tooltip_html(analysis: Analysis, first: int, last: int) -> str:
    """Rich-text tooltip for tokens ``[first, last)`` (one token or a group)."""
    enc = analysis.encoding
    model = analysis.model
    vocab = model.vocab
    cs, ce = min(enc.starts[first:last]), max(enc.ends[first:last])
    bs, be = min(enc.byte_starts[first:last]), max(enc.byte_ends[first:last])
    span = f"chars {cs}–{ce}, bytes {bs}–{be}" if ce > cs else f"inserted at char {cs} (covers no text)"
    lines: list[str] = []
    if last - first == 1:
        tid = enc.token_ids[first]
        lines.append(f"<b>id {tid}</b>&nbsp;&nbsp;<code>{html.escape(piece_label(model, tid))}</code>")
        lines.append(f"token #{first} · {type_label(analysis, tid)} · score "
                     f"{html.escape(format_score(vocab.scores[tid]))}")
        lines.append(f"bytes <code>{hex_bytes(model.token_bytes(tid))}</code>")
        # optional columns (BPE, WordPiece): computed once per encoding on first hover
        extra = [f"{name} {values[first]}" for name, values in (("merge rank", enc.ranks), ("word", enc.words))
                 if values is not None and values[first] >= 0]
        if extra:
            lines.append(" · ".join(extra))
    else:
        rows: list[str] = []
        for i in range(first, min(last, first + MAX_TOOLTIP_TOKENS)):
            tid = enc.token_ids[i]
            rows.append(
                f"<tr><td align='right'>#{i}</td><td align='right'><b>{tid}</b></td>"
                f"<td><code>{html.escape(piece_label(model, tid))}</code></td>"
                f"<td align='right'>{html.escape(format_score(vocab.scores[tid]))}</td>"
                f"<td>{type_label(analysis, tid)}</td>"
                f"<td><code>{hex_bytes(model.token_bytes(tid), 16)}</code></td></tr>")
        if last - first > MAX_TOOLTIP_TOKENS:
            rows.append(f"<tr><td colspan='6'>… {last - first - MAX_TOOLTIP_TOKENS} more</td></tr>")
        head = ("<tr><th align='right'>#</th><th align='right'>id</th><th align='left'>piece</th>"
                "<th align='right'>score</th><th align='left'>type</th><th align='left'>bytes</th></tr>")
        all_bytes = b"".join(model.token_bytes(enc.token_ids[i]) for i in range(first, last))
        byte_group = any(vocab.attrs[enc.token_ids[i]] & Attr.BYTE for i in range(first, last))
        what = "byte-fallback group" if byte_group else "tokens sharing a character"
        lines.append(f"<b>{what}</b>: <code>{html.escape(readable(enc.text[cs:ce]))}</code> = "
                     f"<code>{hex_bytes(all_bytes)}</code>")
        lines.append(f"<table cellspacing='0' cellpadding='3'>{head}{''.join(rows)}</table>")
    lines.append(f"<span style='color: gray'>{span}</span>")
    return "<qt>" + "<br>".join(lines) + "</qt>"


ID_FORMATS = ("space", "json")


def format_ids(ids: Sequence[int], fmt: str) -> str:
    """Token ids for the clipboard: ``"1 15043 3186"`` or ``"[1, 15043, 3186]"``."""
    if fmt == "json":
        return json.dumps(list(ids))
    return " ".join(str(i) for i in ids)


def human_size(n: int) -> str:
    """A byte count as people read it: 812 B, 4.2 MB (powers of 1000)."""
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} TB"  # pragma: no cover (the loop returns at GB)
