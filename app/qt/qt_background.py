"""Plain functions run off the GUI thread, results handed back on it.

For one-off jobs of the window's features (exporting a file, reading an
import, decoding pasted ids): a private one-thread pool, so jobs of one
feature run in order, and a relay whose queued signals deliver each result
to the GUI thread. With ``latest_only`` a job's result is dropped when a
newer job was submitted meanwhile (typing in the decode view).
"""

from __future__ import annotations

from typing import Any, Callable

from PySide6.QtCore import QObject, QThreadPool, Signal

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)


class _Relay(QObject):
    done = Signal(object)
    failed = Signal(object)


class QBackground(QObject):
    """Runs jobs in a worker thread; ``done(result)`` or ``failed(error)`` is
    called on the GUI thread."""

    busyChanged = Signal(bool)

    def __init__(self, parent: QObject | None = None, latest_only: bool = False) -> None:
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(1)
        self._latest_only = latest_only
        self._ticket = 0
        self._pending: dict[int, tuple[Callable[[Any], None], Callable[[BaseException], None]]] = {}
        self._relay = _Relay()
        self._relay.done.connect(self._on_done)
        self._relay.failed.connect(self._on_failed)

    @property
    def busy(self) -> bool:
        return bool(self._pending)

    def submit(self, job: Callable[[], Any], done: Callable[[Any], None],
               failed: Callable[[BaseException], None]) -> None:
        self._ticket += 1
        ticket = self._ticket
        if not self._pending:
            self.busyChanged.emit(True)
        self._pending[ticket] = (done, failed)
        relay = self._relay

        def run() -> None:  # in the worker thread
            try:
                result = job()
            except BaseException as e:  # noqa: BLE001 - reported on the GUI thread, never raised into Qt
                relay.failed.emit((ticket, e))
            else:
                relay.done.emit((ticket, result))

        self._pool.start(run)

    def _take(self, ticket: int) -> tuple[Callable[[Any], None], Callable[[BaseException], None]] | None:
        callbacks = self._pending.pop(ticket, None)
        if not self._pending:
            self.busyChanged.emit(False)
        if callbacks is None or (self._latest_only and ticket != self._ticket):
            return None
        return callbacks

    def _on_done(self, payload: tuple[int, Any]) -> None:
        callbacks = self._take(payload[0])
        if callbacks is not None:
            callbacks[0](payload[1])

    def _on_failed(self, payload: tuple[int, BaseException]) -> None:
        callbacks = self._take(payload[0])
        if callbacks is not None:
            callbacks[1](payload[1])

    def wait(self) -> None:
        """Block until running jobs end (their results still arrive as events)."""
        self._pool.waitForDone()

    def shutdown(self) -> None:
        self._pool.clear()
        self._pool.waitForDone()
        self._pending.clear()
