"""A :class:`~.run.CorpusReport` as JSON, CSV, text or a self-contained
HTML page with charts (matplotlib, drawn as inline SVG: no file or network
reference, so the page can be mailed or archived as it is).

>>> print(to_text(report))                                  # doctest: +SKIP
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
from typing import Any, Iterator

from .run import CorpusReport
from .stats import SPACE, SPECIAL, ModelStats, Tally

# worst words listed per model
WORST = 30
# scripts drawn in the chart (by bytes); the tables list all
CHART_SCRIPTS = 12


def label(ms: ModelStats) -> str:
    """A short name for a table column: the model's name, or its file's."""
    if len(ms.name) <= 24:
        return ms.name
    stem = os.path.splitext(os.path.basename(ms.path))[0]
    return stem if len(stem) <= 24 else stem[:23] + "…"


def _ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def _tally(t: Tally) -> dict[str, Any]:
    return {"tokens": t.tokens, "bytes": t.bytes, "chars": t.chars, "words": t.words,
            "bytes_per_token": _ratio(t.bytes, t.tokens), "tokens_per_word": _ratio(t.tokens, t.words)}


def model_dict(ms: ModelStats, first: ModelStats) -> dict[str, Any]:
    """One model's part of the JSON report."""
    t = ms.total
    return {
        "name": ms.name, "path": ms.path, "vocab_size": ms.vocab_size,
        "tokens": t.tokens, "bytes": t.bytes, "chars": t.chars, "words": t.words,
        "bytes_per_token": _ratio(t.bytes, t.tokens), "chars_per_token": _ratio(t.chars, t.tokens),
        "tokens_per_word": _ratio(t.tokens, t.words),
        "tokens_vs_first": _ratio(t.tokens, first.total.tokens),
        "byte_fallback": ms.byte_fallback, "unknown": ms.unknown, "special": ms.special,
        "vocab_used": ms.vocab_used, "vocab_used_fraction": _ratio(ms.vocab_used, ms.vocab_size),
        "by_script": {k: _tally(v) for k, v in sorted(ms.by_script.items(), key=lambda kv: -kv[1].bytes)},
        "by_file": {k: _tally(v) for k, v in sorted(ms.by_file.items())},
        "worst_words": [{"word": w, "count": c.count, "tokens": c.tokens,
                         "tokens_per_occurrence": _ratio(c.tokens, c.count),
                         "tokens_per_char": _ratio(c.tokens, c.count * len(w))}
                        for w, c in ms.worst_words(WORST)],
    }


def to_dict(report: CorpusReport) -> dict[str, Any]:
    """The report as plain data (what :func:`to_json` writes)."""
    s = report.stats
    first = s.models[0]
    return {
        "files": s.files, "documents": s.documents, "bytes": s.text.bytes, "bytes_read": s.bytes_read,
        "chars": s.text.chars, "words": s.text.words, "invalid_utf8": s.invalid_utf8,
        "forced_cuts": s.forced_cuts,
        "skipped": [{"path": k.path, "reason": k.reason} for k in s.skipped],
        "missing": [{"partition": m.index, "files": m.files, "reason": m.reason} for m in report.missing],
        "cancelled": report.cancelled, "complete": not report.missing and not report.cancelled,
        "paths": list(report.paths), "field": report.field, "add_special": report.add_special,
        "limit_bytes": report.limit_bytes, "engine": report.engine, "elapsed_s": round(report.elapsed, 3),
        "worker_peak_rss": report.worker_peak_rss, "worker_cpu_seconds": report.worker_cpu_seconds,
        "models": [model_dict(m, first) for m in s.models],
    }


def to_json(report: CorpusReport) -> str:
    return json.dumps(to_dict(report), ensure_ascii=False, indent=1) + "\n"


CSV_COLUMNS = ("model", "path", "script", "tokens", "bytes", "chars", "words", "bytes_per_token",
               "tokens_per_word")


def to_csv(report: CorpusReport) -> str:
    """One row per model and script."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for ms in report.stats.models:
        for script, t in sorted(ms.by_script.items(), key=lambda kv: -kv[1].bytes):
            w.writerow([ms.name, ms.path, script, t.tokens, t.bytes, t.chars, t.words,
                        _ratio(t.bytes, t.tokens) or "", _ratio(t.tokens, t.words) or ""])
    return out.getvalue()


# ---- text -------------------------------------------------------------------


def _fmt(v: float | None, digits: int = 2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def summary_rows(report: CorpusReport) -> list[list[str]]:
    """The models table: header row first (shared by text and HTML)."""
    rows = [["model", "tokens", "vs first", "bytes/token", "chars/token", "tokens/word", "byte fallback",
             "unknown", "vocab used"]]
    first = report.stats.models[0].total.tokens
    for ms in report.stats.models:
        t = ms.total
        rows.append([label(ms), f"{t.tokens:,}", _fmt(_ratio(t.tokens, first), 3), _fmt(_ratio(t.bytes, t.tokens)),
                     _fmt(_ratio(t.chars, t.tokens)), _fmt(_ratio(t.tokens, t.words)), f"{ms.byte_fallback:,}",
                     f"{ms.unknown:,}", f"{ms.vocab_used:,} / {ms.vocab_size:,}"])
    return rows


def script_rows(report: CorpusReport) -> list[list[str]]:
    """Bytes per token by script (rows) and model (columns), header first."""
    models = report.stats.models
    rows = [["script", "words", "bytes", *[label(m) for m in models]]]
    for script in _scripts(models):
        base = next((m.by_script[script] for m in models if script in m.by_script), Tally())
        rows.append([script, f"{base.words:,}", f"{base.bytes:,}",
                     *[_fmt(_ratio(m.by_script.get(script, Tally()).bytes, m.by_script.get(script, Tally()).tokens))
                       for m in models]])
    return rows


def _scripts(models: list[ModelStats]) -> list[str]:
    """Scripts by bytes, most first (Space and Special last: they have none)."""
    size: dict[str, int] = {}
    for m in models:
        for k, t in m.by_script.items():
            size[k] = max(size.get(k, 0), t.bytes)
    return sorted(size, key=lambda k: (k in (SPACE, SPECIAL), -size[k], k))


def _table(rows: list[list[str]]) -> Iterator[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for n, r in enumerate(rows):
        yield "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
        if n == 0:
            yield "  ".join("-" * w for w in widths)


def to_text(report: CorpusReport) -> str:
    s = report.stats
    lines = [f"{s.files:,} files, {s.documents:,} documents, {s.text.bytes:,} bytes, {s.text.chars:,} characters, "
             f"{s.text.words:,} words ({report.engine}, {report.elapsed:.1f} s)"]
    if s.invalid_utf8:
        lines.append(f"{s.invalid_utf8:,} invalid UTF-8 sequences read as U+FFFD")
    if s.forced_cuts:
        lines.append(f"{s.forced_cuts:,} cut(s) in very long lines without a tokenizer cut point: "
                     "counts there may be off by a token or two")
    lines += ["", *_table(summary_rows(report)), "", "Bytes per token, by script:", *_table(script_rows(report))]
    for ms in s.models:
        worst = ms.worst_words(10)
        if worst:
            lines += ["", f"Costliest words for {label(ms)} (tokens each x count):"]
            lines += [f"  {w!r}: {c.tokens / c.count:.1f} tokens x {c.count:,}" for w, c in worst]
    if s.skipped:
        lines += ["", f"Skipped ({len(s.skipped)}):", *[f"  {k.path}: {k.reason}" for k in s.skipped[:50]]]
        if len(s.skipped) > 50:
            lines.append(f"  ... and {len(s.skipped) - 50} more (see --format json)")
    if report.missing or report.cancelled:
        lines += ["", "INCOMPLETE: " + ("cancelled; " if report.cancelled else "")
                  + f"{len(report.missing)} partition(s) not counted:"]
        lines += [f"  #{m.index} ({m.files}): {m.reason}" for m in report.missing[:50]]
    return "\n".join(lines) + "\n"


# ---- HTML -------------------------------------------------------------------


def charts_svg(report: CorpusReport) -> list[tuple[str, str]]:
    """(title, inline SVG) for each chart: tokens per byte by script per
    model, fertility, vocabulary use."""
    from matplotlib.figure import Figure  # the corpus extra; no pyplot: no GUI backend is touched

    models = report.stats.models
    names = [label(m) for m in models]
    out: list[tuple[str, str]] = []
    scripts = [k for k in _scripts(models) if k not in (SPACE, SPECIAL)][:CHART_SCRIPTS]
    if scripts:
        fig = Figure(figsize=(8, 3.6))
        ax = fig.add_subplot()
        width = 0.8 / max(1, len(models))
        for i, m in enumerate(models):
            vals = [(_ratio(m.by_script[k].tokens, m.by_script[k].bytes) or 0.0) if k in m.by_script else 0.0
                    for k in scripts]
            ax.bar([x + i * width for x in range(len(scripts))], vals, width, label=label(m))
        ax.set_xticks([x + width * (len(models) - 1) / 2 for x in range(len(scripts))], scripts,
                      rotation=30, ha="right")
        ax.set_ylabel("tokens per byte (lower is better)")
        ax.legend(fontsize="small")
        out.append(("Tokens per byte, by script", _svg(fig)))
    for title, axis, values in (
            ("Fertility: tokens per word", "tokens per word",
             [_ratio(m.total.tokens, m.total.words) or 0.0 for m in models]),
            ("Vocabulary used", "share of the vocabulary used",
             [_ratio(m.vocab_used, m.vocab_size) or 0.0 for m in models])):
        fig = Figure(figsize=(8, 0.6 + 0.45 * len(models)))
        ax = fig.add_subplot()
        ax.barh(names, values, color="#4c72b0")
        ax.invert_yaxis()
        ax.set_xlim(0, max(values + [1e-9]) * 1.18)  # room for the value labels
        ax.set_xlabel(axis)
        for y, v in enumerate(values):
            ax.text(v, y, f" {v:.3f}", va="center", fontsize="small")
        out.append((title, _svg(fig)))
    return out


def _svg(fig: Any) -> str:
    fig.tight_layout()
    buf = io.StringIO()
    # no creation date or tool credits: the same report gives the same page
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]  # the XML declaration and DOCTYPE are not for inline SVG


_CSS = """body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:1em 0}
td,th{border:1px solid #ccc;padding:3px 8px}td:not(:first-child){text-align:right}th{background:#f3f3f3}
h2{margin-top:1.6em}.side{display:flex;flex-wrap:wrap;gap:0 2em}.warn{color:#a00}svg{max-width:100%;height:auto}"""


def _html_table(rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in rows[0])
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows[1:])
    return f"<table><tr>{head}</tr>{body}</table>"


def to_html(report: CorpusReport) -> str:
    """A self-contained page: charts as inline SVG, then the tables."""
    s = report.stats
    e = html.escape
    parts = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>TokenPrism corpus report</title>",
             f"<style>{_CSS}</style></head><body><h1>Corpus report</h1>",
             f"<p>{s.files:,} files, {s.documents:,} documents, {s.text.bytes:,} bytes, {s.text.words:,} words; "
             f"{e(report.engine)}, {report.elapsed:.1f} s.</p>"]
    if report.missing or report.cancelled:
        parts.append(f"<p class='warn'>Incomplete: {len(report.missing)} partition(s) not counted"
                     f"{' (cancelled)' if report.cancelled else ''}.</p>")
    parts += ["<h2>Models</h2>", _html_table(summary_rows(report))]
    for title, svg in charts_svg(report):
        parts += [f"<h2>{e(title)}</h2>", svg]
    parts += ["<h2>By script: bytes per token</h2>", _html_table(script_rows(report))]
    parts.append("<h2>Costliest words</h2><div class='side'>")
    for ms in s.models:
        rows = [["word", "tokens each", "count"]]
        rows += [[w, f"{c.tokens / c.count:.1f}", f"{c.count:,}"] for w, c in ms.worst_words(WORST)]
        parts += [f"<div><h3>{e(label(ms))}</h3>", _html_table(rows), "</div>"]
    parts.append("</div>")
    if s.skipped:
        parts += ["<h2>Skipped</h2>", _html_table([["path", "reason"], *[[k.path, k.reason] for k in s.skipped]])]
    if report.missing:
        parts += ["<h2>Not counted</h2>",
                  _html_table([["partition", "files", "reason"],
                               *[[str(m.index), m.files, m.reason] for m in report.missing]])]
    parts.append("</body></html>\n")
    return "".join(parts)


FORMATS = {"text": to_text, "json": to_json, "csv": to_csv, "html": to_html}


def render(report: CorpusReport, fmt: str) -> str:
    """The report in ``fmt``: one of :data:`FORMATS`."""
    return FORMATS[fmt](report)
