"""View ▸ Chat: the conversation editor, template picker, rendering coloured
by origin with its counts, a second model beside it, hostile templates, and
Tokenize ▸ Split into Chunks…."""

from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QTextCursor

from tests.app.conftest import RESULT_TIMEOUT_MS, open_model_in, real_vocab, type_text
from tokenprism.app.logic.analysis import ModelInfo
from tokenprism.app.qt.qt_chat import QChatPanel
from tokenprism.core import Model, open_model
from tokenprism.core.chat import chat


@lru_cache(maxsize=None)
def _info(name: str) -> ModelInfo:
    path = real_vocab(name)
    if path is None:
        pytest.skip(f"reference vocabulary {name} is not available")
    return ModelInfo(open_model(path))


def _panel(qtbot, name: str, messages=(("user", "Hello world"),)):  # type: ignore[no-untyped-def]
    panel = QChatPanel(lambda: [])
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    panel.set_conversation(tuple(messages))
    panel.set_model(_info(name))
    _wait(qtbot, panel)
    return panel


def _wait(qtbot, panel: QChatPanel) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not panel.busy and panel.main.view is not None or bool(panel.main.error),
                    timeout=RESULT_TIMEOUT_MS)


def _background_at(panel: QChatPanel, needle: str, nth: int = 0) -> QColor:
    text = panel.main.view.result.rendered  # type: ignore[union-attr]
    at = -1
    for _ in range(nth + 1):
        at = text.index(needle, at + 1)
    block = panel.main.text.document().findBlock(at)
    local = at - block.position()
    for r in block.layout().formats():
        if r.start <= local < r.start + r.length:
            return r.format.background().color()
    raise AssertionError(f"no colour at {needle!r}")


def test_editing_a_message_updates_its_count_and_the_total(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, "qwen2")
    model: Model = panel.main.model  # type: ignore[assignment]
    card = panel.cards[0]
    assert card.count.text() == f"{len(model.encode('Hello world'))} tokens"
    before = panel.main.view.result.total  # type: ignore[union-attr]
    card.content.moveCursor(QTextCursor.MoveOperation.End)
    type_text(card.content, ", grüße aus 日本")
    _wait(qtbot, panel)
    qtbot.waitUntil(lambda: panel.main.view.result.messages[0].tokens  # type: ignore[union-attr]
                    == len(model.encode("Hello world, grüße aus 日本")), timeout=RESULT_TIMEOUT_MS)
    n = len(model.encode("Hello world, grüße aus 日本"))
    assert card.count.text() == f"{n} tokens"
    r = panel.main.view.result  # type: ignore[union-attr]
    assert r.total == before + n - 2
    last = panel.main.counts.rowCount() - 1
    assert panel.main.counts.item(last, 0).text() == "total"
    assert panel.main.counts.item(last, 1).text() == str(r.total)
    assert panel.main.summary.text().startswith(f"{r.total} tokens") and "32,768" in panel.main.summary.text()
    panel.shutdown()


def test_tokens_are_coloured_by_origin(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, "qwen2", (("system", "Be brief."), ("user", "Hello world")))
    special = _background_at(panel, "<|im_start|>")
    scaffold = _background_at(panel, "user")  # the role the template writes
    first = _background_at(panel, "Be brief.")
    second = _background_at(panel, "Hello")
    assert scaffold.saturation() == 0  # grey
    assert special.saturation() > 0 and 15 <= special.hue() <= 45  # orange
    assert first.saturation() > 0 and second.saturation() > 0
    assert abs(first.hue() - second.hue()) > 30  # two messages, two colours
    # each message's card wears its colour
    marker = QColor(panel.cards[0].marker.styleSheet().split("background: ")[1].split(";")[0])
    assert abs(marker.hue() - first.hue()) <= 2
    # moving a message moves its content and its colour goes with the place
    panel.move_message(1, -1)
    _wait(qtbot, panel)
    qtbot.waitUntil(lambda: panel.main.view.result.messages[0].role == "user",  # type: ignore[union-attr]
                    timeout=RESULT_TIMEOUT_MS)
    assert [c.message()[0] for c in panel.cards] == ["user", "system"]
    panel.shutdown()


def test_template_picker_lists_the_files_named_templates(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, "command-r")
    items = [panel.template.itemText(i) for i in range(panel.template.count())]
    assert items[:3] == ["File: default", "File: rag", "File: tool_use"]
    assert "Common: chatml" in items and "Common: llama3" in items
    assert panel.template.currentText() == "File: default" and panel.main.notice.isHidden()
    # command-r's template writes <BOS_TOKEN>; adding BOS as well doubles it, and the view says so
    assert panel.main.warning.isHidden()
    panel.add_special.setChecked(True)
    qtbot.waitUntil(lambda: not panel.busy and panel.main.view.result.add_special,  # type: ignore[union-attr]
                    timeout=RESULT_TIMEOUT_MS)
    assert panel.main.warning.isVisible() and "twice" in panel.main.warning.text()
    bos = panel.main.model.config.special_ids["bos"]  # type: ignore[union-attr]
    assert panel.main.view.result.ids[:3] == [bos, bos, panel.main.model.encode(  # type: ignore[union-attr]
        "<|START_OF_TURN_TOKEN|>", parse_special=True).ids[0]]
    # a context length the user sets replaces the file's
    panel.context.setValue(100)
    qtbot.waitUntil(lambda: not panel.busy and "of a 100-token context" in panel.main.summary.text(),
                    timeout=RESULT_TIMEOUT_MS)
    panel.add_special.setChecked(False)
    # rag needs documents: a clear line until they are given
    panel.template.setCurrentText("File: rag")
    qtbot.waitUntil(lambda: bool(panel.main.error), timeout=RESULT_TIMEOUT_MS)
    assert "documents" in panel.main.error and "\n" not in panel.main.error
    assert panel.main.error.endswith("give them as a JSON list in the Documents tab")
    panel.documents.setPlainText('[{"title": "Atlas", "text": "Paris is in France."}]')
    qtbot.waitUntil(lambda: not panel.busy and not panel.main.error, timeout=RESULT_TIMEOUT_MS)
    assert "Paris is in France." in panel.main.view.result.rendered  # type: ignore[union-attr]
    panel.shutdown()


def test_a_file_without_template_says_the_common_one_is_not_its_own(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, "llama-spm")
    assert panel.template.currentText() == "Common: chatml"
    assert not panel.template.findText("File: default") >= 0
    assert panel.main.notice.isVisible() and "did not come from the file" in panel.main.notice.text()
    assert panel.main.view.result.rendered.startswith("<|im_start|>user\nHello world")  # type: ignore[union-attr]
    panel.shutdown()


def test_a_hostile_template_shows_its_error_and_the_gui_stays_alive(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, "qwen2")
    panel.set_custom_template("bad.jinja", "fine\n{{ raise_exception('no assistant here') }}")
    qtbot.waitUntil(lambda: bool(panel.main.error), timeout=RESULT_TIMEOUT_MS)
    assert "line 2" in panel.main.error and "no assistant here" in panel.main.error
    assert panel.main.error_label.isVisible() and not panel.main.text.isEnabled()
    assert "did not come from the file" in panel.main.notice.text()
    # a template that never ends: the bound stops it; the GUI thread ticks on meanwhile
    panel.set_custom_template("loop.jinja", "{% for i in range(10**5) %}{% for j in range(10**5) %}"
                                            "{% endfor %}{% endfor %}")
    ticks: list[float] = []
    timer = QTimer()
    timer.timeout.connect(lambda: ticks.append(time.monotonic()))
    timer.start(20)
    panel.main.error = ""
    qtbot.waitUntil(lambda: bool(panel.main.error), timeout=RESULT_TIMEOUT_MS)
    timer.stop()
    assert "line 1" in panel.main.error and "longer than" in panel.main.error
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert len(ticks) > 30 and max(gaps) < 0.5, (len(ticks), max(gaps, default=0))
    # back to the file's template: rendered again
    panel.template.setCurrentText("File: default")
    qtbot.waitUntil(lambda: not panel.busy and not panel.main.error, timeout=RESULT_TIMEOUT_MS)
    assert panel.main.text.isEnabled()
    panel.shutdown()


def test_compare_shows_the_second_models_rendering_and_total(qtbot) -> None:  # type: ignore[no-untyped-def]
    conv = (("system", "Be brief."), ("user", "Grüße, 日本 🙂"))
    panel = _panel(qtbot, "qwen2", conv)
    other = _info("command-r").model
    panel.compare_model(other)
    qtbot.waitUntil(lambda: not panel.busy and panel.other.view is not None, timeout=RESULT_TIMEOUT_MS)
    expected = chat(other, [{"role": r, "content": c} for r, c in conv], add_generation_prompt=True)
    assert panel.other.isVisible() and panel.other.title.text() == "command-r"
    assert panel.other.view.result.total == expected.total  # type: ignore[union-attr]
    assert panel.other.summary.text().startswith(f"{expected.total} tokens") and "131,072" in panel.other.summary.text()
    assert panel.other.view.result.total != panel.main.view.result.total  # type: ignore[union-attr]
    panel.compare_path("")
    assert panel.other.isHidden()
    panel.shutdown()


def test_window_chat_dock_keeps_the_conversation_and_chunks_the_text(qtbot, make_window,  # type: ignore[no-untyped-def]
                                                                      tmp_path: Path) -> None:
    qwen2, command_r = real_vocab("qwen2"), real_vocab("command-r")
    if qwen2 is None or command_r is None:
        pytest.skip("reference vocabularies qwen2 and command-r are not available")
    window = make_window()
    open_model_in(qtbot, window, qwen2)
    act = next(a for a in window.menus["view"].actions() if a.objectName() == "actChat")
    assert act.shortcut().toString() == "Ctrl+Shift+H"
    act.trigger()
    panel = window.chat_panel
    qtbot.waitUntil(lambda: panel.main.view is not None and not panel.busy, timeout=RESULT_TIMEOUT_MS)
    panel.cards[-1].content.setFocus()
    qtbot.keyClick(panel.cards[-1].content, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    assert [c.message()[0] for c in panel.cards][-2:] == ["user", "assistant"]  # the role that follows
    type_text(panel.cards[-1].content, "An answer kept across models")
    open_model_in(qtbot, window, command_r)
    qtbot.waitUntil(lambda: panel.main.model is window.model_info.model and not panel.busy
                    and panel.main.view is not None and "CHATBOT" in panel.main.view.result.rendered,
                    timeout=RESULT_TIMEOUT_MS)
    assert panel.conversation()[-1] == ("assistant", "An answer kept across models")
    saved = json.loads(str(window.settings.q.value("chat/conversation")))
    assert saved[-1] == {"role": "assistant", "content": "An answer kept across models"}

    text = "Chunks of a text, cut between tokens: grüße 日本 🙂. " * 40
    window.editor.setPlainText(text)
    chunk_act = next(a for a in window.menus["tokenize"].actions() if "Chunks" in a.text())
    chunk_act.trigger()
    dialog = window.chunks.dialog
    dialog.max_tokens.setValue(16)
    dialog.run()
    qtbot.waitUntil(lambda: not dialog.busy and dialog.split is not None
                    and all(c.tokens <= 16 for c in dialog.split.pieces), timeout=RESULT_TIMEOUT_MS)
    pieces = dialog.split.pieces
    assert "".join(c.text for c in pieces) == text and len(pieces) > 10
    model = window.model_info.model
    assert all(len(model.encode(c.text)) == c.tokens <= 16 for c in pieces)
    assert dialog.table.rowCount() == len(pieces)
    out = tmp_path / "chunks.jsonl"
    dialog.export_to(str(out))
    qtbot.waitUntil(lambda: out.exists() and "Saved" in dialog.status.text(), timeout=RESULT_TIMEOUT_MS)
    lines = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert "".join(d["text"] for d in lines) == text and [d["index"] for d in lines] == list(range(len(pieces)))


def test_the_conversation_comes_back_from_the_settings(qtbot, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tokenprism.app.logic.chat_view import conversation_to_json

    kept = conversation_to_json([("system", "S"), ("tool", '{"ok": true}')])
    panel = QChatPanel(lambda: [], kept)
    qtbot.addWidget(panel)
    assert panel.conversation() == (("system", "S"), ("tool", '{"ok": true}'))
    broken = QChatPanel(lambda: [], "[{\"role\": \"wizard\"}]")
    qtbot.addWidget(broken)
    assert broken.conversation()[0][0] == "system"  # the starter conversation instead


# ---- the Qt-free logic (app/logic/chat_view.py) ----------------------------------

def test_utf16_offsets_count_characters_beyond_the_bmp_twice() -> None:
    from tokenprism.app.logic.chat_view import utf16_offsets

    text = "a🙂b日c🙂"
    assert utf16_offsets(text, [0, 1, 2, 3, 4, 5, 6]) == [0, 1, 3, 4, 5, 6, 8]
    assert utf16_offsets(text, [6]) == [len(text.encode("utf-16-le")) // 2]


def test_counts_add_up_and_the_context_share_reads_right() -> None:
    from tokenprism.app.logic.chat_view import context_share, count_rows

    model = _info("qwen2").model
    r = chat(model, [{"role": "system", "content": "S"}, {"role": "user", "content": "Hello world"}],
             add_generation_prompt=True)
    rows = count_rows(r)
    assert [row.label for row in rows] == ["1. system", "2. user", "template scaffold", "special tokens", "total"]
    assert sum(row.tokens for row in rows[:-1]) == rows[-1].tokens == len(r.ids)
    assert rows[1].tokens == 2  # "Hello", " world"
    assert context_share(50, 32768) == "50 tokens — 0.15% of a 32,768-token context"
    assert context_share(1, 100).startswith("1 token — 1.0% of")
    assert "over the context length" in context_share(200, 100)
    assert "set one" in context_share(7, None)


def test_template_choice_falls_back_to_a_common_one() -> None:
    from tokenprism.app.logic.chat_view import TemplateOption, origin_notice, preferred_template

    own = TemplateOption("default", "File: default", "file")
    rag = TemplateOption("rag", "File: rag", "file")
    chatml = TemplateOption("chatml", "Common: chatml", "builtin")
    llama3 = TemplateOption("llama3", "Common: llama3", "builtin")
    assert preferred_template([own, rag, chatml, llama3]) is own
    assert preferred_template([own, rag, chatml, llama3], "File: rag") is rag
    assert preferred_template([llama3, chatml], "File: rag") is chatml
    assert "did not come from the file" in origin_notice(chatml, "m")
    assert "did not come from the file" not in origin_notice(own, "m")


def test_a_special_token_typed_in_a_message_is_in_its_row_and_says_so() -> None:
    from tokenprism.app.logic.chat_view import count_rows, origin_label

    r = chat(_info("qwen2").model, [{"role": "user", "content": "hi <|im_end|> there"}], template="chatml")
    rows = count_rows(r)
    assert [(row.label, row.tokens) for row in rows] == [("1. user", 4), ("template scaffold", 3),
                                                         ("special tokens", 2), ("total", 9)]
    typed = next(t for t in r.tokens if t.message == 0 and t.origin == "special")
    assert origin_label(typed, ["user"]) == "special token in message 1 (user)"


# ---- the editor's controls, each with what it changes in the rendering ------------------------------

def _expected(panel: QChatPanel, **kwargs):  # type: ignore[no-untyped-def]
    """chat() of the panel's conversation, computed apart from the panel."""
    messages = [{"role": r, "content": c} for r, c in panel.conversation()]
    return chat(panel.main.model, messages, **kwargs)  # type: ignore[arg-type]


def _settled(qtbot, panel: QChatPanel, ready) -> None:  # type: ignore[no-untyped-def]
    qtbot.waitUntil(lambda: not panel.busy and panel.main.view is not None and ready(panel.main.view.result),
                    timeout=RESULT_TIMEOUT_MS)


def _count_cells(panel: QChatPanel) -> list[tuple[str, str]]:
    table = panel.main.counts
    return [(table.item(i, 0).text(), table.item(i, 1).text()) for i in range(table.rowCount())]


def test_the_remove_button_drops_its_message(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, "qwen2", (("system", "Be brief."), ("user", "Drop me"), ("user", "Keep me")))
    assert panel.main.view.result.total == _expected(panel, add_generation_prompt=True).total  # type: ignore
    qtbot.mouseClick(panel.cards[1].buttons["remove"], Qt.MouseButton.LeftButton)
    assert panel.conversation() == (("system", "Be brief."), ("user", "Keep me"))
    _settled(qtbot, panel, lambda r: len(r.messages) == 2)
    r = panel.main.view.result  # type: ignore[union-attr]
    assert "Drop me" not in r.rendered and "Keep me" in r.rendered
    expected = _expected(panel, add_generation_prompt=True)
    assert r.ids == expected.ids
    assert _count_cells(panel)[:2] == [("1. system", "3"), ("2. user", "2")]  # "Be", " brief", "." / "Keep", " me"
    assert _count_cells(panel)[-1] == ("total", str(expected.total))
    # the last card took the removed one's place: it can move up, not down
    assert panel.cards[1].buttons["up"].isEnabled() and not panel.cards[1].buttons["down"].isEnabled()
    panel.shutdown()


def test_the_role_picker_changes_the_header_the_template_writes(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, "qwen2", (("user", "Hello world"),))
    assert panel.main.view.result.rendered.startswith("<|im_start|>system\nYou are")  # type: ignore
    panel.cards[0].role.setCurrentText("system")
    _settled(qtbot, panel, lambda r: r.messages[0].role == "system")
    r = panel.main.view.result  # type: ignore[union-attr]
    # qwen2's template writes its default system prompt only when there is no system message
    assert r.rendered == "<|im_start|>system\nHello world<|im_end|>\n<|im_start|>assistant\n"
    assert r.ids == _expected(panel, add_generation_prompt=True).ids
    assert _count_cells(panel)[0] == ("1. system", "2")
    assert [panel.cards[0].role.itemText(i) for i in range(panel.cards[0].role.count())] == [
        "system", "user", "assistant", "tool"]
    panel.shutdown()


def test_the_generation_prompt_toggle_adds_and_drops_the_reply_header(qtbot) -> None:  # type: ignore
    panel = _panel(qtbot, "qwen2", (("user", "Hello world"),))
    with_prompt = panel.main.view.result  # type: ignore[union-attr]
    assert panel.generation.isChecked() and with_prompt.rendered.endswith("<|im_end|>\n<|im_start|>assistant\n")
    qtbot.mouseClick(panel.generation, Qt.MouseButton.LeftButton)
    assert not panel.generation.isChecked()
    _settled(qtbot, panel, lambda r: not r.rendered.endswith("assistant\n"))
    r = panel.main.view.result  # type: ignore[union-attr]
    assert r.rendered == with_prompt.rendered[:-len("<|im_start|>assistant\n")]
    assert r.total == with_prompt.total - 3  # <|im_start|>, "assistant", "\n"
    assert r.ids == _expected(panel, add_generation_prompt=False).ids
    assert _count_cells(panel)[-1] == ("total", str(r.total))
    panel.shutdown()


def test_the_tools_tab_gives_the_template_its_tools(qtbot) -> None:  # type: ignore[no-untyped-def]
    panel = _panel(qtbot, "qwen2", (("user", "Weather in Oslo?"),))
    # qwen2's own template has no tools; the shipped Hermes one writes them
    panel.template.setCurrentText("Common: hermes-tools")
    _settled(qtbot, panel, lambda r: r.template == "hermes-tools")
    before = panel.main.view.result  # type: ignore[union-attr]
    assert "get_weather" not in before.rendered and "# Tools" not in before.rendered
    panel.inputs.setCurrentWidget(panel.tools)
    assert panel.inputs.tabText(panel.inputs.currentIndex()) == "Tools"
    tools = [{"type": "function", "function": {"name": "get_weather", "description": "Weather in a city",
                                               "parameters": {"type": "object", "properties": {}}}}]
    panel.tools.setFocus()
    type_text(panel.tools, json.dumps(tools))
    _settled(qtbot, panel, lambda r: "get_weather" in r.rendered)
    r = panel.main.view.result  # type: ignore[union-attr]
    assert '<tools>\n{"type": "function", "function": {"name": "get_weather", ' in r.rendered
    expected = _expected(panel, tools=tools, template="hermes-tools", add_generation_prompt=True)
    assert r.rendered == expected.rendered and r.total == expected.total > before.total
    # the tool definitions are scaffold: the message's own count does not move
    assert r.messages[0].tokens == before.messages[0].tokens
    # text that is not a JSON list: one line saying so, the conversation kept
    panel.tools.setPlainText('{"name": "get_weather"}')
    qtbot.waitUntil(lambda: bool(panel.main.error), timeout=RESULT_TIMEOUT_MS)
    assert panel.main.error == "Tools: must be a JSON list" and panel.conversation() == (("user", "Weather in Oslo?"),)
    panel.shutdown()


def test_a_straddling_token_has_a_dashed_underline(qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QTextCharFormat

    panel = _panel(qtbot, "qwen2", (("user", "llo"),))
    # "hello" is one token: "he" from the template, "llo" from the message; " world" is the template's
    panel.set_custom_template("straddle.jinja", "{{ 'he' + messages[0].content }} world")
    _settled(qtbot, panel, lambda r: r.rendered == "hello world")
    r = panel.main.view.result  # type: ignore[union-attr]
    assert [(t.text, t.origin, t.message, t.straddles) for t in r.tokens] == [
        ("hello", "message", 0, True), (" world", "template", None, False)]
    block = panel.main.text.document().firstBlock()
    styles = {(f.start, f.length): f.format.underlineStyle() for f in block.layout().formats()}
    assert styles == {(0, 5): QTextCharFormat.UnderlineStyle.DashUnderline,
                      (5, 6): QTextCharFormat.UnderlineStyle.NoUnderline}
    panel.shutdown()
