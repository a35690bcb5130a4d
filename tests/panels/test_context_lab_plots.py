"""The long-context lab's plots keep their frame (axes, ticks, title) as a picture and draw only
the curves, the k line, the bars and the best key's label over it: the kept painting is the
plot as pyqtgraph paints it, an edit that keeps the ranges draws the engine's new numbers over
the kept frame, and a new range paints the frame again."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QWidget

from attnsim.engine import edits
from attnsim.engine.long_context import distractor_sweep, duplicated_facts
from attnsim.panels.context_lab import ContextLabPanel, ContextLabState
from attnsim.panels.context_lab.plots import KIND_COLOURS, FramedPlot
from attnsim.panels.kit import painted
from attnsim.panels.kit.numbers import fmt_fixed


def _render(widget) -> QImage:
    image = QImage(widget.size(), painted.SCREEN_FORMAT)
    image.fill(QColor("white"))
    QWidget.render(widget, image)
    return image


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4).copy()


def _plots(panel) -> list[FramedPlot]:
    return [panel.weight_plot, panel.shift_plot, panel.bars]


@pytest.fixture
def panel(make_wb, show_panel):
    p = show_panel(ContextLabPanel(make_wb("river-bank")), size=(800, 560))
    p.set_setting("kind", "duplicate")  # the dashed curve of the fact as a whole drawn too
    p.flush()
    for _ in range(2):  # the axes take their widths from their first painting
        _render(p)
        QApplication.processEvents()
    return p


def _fresh(panel, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    """The panel as pyqtgraph paints its plots (the whole scene, no kept frame)."""
    with monkeypatch.context() as m:
        m.setattr(FramedPlot, "keep_frame", False)
        frames = [p.frame_paints for p in _plots(panel)]
        fresh = _pixels(_render(panel))
        assert [p.frame_paints for p in _plots(panel)] == frames  # (no frame was used)
        return fresh


def _same(a: np.ndarray, b: np.ndarray) -> None:
    assert a.shape == b.shape
    # a few dozen antialiased pixels where a curve meets the view box's edge may differ (a
    # missing label or curve is hundreds)
    assert np.mean(np.any(a != b, axis=-1)) < 3e-4


def test_kept_painting_matches_the_scene_painted_afresh(panel, monkeypatch):
    kept = _pixels(_render(panel))
    assert all(p.frame_paints >= 1 for p in _plots(panel))  # the kept path was taken
    _same(kept, _fresh(panel, monkeypatch))


def test_an_edit_draws_the_engines_numbers_over_the_kept_frame(panel, monkeypatch):
    wb = panel.wb
    frames = [p.frame_paints for p in _plots(panel)]
    before = _pixels(_render(panel))
    x = np.array(wb.scenario.X[0]) + 0.05  # a token's vector moves a little: the same ranges
    wb.edit(edits.set_vector(wb.scenario, "x", 0, x), "test")
    panel.flush()
    QApplication.processEvents()
    after = _pixels(_render(panel))
    assert [p.frame_paints for p in _plots(panel)] == frames  # the frames were kept
    assert np.any(before != after)  # the new numbers are drawn
    _same(after, _fresh(panel, monkeypatch))  # where pyqtgraph draws them
    # and the curves drawn are the engine's sweep for the edited scenario
    tr, i, st = wb.trace, wb.receiving, wb.lab_state(ContextLabState)
    best = int(np.argmax(np.where(tr.mask[i], tr.weights[i], -np.inf)))
    ek, ev = duplicated_facts(tr.K[best], tr.V[best], st.k_max)
    s = distractor_sweep(tr.Q[i], tr.K, tr.V, ek, ev, divisor=tr.divisor, allowed=tr.mask[i])
    _, y = panel.weight_plot.curves["duplicate"].getData()
    np.testing.assert_allclose(y, s.best_weight, rtol=0, atol=1e-15)
    _, y = panel.shift_plot.curves["duplicate"].getData()
    np.testing.assert_allclose(y, s.shift, rtol=0, atol=1e-15)
    heights = panel.bars.bars.opts["height"]
    assert heights[best] == pytest.approx(s.best_weight[st.k], abs=1e-15)
    label = panel.bars.best_text.textItem.toPlainText()
    assert label == f"{wb.scenario.tokens[best]}: {fmt_fixed(s.best_weight[st.k], 3)}"


def test_another_kind_recolours_the_inserted_bars(panel, monkeypatch):
    brushes = list(panel.bars.bars.opts["brushes"])
    assert panel.set_setting("kind", "noisy")
    panel.flush()
    QApplication.processEvents()
    now = panel.bars.bars.opts["brushes"]
    role = panel.bars._role
    inserted = np.flatnonzero(role == 2)
    assert inserted.size
    for j in inserted:
        assert now[j].color() == KIND_COLOURS["noisy"] != brushes[j].color()
    _same(_pixels(_render(panel)), _fresh(panel, monkeypatch))


def test_a_new_range_paints_the_frame_again(panel, monkeypatch):
    frames = [p.frame_paints for p in _plots(panel)]
    k_max = panel.wb.lab_state(ContextLabState).k_max
    assert panel.set_setting("k_max", k_max // 2)  # the k axes shrink
    panel.flush()
    QApplication.processEvents()
    after = _pixels(_render(panel))
    for plot, n in zip(_plots(panel)[:2], frames[:2], strict=True):
        assert plot.frame_paints > n
    _same(after, _fresh(panel, monkeypatch))


def test_a_new_k_moves_the_line_over_the_kept_sweep_frames(panel, monkeypatch):
    frames = [p.frame_paints for p in _plots(panel)[:2]]
    before = _pixels(_render(panel))
    k = panel.wb.lab_state(ContextLabState).k
    assert panel.set_setting("k", k - 1)
    panel.flush()
    QApplication.processEvents()
    after = _pixels(_render(panel))
    assert [p.frame_paints for p in _plots(panel)[:2]] == frames
    assert panel.weight_plot.marker.value() == k - 1 == panel.shift_plot.marker.value()
    assert np.any(before != after)
    _same(after, _fresh(panel, monkeypatch))


def test_a_resize_paints_the_frame_again(panel, monkeypatch):
    frames = [p.frame_paints for p in _plots(panel)]
    panel.resize(900, 600)
    QApplication.processEvents()
    after = _pixels(_render(panel))
    assert all(p.frame_paints > n for p, n in zip(_plots(panel), frames, strict=True))
    _same(after, _fresh(panel, monkeypatch))
