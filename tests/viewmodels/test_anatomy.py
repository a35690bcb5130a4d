"""The block's anatomy: every matrix, learned or computed, and counts that match the reference."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.attention import multi_head_counts
from attnsim.engine.scenario import Head, Scenario, compute
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.anatomy import (
    CELL_H,
    CELL_W,
    DiagramData,
    best_fit,
    block_caption,
    block_matrices,
    chip_labels,
    count_lines,
    counts_of,
    layout_diagram,
    score_formula,
    sublayer_shape,
    visible_indices,
)


def _random_block(n: int, h: int, d: int, d_k: int, d_v: int, seed: int = 0) -> Scenario:
    rng = np.random.default_rng(seed)
    heads = tuple(
        Head(rng.normal(size=(d, d_k)), rng.normal(size=(d, d_k)), rng.normal(size=(d, d_v)))
        for _ in range(h)
    )
    return Scenario(
        name="random",
        tokens=tuple(f"t{i}" for i in range(n)),
        X=rng.normal(size=(n, d)),
        heads=heads,
        Wo=rng.normal(size=(h * d_v, d)),
    )


def test_two_heads_lists_every_matrix_in_order_with_the_engines_values():
    sc = resolve_scenario("two-heads")
    result = compute(sc)
    mats = block_matrices(sc, result)
    keys = [m.key for m in mats]
    assert keys == [
        "X",
        *[f"{s}{h}" for h in (0, 1) for s in ("Wq", "Wk", "Wv", "Q", "K", "V", "S", "A", "H")],
        "concat",
        "Wo",
        "delta",
        "Y",
    ]
    by = {m.key: m for m in mats}
    block = result.block
    assert block is not None
    # The very arrays of the block: what the panel shows is the engine's numbers.
    for key, arr in (("concat", block.concat), ("Wo", block.Wo), ("delta", block.delta),
                     ("Y", block.Y), ("X", block.X)):  # fmt: skip
        np.testing.assert_array_equal(by[key].value, arr)
    for h, tr in enumerate(block.heads):
        np.testing.assert_array_equal(by[f"Q{h}"].value, tr.Q)
        np.testing.assert_array_equal(by[f"A{h}"].value, tr.weights)
        np.testing.assert_array_equal(by[f"H{h}"].value, tr.output)
        np.testing.assert_array_equal(by[f"S{h}"].value, tr.scores)
        np.testing.assert_array_equal(by[f"Wv{h}"].value, sc.heads[h].Wv)
    shapes = {k: by[k].shape for k in ("X", "Wq0", "Q1", "S0", "A1", "H0", "concat", "Wo", "Y")}
    assert shapes == {
        "X": (3, 4), "Wq0": (4, 2), "Q1": (3, 2), "S0": (3, 3), "A1": (3, 3), "H0": (3, 2),
        "concat": (3, 4), "Wo": (4, 4), "Y": (3, 4),
    }  # fmt: skip
    learned = sorted(m.key for m in mats if m.kind == "learned")
    assert learned == sorted(["Wq0", "Wk0", "Wv0", "Wq1", "Wk1", "Wv1", "Wo"])
    assert by["Q1"].title == "Q⁽²⁾" and by["Q1"].formula == "X Wq⁽²⁾"
    assert by["Y"].formula == "X + Δ" and by["delta"].formula == "Concat Wo"
    np.testing.assert_allclose(by["Y"].value, by["X"].value + by["delta"].value)
    assert by["concat"].col_labels == ("finance⁽¹⁾", "water⁽¹⁾", "finance⁽²⁾", "water⁽²⁾")


def test_reference_counts_for_three_tokens_two_heads():
    sc = resolve_scenario("two-heads")
    c = counts_of(block_matrices(sc, compute(sc)))
    assert c["qkv_projection_matrices"] == 6
    assert c["computed_qkv_matrices"] == 6
    assert (c["queries"], c["keys"], c["values"], c["computed_vectors"]) == (6, 6, 6, 18)
    assert c["output_projections"] == 1
    assert c == multi_head_counts(3, 2, 4, 2, 2)["totals"]
    lines = count_lines(c, 2)
    assert lines[0].startswith("6 learned Q/K/V projection matrices")
    assert "18 computed vectors: 6 queries + 6 keys + 6 values" in lines


@pytest.mark.parametrize(
    "n,h,d,d_k,d_v",
    [(3, 2, 4, 2, 2), (5, 3, 6, 4, 2), (1, 1, 3, 3, 3), (4, 4, 8, 2, 2), (7, 2, 5, 3, 6)],
)
def test_enumerated_matrices_agree_with_the_closed_form_counts(n, h, d, d_k, d_v):
    sc = _random_block(n, h, d, d_k, d_v, seed=n + h)
    mats = block_matrices(sc, compute(sc))
    assert counts_of(mats) == multi_head_counts(n, h, d, d_k, d_v)["totals"]
    assert sublayer_shape(sc) == {"n": n, "h": h, "d": d, "d_k": d_k, "d_v": d_v}
    # 3h projections + Wo learned; per head 6 computed + X, concat, Δ, Y.
    assert sum(m.kind == "learned" for m in mats) == 3 * h + 1
    assert sum(m.kind == "computed" for m in mats) == 6 * h + 4


def test_a_stack_of_blocks_multiplies_the_projections():
    for blocks in (1, 2, 12):
        t = multi_head_counts(3, 2, 4, 2, 2, blocks=blocks)["totals"]
        assert t["qkv_projection_matrices"] == 3 * blocks * 2
        assert t["output_projections"] == blocks
        assert t["computed_vectors"] == 18 * blocks
    lines = count_lines(multi_head_counts(3, 2, 4, 2, 2, blocks=4)["totals"], 2, 4)
    assert lines[0] == (
        "24 learned Q/K/V projection matrices (3·N·h) and 4 output projections Wo in 4 blocks"
    )


def test_direct_scenarios_have_no_learned_matrices():
    sc = resolve_scenario("three-fields")
    mats = block_matrices(sc, compute(sc))
    assert [m.key for m in mats] == ["Q", "K", "V", "S", "A", "H"]
    assert [m.kind for m in mats[:3]] == ["given"] * 3
    c = counts_of(mats)
    assert c["learned_matrices"] == 0 and c["parameters"] == 0
    assert c["computed_qkv_matrices"] == 0
    assert score_formula(sc) == "softmax(S / T=0.333)"
    with pytest.raises(ValueError, match="no projections"):
        sublayer_shape(sc)


def test_a_head_without_an_output_projection_stops_at_h():
    sc = resolve_scenario("code-definition")  # d = 5, d_v = 2, no Wo
    mats = block_matrices(sc, compute(sc))
    assert [m.key for m in mats][-3:] == ["S0", "A0", "H0"]
    c = counts_of(mats)
    assert c["output_projections"] == 0 and c["qkv_projection_matrices"] == 3
    assert score_formula(sc) == "softmax(S / √3, causal mask)"


def test_an_implied_identity_output_projection_is_named():
    sc = resolve_scenario("river-bank")
    by = {m.key: m for m in block_matrices(sc, compute(sc))}
    assert by["Wo"].formula.startswith("identity")
    np.testing.assert_array_equal(by["Wo"].value, np.eye(4))


def test_visible_indices_keep_the_receiving_row():
    assert visible_indices(5, 8) == [0, 1, 2, 3, 4]
    assert visible_indices(12, 8) == [0, 1, 2, 3, 4, 5, None, 11]
    assert visible_indices(12, 8, keep=3) == [0, 1, 2, 3, 4, 5, None, 11]
    assert visible_indices(12, 8, keep=9) == [0, 1, 2, 3, None, 9, None, 11]
    assert visible_indices(12, 8, keep=10) == [0, 1, 2, 3, 4, None, 10, 11]
    assert visible_indices(12, 8, keep=11) == [0, 1, 2, 3, 4, 5, None, 11]
    for n in range(1, 40):
        for keep in range(n):
            shown = visible_indices(n, 6, keep)
            assert keep in shown and len(shown) <= 6
            idx = [i for i in shown if i is not None]
            assert idx == sorted(set(idx))
    with pytest.raises(ValueError, match="at least 5"):
        visible_indices(10, 3)
    with pytest.raises(ValueError, match="keep"):
        visible_indices(4, 8, keep=4)


# ---- the diagram's view-model (no Qt: text widths come from a stand-in measure) -------------
def _width(text: str, bold: bool) -> float:
    return (7.5 if bold else 6.5) * len(text) + 2.0


def test_chip_labels_number_heads_from_one_and_name_them():
    sc = resolve_scenario("two-heads")
    chips = chip_labels(sc)
    assert len(chips) == len(sc.heads) == 2
    assert chips[0].startswith("head 1⁽¹⁾") and chips[1].startswith("head 2⁽²⁾")
    for chip, head in zip(chips, sc.heads, strict=True):
        assert chip.endswith(f" · {head.name}") if head.name else "·" not in chip
    assert chip_labels(resolve_scenario("routing-lab")) == []  # direct: no heads to pick


def test_block_caption_counts_and_says_what_is_missing():
    sc = _random_block(4, 2, 6, 3, 3)
    mats = block_matrices(sc, compute(sc))
    lines, note = block_caption(sc, compute(sc), counts_of(mats))
    assert note == ""
    assert lines[0].startswith("This block (n=4, h=2, d=6, d_k=3, d_v=3): ")
    assert "; ".join(count_lines(counts_of(mats), 2)) in lines[0]
    # One head with h·d_v = 2, not d = 6, and no Wo: the block stops at H.
    hd = sc.heads[0]
    short = Scenario(name="short", tokens=sc.tokens, X=sc.X,
                     heads=(Head(hd.Wq, hd.Wk, hd.Wv[:, :2]),))  # fmt: skip
    res = compute(short)
    assert res.block is None
    _, note = block_caption(short, res, counts_of(block_matrices(short, res)))
    assert note.startswith("No output projection: h·d_v = 2 differs from d = 6")
    direct = resolve_scenario("routing-lab")
    lines, note = block_caption(direct, compute(direct), {})
    assert note.startswith("Direct scenario: no projections") and len(lines) == 1


def test_diagram_data_puts_the_note_first_and_finds_matrices():
    sc = resolve_scenario("two-heads")
    mats = tuple(block_matrices(sc, compute(sc)))
    data = DiagramData(mats=mats, caption=("a", "b"), note="n")
    assert data.caption_lines == ["n", "a", "b"]
    assert DiagramData(caption=("a",)).caption_lines == ["a"]
    assert data.matrix("X") is mats[0]
    with pytest.raises(KeyError, match="Wq9"):
        data.matrix("Wq9")


def test_layout_wraps_a_narrow_diagram_onto_more_lines_without_overlaps():
    sc = resolve_scenario("two-heads")
    mats = block_matrices(sc, compute(sc))

    def lay(width: float):
        return layout_diagram(mats, focused=1, receiving=0, max_width=width, text_width=_width)

    wide, narrow = lay(2000.0), lay(400.0)
    assert set(wide.boxes) == set(narrow.boxes)
    assert "Wq1" in wide.boxes and "Wq0" not in wide.boxes  # the focused head's own
    assert max(narrow.lines.values()) > max(wide.lines.values())
    assert narrow.width <= max(400.0, max(b.w for b in narrow.boxes.values())) + 1e-9
    boxes = list(narrow.boxes.values())
    for i, a in enumerate(boxes):
        assert a.h == pytest.approx(28.0 + len(a.rows) * CELL_H)
        assert a.w >= a.label_w + len(a.cols) * CELL_W
        for b in boxes[i + 1 :]:
            apart = (a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y
                     or b.y + b.h <= a.y)  # fmt: skip
            assert apart, (a.key, b.key)


def test_best_fit_takes_the_largest_scale_that_fits_and_falls_back_to_the_smallest():
    sc = resolve_scenario("two-heads")
    mats = block_matrices(sc, compute(sc))

    def make(width: float):
        return layout_diagram(mats, focused=0, receiving=0, max_width=width, text_width=_width)

    scale, dia = best_fit(make, 1200.0, 900.0)
    assert 0.8 <= scale <= 1.25
    assert dia.width * scale <= 1200.0 + 1e-6 and dia.height * scale <= 900.0 + 1e-6
    scale, dia = best_fit(make, 300.0, 50.0)  # nothing fits the height: scroll at 0.8
    assert scale <= 0.8 and dia.width * scale <= 300.0 + 1e-6


def test_the_scores_are_read_a_cell_at_a_time_not_made_whole():
    from attnsim.engine.scenario import random_scenario
    from attnsim.viewmodels.anatomy import ScoreCells

    sc = random_scenario(40, 9, mask="causal")  # divided by √9 = 3: q kᵀ would be made again
    tr = sc.compute().heads[0]
    cells = ScoreCells(tr)
    assert cells.shape == (40, 40) and cells.size == 1600
    assert "_scores" not in tr.__dict__  # reading cells made no table
    assert cells[3, 5] == tr.score(3, 5)
    assert "_scores" not in tr.__dict__
    np.testing.assert_array_equal(np.asarray(cells), tr.X @ tr.X.T)  # the whole, when asked
