"""Off-GUI-thread work: loading models and live tokenization.

Both controllers run their jobs in a private one-thread ``QThreadPool`` and
report back with queued signals, so the GUI thread only ever receives
finished results. Every job is tagged (a load ticket, or the editor
generation plus the model and options it used) and a result that no longer
matches what the window wants is dropped, so the view always ends up with
the latest text's tokens from the current model and never a mix.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Callable

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from tokenprism.core import GGUFError, open_model
from tokenprism.core.incremental import changed_chars

from ..logic import disposal
from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import INCREMENTAL_MIN, Analysis, ModelInfo, normalized_view, tokenize
from ..logic.pieces import readable

DEBOUNCE_MS = 30
FAST_JOB_MS = 40.0  # after a job this quick, the next one starts without debounce
PROGRESS_INTERVAL_S = 0.1

# Retokenizing inline, on the GUI thread, blocks typing for as long as it
# takes, so it is allowed only when THIS job is estimated to be cheap: the
# time of the last job says nothing about the next one (a paste after a
# keystroke), only the sizes involved do. An incremental step costs about
# the length of the whole text at the splice rate (it copies and shifts
# the token arrays) plus the re-encoded characters (the edit and some
# context around it) at the model's encode rate; both rates are measured
# per model on the jobs it ran. A job is inline when that estimate, and
# also its worst case (a re-encode of the whole text, which the incremental
# step falls back to next to unknown tokens), stay within budget.
INLINE_BUDGET_MS = 4.0
"""Estimated cost of an inline job at most."""
INLINE_WORST_MS = 16.0
"""Estimated cost of a whole-text encode (the fallback) at most."""
INLINE_MAX_EDIT = 200
"""More changed characters than this (a paste) always go to the worker."""
RATE_MIN_CHARS = 200
"""Whole encodes of shorter texts do not tell the encode rate."""
RATE_PROBE_CHARS = 4096
"""Characters encoded again after a model's first job, to measure its rate warm."""
INLINE_CONTEXT = 256
"""Characters around an edit that an incremental step re-encodes, about."""
SPLICE_CHARS_PER_MS = 2_000.0
"""Text characters per ms of an incremental step until one was measured
(measured on llama-spm: 4-5k on a loaded machine; this errs on the safe side)."""


class _Relay(QObject):
    """Carries results from a worker thread to the GUI thread (its signals
    are emitted in the worker and delivered queued)."""

    done = Signal(object)
    failed = Signal(object)


def describe_load_error(path: str, error: BaseException) -> str:
    """One readable sentence about why ``path`` could not be opened."""
    name = _clean(os.path.basename(path) or path)
    if isinstance(error, GGUFError):
        where = []
        if error.offset is not None:
            where.append(f"at byte {error.offset:,}")
        if error.field:  # a key name read from a broken file may hold anything
            where.append(f"in {_clean(error.field)}")
        return f"Cannot open “{name}”: {_clean(error.reason)}" + (f" ({', '.join(where)})" if where else "") + "."
    if isinstance(error, FileNotFoundError):
        return f"Cannot open “{name}”: the file does not exist."
    if isinstance(error, IsADirectoryError):
        return f"Cannot open “{name}”: it is a folder, not a GGUF file."
    if isinstance(error, PermissionError):
        return f"Cannot open “{name}”: permission denied."
    if isinstance(error, OSError):
        return f"Cannot open “{name}”: {_clean(str(error.strerror or error))}."
    if isinstance(error, MemoryError):
        return f"Cannot open “{name}”: not enough memory."
    # a bug in a tokenizer plugin must not take the app down either
    return f"Cannot open “{name}”: unexpected {type(error).__name__}: {_clean(str(error))}"


def _clean(text: str, limit: int = 120) -> str:
    """Printable, bounded text for messages."""
    # readable() never shortens a text, so what is shown lies in its first
    # limit + 1 characters: a key name misread from a damaged file can be
    # megabytes (a second of work per message when escaped whole)
    text = readable(text[:limit + 1], visible_spaces=False)
    return text if len(text) <= limit else text[:limit] + "…"


class ModelLoader(QObject):
    """Opens GGUF files in a worker thread, newest request wins."""

    loaded = Signal(object)
    """A :class:`ModelInfo`."""
    failed = Signal(str, str)
    """(path, message)"""
    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._ticket = 0
        self._pending = 0
        self._relay = _Relay()
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)

    @property
    def busy(self) -> bool:
        return self._pending > 0

    def load(self, path: str) -> None:
        """Start opening ``path``; a later call supersedes this one."""
        self._ticket += 1
        ticket = self._ticket
        self._pending += 1
        if self._pending == 1:
            self.busyChanged.emit(True)
        relay = self._relay

        def job() -> None:  # runs in the worker thread
            try:
                info = ModelInfo(open_model(path))
            except BaseException as e:  # noqa: BLE001 - reported, never raised into Qt
                relay.failed.emit((ticket, path, describe_load_error(path, e)))
            else:
                relay.done.emit((ticket, path, info))

        self._pool.start(job)

    def _finish(self) -> None:
        self._pending -= 1
        if self._pending == 0:
            self.busyChanged.emit(False)

    def _on_done(self, payload: tuple[int, str, ModelInfo]) -> None:
        ticket, _path, info = payload
        self._finish()
        if ticket == self._ticket:
            self.loaded.emit(info)

    def _on_failed(self, payload: tuple[int, str, str]) -> None:
        ticket, path, message = payload
        self._finish()
        if ticket == self._ticket:
            self.failed.emit(path, message)

    def shutdown(self) -> None:
        self._pool.clear()
        self._pool.waitForDone()


@dataclass(frozen=True)
class Job:
    """What one tokenization used; its result is shown only if all still hold."""

    info: ModelInfo
    generation: int
    add_special: bool
    parse_special: bool


def warm_encode_rate(job: Job, text: str) -> float | None:
    """Characters per ms of encoding the start of ``text`` (at most
    ``RATE_PROBE_CHARS``) with the job's model once more; ``None`` for a
    text too short to tell, or an encode that failed."""
    sample = text[:RATE_PROBE_CHARS]
    if len(sample) < RATE_MIN_CHARS:
        return None
    t0 = time.perf_counter()
    try:
        job.info.model.encode(sample, add_special=job.add_special, parse_special=job.parse_special)
    except Exception:  # noqa: BLE001 - the job's own result stands; this was only a measurement
        return None
    ms = (time.perf_counter() - t0) * 1000.0
    return len(sample) / ms if ms > 0 else None


class _JobRelay(_Relay):
    progress = Signal(object)
    cancelled = Signal(object)


class LiveTokenizer(QObject):
    """Retokenizes the editor text after every change.

    A change starts a job at once when the last one was quick, else after a
    short debounce. While a job runs, further changes only mark the text
    dirty and the next job starts when the running one ends, so at most one
    job runs and one waits, whatever the typing speed. A job retokenizes
    only the edited part of the last finished result of the same model and
    options (``incremental``); a huge change is tokenized in pieces with
    ``progress`` reports and can be cancelled, which pauses live
    tokenization until ``resume``.
    """

    resultReady = Signal(object)
    """An :class:`Analysis` of the current text by the current model."""
    failed = Signal(str)
    busyChanged = Signal(bool)
    progress = Signal(int, int)
    """(characters done, characters in all) of a huge text being tokenized."""
    cancelled = Signal()
    """The running job was cancelled (live tokenization is paused)."""

    def __init__(self, text_source: Callable[[], str], parent: QObject | None = None,
                 debounce_ms: int = DEBOUNCE_MS) -> None:
        super().__init__(parent)
        self._text_source = text_source
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self._start)
        self._relay = _JobRelay()
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)
        self._relay.progress.connect(self._on_progress)
        self._relay.cancelled.connect(self._on_cancelled)
        self._info: ModelInfo | None = None
        self._generation = 0
        self._running: Job | None = None
        self._cancel = threading.Event()
        self._paused = False
        self._base: Analysis | None = None
        self._last_ms = 0.0
        self._encode_rate: float | None = None  # characters per ms of a whole encode, this model
        self._splice_rate = SPLICE_CHARS_PER_MS  # text characters per ms of an incremental step
        self.want_normalized = False
        """Also make each result's normalized text (``Analysis.extra["normalized"]``;
        set while a view shows it)."""
        self.inline_jobs = 0
        """Jobs run inline on the GUI thread so far (for tests)."""
        self.add_special = False
        self.parse_special = False
        self.incremental = True
        """Retokenize only what an edit changed (off: every job encodes the whole text)."""
        self.last_result: Analysis | None = None

    # ---- inputs ---------------------------------------------------------------

    @property
    def generation(self) -> int:
        """Bumped by every change of text, model or options."""
        return self._generation

    @property
    def model(self) -> ModelInfo | None:
        return self._info

    @property
    def busy(self) -> bool:
        return self._running is not None or self._timer.isActive()

    @property
    def paused(self) -> bool:
        """True after a cancel, until :meth:`resume` (or a new model or options)."""
        return self._paused

    def set_model(self, info: ModelInfo | None) -> None:
        self._info = info
        self._encode_rate = None
        self._splice_rate = SPLICE_CHARS_PER_MS
        disposal.retire(self._base, None)
        self.last_result = None
        self._base = None
        self._paused = False
        self._invalidate(immediate=True)

    def set_options(self, add_special: bool, parse_special: bool) -> None:
        if (add_special, parse_special) == (self.add_special, self.parse_special):
            return
        self.add_special = add_special
        self.parse_special = parse_special
        self._paused = False
        self._invalidate(immediate=True)

    def text_changed(self) -> None:
        """The editor text changed: tokenize again (soon)."""
        # the debounce only pays off when jobs are slow (a longer debounce
        # set on purpose is kept)
        quick = self._timer.interval() <= DEBOUNCE_MS
        if quick and self._run_inline():
            return
        self._invalidate(immediate=quick and self._last_ms < FAST_JOB_MS)

    def _run_inline(self) -> bool:
        """Retokenize right here when the change is a small edit of the last
        result that is estimated to take a few milliseconds (see
        ``INLINE_BUDGET_MS``): the result is then on screen with the typed
        character, in its first repaint, without a round trip through the
        worker (or a second repaint). False when the job belongs in the
        worker."""
        if self._paused or self._running is not None or self._timer.isActive():
            return False
        self._generation += 1
        job = self._current_job()
        base = self._base_for(job) if job is not None else None
        if job is None or base is None or len(base.text) < INCREMENTAL_MIN:
            # decided without the text: reading a 10 MB document costs the
            # GUI thread ~60 ms, and the worker job reads it again anyway
            self._generation -= 1
            return False
        text = self._text_source()
        if not self.inline_ok(base, text):
            self._generation -= 1
            return False
        self._running = job
        self.inline_jobs += 1
        self.busyChanged.emit(True)
        try:
            result = tokenize(job.info, text, job.generation, job.add_special, job.parse_special, base)
        except BaseException as e:  # noqa: BLE001 - a plugin bug is reported, not raised
            self._on_failed((job, f"{type(e).__name__}: {e}"))
            return True
        assert result is not None
        self._on_done((job, result))
        return True

    def inline_cost_ms(self, base: Analysis, text: str, edit: int = -1) -> tuple[float, float] | None:
        """(estimated ms of retokenizing ``text`` from ``base``, estimated ms
        of encoding it whole), or None before the model's encode rate is known.
        ``edit`` is ``changed_chars(base.text, text)`` when already known."""
        rate = self._encode_rate
        if rate is None:
            return None
        if edit < 0:
            edit = changed_chars(base.text, text)
        return (len(text) / self._splice_rate + (edit + INLINE_CONTEXT) / rate, len(text) / rate)

    def inline_ok(self, base: Analysis, text: str) -> bool:
        """May the step from ``base`` to ``text`` run on the GUI thread?"""
        if abs(len(text) - len(base.text)) > INLINE_MAX_EDIT:
            return False  # quick size check first: a paste
        if self.want_normalized and base.model.config.normalizes:
            return False  # its normalized text is made in the worker, with the tokens
        edit = changed_chars(base.text, text)
        if edit > INLINE_MAX_EDIT:
            return False
        cost = self.inline_cost_ms(base, text, edit)
        if cost is None:
            return False
        return cost[0] <= INLINE_BUDGET_MS and cost[1] <= INLINE_WORST_MS

    def _measure(self, result: Analysis) -> None:
        """Learn the model's rates from a finished job (see ``INLINE_BUDGET_MS``)."""
        st = result.stats
        whole = result.extra.get("whole")
        warm = result.extra.get("encode_rate")
        if isinstance(warm, float):
            self._encode_rate = warm
        # (a short text's rate is dominated by fixed costs: too low, which errs on the safe side)
        elif whole and st.chars >= RATE_MIN_CHARS and st.encode_ms > 0:
            self._encode_rate = st.chars / st.encode_ms
        elif whole is False and st.total_ms > 0:
            self._splice_rate = max(st.chars / st.total_ms, 1.0)

    def refresh(self) -> None:
        self._paused = False
        self._invalidate(immediate=True)

    def resume(self) -> None:
        """Tokenize again after a cancel."""
        self.refresh()

    def cancel(self) -> bool:
        """Stop tokenizing: the running job ends at its next piece and live
        tokenization pauses until :meth:`resume`. False if nothing ran."""
        was_busy = self.busy
        self._timer.stop()
        if self._running is not None:
            self._cancel.set()
        if was_busy:
            self._paused = True
            if self._running is None:
                self.busyChanged.emit(False)
                self.cancelled.emit()
        return was_busy

    def _invalidate(self, immediate: bool) -> None:
        self._generation += 1
        if not self._paused:
            self._timer.start(0 if immediate else self._timer.interval())

    # ---- jobs -------------------------------------------------------------------

    def _current_job(self) -> Job | None:
        if self._info is None:
            return None
        return Job(self._info, self._generation, self.add_special, self.parse_special)

    def _is_current(self, job: Job) -> bool:
        return job == self._current_job()

    def _base_for(self, job: Job) -> Analysis | None:
        b = self._base
        if (not self.incremental or b is None or b.info is not job.info
                or b.encoding.add_special != job.add_special or b.encoding.parse_special != job.parse_special):
            return None
        return b

    def _start(self) -> None:
        if self._running is not None or self._paused:
            return  # _on_done starts the next job
        job = self._current_job()
        if job is None:
            return
        text = self._text_source()
        base = self._base_for(job)
        self._running = job
        self._cancel = cancel = threading.Event()
        self.busyChanged.emit(True)
        relay = self._relay
        last = [0.0]
        want_normalized = self.want_normalized
        # The model's first encode builds its tables on first use: its rate
        # is no guide to the next (llama-spm: 122 characters/ms, where a
        # warm encode does thousands), and with it no keystroke in a text
        # of 2 000 characters or more was ever estimated cheap enough to run
        # inline. So the first job measures the rate again, warm (its word
        # caches warm too, as they are for the words around a keystroke).
        probe = self._encode_rate is None

        def report(done: int, total: int) -> bool:  # worker thread
            now = time.monotonic()
            if now - last[0] >= PROGRESS_INTERVAL_S or done >= total:
                last[0] = now
                relay.progress.emit((job, done, total))
            return not cancel.is_set()

        def work() -> None:  # runs in the worker thread
            try:
                result = tokenize(job.info, text, job.generation, job.add_special, job.parse_special,
                                  base, report)
            except BaseException as e:  # noqa: BLE001 - a plugin bug is reported, not raised
                relay.failed.emit((job, f"{type(e).__name__}: {e}"))
            else:
                if result is None:
                    relay.cancelled.emit(job)
                    return
                if probe:
                    result.extra["encode_rate"] = warm_encode_rate(job, text)
                if want_normalized:
                    try:  # what a normalizing model sees, for its own view
                        result.extra["normalized"] = normalized_view(result)
                    except Exception:  # noqa: BLE001 - the tokens still show
                        result.extra["normalized"] = None
                relay.done.emit((job, result))

        self._pool.start(work)

    def _next(self, job: Job) -> bool:
        """Start the next job if the finished one is stale; True if nothing waits."""
        self._running = None
        if self._is_current(job):
            return True
        if self._current_job() is None or self._paused:  # the model went away meanwhile
            self.busyChanged.emit(False)
            return False
        if not self._timer.isActive():
            self._start()
        return False

    def _on_done(self, payload: tuple[Job, Analysis]) -> None:
        job, result = payload
        self._last_ms = result.stats.total_ms
        if job.info is self._info:
            self._measure(result)
        if job.info is self._info and (job.add_special, job.parse_special) == (self.add_special,
                                                                                self.parse_special):
            disposal.retire(self._base, result)  # (one never shown is dropped here)
            self._base = result  # a stale result still saves work for the next job
        if self._next(job):
            self._paused = False
            self.last_result = result
            self.busyChanged.emit(False)
            self.resultReady.emit(result)

    def _on_progress(self, payload: tuple[Job, int, int]) -> None:
        job, done, total = payload
        if job is self._running:
            self.progress.emit(done, total)

    def _on_cancelled(self, job: Job) -> None:
        self._running = None
        self.busyChanged.emit(False)
        if self._paused:
            self.cancelled.emit()
        elif not self._timer.isActive():
            self._start()

    def _on_failed(self, payload: tuple[Job, str]) -> None:
        job, message = payload
        if self._next(job):
            self.busyChanged.emit(False)
            self.failed.emit(f"The {job.info.kind} tokenizer failed: {message}")

    def shutdown(self) -> None:
        self._timer.stop()
        self._info = None
        self._cancel.set()
        self._pool.clear()
        self._pool.waitForDone()
