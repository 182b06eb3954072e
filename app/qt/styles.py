"""Token colours and the legend that explains them.

Colours are never hard-coded against a white page: each style has a hue
that is mixed into the palette's base colour, more strongly on dark
palettes, so the same code gives soft tints in a light theme and readable
ones in a dark theme. Styles also differ by underline, so they stay
distinguishable without colour.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QEvent, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPalette, QPen, QResizeEvent, QTextCharFormat
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSizePolicy, QWidget

from . import qt_compat  # noqa: F401  (guards against a PySide6 bug; see there)
from ..logic.analysis import Style

# (hue for even spans, hue for odd spans, underline)
_HUES: dict[Style, tuple[str, str, QTextCharFormat.UnderlineStyle]] = {
    Style.NORMAL: ("#4f8ff7", "#3fbf7f", QTextCharFormat.UnderlineStyle.NoUnderline),
    Style.BYTES: ("#f0a020", "#e07b10", QTextCharFormat.UnderlineStyle.DotLine),
    Style.USER: ("#20b0c0", "#1898a8", QTextCharFormat.UnderlineStyle.NoUnderline),
    Style.CONTROL: ("#b060e0", "#9848d0", QTextCharFormat.UnderlineStyle.DashUnderline),
    Style.UNKNOWN: ("#e8403a", "#d02c26", QTextCharFormat.UnderlineStyle.WaveUnderline),
}

STYLE_NAMES: dict[Style, str] = {
    Style.NORMAL: "token",
    Style.BYTES: "byte fallback",
    Style.USER: "user-defined",
    Style.CONTROL: "control / special",
    Style.UNKNOWN: "unknown",
}

STYLE_HELP: dict[Style, str] = {
    Style.NORMAL: "Ordinary tokens; neighbours alternate between two tints so every boundary shows.",
    Style.BYTES: "A character the vocabulary lacks, spelled as several <0xNN> byte tokens "
                 "(or split across tokens by a byte-level tokenizer); drawn as one span.",
    Style.USER: "User-defined tokens, always matched as a whole.",
    Style.CONTROL: "Control tokens such as <s> or <|endoftext|> (parsed when 'Parse special' is on). "
                   "BOS/EOS cover no text and show as a thin bar.",
    Style.UNKNOWN: "The unknown token: the tokenizer could not spell this text.",
}


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` moved ``t`` of the way towards ``b`` (in RGB)."""
    return QColor.fromRgbF(a.redF() + (b.redF() - a.redF()) * t,
                           a.greenF() + (b.greenF() - a.greenF()) * t,
                           a.blueF() + (b.blueF() - a.blueF()) * t, 1.0)


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Base).lightnessF() < 0.5


@dataclass(frozen=True)
class TokenColors:
    """Every colour the token views use, for one palette."""

    background: dict[tuple[int, int], QColor]
    """(style, parity) → background tint."""
    border: dict[int, QColor]
    """style → stronger colour for chip borders, markers and underlines."""
    underline: dict[int, QTextCharFormat.UnderlineStyle]
    text: QColor
    muted: QColor
    base: QColor
    highlight: QColor
    dark: bool

    def bg(self, style: int, parity: int) -> QColor:
        return self.background[(style, parity & 1)]

    def char_format(self, style: int, parity: int) -> QTextCharFormat:
        fmt = QTextCharFormat()
        fmt.setBackground(self.bg(style, parity))
        us = self.underline[style]
        if us != QTextCharFormat.UnderlineStyle.NoUnderline:
            fmt.setUnderlineStyle(us)
            fmt.setUnderlineColor(self.border[style])
        return fmt


def token_colors(palette: QPalette) -> TokenColors:
    """The :class:`TokenColors` that suit ``palette``."""
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    dark = is_dark(palette)
    tint = 0.30 if dark else 0.20
    bg: dict[tuple[int, int], QColor] = {}
    border: dict[int, QColor] = {}
    underline: dict[int, QTextCharFormat.UnderlineStyle] = {}
    for style, (even, odd, us) in _HUES.items():
        strength = tint if style == Style.NORMAL else tint * 1.45
        bg[(style, 0)] = mix(base, QColor(even), strength)
        bg[(style, 1)] = mix(base, QColor(odd), strength)
        border[style] = mix(QColor(even), text, 0.15) if dark else mix(QColor(even), text, 0.25)
        underline[style] = us
    return TokenColors(bg, border, underline, text, mix(base, text, 0.55), base,
                       palette.color(QPalette.ColorRole.Highlight), dark)


class QStyleSwatch(QWidget):
    """A small box drawn in a token style's colours."""

    def __init__(self, style: Style, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._style = style
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)

    def sizeHint(self) -> QSize:
        h = self.fontMetrics().height()
        return QSize(int(h * 1.6), h)

    def paintEvent(self, event: object) -> None:
        colors = token_colors(self.palette())
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        r = QRectF(self.rect()).adjusted(0.5, 1.5, -0.5, -1.5)
        half = QRectF(r.left(), r.top(), r.width() / 2, r.height())
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colors.bg(self._style, 0))
        p.drawRect(half)
        p.setBrush(colors.bg(self._style, 1))
        p.drawRect(half.translated(half.width(), 0))
        if self._style != Style.NORMAL:
            p.setPen(QPen(colors.border[self._style], 1.2))
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRoundedRect(r, 2, 2)
        p.end()


class QLegend(QWidget):
    """Every token style explained (each entry has a tooltip), on one line,
    or wrapped onto more when the pane is too narrow: an entry is never cut
    (it was, mid-word, once the panes started as halves)."""

    HGAP = 12
    VGAP = 2
    MARGIN = 4

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel("Legend:", self)
        self.title.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.items: list[QWidget] = [self.title]
        self.entries: list[tuple[QStyleSwatch, QLabel]] = []
        for style in Style:
            box = QWidget(self)
            row = QHBoxLayout(box)
            row.setContentsMargins(0, 0, 0, 0)
            row.setSpacing(6)
            swatch = QStyleSwatch(style)
            label = QLabel(STYLE_NAMES[style])
            for w in (swatch, label):
                w.setToolTip(STYLE_HELP[style])
            row.addWidget(swatch)
            row.addWidget(label)
            self.items.append(box)
            self.entries.append((swatch, label))
        # a narrow window never widens for the legend: it wraps instead
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.setMinimumWidth(self.fontMetrics().horizontalAdvance("0") * 10)
        self.setToolTip("Hover a token in the editor for its id, piece, score, type and bytes.")
        self.setFixedHeight(self._flow(10 ** 6, apply=False))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self.update()
        super().changeEvent(event)

    def _flow(self, width: int, apply: bool) -> int:
        """Place the items left to right, wrapping at ``width``; the height
        they take."""
        row_h = max(item.sizeHint().height() for item in self.items)
        x = y = self.MARGIN
        for item in self.items:
            w = item.sizeHint().width()
            if x > self.MARGIN and x + w > width - self.MARGIN:
                x = self.MARGIN
                y += row_h + self.VGAP
            if apply:
                item.setGeometry(x, y, w, row_h)
            x += w + self.HGAP
        return y + row_h + self.MARGIN

    def sizeHint(self) -> QSize:
        return QSize(sum(i.sizeHint().width() + self.HGAP for i in self.items), self.height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        width = event.size().width()
        self._flow(width, apply=True)
        height = self._flow(width, apply=False)
        if height != self.height():
            self.setFixedHeight(height)
