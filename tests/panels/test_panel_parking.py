"""Panels out of sight with a redraw pending hear nothing of the edits (see panels/parking.py):
they catch up, all at once, when they are shown or flushed."""

from __future__ import annotations

import pytest
import shiboken6
from PySide6.QtWidgets import QApplication, QTabWidget

from attnsim.model.workbench import MATRICES, OPTIONS
from attnsim.panels.base import Panel
from attnsim.panels.parking import Lot


class HeardPanel(Panel):
    panel_id = "heard"
    title = "Heard"

    def __init__(self, wb):
        super().__init__(wb)
        self.heard: list[frozenset[str]] = []
        self.selections = 0
        self.cleared = 0
        self.refreshes = 0
        self.schedule_refresh()  # as every panel does: its first picture

    def _on_changed(self, what):
        self.heard.append(what)
        super()._on_changed(what)

    def _on_selection(self):
        self.selections += 1
        super()._on_selection()

    def clear_refusal(self):
        self.cleared += 1

    def refresh(self):
        self.refreshes += 1


@pytest.fixture
def tabs(make_wb, qtbot):
    """A shown window with two panels as tabs: ``front`` in sight, ``back`` behind it, both
    drawn once, ``back`` parked by the edit that made its redraw due."""
    wb = make_wb("river-bank")
    window = QTabWidget()
    qtbot.addWidget(window)
    front, back = HeardPanel(wb), HeardPanel(wb)
    window.addTab(front, "front")
    window.addTab(back, "back")
    window.resize(500, 400)
    window.show()
    qtbot.waitExposed(window)
    front.flush()
    back.flush()
    wb.edit(wb.scenario.replace(temperature=1.5), "warmer")  # back: due, out of sight
    QApplication.processEvents()
    assert Lot.of(wb).parked == 1 and back._missed is not None
    for p in (front, back):
        p.heard.clear()
        p.cleared = 0
    return wb, window, front, back


def _drag_step(wb, t: float) -> None:
    wb.edit(wb.scenario.replace(temperature=t), "warmer", drag=7)


def test_a_panel_out_of_sight_hears_nothing_of_a_drag(tabs):
    wb, _, front, back = tabs
    for s in range(5):
        _drag_step(wb, 2.0 + s / 10)
        QApplication.processEvents()
    assert len(front.heard) == 5  # in sight: every move
    assert back.heard == [] and back.cleared == 0 and back.refreshes == 1  # parked: nothing
    assert wb.undo_stack.count() == 2  # (the drag is one step)


def test_shown_again_it_hears_what_it_missed_once_and_redraws(tabs, qtbot):
    wb, window, front, back = tabs
    _drag_step(wb, 2.0)
    wb.set_receiving((wb.receiving + 1) % wb.scenario.n_queries)
    sc = wb.scenario
    wb.edit(sc.replace(heads=(sc.heads[0].replace(Wq=sc.heads[0].Wq * 2),)), "Wq")
    window.setCurrentWidget(back)
    qtbot.waitUntil(lambda: back.refreshes == 2, timeout=5000)
    assert len(back.heard) == 1 and {OPTIONS, MATRICES} <= back.heard[0]  # the union
    assert back.selections == 1  # the receiving token changed meanwhile
    assert back.cleared >= 1  # an edit went through: a refusal it showed is out of date
    # front, due when it went out of sight, is parked in its turn
    assert back._missed is None and front._missed is not None and Lot.of(wb).parked == 1
    _drag_step(wb, 3.0)  # in sight again: it hears the next edit itself
    assert len(back.heard) == 2


def test_a_flush_out_of_sight_catches_up_first(tabs):
    wb, _, _, back = tabs
    _drag_step(wb, 2.5)
    back.flush()  # an export draws a panel out of sight
    assert len(back.heard) == 1 and OPTIONS in back.heard[0] and back.refreshes == 2
    assert Lot.of(wb).parked == 0
    _drag_step(wb, 2.6)  # due again, out of sight: parked again
    QApplication.processEvents()
    assert Lot.of(wb).parked == 1 and len(back.heard) == 2


def test_panels_parked_together_share_one_record_and_a_deleted_one_is_dropped(make_wb, qtbot):
    wb = make_wb("river-bank")
    lot = Lot.of(wb)
    a, b, c = HeardPanel(wb), HeardPanel(wb), HeardPanel(wb)
    for p in (a, c):
        qtbot.addWidget(p)
    ma, mb = lot.park(a), lot.park(b)
    assert ma is mb  # nothing changed between: one record
    wb.set_receiving((wb.receiving + 1) % wb.scenario.n_queries)
    mc = lot.park(c)
    assert mc is not ma and ma.selection and not mc.selection
    lot.unpark(a, ma)
    shiboken6.delete(b)
    lot.park(a)  # parking looks for records of deleted panels
    assert lot.parked == 2  # a and c
