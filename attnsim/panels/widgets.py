"""Small layout helpers the panels share, so a panel fits a narrow, laptop-sized dock.

``FlowLayout`` puts its items left to right and wraps them onto more rows when the width runs
out; ``group`` keeps a few widgets (a label and its combo) together on one row of a flow;
``compact_combo`` lets a combo box shrink below its longest entry; ``SoftLabel`` is a label that
never widens its panel; ``AdaptiveSplit`` shows two parts side by side, stacked, or on two
tabs, whichever the space it gets allows. ``parse_number`` reads a number typed into a cell;
``SignificantSpinBox`` is the one box for typing a number (scientific notation, the locale's
decimal comma; anything else refused visibly).
``RefusalLabel`` says inline why an edit was refused; ``open_preset`` opens a lab's preset.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QMargins, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent, QResizeEvent, QValidator
from PySide6.QtWidgets import (
    QAbstractSpinBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QStackedLayout,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from attnsim.engine.scenario import MAX_ABS_VALUE, ScenarioError
from attnsim.resources import resolve_scenario

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
    "significant_text",
]


class FlowLayout(QLayout):
    """Items left to right, wrapping onto more rows when the width runs out.

    - ``minimumSize()`` is the widest item's minimum (plus margins), so the layout never asks
      for more width than its largest single control.
    - ``sizeHint()`` is everything on one row: the width at which nothing wraps.
    - ``heightForWidth(w)`` is the height of the rows the items need at width ``w``; it grows as
      the width shrinks.
    - An item wider than a whole row is shrunk to the row (never below its own minimum), and an
      item with a height-for-width (a word-wrapped label) gets the height it needs there.
    - Items with a horizontal stretch factor (``group(..., grow=widget)``, or any widget whose
      size policy has ``horizontalStretch() > 0``) share the space left over on their row in
      proportion to it, so e.g. sliders grow in a wide dock; the others keep their hint.
    - Hidden widgets take no room. Items in a row are centred vertically.
    """

    def __init__(
        self, parent: QWidget | None = None, h_spacing: int = 6, v_spacing: int = 4
    ) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self._h = max(0, int(h_spacing))
        self._v = max(0, int(v_spacing))
        self.setContentsMargins(0, 0, 0, 0)

    # ---- spacing ---------------------------------------------------------------------------
    def horizontalSpacing(self) -> int:
        """Gap between neighbouring items on a row (px)."""
        return self._h

    def verticalSpacing(self) -> int:
        """Gap between rows (px)."""
        return self._v

    def setHorizontalSpacing(self, spacing: int) -> None:
        self._h = max(0, int(spacing))
        self.invalidate()

    def setVerticalSpacing(self, spacing: int) -> None:
        self._v = max(0, int(spacing))
        self.invalidate()

    def spacing(self) -> int:  # Qt's name
        return self._h

    def setSpacing(self, spacing: int) -> None:  # Qt's name: sets both gaps
        self._h = self._v = max(0, int(spacing))
        self.invalidate()

    # ---- the item list (Qt's names) ------------------------------------------------------------
    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)
        self.invalidate()

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        if not 0 <= index < len(self._items):
            return None
        item = self._items.pop(index)
        self.invalidate()
        return item

    # ---- sizes (Qt's names) --------------------------------------------------------------------
    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._arrange(QRect(0, 0, width, 0), apply=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._arrange(rect, apply=True)

    def _visible(self) -> list[QLayoutItem]:
        return [item for item in self._items if not item.isEmpty()]

    def _margin_size(self) -> QSize:
        m: QMargins = self.contentsMargins()
        return QSize(m.left() + m.right(), m.top() + m.bottom())

    def sizeHint(self) -> QSize:
        items = self._visible()
        width = sum(i.sizeHint().width() for i in items) + self._h * max(len(items) - 1, 0)
        height = max((i.sizeHint().height() for i in items), default=0)
        return QSize(width, height) + self._margin_size()

    def minimumSize(self) -> QSize:
        size = QSize(0, 0)
        for item in self._visible():
            size = size.expandedTo(item.minimumSize())
        return size + self._margin_size()

    # ---- placement -------------------------------------------------------------------------
    def rows_for_width(self, width: int) -> list[list[QLayoutItem]]:
        """The visible items grouped into the rows they take at ``width`` px (for tests)."""
        rows: list[list[QLayoutItem]] = []
        for row in self._rows(QRect(0, 0, width, 0)):
            rows.append([item for item, _ in row])
        return rows

    def _rows(self, rect: QRect) -> list[list[tuple[QLayoutItem, int]]]:
        """Break the visible items into rows that fit ``rect``; each item with its width."""
        m = self.contentsMargins()
        avail = max(1, rect.width() - m.left() - m.right())
        rows: list[list[tuple[QLayoutItem, int]]] = [[]]
        x = 0
        for item in self._visible():
            # Shrink an item that is wider than a whole row, but never below its minimum.
            w = min(item.sizeHint().width(), avail)
            w = max(w, item.minimumSize().width())
            if rows[-1] and x + w > avail:
                rows.append([])
                x = 0
            rows[-1].append((item, w))
            x += w + self._h
        rows = [row for row in rows if row]
        for r, row in enumerate(rows):
            stretch = [_stretch(item) for item, _ in row]
            spare = avail - sum(w for _, w in row) - self._h * (len(row) - 1)
            if not any(stretch) or spare <= 0:
                continue
            widths = [w for _, w in row]
            total = sum(stretch)
            for k, (item, w) in enumerate(row):
                if stretch[k]:
                    share = spare * stretch[k] // total
                    widths[k] = min(w + share, item.maximumSize().width())
            rows[r] = [(item, w) for (item, _), w in zip(row, widths, strict=True)]
        return rows

    def _arrange(self, rect: QRect, *, apply: bool) -> int:
        """Place the items in ``rect`` (when ``apply``); returns the height they take."""
        m = self.contentsMargins()
        left = rect.x() + m.left()
        y = rect.y() + m.top()
        rows = self._rows(rect)
        for row in rows:
            heights = []
            for item, w in row:
                h = item.heightForWidth(w) if item.hasHeightForWidth() else -1
                if h < 0:
                    h = item.sizeHint().height()
                heights.append(max(h, item.minimumSize().height()))
            row_h = max(heights)
            if apply:
                x = left
                for (item, w), h in zip(row, heights, strict=True):
                    item.setGeometry(QRect(QPoint(x, y + (row_h - h) // 2), QSize(w, h)))
                    x += w + self._h
            y += row_h + self._v
        if rows:
            y -= self._v
        return y - rect.y() + m.bottom()


def _stretch(item: QLayoutItem) -> int:
    widget = item.widget()
    return widget.sizePolicy().horizontalStretch() if widget is not None else 0


def group(*widgets: QWidget, spacing: int = 4, grow: QWidget | None = None) -> QWidget:
    """Widgets kept together on one row of a :class:`FlowLayout` (e.g. a label and its combo).

    ``grow``: one of ``widgets`` (a slider, a combo) that takes the spare width of the group's
    row in a flow; without it the group keeps its size hint.
    """
    box = QWidget()
    lay = QHBoxLayout(box)
    lay.setContentsMargins(0, 0, 0, 0)
    lay.setSpacing(spacing)
    for w in widgets:
        lay.addWidget(w, 1 if w is grow else 0)
    if grow is not None:
        if grow not in widgets:
            raise ValueError("grow must be one of the group's widgets")
        policy = box.sizePolicy()
        policy.setHorizontalPolicy(QSizePolicy.Policy.Expanding)
        policy.setHorizontalStretch(1)
        box.setSizePolicy(policy)
    return box


class SoftLabel(QLabel):
    """A label whose minimum width is zero, so it never raises its panel's minimum width.

    For text that the panel itself moves or hides when narrow (its own resize logic decides
    where there is room for it): the layout still gives it its preferred width when it can.
    """

    def minimumSizeHint(self) -> QSize:  # Qt's name
        return QSize(0, super().minimumSizeHint().height())


def column(
    spacing: int, margins: tuple[int, int, int, int] = (0, 0, 0, 0)
) -> tuple[QWidget, QVBoxLayout]:
    """A new widget and the vertical layout it is laid out by, with these spacing and margins."""
    box = QWidget()
    lay = QVBoxLayout(box)
    lay.setContentsMargins(*margins)
    lay.setSpacing(spacing)
    return box, lay


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


class AdaptiveSplit(QWidget):
    """Two parts side by side when wide enough, one above the other when tall enough, else on
    two tabs.

    Modes: ``"side"`` (a horizontal splitter), ``"stack"`` (a vertical splitter) and ``"tabs"``.
    The mode follows the widget's own size only, never the other way round: its minimum size
    is that of the tabs (the widest part, the tallest part plus a tab bar), whatever is shown,
    so a panel built on it fits a small dock. ``side_width`` / ``stack_height`` raise the
    sizes at which side by side / stacked are chosen above the parts' bare minimums, so a
    part is not shown squeezed. Until the user drags the splitter handle, the first part
    keeps ``ratio`` of the length.
    """

    mode_changed = Signal(str)

    def __init__(
        self,
        first: QWidget,
        second: QWidget,
        titles: tuple[str, str],
        *,
        ratio: float = 0.5,
        side_width: int = 0,
        stack_height: int = 0,
        allow_stack: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.parts = (first, second)
        self.titles = titles
        self.ratio = float(ratio)
        self.side_width = int(side_width)
        self.stack_height = int(stack_height)
        self.allow_stack = allow_stack
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.splitterMoved.connect(self._split_moved)
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self._pages = QStackedLayout(self)
        self._pages.addWidget(self.splitter)
        self._pages.addWidget(self.tabs)
        # The tab bar's height, measured once with both tabs in place.
        for part, title in zip(self.parts, titles, strict=True):
            self.tabs.addTab(part, title)
        self._tab_bar_h = self.tabs.tabBar().sizeHint().height()
        self._mode = "tabs"
        self._tab = 0  # the tab shown last, shown again when the tabs come back
        self._user_split = False
        self._pages.setCurrentWidget(self.tabs)
        self._apply_mode("side")

    # ---- sizes --------------------------------------------------------------------------------
    def _part_minimums(self) -> tuple[QSize, QSize]:
        a, b = (p.minimumSizeHint().expandedTo(p.minimumSize()) for p in self.parts)
        return a, b

    def minimumSizeHint(self) -> QSize:  # Qt's name
        a, b = self._part_minimums()
        return QSize(max(a.width(), b.width()), max(a.height(), b.height()) + self._tab_bar_h)

    def sizeHint(self) -> QSize:  # Qt's name
        a, b = (p.sizeHint() for p in self.parts)
        handle = self.splitter.handleWidth()
        return QSize(a.width() + b.width() + handle, max(a.height(), b.height()))

    def wanted_mode(self, size: QSize) -> str:
        """The mode for a widget of ``size``: side by side, stacked, or tabs."""
        a, b = self._part_minimums()
        handle = self.splitter.handleWidth()
        if size.width() >= max(a.width() + b.width() + handle, self.side_width):
            return "side"
        if self.allow_stack and size.height() >= max(
            a.height() + b.height() + handle, self.stack_height
        ):
            return "stack"
        return "tabs"

    def mode(self) -> str:
        return self._mode

    def set_current(self, index: int) -> None:
        """In tabs mode, show part ``index`` (0 or 1)."""
        self.tabs.setCurrentIndex(index)

    # ---- switching ----------------------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:  # Qt's name
        super().resizeEvent(event)
        self._apply_mode(self.wanted_mode(event.size()))
        self._keep_ratio()

    def _apply_mode(self, mode: str) -> None:
        if mode == self._mode:
            return
        if mode == "tabs":
            for part, title in zip(self.parts, self.titles, strict=True):
                self.tabs.addTab(part, title)  # the tab widget shows the current one only
            self.tabs.setCurrentIndex(self._tab)
            self._pages.setCurrentWidget(self.tabs)
        else:
            if self._mode == "tabs":
                self._tab = max(self.tabs.currentIndex(), 0)
                while self.tabs.count():
                    self.tabs.removeTab(0)
                for part in self.parts:
                    self.splitter.addWidget(part)
                    part.show()
            self.splitter.setOrientation(
                Qt.Orientation.Horizontal if mode == "side" else Qt.Orientation.Vertical
            )
            self._user_split = False
            self._pages.setCurrentWidget(self.splitter)
        self._mode = mode
        self._keep_ratio()
        self.mode_changed.emit(mode)

    def _split_moved(self, *_: object) -> None:
        self._user_split = True

    def _keep_ratio(self) -> None:
        if self._mode == "tabs" or self._user_split:
            return
        side = self._mode == "side"
        total = max(self.width() if side else self.height(), 1)
        first = round(self.ratio * total)
        self.splitter.setSizes([first, total - first])


def parse_number(text: str) -> float:
    """A finite number typed into a cell; raises ValueError naming the problem otherwise.

    Accepts the typographic minus the cells display ('−0.5') as well as '-0.5'.
    """
    cleaned = text.strip().replace("−", "-").replace(",", ".")
    if not cleaned:
        raise ValueError("an empty cell is not a number")
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a number") from None
    if math.isnan(value):
        raise ValueError("NaN is not allowed: enter a finite number")
    if math.isinf(value):
        raise ValueError("infinity is not allowed: enter a finite number")
    return value


def check_entry(value: float) -> float:
    """``value`` if a scenario may hold it (|value| ≤ MAX_ABS_VALUE); else ValueError saying so.

    Panels check a typed entry with this before building a scenario, so the refusal can name
    the cell ("bank · water: 1e+200 is outside ±1e+06") and nothing is pushed.
    """
    if not abs(value) <= MAX_ABS_VALUE:
        raise ValueError(f"{value:g} is outside ±{MAX_ABS_VALUE:g}")
    return value


def significant_text(value: float, digits: int = 4) -> str:
    """``value`` to ``digits`` significant digits, positional, no trailing zeros ("0.001234")."""
    if not math.isfinite(value):
        return str(value)
    return np.format_float_positional(
        float(value), precision=digits, unique=False, fractional=False, trim="-"
    )


# What a number looks like while it is being typed: sign, digits, one decimal point (either
# mark; the box decides which it accepts), an exponent. Anything else is not a number.
_NUMBER_PREFIX = re.compile(r"[+\-−]?(\d*([.,]\d*)?)?([eE][+\-−]?\d*)?")
_THOUSANDS = re.compile(r"[+\-]?[1-9]\d{0,2},\d{3}")


def parse_typed_number(text: str, decimal_point: str = ".") -> float:
    """A number typed into a box, in C notation or with the locale's ``decimal_point``.

    Scientific notation ('1e-3', '2E2', '1.5e1'), a leading point ('.5', '-.5') and the
    typographic minus are accepted, and so is a decimal comma ('2,5'). Where the locale's
    decimal point is '.', a comma that could be a thousands separator ('1,000': one thousand,
    or one?) is refused rather than guessed. Raises ValueError naming the problem for anything
    that is not one finite number.
    """
    cleaned = text.strip().replace("−", "-")
    if not cleaned:
        raise ValueError("an empty box is not a number")
    if "," in cleaned:
        if "." in cleaned or cleaned.count(",") > 1:
            raise ValueError(f"{text.strip()!r} is not a number: use '.' for the decimal point")
        if decimal_point != "," and _THOUSANDS.fullmatch(cleaned):
            raise ValueError(
                f"{text.strip()!r} is ambiguous (a thousands separator or a decimal comma?): "
                "type it without the comma, or with '.' for the decimal point"
            )
        cleaned = cleaned.replace(",", ".")
    if not _NUMBER_PREFIX.fullmatch(cleaned):
        lowered = cleaned.lower().lstrip("+-")
        if lowered in ("nan", "inf", "infinity"):
            kind = "NaN" if lowered == "nan" else "infinity"
            raise ValueError(f"{kind} is not allowed: enter a finite number")
        raise ValueError(f"{text.strip()!r} is not a number")
    try:
        value = float(cleaned)
    except ValueError:
        raise ValueError(f"{text.strip()!r} is not a complete number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text.strip()!r} is too large: enter a finite number")
    return value


class _TypedNumber:
    """What the number boxes share: typing never drops a character, and a committed text that
    is not a number in range is refused visibly (red frame, tool tip, the ``refused`` signal)
    with the value unchanged. Mixed in before a Qt spin box class."""

    REFUSED_STYLE = "QAbstractSpinBox { border: 2px solid #B00020; border-radius: 2px; }"

    def _init_typed(self) -> None:
        self._refusal = ""
        self._plain_tip = ""
        self.setKeyboardTracking(False)  # type: ignore[attr-defined]
        self.setCorrectionMode(  # type: ignore[attr-defined]
            QAbstractSpinBox.CorrectionMode.CorrectToPreviousValue
        )
        self.valueChanged.connect(self._accepted)  # type: ignore[attr-defined]

    def _decimal_point(self) -> str:
        return self.locale().decimalPoint()  # type: ignore[attr-defined]

    def _parse(self, text: str) -> float:
        """The number ``text`` stands for (ValueError naming the problem)."""
        return parse_typed_number(text, self._decimal_point())

    def problem(self, text: str) -> str | None:
        """Why ``text`` cannot be committed (None: it can)."""
        box = self  # a QAbstractSpinBox subclass
        if text.strip() == box.textFromValue(box.value()):  # type: ignore[attr-defined]
            return None
        try:
            value = self._parse(text)
        except ValueError as exc:
            return str(exc)
        lo, hi = box.minimum(), box.maximum()  # type: ignore[attr-defined]
        if not lo <= value <= hi:
            shown = box.textFromValue(lo), box.textFromValue(hi)  # type: ignore[attr-defined]
            return f"{text.strip()} is outside the range {shown[0]} to {shown[1]}"
        return None

    def validate(self, text: str, pos: int):  # Qt's name
        if len(text.strip()) > 64:
            return QValidator.State.Invalid, text, pos
        if self.problem(text) is None:
            return QValidator.State.Acceptable, text, pos
        # Anything else may still be on its way to a number ('1e', '-.', '0.000'): never drop
        # a character; a text that is not acceptable when committed is refused visibly.
        return QValidator.State.Intermediate, text, pos

    def fixup(self, text: str) -> str:  # Qt's name: no silent repairs
        return text

    def _check_commit(self) -> None:
        reason = self.problem(self.lineEdit().text())  # type: ignore[attr-defined]
        if reason is not None:
            self._refuse(reason)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # Qt's name
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._check_commit()
        super().keyPressEvent(event)  # type: ignore[misc]

    def focusOutEvent(self, event: QFocusEvent) -> None:  # Qt's name
        self._check_commit()
        super().focusOutEvent(event)  # type: ignore[misc]

    def _refuse(self, reason: str) -> None:
        if not self._refusal:
            self._plain_tip = self.toolTip()  # type: ignore[attr-defined]
        self._refusal = reason
        self.setStyleSheet(self.REFUSED_STYLE)  # type: ignore[attr-defined]
        self.setToolTip(f"Refused: {reason}")
        self.refused.emit(reason)  # type: ignore[attr-defined]

    def _accepted(self, *_: object) -> None:
        if self._refusal:
            self._refusal = ""
            self.setStyleSheet("")  # type: ignore[attr-defined]
            self.setToolTip(self._plain_tip)

    def refusal(self) -> str:
        """Why the last committed text was refused ('' when the box holds what was typed)."""
        return self._refusal

    def setToolTip(self, text: str) -> None:  # Qt's name
        if getattr(self, "_refusal", "") and not text.startswith("Refused: "):
            self._plain_tip = text  # shown again once the refusal clears
            return
        super().setToolTip(text)  # type: ignore[misc]


class SignificantSpinBox(_TypedNumber, QDoubleSpinBox):
    """The app's box for typing a decimal number (temperatures, learning rates, components).

    - Accepts what a scientist types: '1e-3', '5e-2', '2e2', '1.5e1', '.5', '-.5', and '2,5'
      where the locale's decimal point is a comma. Nothing typed is ever turned into another
      number: characters are never dropped while typing, and a committed text that is not a
      number, or is outside [minimum, maximum], is *refused*: the value stays as it was, the
      box gets a red frame and a tool tip saying why, and :attr:`refused` is emitted with the
      reason. The next accepted value clears the refusal.
    - Shows ``digits`` significant digits, positional (0.001234, 1.5, 1000); a value typed with
      more digits is kept exactly (committing the shown text again does not round it).
    - The arrows step by a tenth of the value's decade (adaptive steps), or by ``step``.
    - Keyboard tracking is off: the value changes when the text is committed (Enter, focus
      out), not at each keystroke ('5e-2' never passes through 5).

    :class:`WholeNumberBox` is the same for whole numbers.
    """

    refused = Signal(str)

    def __init__(
        self,
        minimum: float,
        maximum: float,
        *,
        digits: int = 4,
        step: float | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._digits = int(digits)
        self._init_typed()
        # Decimals only bound what the value keeps (QDoubleSpinBox rounds to them): enough for
        # any typed value at the scale of the range; the display has its own digits.
        scale = max(abs(minimum), abs(maximum), 1e-300)
        self.setDecimals(max(0, min(15 - math.floor(math.log10(scale)), 300)))
        self.setRange(minimum, maximum)
        if step is None:
            self.setStepType(QAbstractSpinBox.StepType.AdaptiveDecimalStepType)
        else:  # a range through 0, where a tenth of the value's decade would be 1e-13
            self.setSingleStep(step)

    def textFromValue(self, value: float) -> str:  # Qt's name
        return significant_text(value, self._digits)

    def valueFromText(self, text: str) -> float:  # Qt's name
        if text.strip() == self.textFromValue(self.value()):
            return self.value()  # the shown (rounded) text stands for the exact value
        try:
            return self._parse(text)
        except ValueError:
            return self.value()


class WholeNumberBox(_TypedNumber, QSpinBox):
    """The app's box for typing a whole number (d_k, counts, seeds): like
    :class:`SignificantSpinBox`, so '1e3' is 1000 (not 13), and '2.5' is refused as not whole."""

    refused = Signal(str)

    def __init__(self, minimum: int, maximum: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._init_typed()
        self.setRange(int(minimum), int(maximum))

    def _parse(self, text: str) -> float:
        value = super()._parse(text)
        if value != math.floor(value):
            raise ValueError(f"{text.strip()} is not a whole number")
        return value

    def textFromValue(self, value: int) -> str:  # Qt's name
        return str(int(value))

    def valueFromText(self, text: str) -> int:  # Qt's name
        try:
            value = self._parse(text)
        except ValueError:
            return self.value()
        return int(value) if abs(value) < 2**31 else self.value()
