"""What the window says about itself: the welcome text, the model's name
in the title and the status bar (issue: the demo's title said "(SPM)"
twice, the status bar cut the name mid-word)."""

from __future__ import annotations

from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from tests.app.conftest import open_model_in


def test_welcome_text_says_where_the_ids_are() -> None:
    from tokenprism.app.logic.demo import welcome_text

    first = welcome_text().split("\n\n")[0]
    assert "shown with its id" not in first  # the editor shows boxes, not ids
    assert "Tokens table" in first and "Chips" in first


def test_demo_title_and_status_say_the_kind_once(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.app.logic.demo import demo_models

    open_model_in(qtbot, window, str(demo_models()["spm"]))
    name = window.model_info.name
    assert "SPM" in name
    assert window.windowTitle().count("SPM") == name.count("SPM")
    assert window.stats.model_label.full_text() == name


def test_says_kind_needs_a_whole_word() -> None:
    from tokenprism.app.qt.qt_status import labelled, says_kind, titled

    assert says_kind("TokenPrism demo SPM (SentencePiece BPE)", "SPM")
    assert says_kind("gpt2 bpe tokenizer", "BPE")
    assert says_kind("Demo (SPM)", "SPM") and says_kind("x [bpe], y", "BPE")
    for other in ("SPMX model", "llama-spm", "my_spm_model", "spm2"):
        assert not says_kind(other, "SPM")
    assert titled("LLaMA v2", "SPM") == "LLaMA v2 (SPM)" and labelled("LLaMA v2", "SPM") == "LLaMA v2 · SPM"


def test_elide_words_cuts_after_a_whole_word_with_an_ellipsis(qtbot) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.app.qt.qt_status import elide_words

    fm = QFontMetrics(QApplication.font())
    text = "TokenPrism demo SPM (SentencePiece BPE, byte fallback)"
    words = set(text.replace("(", " ").replace(")", " ").replace(",", " ").split())
    for width in range(fm.horizontalAdvance("0") * 3, fm.horizontalAdvance(text) + 5, 7):
        got = elide_words(text, fm, width)
        assert fm.horizontalAdvance(got) <= max(width, fm.horizontalAdvance("…"))
        if got == text:
            continue
        assert got.endswith("…")
        head = got[:-1]
        last = head.replace("(", " ").split()[-1] if head.split() else ""
        if " " in head:  # past the first word: only whole words are kept
            assert last.rstrip(",") in words, (width, got)
    assert elide_words("a_forty_character_hash_without_spaces_00.gguf", fm, fm.horizontalAdvance("0") * 10).endswith("…")


def test_status_bar_label_never_clips_the_name(window, qtbot) -> None:  # type: ignore[no-untyped-def]
    """Narrow windows shorten the model's name at a word, with "…", the
    kind and the full name (tooltip) kept."""
    from tokenprism.app.logic.demo import demo_models

    open_model_in(qtbot, window, str(demo_models()["spm"]))
    label = window.stats.model_label
    full = label.full_text()
    for width in (1100, 800, 640, 520):
        window.resize(width, 600)
        qtbot.waitUntil(lambda w=width: window.width() <= w + 1)
        QApplication.processEvents()
        shown = label.text()
        fm = label.fontMetrics()
        assert fm.horizontalAdvance(shown) <= label.contentsRect().width() + 1, (width, shown)
        assert shown == full or shown.endswith("…"), shown
        assert label.toolTip().startswith(full)
        window.statusBar().grab().save(f"/tmp/shots/status_{width}.png")
