"""Small layout helpers the panels share, so a panel fits a narrow, laptop-sized dock.

``compact_combo`` lets a combo box shrink below its longest entry; ``SoftLabel`` is a label that
never widens its panel; ``column`` is a widget and its vertical layout; ``scrolling`` lets a
page taller than its dock scroll instead of squeezing; ``RefusalLabel`` says inline why an edit
was refused; ``open_preset`` opens a lab's preset.

Also importable from here, as before, though they live in the kit: ``FlowLayout`` and ``group``
(``kit.flow_layout``), ``AdaptiveSplit`` (``kit.adaptive_split``), the number boxes
``SignificantSpinBox`` / ``WholeNumberBox`` (``kit.number_boxes``) and the Qt-free parsers
``parse_number`` / ``parse_typed_number`` / ``check_entry`` / ``significant_text``
(``kit.number_entry``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QPainter,
    QPaintEvent,
    QPalette,
    QTextDocument,
)
from PySide6.QtWidgets import QComboBox, QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from attnsim.engine.scenario import ScenarioError
from attnsim.resources import resolve_scenario

# The layout and number-entry pieces live in the kit; panels import them from here as before.
from .kit.adaptive_split import AdaptiveSplit
from .kit.flow_layout import FlowLayout, group
from .kit.hints import hints_shown
from .kit.number_boxes import SignificantSpinBox, WholeNumberBox
from .kit.number_entry import check_entry, parse_number, parse_typed_number, significant_text

if TYPE_CHECKING:
    from .base import Panel


__all__ = [
    "AdaptiveSplit",
    "FlowLayout",
    "RefusalLabel",
    "SignificantSpinBox",
    "SoftLabel",
    "WholeNumberBox",
    "check_entry",
    "column",
    "compact_combo",
    "group",
    "open_preset",
    "parse_number",
    "parse_typed_number",
    "scrolling",
    "significant_text",
]


class SoftLabel(QLabel):
    """A label whose minimum width is zero, so it never raises its panel's minimum width.

    For text that the panel itself moves or hides when narrow (its own resize logic decides
    where there is room for it): the layout still gives it its preferred width when it can.
    """

    def minimumSizeHint(self) -> QSize:  # Qt's name
        return QSize(0, super().minimumSizeHint().height())


class CaptionLabel(SoftLabel):
    """A caption that may say how to use the panel: on screen it shows all of it, in a figure
    (see :mod:`attnsim.panels.kit.figure_paint`) only what the figure is about."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.figure_text = text

    def set_caption(self, caption: str, hint: str = "") -> None:
        """``caption``, followed on screen by ``hint`` (how to click, drag, hover)."""
        self.set_texts(f"{caption} {hint}" if caption and hint else caption or hint, caption)

    def set_texts(self, screen: str, figure: str) -> None:
        """What the screen shows and what a figure shows (the same format, plain or rich)."""
        super().setText(screen)
        self.figure_text = figure

    def setText(self, text: str) -> None:  # Qt's name: a text without a hint is all caption
        self.set_texts(text, text)

    def paintEvent(self, event: QPaintEvent) -> None:  # Qt's name
        if hints_shown() or self.figure_text == self.text():
            super().paintEvent(event)
            return
        p = QPainter(self)
        doc = QTextDocument()
        doc.setDefaultFont(self.font())
        doc.setDocumentMargin(0)
        fmt, text = self.textFormat(), self.figure_text
        if fmt == Qt.TextFormat.RichText or (
            fmt == Qt.TextFormat.AutoText and "<" in text and ">" in text
        ):
            doc.setHtml(self.figure_text)
        else:
            doc.setPlainText(self.figure_text)
        m = self.margin() + self.indent() if self.indent() > 0 else self.margin()
        r = self.contentsRect().adjusted(m, m, -m, -m)
        doc.setTextWidth(r.width() if self.wordWrap() else -1)
        ctx = QAbstractTextDocumentLayout.PaintContext()
        ctx.palette.setColor(QPalette.ColorRole.Text, self.palette().color(self.foregroundRole()))
        p.translate(r.topLeft())
        doc.documentLayout().draw(p, ctx)
        p.end()


def column(
    spacing: int, margins: tuple[int, int, int, int] = (0, 0, 0, 0)
) -> tuple[QWidget, QVBoxLayout]:
    """A new widget and the vertical layout it is laid out by, with these spacing and margins."""
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(*margins)
    lay.setSpacing(spacing)
    return box, lay


def scrolling(page: QWidget, min_height: int = 0) -> QScrollArea:
    """``page`` in a frameless scroll area that fits it to its width and scrolls it upright.

    In a short dock (a 1024x768 screen gives a group about 350 pixels) the page keeps at least
    ``min_height`` and what its layout needs, wrapped text included, and the dock scrolls; a
    squeezed layout would instead paint its rows over each other or cut the last lines.
    """
    if min_height:
        page.setMinimumHeight(min_height)
    area = QScrollArea()
    area.setWidget(page)
    area.setWidgetResizable(True)
    area.setFrameShape(QFrame.Shape.NoFrame)
    area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    area.setMinimumHeight(0)
    return area


class RefusalLabel(QLabel):
    """A red, word-wrapped line under a panel's editors saying why an edit was refused.

    Hidden until :meth:`show_refusal`; ``setVisible(False)`` clears it from view again.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setStyleSheet("color: #B00020;")
        self.setVisible(False)

    def show_refusal(self, text: str) -> None:
        self.setText(f"Refused: {text}")
        self.setVisible(True)


def open_preset(panel: Panel, name: str) -> None:
    """Open the preset ``name`` in ``panel``'s workbench as a new untitled document.

    A preset that cannot be read is refused in the status bar and nothing changes.
    """
    try:
        sc = resolve_scenario(name)
    except (ScenarioError, OSError) as exc:
        panel.refuse(exc)
        return
    # A new untitled document: File > Save must not write the preset over the user's file.
    panel.wb.replace_document(sc, f"Open the {name} preset")


def compact_combo(combo: QComboBox, chars: int = 8) -> QComboBox:
    """Let ``combo`` shrink to about ``chars`` characters instead of its longest entry.

    The popup still lists the full texts; a combo without a tool tip gets one naming the
    current entry.
    """
    combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(chars)
    if not combo.toolTip():
        # An elided entry stays readable: the tool tip names the whole current text.
        def _tip(_index: int = 0) -> None:
            combo.setToolTip(combo.currentText())

        combo.currentIndexChanged.connect(_tip)
        _tip()
    return combo
