"""The Real model panel's "Two texts" page, driven with real clicks: a preset pair run in the
background, the chosen token's attention in A, B and A − B in every head, its A/B similarity by
layer, undoable edits, a refusal, a figure, and the window kept responsive while a model runs
(the heartbeat).

Uses the installed model files, as ``test_real_model.py`` does (MiniLM for speed; SmolLM2 for
the heartbeat, the longer run)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QTimer

from attnsim.engine.models.compare import find_token
from attnsim.engine.numbers import fmt_number
from attnsim.export import export_panel
from attnsim.viewmodels.real_heads import PAIRS, PairState, load_then, tokenize
from attnsim.viewmodels.real_model import RealModelState
from tests.panels.test_real_model import click, hover, make_panel

WAIT_MS = 60_000


pytestmark = pytest.mark.usefixtures("models_installed")


@pytest.fixture
def panel(qtbot, show_panel):
    p = make_panel(show_panel, RealModelState(model="minilm", text="the cat sat"), (1100, 800))
    p.show_tab(p.pair_view)
    p.flush()
    yield p
    assert p.wb.runner.shutdown(10)


def run_pair(qtbot, panel) -> None:
    click(qtbot, panel.pair_view.run_button)
    qtbot.waitUntil(lambda: not panel.busy and panel.pair.result is not None, timeout=WAIT_MS)
    panel.flush()


def independent_cosines(model_name: str, a: str, b: str, token: str) -> np.ndarray:
    model, _ = load_then(model_name, lambda f: None)
    ia, pa = tokenize(model_name, model, a)
    ib, pb = tokenize(model_name, model, b)
    xa = np.asarray(model.forward(ia).resid, np.float64)[:, find_token(list(pa), token)]
    xb = np.asarray(model.forward(ib).resid, np.float64)[:, find_token(list(pb), token)]
    return np.array(
        [u @ v / np.linalg.norm(u) / np.linalg.norm(v) for u, v in zip(xa, xb, strict=True)]
    )


def test_the_bank_pair_runs_and_shows_every_head_and_the_similarity(qtbot, panel):
    view = panel.pair_view
    assert view.text_a.text() == PAIRS["bank"].a and panel.pair.result is None
    run_pair(qtbot, panel)
    r = panel.pair.result
    assert len(view.grid.cell_rects()) == 6 * 12
    assert view.plot.cosine.shape == (7,)
    expected = independent_cosines("minilm", PAIRS["bank"].a, PAIRS["bank"].b, "bank")
    np.testing.assert_allclose(view.plot.cosine, expected, atol=1e-4)
    # the two senses drift apart: less alike after the last layer than nothing (1) says
    assert view.plot.cosine[-1] < 0.99
    np.testing.assert_allclose(view.grid.maps, r.comparison.attention_a - r.comparison.attention_b)
    assert "'bank' in A (position" in view.note.text()
    assert panel.wb.undo_stack.count() == 0  # the preset's texts were the state's


def test_showing_a_or_b_is_undoable_and_the_hover_gives_both_weights(qtbot, panel):
    run_pair(qtbot, panel)
    view, r = panel.pair_view, panel.pair.result
    view.side.setCurrentIndex(view.side.findData("a"))
    panel.flush()
    assert panel.wb.lab_state(PairState).side == "a"
    np.testing.assert_array_equal(view.grid.maps, r.comparison.attention_a)
    rect = view.grid.cell_rects()[(2, 3)]
    n = len(r.comparison.columns)
    pos = QPoint(round(rect.left() + 1.5 * rect.width() / n), round(rect.center().y()))
    col = int((pos.x() - rect.left()) / rect.width() * n)  # the key under the mouse
    tip = hover(view.grid, pos)
    assert f"on {r.comparison.columns[col][0].strip()!r}" in tip
    wa = float(r.comparison.attention_a[2, 3, col])
    assert tip.startswith("L2H3") and f"A {fmt_number(wa, 4)}" in tip
    panel.wb.undo_stack.undo()
    panel.flush()
    assert panel.wb.lab_state(PairState).side == "diff"
    assert view.side.currentData() == "diff"


def test_a_preset_is_one_undo_step_and_typed_texts_run_as_one_more(qtbot, panel):
    view = panel.pair_view
    view.preset.setCurrentIndex(view.preset.findData("names"))
    panel.flush()
    st = panel.wb.lab_state(PairState)
    assert (st.a, st.b, st.token) == (PAIRS["names"].a, PAIRS["names"].b, "to")
    assert view.text_b.text() == PAIRS["names"].b
    same = "the bank of the river"
    view.text_a.setText(same)
    view.text_b.setText(same)
    view.token.setText("bank")
    run_pair(qtbot, panel)
    st = panel.wb.lab_state(PairState)
    assert (st.preset, st.a, st.token) == ("", same, "bank")
    # the same text twice: every stream alike and no head differs
    np.testing.assert_allclose(view.plot.cosine, 1.0, atol=1e-5)
    assert np.abs(view.grid.maps).max() < 1e-6
    assert panel.wb.undo_stack.count() == 2
    panel.wb.undo_stack.undo()
    panel.wb.undo_stack.undo()
    panel.flush()
    assert panel.wb.lab_state(PairState).a == PAIRS["bank"].a == view.text_a.text()


def test_an_empty_text_or_a_token_missing_is_refused_and_nothing_changes(qtbot, panel):
    view = panel.pair_view
    before = panel.wb.lab_state(PairState)
    view.text_b.setText("   ")
    click(qtbot, view.run_button)
    panel.flush()
    assert "text B is empty" in panel.refusal.text()
    assert panel.wb.lab_state(PairState) == before and not panel.busy
    view.text_b.setText("The river was calm.")
    run_pair_failed = panel.pair
    click(qtbot, view.run_button)
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_MS)
    panel.flush()
    assert "'bank' is not in the text" in panel.refusal.text()
    assert run_pair_failed.result is None


def test_the_figure_has_the_grid_and_the_plot_with_whole_labels(qtbot, panel, tmp_path):
    from attnsim import export
    from tests.app.figure_layout import cut_texts, overlapping_texts, record

    run_pair(qtbot, panel)
    view = panel.pair_view
    parts = panel.figure_widgets()
    assert view.grid in parts and view.plot in parts and view.run_button not in parts
    layout = record(export.figure_of(panel, "figure"))
    texts = [t.text for t in layout.texts]
    assert "L0" in texts and "H11" in texts and any("cosine similarity" in t for t in texts)
    assert cut_texts(layout) == [] and overlapping_texts(layout) == []
    path = tmp_path / "pair.svg"
    export_panel(panel, path)
    assert "cosine similarity of" in path.read_text()


@pytest.mark.parametrize(
    ("model", "page", "button"),
    [
        ("smollm2", "pair_view", "run_button"),  # two texts through SmolLM2
        ("minilm", "patch_view", "patch_button"),  # every head and position patched
    ],
)
def test_the_window_keeps_ticking_while_a_model_runs(qtbot, show_panel, model, page, button):
    p = make_panel(show_panel, RealModelState(model=model, text="a b"), (1100, 800))
    if page == "patch_view":
        p.wb.set_lab_state(PairState.of_preset("names"), "names")
    view = getattr(p, page)
    p.show_tab(view)
    p.flush()
    ticks_while_busy: list[bool] = []

    def tick() -> None:
        ticks_while_busy.append(p.busy)

    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(tick)
    timer.start()
    t0 = time.perf_counter()
    click(qtbot, getattr(view, button))
    assert p.busy  # the run is in the background: the click returned at once
    qtbot.waitUntil(lambda: not p.busy, timeout=WAIT_MS)
    seconds = time.perf_counter() - t0
    timer.stop()
    assert p.refusal.text() == ""
    # The window's own timer went on firing while the model ran: the event loop was free.
    # How long it waited between ticks is a speed figure, measured by the benchmarks.
    busy_ticks = sum(ticks_while_busy)
    assert busy_ticks >= 3, f"{busy_ticks} ticks during a {seconds:.2f} s run"
    assert p.wb.runner.shutdown(10)


def test_contributions_replace_the_weights_in_the_maps_with_the_same_readout(qtbot, panel):
    from attnsim.engine.models.contributions import contributions

    run_pair(qtbot, panel)
    view, r = panel.pair_view, panel.pair.result
    view.maps.setCurrentIndex(view.maps.findData("contributions"))
    view.side.setCurrentIndex(view.side.findData("a"))
    panel.flush()
    assert panel.wb.lab_state(PairState).maps == "contributions"
    # independently: |alpha_ij v_j W_O^h| of the token's row in text A, at the aligned keys
    model, _ = load_then("minilm", lambda f: None)
    ids, _ = tokenize("minilm", model, PAIRS["bank"].a)
    per_head = contributions(model, model.forward(ids)).per_head
    row = r.comparison.position_a
    for col, (_, pos_a, _) in enumerate(r.comparison.columns):
        want = per_head[:, :, row, pos_a] if pos_a is not None else 0.0
        np.testing.assert_allclose(view.grid.maps[:, :, col], want, rtol=1e-5, atol=1e-6)
    rect = view.grid.cell_rects()[(1, 1)]
    n = len(r.comparison.columns)
    pos = QPoint(round(rect.left() + 0.5 * rect.width() / n), round(rect.center().y()))
    tip = hover(view.grid, pos)
    assert "contributions, text A" in tip
    assert f"A {fmt_number(float(r.contribution_a[1, 1, 0]), 4)}" in tip
    panel.wb.undo_stack.undo()
    panel.wb.undo_stack.undo()
    panel.flush()
    np.testing.assert_allclose(view.grid.maps, r.comparison.attention_a - r.comparison.attention_b)
