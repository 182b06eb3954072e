"""View ▸ Model Metadata: every key, arrays summarised (never built whole),
chat templates in full, header facts, copying values."""

from __future__ import annotations

import json
from pathlib import Path

import gguf
import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from tests.app.conftest import open_model_in, real_vocab
from tests.ggufmaker import write_vocab_gguf
from tokenprism.app.qt.qt_metadata import CHILD_ITEMS, COL_KEY, COL_TYPE, COL_VALUE, KEY_ROLE, QMetadataPanel
from tokenprism.core.gguf_file import read_gguf

TEMPLATE = "{% for m in messages %}\n\t<|{{ m.role }}|>{{ m.content }}\n{% endfor %}" + "x" * 5000
TOOL_TEMPLATE = "{{ tools | tojson }}\n{% for m in messages %}{{ m.content }}{% endfor %}"


def top_items(panel: QMetadataPanel) -> dict[str, object]:
    t = panel.tree
    return {str(t.topLevelItem(i).data(COL_KEY, KEY_ROLE)): t.topLevelItem(i) for i in range(t.topLevelItemCount())}


@pytest.fixture
def rich_gguf(tmp_path: Path) -> Path:
    """A GGUF with named chat templates and two tensors."""
    path = tmp_path / "rich.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_name("rich test")
    w.add_tokenizer_model("llama")
    w.add_token_list([f"tok{i}" for i in range(5000)])
    w.add_string("tokenizer.chat_template", TEMPLATE)
    w.add_string("tokenizer.chat_template.tool_use", TOOL_TEMPLATE)
    w.add_array("test.floats", [0.5, 1.5, 2.5])
    w.add_tensor("a", np.zeros((4, 8), dtype=np.float32))
    w.add_tensor("b", np.zeros(16, dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_keys_arrays_templates_and_facts(qtbot, rich_gguf: Path) -> None:  # type: ignore[no-untyped-def]
    gf = read_gguf(rich_gguf)
    panel = QMetadataPanel()
    qtbot.addWidget(panel)
    panel.set_gguf(gf, "rich test")
    assert panel.tree.topLevelItemCount() == 0  # built only when shown
    panel.set_wanted(True)
    items = top_items(panel)
    assert list(items) == list(gf.metadata)  # every key, in file order
    facts = panel.facts.text()
    assert "GGUF v3" in facts and "2 tensors" in facts and "160 B of tensor data" in facts  # 4*8*4 + 16*2
    assert "alignment 32" in facts

    tokens = items["tokenizer.ggml.tokens"]
    assert tokens.text(COL_TYPE) == "string[5\u2009000]"
    summary = tokens.text(COL_VALUE)
    assert summary.startswith("['tok0', 'tok1'") and summary.endswith(", …]") and len(summary) < 200
    tokens.setExpanded(True)
    assert tokens.childCount() == CHILD_ITEMS + 1
    assert tokens.child(3).text(COL_VALUE) == "'tok3'"
    assert "4\u2009900 more" in tokens.child(CHILD_ITEMS).text(COL_VALUE)
    assert items["test.floats"].text(COL_VALUE) == "[0.5, 1.5, 2.5]"

    # the chat template is selected first and shown whole
    assert panel.selected_key() == "tokenizer.chat_template"
    assert panel.value.toPlainText() == TEMPLATE
    assert f"{len(TEMPLATE):,} characters, 3 lines".replace(",", "\u2009", 1) in panel.value_title.text()
    panel.tree.setCurrentItem(items["tokenizer.chat_template.tool_use"])
    assert panel.value.toPlainText() == TOOL_TEMPLATE
    panel.copy_value()
    assert QApplication.clipboard().text() == TOOL_TEMPLATE

    panel.tree.setCurrentItem(tokens)
    panel.copy_value()
    assert json.loads(QApplication.clipboard().text()) == [f"tok{i}" for i in range(5000)]
    panel.copy_key()
    assert QApplication.clipboard().text() == "tokenizer.ggml.tokens"


def test_gemma4_in_the_window(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    path = real_vocab("gemma-4")
    if path is None:
        pytest.skip("the gemma-4 reference vocab is not available")
    open_model_in(qtbot, window, path)
    window.metadata_dock.toggleViewAction().trigger()
    panel: QMetadataPanel = window.metadata_panel
    gf = window.model_info.model.gguf
    items = top_items(panel)
    assert set(items) == set(gf.metadata)
    merges = items["tokenizer.ggml.merges"]
    assert merges.text(COL_TYPE) == "string[514\u2009906]" and len(merges.text(COL_VALUE)) < 400
    assert panel.value.toPlainText() == gf.metadata["tokenizer.chat_template"].value
    assert "no tensors" in panel.facts.text()


def test_follows_the_window_model(qtbot, window, test_vocab, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    window.metadata_dock.toggleViewAction().trigger()
    open_model_in(qtbot, window, test_vocab)
    panel: QMetadataPanel = window.metadata_panel
    assert set(top_items(panel)) == set(window.model_info.model.gguf.metadata)
    assert "app-test vocab" in panel.facts.text()
    other = write_vocab_gguf(tmp_path / "x.gguf", ["a"], extra={"zz.extra": "here", "<i>odd</i>\x1b": "v\x00\u200b"})
    panel.set_gguf(read_gguf(other))
    items = top_items(panel)
    assert "zz.extra" in items
    odd = items["<i>odd</i>\x1b"]
    assert odd.text(COL_KEY) == "<i>odd</i>\\x1B" and odd.text(COL_VALUE).isprintable()
    panel.tree.setCurrentItem(odd)
    assert "&lt;i&gt;odd" in panel.value_title.text()
    assert panel.value.toPlainText() == "v\\x00\\u200B"
