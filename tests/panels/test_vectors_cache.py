"""The vector editor keeps the plane's projection and the table between refreshes and redoes
only the rows an edit changed: after an edit, an undo, a new document or a switch of plane it
must show exactly what a fresh panel shows."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from attnsim.engine.scenario import random_scenario
from attnsim.panels.vectors import VectorEditorPanel, best_share
from attnsim.viewmodels.vectors import (
    Projection,
    axis_plane,
    changed_rows,
    fitted_plane,
    fraction_in_plane,
    plane_controls,
    plane_info,
    project,
    target,
)

SIZE = (700, 450)


def long_scenario(seed: int = 0, n: int = 300, d: int = 8):
    return random_scenario(n, d, seed=seed, mask="causal", receiving=n - 1, name="long")


def shown(panel: VectorEditorPanel) -> dict:
    """What the panel shows: the plane's picture and tips, the caption, the table's numbers."""
    panel.flush()
    QApplication.processEvents()
    t, view = panel.table, panel.plane_view
    rows = range(min(t.rowCount(), 12))
    return {
        "image": view.grab().toImage(),
        "tips": view.tips.copy(),
        "info": panel.info.text(),
        "cells": [t.item(r, c).text() for r in rows for c in range(t.columnCount())],
        "values": np.array(t.array_model.values),
    }


def assert_same(a: dict, b: dict) -> None:
    assert a["info"] == b["info"]
    assert a["cells"] == b["cells"]
    assert np.array_equal(a["values"], b["values"])
    assert np.array_equal(a["tips"], b["tips"])
    assert a["image"] == b["image"]


def fresh(make_wb, show_panel, sc) -> dict:
    return shown(show_panel(VectorEditorPanel(make_wb(sc)), size=SIZE))


def edited(sc, row: int, delta: float):
    X = np.array(sc.X)
    X[row] += delta
    return sc.replace(X=X)


def test_an_edit_an_undo_and_a_new_document_show_what_a_fresh_panel_shows(make_wb, show_panel):
    sc = long_scenario()
    wb = make_wb(sc)
    panel = show_panel(VectorEditorPanel(wb), size=SIZE)
    assert_same(shown(panel), fresh(make_wb, show_panel, sc))
    wb.edit(edited(wb.scenario, 5, 0.7), "edit one row")
    wb.finish_trace()
    assert_same(shown(panel), fresh(make_wb, show_panel, wb.scenario))
    # The longest arrow moves: the named arrows and the view's fit change too.
    wb.edit(edited(wb.scenario, 9, 40.0), "edit another row")
    assert_same(shown(panel), fresh(make_wb, show_panel, wb.scenario))
    wb.undo_stack.undo()
    assert_same(shown(panel), fresh(make_wb, show_panel, wb.scenario))
    wb.undo_stack.undo()
    assert_same(shown(panel), fresh(make_wb, show_panel, sc))
    other = long_scenario(seed=1)  # the same shape and names, other numbers
    wb.load(other)
    assert_same(shown(panel), fresh(make_wb, show_panel, other))


def test_another_pair_of_axes_after_an_edit_shows_what_a_fresh_panel_shows(make_wb, show_panel):
    sc = long_scenario()
    wb = make_wb(sc)
    panel = show_panel(VectorEditorPanel(wb), size=SIZE)
    wb.edit(edited(sc, 3, -0.5), "edit")
    shown(panel)
    panel.set_plane("axes", (2, 5))
    after = shown(panel)
    other = show_panel(VectorEditorPanel(make_wb(wb.scenario)), size=SIZE)
    other.set_plane("axes", (2, 5))
    assert_same(after, shown(other))


def test_the_best_plane_keeps_its_tips_and_share_exact_through_edits(make_wb, show_panel):
    wb = make_wb(long_scenario())
    panel = show_panel(VectorEditorPanel(wb), size=SIZE)
    panel.set_plane("best")
    for row, delta in ((5, 0.3), (7, -2.0)):
        wb.edit(edited(wb.scenario, row, delta), "edit")
        shown(panel)
        X, plane = np.asarray(wb.scenario.X), panel._plane
        np.testing.assert_allclose(panel.plane_view.tips, project(X, plane), rtol=1e-13, atol=0)
        share = fraction_in_plane(X, plane)
        assert panel._shown.projection.share == pytest.approx(share, rel=1e-13)
        assert f"plane explains {share:.0%}" in panel.info.text()
    wb.undo_stack.undo()
    shown(panel)
    np.testing.assert_allclose(
        panel.plane_view.tips, project(np.asarray(wb.scenario.X), panel._plane), rtol=1e-13
    )


# ---- the view-model ------------------------------------------------------------------------------
def test_a_projection_made_from_the_one_before_is_the_fresh_one():
    rng = np.random.default_rng(3)
    M = rng.normal(size=(200, 6))
    plane = axis_plane(6, 4, 1)
    before = Projection.of(M, plane)
    assert np.array_equal(before.tips, project(M, plane))
    assert before.share == fraction_in_plane(M, plane)
    M2 = M.copy()
    M2[[3, 150]] = rng.normal(size=(2, 6)) * 5
    assert changed_rows(M, M2).tolist() == [3, 150]
    after = Projection.of(M2, plane, before)
    assert np.array_equal(after.tips, project(M2, plane))
    assert np.array_equal(after.lengths, Projection.of(M2, plane).lengths)
    assert after.share == fraction_in_plane(M2, plane)
    assert Projection.of(M2, plane, after) is after  # nothing changed: nothing redone
    # Many rows changed, another shape or another plane: made afresh, the same numbers.
    M3 = rng.normal(size=(200, 6))
    for m, p in ((M3, plane), (M3[:50], plane), (M2, axis_plane(6, 0, 2))):
        made = Projection.of(m, p, after)
        assert np.array_equal(made.tips, project(m, p))
        assert made.share == fraction_in_plane(m, p)
    best = fitted_plane(M)[0]
    made = Projection.of(M2, best, Projection.of(M, best))
    np.testing.assert_allclose(made.tips, project(M2, best), rtol=1e-13, atol=1e-15)


def test_an_axis_plane_projects_to_the_product_with_its_basis():
    M = np.random.default_rng(0).normal(size=(40, 5))
    M[0, 2] = -0.0
    for plane in (axis_plane(5, 2, 0), axis_plane(5, 4, 3)):
        assert np.array_equal(project(M, plane), M @ plane.basis)
    one = np.arange(4.0).reshape(4, 1)
    assert np.array_equal(project(one, axis_plane(1, 0, None)), one @ axis_plane(1, 0, None).basis)


# ---- the best plane's "refit" share, made on the runner for a large matrix ---------------------
def caption_now(panel: VectorEditorPanel) -> str:
    """The caption the view-model writes for the panel's plane, everything computed here."""
    wb = panel.wb
    t = target(wb.scenario, "x", wb.receiving, wb.focused_key)
    return plane_info(t, panel._plane, plane_controls(t.axes, panel._axes, "best"))


def test_a_large_best_plane_share_comes_from_the_runner_and_a_figure_waits_for_it(
    make_wb, show_panel, qtbot, monkeypatch
):
    monkeypatch.setattr(best_share, "LARGE_VALUES", 1)  # every matrix is large
    wb = make_wb(long_scenario())
    panel = show_panel(VectorEditorPanel(wb), size=SIZE)
    panel.set_plane("best")
    qtbot.waitUntil(lambda: "computing" not in panel.info.text(), timeout=10_000)
    assert panel.info.text() == caption_now(panel)
    for row, delta in ((5, 3.0), (8, -4.0)):
        wb.edit(edited(wb.scenario, row, delta), "edit")
        panel.flush()
        assert "(refit: computing…)" in panel.info.text()
        qtbot.waitUntil(lambda: "computing" not in panel.info.text(), timeout=10_000)
        assert panel.info.text() == caption_now(panel)
    wb.undo_stack.undo()
    panel.figure_widgets()  # a figure: made at once
    assert panel.info.text() == caption_now(panel)


def test_names_are_placed_again_only_when_what_they_are_placed_for_changed(make_wb, show_panel):
    sc = long_scenario()
    wb = make_wb(sc)
    panel = show_panel(VectorEditorPanel(wb), size=SIZE)
    shown(panel)  # the first show's layout settled (run first in a process, the plane's
    # caption row took its height a turn later and the names were placed again for it)
    placer = panel.plane_view.labels
    before = placer._last
    dot = int(np.setdiff1d(np.arange(1, 300), panel.plane_view.featured)[0])
    wb.edit(edited(wb.scenario, dot, 0.01), "move a dot")  # no name moves
    after = shown(panel)
    assert placer._last is before
    assert_same(after, fresh(make_wb, show_panel, wb.scenario))
    wb.edit(edited(wb.scenario, int(panel.plane_view.featured[0]), 0.5), "move a name")
    after = shown(panel)
    assert placer._last is not before
    assert_same(after, fresh(make_wb, show_panel, wb.scenario))


class Told:
    def arrived(self) -> None:
        pass


def test_a_large_best_plane_share_is_not_asked_for_during_a_drag(make_wb, monkeypatch):
    monkeypatch.setattr(best_share, "LARGE_VALUES", 1)
    wb = make_wb(long_scenario())
    told = Told()
    shares = best_share.BestShares(wb, told.arrived)
    t = target(wb.scenario, "x", wb.receiving, wb.focused_key)
    fn = best_share.BEST_SHARE["x"]
    assert np.isnan(shares.get(t, True, wait=True)) and not wb.derived_pending(fn)
    assert shares.get(t, False) is None
    shares.now = True
    assert shares.get(t, True, wait=True) == pytest.approx(fitted_plane(wb.scenario.X)[1].sum())
