"""The Corpus view's charts: tokens per byte by script for each model,
fertility (tokens per word) and vocabulary use, drawn with matplotlib on a
Qt canvas embedded in the view.

matplotlib comes with the ``corpus`` extra and is imported only when a
report is shown; without it the chart area says so in one line and the
tables work as before.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QVBoxLayout, QWidget

from tokenprism.core.corpus import INSTALL_HINT

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.corpus_view import ChartData

MISSING_MESSAGE = f"Charts need matplotlib, which comes with the corpus extra: {INSTALL_HINT}"
CHART_HEIGHT_PX = 300


def _canvas_class() -> Any:
    """matplotlib's Qt canvas class (ImportError when matplotlib is missing)."""
    from matplotlib.backends.backend_qtagg import FigureCanvasQTAgg

    return FigureCanvasQTAgg


class QCorpusCharts(QWidget):
    """Three charts side by side, redrawn for each report."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self.message = QLabel("Run a profile to see its charts here.")
        self.message.setWordWrap(True)
        self.message.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self._layout.addWidget(self.message)
        self.canvas: Any = None
        self.figure: Any = None
        self.setMinimumHeight(CHART_HEIGHT_PX)

    @property
    def available(self) -> bool:
        """False when matplotlib cannot be imported (the message says so)."""
        return self._ensure_canvas()

    def _ensure_canvas(self) -> bool:
        if self.canvas is not None:
            return True
        try:
            canvas_class = _canvas_class()
            from matplotlib.figure import Figure
        except ImportError:
            self.message.setText(MISSING_MESSAGE)
            self.message.show()
            return False
        self.figure = Figure(layout="constrained")
        self.canvas = canvas_class(self.figure)
        self.canvas.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self._layout.addWidget(self.canvas, 1)
        self.message.hide()
        return True

    def clear(self) -> None:
        if self.figure is not None:
            self.figure.clear()
            self.canvas.draw_idle()

    def show_data(self, data: ChartData) -> None:
        """Draw ``data`` (or say why no chart can be drawn)."""
        if not self._ensure_canvas():
            return
        fig = self.figure
        fig.clear()
        pal = self.palette()
        fg = pal.color(QPalette.ColorRole.WindowText).name()
        bg = pal.color(QPalette.ColorRole.Window).name()
        fig.set_facecolor(bg)
        per_model = max(1.6, 0.7 * len(data.models))
        ratios = [max(2, len(data.scripts)), per_model, per_model]
        scripts_ax, fert_ax, vocab_ax = fig.subplots(1, 3, width_ratios=ratios)
        colors = [f"C{i % 10}" for i in range(len(data.models))]
        n = max(1, len(data.models))
        width = 0.8 / n
        for i, (name, values) in enumerate(zip(data.models, data.tokens_per_byte)):
            xs = [x - 0.4 + width * (i + 0.5) for x in range(len(data.scripts))]
            scripts_ax.bar(xs, values, width, label=name, color=colors[i])
        scripts_ax.set_xticks(range(len(data.scripts)), data.scripts, rotation=30, ha="right")
        scripts_ax.set_title("Tokens per byte by script (lower: cheaper)")
        if data.models:
            scripts_ax.legend(fontsize="small", frameon=False)
        positions = range(len(data.models))
        fert_ax.bar(positions, data.fertility, color=colors)
        fert_ax.set_title("Tokens per word")
        vocab_ax.bar(positions, [100 * v for v in data.vocab_share], color=colors)
        vocab_ax.set_title("Vocabulary used, %")
        for ax in (fert_ax, vocab_ax):
            ax.set_xticks(positions, data.models, rotation=30, ha="right")
        for ax in (scripts_ax, fert_ax, vocab_ax):
            ax.set_facecolor(bg)
            ax.tick_params(colors=fg, labelsize="small")
            ax.title.set_color(fg)
            ax.title.set_fontsize("medium")
            ax.xaxis.label.set_color(fg)
            for side in ("top", "right"):
                ax.spines[side].set_visible(False)
            for side in ("left", "bottom"):
                ax.spines[side].set_color(fg)
        legend = scripts_ax.get_legend()
        if legend is not None:
            for text in legend.get_texts():
                text.set_color(fg)
        self.canvas.draw_idle()
