"""The Real model panel's "Lens and flow" page, driven with real clicks: SmolLM2's logit lens of
text A as a layers x positions table of the top next token, the attention rollout of the chosen
token beside the last layer's weights, MiniLM's flow without a lens, and a figure with whole
token labels."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim import export
from attnsim.engine.numbers import fmt_number
from attnsim.viewmodels.real_heads import PairState
from attnsim.viewmodels.real_model import RealModelState
from tests.app.figure_layout import cut_texts, record
from tests.panels.test_real_model import click, make_panel

WAIT_MS = 60_000
TEXT = "One, two, three, four, five, six"


pytestmark = pytest.mark.usefixtures("models_installed")


def lens_panel(show_panel, model: str):
    p = make_panel(show_panel, RealModelState(model=model, text="a b"), (1100, 800))
    p.wb.set_lab_state(PairState("", TEXT, TEXT, "three"), "text")
    p.show_tab(p.lens_view)
    p.flush()
    return p


def run(qtbot, panel) -> None:
    click(qtbot, panel.lens_view.run_button)
    qtbot.waitUntil(lambda: not panel.busy and panel.lens.flow is not None, timeout=WAIT_MS)
    panel.flush()


def test_the_lens_table_and_the_flow_of_smollm2(qtbot, show_panel):
    p = lens_panel(show_panel, "smollm2")
    run(qtbot, p)
    lens, flow, t = p.lens.lens, p.lens.flow, p.lens_view.table
    assert (t.rowCount(), t.columnCount()) == (30, len(lens.pieces))
    # each cell: the top token read after that layer and its probability
    piece = lens.top_pieces[12][3]
    prob = fmt_number(float(lens.lens.top_probs[12, 3, 0]), 2)
    assert t.item(12, 3).text() == f"{piece.strip() or repr(piece)} {prob}"
    assert t.verticalHeaderItem(29).text() == "L29"
    # counting on: after each comma the last layer reads the next number of the text, which
    # the middle layers (L10) do not yet
    for i in (5, 7, 9):
        assert lens.pieces[i] == ","
        assert lens.top_pieces[-1][i] == lens.pieces[i + 1] != lens.top_pieces[10][i]
    # the rollout of a token is a distribution over the tokens it can see (causal: none later)
    pos = flow.flow.position
    np.testing.assert_allclose(flow.flow.rollout.sum(), 1.0, atol=1e-4)
    assert np.abs(flow.flow.rollout[pos + 1 :]).max() < 1e-6
    np.testing.assert_allclose(p.lens_view.flow.values[1], flow.flow.last_weights)
    assert "Attention flow of 'three'" in p.lens_view.note.text()
    # the model's own next token at the end, by layer: it rises in the upper layers
    plot = p.lens_view.by_layer
    np.testing.assert_allclose(plot.values, lens.lens.token_probs[:, -1], atol=1e-6)
    assert plot.isVisible() and lens.token_piece.strip() in plot.title
    assert plot.values[0] < 0.01 and plot.values[-1] > 0.3
    assert p.wb.runner.shutdown(10)


def test_minilm_has_the_flow_and_says_why_there_is_no_lens(qtbot, show_panel):
    p = lens_panel(show_panel, "minilm")
    run(qtbot, p)
    assert p.lens.lens is None and p.lens_view.table.rowCount() == 0
    assert not p.lens_view.by_layer.isVisible()  # no next token to follow
    assert p.lens_view.flow.values.shape == (2, len(p.lens.flow.pieces))
    assert "The logit lens needs SmolLM2" in p.lens_view.note.text()
    assert p.wb.runner.shutdown(10)


def test_the_lens_figure_shows_every_piece_whole(qtbot, show_panel):
    p = lens_panel(show_panel, "minilm")
    run(qtbot, p)
    parts = p.figure_widgets()
    assert p.lens_view.flow in parts and p.lens_view.run_button not in parts
    layout = record(export.figure_of(p, "figure"))
    texts = [t.text for t in layout.texts]
    for piece in p.lens.flow.pieces:
        assert piece.strip() in texts
    assert "rollout" in texts and "last layer" in texts
    assert cut_texts(layout) == []
    assert p.wb.runner.shutdown(10)
