"""The induction lab's steady labels: a new text that fits lays nothing out again; one that
needs more room gets it (no text cut)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget

from attnsim.panels.induction_lab.steady import SteadyLabel


class _LayoutRequests(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.seen: list[QObject] = []

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # Qt's name
        if event.type() == QEvent.Type.LayoutRequest:
            self.seen.append(obj)
        return False


def _window(qtbot, label: SteadyLabel, width: int = 300) -> QWidget:
    w = QWidget()
    QVBoxLayout(w).addWidget(label)
    qtbot.addWidget(w)
    w.resize(width, 200)
    w.show()
    qtbot.waitExposed(w)
    QApplication.processEvents()
    return w


def test_a_new_text_that_fits_lays_nothing_out(qtbot):
    label = SteadyLabel(wrap=True)
    w = _window(qtbot, label)
    label.setText("loss 2.345; first half 3.456, repeated half 1.234")
    QApplication.processEvents()
    spy = _LayoutRequests()
    QApplication.instance().installEventFilter(spy)
    try:
        label.setText("loss 2.111; first half 3.222, repeated half 1.333")
        QApplication.processEvents()
    finally:
        QApplication.instance().removeEventFilter(spy)
    assert label.text() == "loss 2.111; first half 3.222, repeated half 1.333"
    assert w not in spy.seen and w.layout() is not None


def test_a_longer_text_gets_the_lines_it_needs(qtbot):
    label = SteadyLabel(wrap=True)
    w = _window(qtbot, label, width=160)
    label.setText("short")
    QApplication.processEvents()
    one = label.height()
    label.setText("a much longer text that cannot fit on one line of a narrow window")
    QApplication.processEvents()
    assert label.height() > one
    assert label.label.heightForWidth(label.width()) <= label.label.height()
    assert w.isVisible()


def test_one_line_is_as_wide_as_its_sample_and_widens_for_more(qtbot):
    label = SteadyLabel(widest="step 100000, 999 steps/s")
    w = _window(qtbot, label)
    width = label.width()
    label.setText("step 12")
    assert label.width() == width  # the width foreseen: the controls after it stay put
    label.setText("step 100000000000, 99999 steps/s")
    assert label.width() > width
    assert label.label.sizeHint().width() <= label.label.width() + 1
    assert w.isVisible()
