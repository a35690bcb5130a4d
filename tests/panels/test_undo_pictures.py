"""An undo after an extreme edit restores every panel's picture exactly (grabbed images equal).

Once, typing 1e200 into a Vectors cell left the plane blank ("nan% of ‖X‖²") even after Ctrl+Z.
Now such a value is refused; the values that are accepted, up to ±MAX_ABS_VALUE and down to
1e-6, must leave nothing behind once undone.
"""

from __future__ import annotations

import pytest
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

# Panels whose picture is not a function of the scenario alone: the stepper draws its own
# training run, the scaling lab a background experiment that progresses with time, the audit
# prints how long it took, and the projections grids tint the cells the last change touched
# (an undo is a change too); their numbers are compared instead.
NOT_A_PICTURE_OF_THE_SCENARIO = {"stepper", "scaling_lab", "audit", "projections"}


def settle(panels) -> None:
    for _ in range(4):
        QApplication.processEvents()
    for p in panels:
        p.flush()
    QApplication.processEvents()


def pictures(panels) -> dict[str, QImage]:
    settle(panels)
    out = {}
    for p in panels:
        if p.panel_id == "vectors":
            # The plane, and the table's texts and column widths: a refusal shows a line under
            # the table, which leaves the table less height (that is the refusal being seen).
            t = p.table
            out["vectors.plane"] = p.plane_view.grab().toImage()
            out["vectors.table"] = (
                [t.item(r, c).text() for r in range(t.rowCount()) for c in range(t.columnCount())],
                [t.columnWidth(c) for c in range(t.columnCount())],
            )
        elif p.panel_id == "projections":
            out["projections"] = [
                [b.grid.item(r, c).text() for r in range(b.grid.rowCount())
                 for c in range(b.grid.columnCount())]
                for b in p.blocks.values()
            ]  # fmt: skip
        else:
            out[p.panel_id] = p.grab().toImage()
    return out


@pytest.mark.parametrize("value", ["1e6", "-1e6", "1e-6", "1e200"])
def test_undo_after_an_extreme_edit_restores_every_picture_exactly(qtbot, make_wb, value):
    from attnsim.panels import panel_classes

    wb = make_wb("river-bank")
    panels = []
    for cls in panel_classes():
        if cls.panel_id in NOT_A_PICTURE_OF_THE_SCENARIO - {"projections"}:
            continue
        p = cls(wb)
        qtbot.addWidget(p)
        p.resize(700, 480)
        p.show()
        panels.append(p)
    before = pictures(panels)
    vectors = next(p for p in panels if p.panel_id == "vectors")
    vectors.table.item(2, 2).setText(value)  # bank, water
    if wb.undo_stack.count():
        during = pictures(panels)
        assert during["vectors.plane"] != before["vectors.plane"]  # the edit showed
        wb.undo_stack.undo()
    after = pictures(panels)
    assert [k for k in before if after[k] != before[k]] == []
