"""The Real model panel's "Patching" page, driven with real clicks: text A patched into text B
in the background (MiniLM, for speed), the heads' and the residual stream's maps of the gap
restored, a click on a head opening it, a refusal for texts of different lengths, and a figure
with whole token labels."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim import export
from attnsim.viewmodels import real_model as rm
from attnsim.viewmodels.real_heads import PAIRS, PairState, load_then, tokenize
from attnsim.viewmodels.real_model import RealModelState
from tests.app.figure_layout import cut_texts, overlapping_texts, record
from tests.panels.test_real_model import click, make_panel

WAIT_MS = 60_000


pytestmark = pytest.mark.usefixtures("models_installed")


@pytest.fixture
def panel(qtbot, show_panel):
    p = make_panel(show_panel, RealModelState(model="minilm", text="the cat sat"), (1100, 800))
    p.wb.set_lab_state(PairState.of_preset("names"), "names")
    p.wb.undo_stack.clear()
    p.show_tab(p.patch_view)
    p.flush()
    yield p
    assert p.wb.runner.shutdown(10)


def patch(qtbot, panel) -> None:
    click(qtbot, panel.patch_view.patch_button)
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_MS)
    panel.flush()


def test_patching_the_name_swap_maps_every_head_and_position(qtbot, panel):
    patch(qtbot, panel)
    r = panel.patching.result
    assert r is not None and panel.refusal.text() == ""
    view = panel.patch_view
    assert view.heads.values.shape == (6, 12) and len(view.heads.cell_rects()) == 72
    np.testing.assert_allclose(view.heads.values, r.patching.restored(r.patching.heads))
    # the stream entering layer 0 is the embedding: where both texts have the same token at
    # the same place, patching it changes nothing (MiniLM looks both ways, so only there)
    model, _ = load_then("minilm", lambda f: None)
    ids_a, _ = tokenize("minilm", model, PAIRS["names"].a)
    ids_b, _ = tokenize("minilm", model, PAIRS["names"].b)
    same = ids_a == ids_b
    assert same.any() and (~same).any()
    np.testing.assert_allclose(view.resid.values[0, same], 0.0, atol=1e-4)
    assert np.abs(view.resid.values[0, ~same]).max() > 0.01
    assert view.resid.values.shape == (6, len(r.pieces))
    np.testing.assert_allclose(view.resid.values, r.patching.restored(r.patching.resid))
    best = np.unravel_index(np.argmax(r.heads), r.heads.shape)
    assert f"gap: {rm.head_name(*best)} " in view.note.text()


def test_a_click_on_a_patched_head_opens_it_on_the_two_texts_page(qtbot, panel):
    patch(qtbot, panel)
    rect = panel.patch_view.heads.cell_rects()[(4, 7)]
    click(qtbot, panel.patch_view.heads, rect.center().toPoint())
    panel.flush()
    assert panel.state().selected == (4, 7)
    assert panel.shown_page() is panel.pair_view
    # A and B had not been run on that page: they run now, so it opens on the head's maps
    qtbot.waitUntil(lambda: panel.pair.result is not None and not panel.pair.busy, timeout=WAIT_MS)
    panel.flush()
    assert panel.pair_view.grid.result is panel.pair.result
    assert panel.pair_view.grid.selected == (4, 7)  # framed there
    assert "press Run" not in panel.pair_view.note.text()
    panel.wb.undo_stack.undo()
    assert panel.state().selected == (0, 0)


def test_texts_of_different_lengths_are_refused_with_their_counts(qtbot, panel):
    panel.show_tab(panel.pair_view)
    panel.pair_view.text_b.setText("When John went to the store, Mary gave a drink to")
    click(qtbot, panel.pair_view.run_button)
    qtbot.waitUntil(lambda: not panel.busy, timeout=WAIT_MS)
    panel.show_tab(panel.patch_view)
    patch(qtbot, panel)
    assert "patching needs texts of the same length in tokens" in panel.refusal.text()
    assert panel.patching.result is None


def test_the_next_tokens_typed_are_one_undo_step(qtbot, panel):
    panel.patch_view.good.setText(" Sue")
    panel.patch_view.bad.setText(" Bob")
    before = panel.wb.undo_stack.count()
    patch(qtbot, panel)
    st = panel.wb.lab_state(PairState)
    assert (st.good, st.bad) == (" Sue", " Bob")
    assert panel.wb.undo_stack.count() == before + 1
    panel.wb.undo_stack.undo()
    panel.flush()
    assert panel.patch_view.good.text() == " Mary"


def test_the_patching_figure_names_every_position_with_its_whole_piece(qtbot, panel):
    patch(qtbot, panel)
    view = panel.patch_view
    parts = panel.figure_widgets()
    assert view.heads in parts and view.resid in parts and view.patch_button not in parts
    layout = record(export.figure_of(panel, "figure"))
    texts = [t.text for t in layout.texts]
    for piece in panel.patching.result.pieces:
        assert (piece.strip() or repr(piece)) in texts, piece
    assert "L29" not in texts and "L5" in texts and "H0" in texts
    assert cut_texts(layout) == [] and overlapping_texts(layout) == []
