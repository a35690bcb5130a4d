"""The app's number boxes: ``SignificantSpinBox`` for decimals and ``WholeNumberBox`` for whole
numbers. Both accept what a scientist types and refuse anything else visibly, never silently."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFocusEvent, QKeyEvent, QValidator
from PySide6.QtWidgets import QAbstractSpinBox, QDoubleSpinBox, QSpinBox, QWidget

from .number_entry import parse_typed_number, significant_text

__all__ = ["SignificantSpinBox", "WholeNumberBox"]


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
            side = f"below {shown[0]}" if value < lo else f"above {shown[1]}"
            return f"{text.strip()} is {side}, outside the range {shown[0]} to {shown[1]}"
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
        if event.key() == Qt.Key.Key_Escape:
            # Escape takes the typing back: Qt's spin box kept the text and committed it when
            # focus left, so "4, Escape, click elsewhere" still set 4
            edit = self.lineEdit()  # type: ignore[attr-defined]
            edit.setText(self.textFromValue(self.value()))  # type: ignore[attr-defined]
            edit.selectAll()
            event.accept()
            return
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
