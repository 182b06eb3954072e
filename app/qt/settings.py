"""Persistent settings (QSettings, organization "TokenPrism").

All keys live here so the window never spells a key twice. Settings are
stored in INI format in the user scope on every platform; tests redirect
that location with ``QSettings.setPath`` (or pass their own ``QSettings``)
and never touch the user's real settings.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QByteArray, QSettings

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)

ORGANIZATION = "TokenPrism"
APPLICATION = "TokenPrism"
MAX_RECENT = 10
MAX_SAVED_TEXT = 64 * 1024  # longer texts are not worth restoring at start-up


class AppSettings:
    """Typed access to TokenPrism's settings."""

    def __init__(self, qsettings: QSettings | None = None) -> None:
        self.q = qsettings if qsettings is not None else QSettings(
            QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)

    # ---- helpers -------------------------------------------------------------

    def _bool(self, key: str, default: bool) -> bool:
        v = self.q.value(key, default)
        if isinstance(v, str):  # INI files give strings back
            return v.lower() in ("true", "1", "yes")
        return bool(v)

    def _str(self, key: str, default: str = "") -> str:
        v = self.q.value(key, default)
        return v if isinstance(v, str) else default

    def _bytes(self, key: str) -> QByteArray | None:
        v = self.q.value(key)
        return v if isinstance(v, QByteArray) and not v.isEmpty() else None

    def sync(self) -> None:
        self.q.sync()

    # ---- recent files --------------------------------------------------------

    def recent_files(self) -> list[str]:
        v = self.q.value("recentFiles", [])
        if isinstance(v, str):  # a single entry comes back as a plain string
            v = [v]
        if not isinstance(v, list):
            return []
        return [p for p in v if isinstance(p, str) and p][:MAX_RECENT]

    def add_recent_file(self, path: str) -> list[str]:
        path = os.path.abspath(path)
        files = [p for p in self.recent_files() if p != path]
        files.insert(0, path)
        del files[MAX_RECENT:]
        self.q.setValue("recentFiles", files)
        return files

    def remove_recent_file(self, path: str) -> list[str]:
        files = [p for p in self.recent_files() if p != os.path.abspath(path)]
        self.q.setValue("recentFiles", files)
        return files

    def clear_recent_files(self) -> None:
        self.q.setValue("recentFiles", [])

    # ---- last session ---------------------------------------------------------

    @property
    def last_model(self) -> str:
        return self._str("lastModel")

    @last_model.setter
    def last_model(self, path: str) -> None:
        self.q.setValue("lastModel", path)

    @property
    def last_text(self) -> str | None:
        v = self.q.value("lastText")
        return v if isinstance(v, str) else None

    @last_text.setter
    def last_text(self, text: str) -> None:
        if len(text) <= MAX_SAVED_TEXT:
            self.q.setValue("lastText", text)
        else:
            self.q.remove("lastText")

    def geometry(self) -> QByteArray | None:
        return self._bytes("window/geometry")

    def window_state(self) -> QByteArray | None:
        return self._bytes("window/state")

    def splitter_state(self) -> QByteArray | None:
        return self._bytes("window/splitter")

    def save_window(self, geometry: QByteArray, state: QByteArray, splitter: QByteArray) -> None:
        self.q.setValue("window/geometry", geometry)
        self.q.setValue("window/state", state)
        self.q.setValue("window/splitter", splitter)

    # ---- options -------------------------------------------------------------

    def option(self, name: str, default: bool) -> bool:
        return self._bool(f"options/{name}", default)

    def set_option(self, name: str, value: bool) -> None:
        self.q.setValue(f"options/{name}", value)

    @property
    def id_format(self) -> str:
        v = self._str("options/idFormat", "space")
        return v if v in ("space", "json") else "space"

    @id_format.setter
    def id_format(self, fmt: str) -> None:
        self.q.setValue("options/idFormat", fmt)

    @property
    def current_tab(self) -> int:
        v = self.q.value("window/tab", 0)
        if isinstance(v, (int, str)):
            try:
                return int(v)
            except ValueError:
                pass
        return 0

    @current_tab.setter
    def current_tab(self, index: int) -> None:
        self.q.setValue("window/tab", index)

    # ---- model folders (Models panel, `tokenprism models`) ---------------------------

    def model_folders(self) -> list[str]:
        """Folders the user added to the models scan, in the order added."""
        v = self.q.value("models/folders", [])
        if isinstance(v, str):  # a single entry comes back as a plain string
            v = [v]
        return [p for p in v if isinstance(p, str) and p] if isinstance(v, list) else []

    def add_model_folder(self, path: str) -> list[str]:
        path = os.path.abspath(os.path.expanduser(path))
        folders = self.model_folders()
        if path not in folders:
            folders.append(path)
            self.q.setValue("models/folders", folders)
        return folders

    def remove_model_folder(self, path: str) -> list[str]:
        folders = [p for p in self.model_folders() if p != path]
        self.q.setValue("models/folders", folders)
        return folders

    # ---- corpus profile (View ▸ Corpus Profile) ------------------------------------

    @property
    def corpus_options(self) -> str:
        """The Corpus view's last options, as ``app.logic.corpus_view.options_to_json`` wrote them."""
        return self._str("corpus/options")

    @corpus_options.setter
    def corpus_options(self, text: str) -> None:
        self.q.setValue("corpus/options", text)
