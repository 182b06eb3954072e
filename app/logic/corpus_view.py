"""What the window's Corpus view shows of a corpus profile, without Qt:
the rows of its tables, the series of its charts, and its one-line texts.

The numbers come from a :class:`~tokenprism.core.corpus.CorpusReport`
(the service counts, this module only divides and orders), so the table
shows what ``tokenprism stats`` prints for the same run.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from typing import Any, Sequence

from tokenprism.core.corpus import CorpusReport, Progress, Tally
from tokenprism.core.corpus import report as corpus_report
from tokenprism.core.corpus.stats import SPACE, SPECIAL
from tokenprism.core.formats.export import write_atomic

from .pieces import human_size

WORST_WORDS = 200
"""Costliest words listed per model (the service keeps more)."""
CHART_SCRIPTS = 8
"""Scripts in the tokens-per-byte chart: the ones with the most text."""
MAX_WORKERS = 256
MAX_LIMIT_MB = 10_000_000
NOT_WORDS = (SPACE, SPECIAL)
"""by_script entries that hold tokens but no words (whitespace, BOS/EOS)."""


@dataclass(frozen=True)
class CorpusOptions:
    """One run's choices, as the view's form holds them."""

    paths: tuple[str, ...]
    models: tuple[str, ...]
    field: str = "text"
    workers: int = 0
    """Worker processes; 0: one per core."""
    add_special: bool = False
    limit_mb: int = 0
    """Read at most this many megabytes (10⁶ bytes); 0: everything."""
    scheduler: str = ""
    """A Dask scheduler's address (``tcp://HOST:PORT``); "": this computer's
    cores; ``"synchronous"``: in this process, without Dask."""

    @property
    def limit_bytes(self) -> int | None:
        return self.limit_mb * 1_000_000 if self.limit_mb > 0 else None

    def problem(self) -> str:
        """Why this cannot run yet ("" when it can)."""
        if not self.paths:
            return "Add a folder or files to profile."
        if not self.models:
            return "Tick at least one model."
        if not self.field.strip():
            return "Name the JSON Lines field that holds the text."
        return ""


MAX_SAVED_PATHS = 200
"""Paths and models remembered at most (a settings file stays small)."""


def options_to_json(options: CorpusOptions) -> str:
    """The options as the settings keep them (one JSON string)."""
    data = asdict(options)
    data["paths"] = list(options.paths[:MAX_SAVED_PATHS])
    data["models"] = list(options.models[:MAX_SAVED_PATHS])
    return json.dumps(data, ensure_ascii=False)


def options_from_json(text: str) -> CorpusOptions:
    """Options saved by :func:`options_to_json`; anything unreadable or of
    the wrong type falls back to the default for that option, so a damaged
    settings file never stops the view from opening."""
    try:
        data: Any = json.loads(text) if text else {}
    except ValueError:
        data = {}
    if not isinstance(data, dict):
        data = {}

    def strings(key: str) -> tuple[str, ...]:
        v = data.get(key)
        return tuple(p for p in v if isinstance(p, str) and p)[:MAX_SAVED_PATHS] if isinstance(v, list) else ()

    def number(key: str, hi: int) -> int:
        v = data.get(key)
        return min(hi, max(0, v)) if isinstance(v, int) and not isinstance(v, bool) else 0

    field = data.get("field")
    return CorpusOptions(strings("paths"), strings("models"),
                         field if isinstance(field, str) and field.strip() else "text",
                         number("workers", MAX_WORKERS), data.get("add_special") is True,
                         number("limit_mb", MAX_LIMIT_MB), scheduler_address(data.get("scheduler")))


def scheduler_address(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def ratio(a: int, b: int) -> float:
    """``a / b``, 0 when ``b`` is 0 (nothing counted)."""
    return a / b if b else 0.0


@dataclass(frozen=True)
class ModelRow:
    """One model's line of the results table."""

    name: str
    path: str
    tokens: int
    bytes_per_token: float
    chars_per_token: float
    tokens_per_word: float
    byte_fallback: int
    unknown: int
    vocab_used: int
    vocab_size: int
    vs_first: float
    """Tokens relative to the first model's (1.0 for the first)."""

    @property
    def vocab_share(self) -> float:
        return ratio(self.vocab_used, self.vocab_size)


def _num(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def model_rows(report: CorpusReport) -> list[ModelRow]:
    """One row per model, in the order they were given (the first is the
    one the others are ranked against): the numbers of the service's own
    report (:func:`tokenprism.core.corpus.report.to_dict`), so the window
    shows what an export holds."""
    rows = []
    for m in corpus_report.to_dict(report)["models"] if report.stats.models else []:
        rows.append(ModelRow(m["name"], m["path"], m["tokens"], _num(m["bytes_per_token"]),
                             _num(m["chars_per_token"]), _num(m["tokens_per_word"]), m["byte_fallback"],
                             m["unknown"], m["vocab_used"], m["vocab_size"], _num(m["tokens_vs_first"])))
    return rows


@dataclass(frozen=True)
class ScriptRow:
    """One model's counts for the words of one Unicode script."""

    model: str
    script: str
    tokens: int
    bytes: int
    words: int
    tokens_per_byte: float
    tokens_per_word: float


def script_order(report: CorpusReport) -> list[str]:
    """Scripts by the bytes of text written in them, most first; the
    wordless entries (whitespace, BOS/EOS) last."""
    sizes: dict[str, int] = {}
    for ms in report.stats.models[:1]:  # every model sees the same words
        for script, t in ms.by_script.items():
            sizes[script] = t.bytes
    for ms in report.stats.models:
        for script in ms.by_script:
            sizes.setdefault(script, 0)
    return sorted(sizes, key=lambda s: (s in NOT_WORDS, -sizes[s], s))


def script_rows(report: CorpusReport) -> list[ScriptRow]:
    """Model × script rows, grouped by script (largest first) so models sit
    next to each other for the same words."""
    rows = []
    for script in script_order(report):
        for ms in report.stats.models:
            t = ms.by_script.get(script, Tally())
            rows.append(ScriptRow(ms.name, script, t.tokens, t.bytes, t.words, ratio(t.tokens, t.bytes),
                                  ratio(t.tokens, t.words)))
    return rows


@dataclass(frozen=True)
class WordRow:
    """A costly word of one model: what double-clicking opens in the editor."""

    model: str
    model_path: str
    word: str
    count: int
    tokens_per_use: float
    tokens_per_char: float
    """Tokens per character of one use."""


def worst_word_rows(report: CorpusReport, n: int = WORST_WORDS) -> list[WordRow]:
    """Each model's ``n`` costliest words (the service's ranking), model by model."""
    rows = []
    for ms in report.stats.models:
        for word, cost in ms.worst_words(n):
            rows.append(WordRow(ms.name, ms.path, word, cost.count, ratio(cost.tokens, cost.count),
                                ratio(cost.tokens, cost.count * len(word))))
    return rows


# ---- charts -----------------------------------------------------------------------


@dataclass(frozen=True)
class ChartData:
    """What the three charts plot (one entry per model, in model order)."""

    models: tuple[str, ...]
    scripts: tuple[str, ...]
    tokens_per_byte: tuple[tuple[float, ...], ...]
    """[model][script]: tokens per byte of that script's words."""
    fertility: tuple[float, ...]
    """Tokens per word."""
    vocab_share: tuple[float, ...]
    """Share of the vocabulary used at least once (0..1)."""


def chart_data(report: CorpusReport, max_scripts: int = CHART_SCRIPTS,
               rows: Sequence[ModelRow] | None = None) -> ChartData:
    scripts = [s for s in script_order(report) if s not in NOT_WORDS][:max_scripts]
    models = report.stats.models
    per_byte = tuple(tuple(ratio(ms.by_script.get(s, Tally()).tokens, ms.by_script.get(s, Tally()).bytes)
                           for s in scripts) for ms in models)
    rows = model_rows(report) if rows is None else rows
    return ChartData(tuple(short_names([ms.name for ms in models])), tuple(scripts), per_byte,
                     tuple(r.tokens_per_word for r in rows), tuple(r.vocab_share for r in rows))


def short_names(names: Sequence[str], limit: int = 28) -> list[str]:
    """Names that fit a chart's legend: long ones cut in the middle."""
    half = (limit - 1) // 2
    return [n if len(n) <= limit else n[:half] + "…" + n[-half:] for n in names]


# ---- texts -----------------------------------------------------------------------


def duration(seconds: float) -> str:
    """``4.2 s`` under a minute, then ``1:07``, ``12:30``, ``1:02:03``."""
    if seconds < 59.95:
        return f"{max(0.0, seconds):.1f} s"
    s = int(round(seconds))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def progress_text(p: Progress) -> str:
    """"3 of 10 parts · 12.0 MB of 40.0 MB · 4.1 MB/s · 0:07 left"."""
    parts = [f"{p.parts_done:,} of {p.parts_total:,} parts",
             f"{human_size(p.bytes_done)} of {human_size(p.bytes_total)}"]
    if p.rate > 0:
        parts.append(f"{human_size(int(p.rate))}/s")
    eta = p.eta
    if eta is not None and p.parts_done < p.parts_total:
        parts.append(f"{duration(eta)} left")
    return " · ".join(parts)


def progress_permille(p: Progress) -> int:
    """0..1000 for a progress bar: by bytes, else by parts."""
    if p.bytes_total > 0:
        return min(1000, p.bytes_done * 1000 // p.bytes_total)
    return min(1000, p.parts_done * 1000 // p.parts_total) if p.parts_total else 0


def summary_text(report: CorpusReport) -> str:
    """One line under the results: what was read, what was left out, where
    it ran, how long it took."""
    s = report.stats
    docs = f"{s.files:,} file{'s' if s.files != 1 else ''}"
    if s.documents != s.files:
        docs += f" ({s.documents:,} documents)"
    parts = [f"{docs}, {human_size(s.text.bytes)} of text, {s.text.words:,} words"]
    if s.invalid_utf8:
        parts.append(f"{s.invalid_utf8:,} invalid UTF-8 sequences replaced")
    if s.skipped:
        parts.append(f"{len(s.skipped):,} skipped")
    if report.missing:
        parts.append(f"{len(report.missing):,} parts not counted")
    if report.limit_bytes is not None:
        parts.append(f"limited to {human_size(report.limit_bytes)}")
    where = f" on {report.engine}" if report.engine else ""
    head = "Cancelled: partial counts. " if report.cancelled else ""
    return head + "; ".join(parts) + f" — {duration(report.elapsed)}{where}."


@dataclass(frozen=True)
class ReportView:
    """Everything the view shows of one report, made off the GUI thread
    (the service's dict of a big corpus lists every file)."""

    report: CorpusReport
    models: tuple[ModelRow, ...]
    scripts: tuple[ScriptRow, ...]
    words: tuple[WordRow, ...]
    charts: ChartData
    summary: str
    left_out: tuple[str, ...]


def view_of(report: CorpusReport) -> ReportView:
    rows = model_rows(report)
    return ReportView(report, tuple(rows), tuple(script_rows(report)), tuple(worst_word_rows(report)),
                      chart_data(report, rows=rows), summary_text(report), tuple(left_out_lines(report)))


def left_out_lines(report: CorpusReport, limit: int = 200) -> list[str]:
    """The skipped paths and uncounted parts, each with its reason (for a
    tooltip or a list)."""
    lines = [f"{display_path(k.path)}: {k.reason}" for k in report.stats.skipped]
    lines += [f"part {m.index} ({m.files}): {m.reason}" for m in report.missing]
    if len(lines) > limit:
        lines = lines[:limit] + [f"… and {len(lines) - limit:,} more"]
    return lines


def display_path(path: str) -> str:
    """A path with the home folder as ``~``."""
    home = os.path.expanduser("~")
    if home not in ("", "/", "~") and path.startswith(home + os.sep):
        return "~" + path[len(home):]
    return path


def fmt_ratio(value: float) -> str:
    return f"{value:.2f}"


def fmt_share(used: int, size: int) -> str:
    """"31,204 / 32,000 (97.5 %)"."""
    return f"{used:,} / {size:,} ({100 * ratio(used, size):.1f} %)"


def default_export_name(report: CorpusReport, ext: str) -> str:
    """``corpus-<first path's name>.<ext>``."""
    first = report.paths[0] if report.paths else "corpus"
    base = os.path.basename(os.path.normpath(first)) or "corpus"
    base = os.path.splitext(base)[0] if os.path.isfile(first) else base
    return f"corpus-{base}.{ext}"


# ---- export ---------------------------------------------------------------------

EXPORT_FILTERS = {"html": "HTML report with charts (*.html)", "json": "JSON (*.json)",
                  "csv": "CSV, one row per model and script (*.csv)", "text": "Plain text (*.txt)"}
EXPORT_EXTENSIONS = {"html": ".html", "json": ".json", "csv": ".csv", "text": ".txt"}


def export_format(path: str, chosen_filter: str) -> tuple[str, str]:
    """The file to write and its format: a known extension decides, else
    the chosen filter does and its extension is added."""
    ext = os.path.splitext(path)[1].lower()
    for fmt, e in EXPORT_EXTENSIONS.items():
        if ext == e or (fmt == "html" and ext == ".htm"):
            return path, fmt
    fmt = next((f for f, flt in EXPORT_FILTERS.items() if flt == chosen_filter), "html")
    return path + EXPORT_EXTENSIONS[fmt], fmt


def write_report(report: CorpusReport, path: str, fmt: str) -> None:
    """Write the service's report in ``fmt`` to ``path`` atomically (a
    failed write leaves the previous file as it was)."""
    write_atomic(path, corpus_report.render(report, fmt))
