"""A file or model name that looks like HTML is shown as typed: the status
bar and the message banner never render it as rich text."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from tokenprism.app.qt.qt_status import QMessageBanner, QStatsBar  # noqa: E402

NAME = "<b>x</b>.gguf"


@pytest.fixture(scope="module")
def app() -> QApplication:
    inst = QApplication.instance()
    return inst if isinstance(inst, QApplication) else QApplication([])


def test_banner_shows_markup_as_text(app: QApplication) -> None:
    banner = QMessageBanner()
    banner.show_message(f"{NAME}: not a GGUF file")
    assert banner.label.textFormat() == Qt.TextFormat.PlainText
    assert banner.text == f"{NAME}: not a GGUF file"


def test_status_bar_labels_are_plain_text(app: QApplication) -> None:
    bar = QStatsBar()
    bar.set_model_text(NAME)
    bar.flash(f"opened {NAME}")
    for label in (bar.model_label, bar.busy_label, bar.special_label, bar.time_label):
        assert label.textFormat() == Qt.TextFormat.PlainText, label.text()
    # the counts label holds numbers only; its bold token count is markup, not text shown raw
    assert bar.counts_label.textFormat() == Qt.TextFormat.RichText
    assert "<b>" in bar.model_label.text() and "<b>" in bar.busy_label.text()
