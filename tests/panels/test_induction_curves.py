"""The induction lab's training curves keep their frame (axes, ticks, title) as a picture and
draw only the curves when new points arrive; the kept painting is the plot as pyqtgraph paints
it."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QWidget

from attnsim.model.induction_session import CurvePoint
from attnsim.panels.induction_lab.curves import CachedPlot, CurvesView
from attnsim.panels.kit import painted


def _points(n: int) -> list[CurvePoint]:
    return [
        CurvePoint(10 * i, 3 - 0.01 * i, 3 - 0.02 * i, min(1.0, 0.01 * i), 0.5) for i in range(n)
    ]


def _render(widget) -> QImage:
    image = QImage(widget.size(), painted.SCREEN_FORMAT)
    image.fill(QColor("white"))
    QWidget.render(widget, image)  # (a plot's own render() paints its scene)
    return image


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_ARGB32)
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4).copy()


def _shown(qtbot, points: list[CurvePoint], width: int = 600) -> CurvesView:
    """A CurvesView on screen with ``points``, painted until its axes have settled."""
    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(width, 300)
    view.show()
    qtbot.waitExposed(view)
    view.refresh(points)
    for _ in range(2):  # the axes take their widths from their first painting
        _render(view)
        QApplication.processEvents()
    return view


@pytest.fixture
def curves(qtbot):
    view = _shown(qtbot, _points(55))
    return view


def test_kept_painting_matches_the_scene_painted_afresh(curves, monkeypatch):
    kept = _pixels(_render(curves))
    for plot in (curves.loss_plot, curves.score_plot):
        plot.picture.clear()
    monkeypatch.setattr(CachedPlot, "_paint_scene", CachedPlot._render)  # pyqtgraph's own
    fresh = _pixels(_render(curves))
    assert kept.shape == fresh.shape
    assert np.mean(np.any(kept != fresh, axis=-1)) < 1e-3  # a few pixels where curves meet axes


def test_new_points_redraw_the_curves_over_the_kept_frame(curves):
    plot = curves.loss_plot
    frames, paints = plot.frame_paints, plot.picture.paints
    before = _pixels(_render(curves))
    curves.refresh(_points(58))  # the same ranges (0 to 600 steps, 0 to 3 nats)
    QApplication.processEvents()  # the scene's report of the change comes a turn later
    after = _pixels(_render(curves))
    assert plot.picture.paints > paints  # the curves drawn again
    assert plot.frame_paints == frames  # over the frame kept from before
    assert np.any(before != after)  # the new points are on it
    again = plot.picture.paints
    QApplication.processEvents()
    _render(curves)
    assert plot.picture.paints == again  # nothing new: a copy


def test_a_new_range_paints_the_frame_again(curves):
    plot = curves.loss_plot
    frames = plot.frame_paints
    curves.refresh(_points(200))  # 1,990 steps: the step axis grows
    QApplication.processEvents()
    _render(curves)
    assert plot.frame_paints > frames


def test_the_steps_axis_ends_on_few_round_numbers():
    from attnsim.panels.induction_lab.curves import step_top

    assert [step_top(x) for x in (10, 11, 15, 16, 99, 101, 390, 401, 1000, 1001)] == [
        10,
        15,
        15,
        20,
        100,
        150,
        400,
        500,
        1000,
        1500,
    ]
    for x in np.linspace(10, 100_000, 997):
        assert x <= step_top(x) <= 1.5 * x  # at most a third of the plot empty
    ends = {step_top(x) for x in range(10, 1000)}
    assert len(ends) == 17  # a few jumps a decade, not one per training chunk


def test_before_training_the_plots_say_so_and_the_kept_frame_forgets_it(qtbot):
    # Empty axes on a slide (or on screen) say why they are empty; once there are steps the
    # sentence goes, and the frame kept as a picture is painted again without it.
    view = _shown(qtbot, [CurvePoint(0, 3.0, 3.0, 0.0, 0.0)])  # the evaluation before a step
    plots = (view.loss_plot, view.score_plot)
    assert all(p.note is not None and p.note.shown() for p in plots)
    empty = _pixels(_render(view))
    view.refresh(_points(5))  # the same ranges: the frame is kept unless told otherwise
    assert not any(p.note.shown() for p in plots)
    for _ in range(2):
        QApplication.processEvents()  # the scene's report of the change comes a turn later
        trained = _pixels(_render(view))
    fresh = _shown(qtbot, _points(5))
    assert np.mean(np.any(trained != _pixels(_render(fresh)), axis=-1)) < 1e-3
    # the sentence was drawn: the middle of the empty view box is not blank
    vb = view.loss_plot.plotItem.getViewBox()
    centre = view.loss_plot.mapFromScene(vb.sceneBoundingRect().center())
    middle = empty[centre.y() - 6 : centre.y() + 6, centre.x() - 40 : centre.x() + 40, :3]
    assert (middle < 200).any()


@pytest.mark.parametrize("width", [420, 470, 1200])
def test_a_plot_title_is_never_cut_it_takes_two_lines_in_a_narrow_dock(qtbot, width):
    # At 1,024 x 768 the titles read "Loss of the first and repeated" and "Best induction and
    # previous-": now they wrap after "and" where one line does not fit.
    view = CurvesView()
    qtbot.addWidget(view)
    view.resize(width, 300)
    view.show()
    qtbot.waitExposed(view)
    for _ in range(3):  # (a new title lays the plot out again in a later turn)
        QApplication.processEvents()
    for plot in (view.loss_plot, view.score_plot):
        label = plot.plotItem.titleLabel
        # a title wider than the room over the view box widened the plot past its widget,
        # which cut its right side off (an export of every panel at 1,024 x 768 did)
        assert plot.plotItem.geometry().width() <= plot.width() + 0.5
        assert label.item.boundingRect().width() <= plot.width()
        if width != 470:  # (between them it depends on the font)
            assert ("<br>" in label.text) == (width == 420)
        assert "repeated half" in view.loss_plot.plotItem.titleLabel.text
