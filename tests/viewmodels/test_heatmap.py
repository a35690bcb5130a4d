"""Display arrays of the heatmap panel: stages, texts, layout (viewmodels.heatmap); colours and
pooled images (viewmodels.heatmap_pixels)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.engine.attention import causal_mask, direct_trace, softmax
from attnsim.engine.head_trace import HeadTrace, MaskedTable
from attnsim.engine.scenario import Head, Scenario, compute
from attnsim.viewmodels import heatmap as hd
from attnsim.viewmodels import heatmap_pixels as hp

rng = np.random.default_rng(11)


def river_bank(**changes) -> Scenario:
    X = np.array([[0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.2], [0.5, 0.5, 0.8, 0.2]])
    eye = np.eye(4)
    sc = Scenario(name="rb", tokens=("the", "river", "bank"), X=X, heads=(Head(eye, eye, eye),))
    return sc.replace(**changes) if changes else sc


def test_weights_stage_is_the_engines_array_and_masked_cells_are_exactly_zero():
    tr = compute(river_bank(mask="causal")).heads[0]
    sd = hd.stage_data(tr, "weights")
    assert sd.values is tr.weights  # the engine's numbers, not a copy
    assert sd.forbidden is not None
    assert sd.forbidden.sum() == 3
    assert (sd.values[sd.forbidden] == 0.0).all()
    np.testing.assert_allclose(sd.values.sum(axis=1), 1.0)
    assert (sd.lo, sd.hi, sd.kind) == (0.0, 1.0, "unit")


def test_masked_stage_shows_minus_infinity_as_text_and_no_hatch_without_mask():
    tr = compute(river_bank(mask="causal")).heads[0]
    sd = hd.stage_data(tr, "masked")
    texts = hd.cell_texts(sd.values)
    assert texts[0][1] == "−∞" and texts[0][2] == "−∞" and texts[1][2] == "−∞"
    assert texts[2] == [hd.format_value(v) for v in tr.masked_logits[2]]
    assert sd.legend == "forbidden = −∞"
    free = compute(river_bank()).heads[0]
    assert hd.stage_data(free, "masked").forbidden is None
    assert hd.stage_data(free, "weights").allowed is None


def test_mask_with_zero_gives_forbidden_cells_the_predicted_weight():
    sc = river_bank(mask="causal", mask_value=0.0)
    tr = compute(sc).heads[0]
    sd = hd.stage_data(tr, "weights")
    # Independent prediction: forbidden logits replaced by 0, then a plain row softmax.
    logits = (sc.X @ sc.X.T) / 2.0
    predicted = softmax(np.where(causal_mask(3), logits, 0.0))
    np.testing.assert_allclose(sd.values, predicted, rtol=1e-12)
    assert (sd.values[sd.forbidden] > 0.2).all()
    fs = hd.forbidden_summary(tr)
    expected = [predicted[0, 1] + predicted[0, 2], predicted[1, 2], 0.0]
    np.testing.assert_allclose(fs.per_row, expected, rtol=1e-12)
    assert fs.worst_row == 0 and fs.n_forbidden == 3
    assert hd.stage_data(tr, "masked").legend == "forbidden = 0 (mistake)"


def test_score_title_states_scaling_and_temperature():
    tr = compute(river_bank()).heads[0]
    assert hd.score_title(tr) == "Scores q·k/√4"
    assert hd.score_title(compute(river_bank(temperature=0.5)).heads[0]) == (
        "Logits q·k/(√4·T), T = 0.5"
    )
    assert hd.score_title(compute(river_bank(scale=False)).heads[0]) == "Scores q·k (not scaled)"
    assert "T = 2" in hd.score_title(compute(river_bank(scale=False, temperature=2.0)).heads[0])
    sd = hd.stage_data(compute(river_bank(temperature=0.5)).heads[0], "scores")
    np.testing.assert_allclose(sd.values, river_bank().X @ river_bank().X.T / (2 * 0.5))


def test_signed_limits_are_symmetric_and_shared():
    q, k = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    tr = direct_trace(q, k, rng.normal(size=(5, 2)))
    lim = hd.score_limit(tr)
    assert lim == pytest.approx(np.abs(tr.logits).max())
    sd = hd.stage_data(tr, "scores")
    assert sd.lo == -sd.hi == -lim
    assert hd.stage_data(tr, "masked", limit=7.0).hi == 7.0


def test_the_logit_range_is_read_once_per_trace():
    q, k = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    tr = direct_trace(q, k, rng.normal(size=(5, 2)))
    assert tr.logit_range() == (tr.logits.min(), tr.logits.max())
    # read once: a trace whose range was read keeps it (the tracer reads it off the window)
    tr.__dict__["_logit_range"] = (-3.0, 2.0)
    assert hd.score_limit(tr) == 3.0
    empty = direct_trace(np.zeros((0, 3)), k, rng.normal(size=(5, 2)))
    assert all(math.isnan(x) for x in empty.logit_range()) and hd.score_limit(empty) == 1.0


def test_contribution_stage_is_weight_times_value_norm():
    v = np.array([[3.0, 4.0], [0.1, 0.0]])
    tr = direct_trace([[1.0, 0.0]], [[0.0, 0.0], [2.0, 0.0]], v, scale=False)
    sd = hd.stage_data(tr, "contributions")
    np.testing.assert_allclose(sd.values, tr.weights * np.array([5.0, 0.1]))
    # A large weight on a small value contributes little.
    assert tr.weights[0, 1] > tr.weights[0, 0] and sd.values[0, 1] < sd.values[0, 0]
    assert sd.hi == pytest.approx(sd.values.max())


def test_unknown_stage_is_refused():
    tr = compute(river_bank()).heads[0]
    with pytest.raises(ValueError, match="unknown stage"):
        hd.stage_data(tr, "logits")  # type: ignore[arg-type]


def test_format_value():
    assert hd.format_value(0.4321) == "0.43"
    assert hd.format_value(-0.4) == "−0.40"
    assert hd.format_value(-0.001) == "0.00"  # no sign on a rounded zero
    assert hd.format_value(-math.inf) == "−∞"
    assert hd.format_value(1.23456, 3) == "1.235"


def test_colors_map_limits_to_table_ends():
    lut = hp.lut_argb(np.array([[0, 0, 0], [255, 0, 0], [255, 255, 255]]))
    assert lut.tolist() == [0xFF000000, 0xFFFF0000, 0xFFFFFFFF]
    idx = hp.color_index([[-5.0, 0.0, 0.5, 1.0, 9.0, -np.inf]], 0.0, 1.0, 3)
    assert idx.tolist() == [[0, 0, 1, 2, 2, 0]]
    colors = hp.cell_colors([[0.0, 1.0]], 0.0, 1.0, lut)
    assert colors.tolist() == [[0xFF000000, 0xFFFFFFFF]]
    assert hp.text_on_dark(colors).tolist() == [[True, False]]
    with pytest.raises(ValueError, match=r"shape \(m, 3\)"):
        hp.lut_argb(np.zeros(3))


@settings(max_examples=40, deadline=None)
@given(
    n_q=st.integers(1, 40),
    n_k=st.integers(1, 40),
    kr=st.integers(1, 9),
    kc=st.integers(1, 9),
    seed=st.integers(0, 1000),
)
def test_pool_max_and_any_match_a_direct_loop(n_q, n_k, kr, kc, seed):
    r = np.random.default_rng(seed)
    a = r.normal(size=(n_q, n_k))
    m = r.random((n_q, n_k)) < 0.2
    pm, pa = hp.pool(a, kr, kc, "max"), hp.pool(m, kr, kc, "any")
    rows, cols = -(-n_q // kr), -(-n_k // kc)
    assert pm.shape == pa.shape == (rows, cols)
    for bi in range(rows):
        for bj in range(cols):
            block = (slice(bi * kr, (bi + 1) * kr), slice(bj * kc, (bj + 1) * kc))
            assert pm[bi, bj] == a[block].max()
            assert pa[bi, bj] == m[block].any()


def test_pixel_index_and_cell_at_agree():
    n, px = 7, 20
    idx = hp.pixel_index(n, px)
    assert idx[0] == 0 and idx[-1] == n - 1 and (np.diff(idx) >= 0).all()
    rect = (10.0, 20.0, 40.0, 40.0)  # 20 px per 40 units: a pixel is 2 units wide
    for p in range(px):
        hit = hd.cell_at(10.0 + (p + 0.5) * 2.0, 21.0, rect, 3, n)
        assert hit is not None and hit[1] == idx[p]
    assert hd.cell_at(9.9, 30.0, rect, 3, n) is None
    assert hd.cell_at(50.0, 30.0, rect, 3, n) is None  # the right edge is outside
    assert hd.cell_at(49.99, 59.99, rect, 3, n) == (2, n - 1)


def test_render_pixels_upsamples_cells_and_hatches_only_forbidden_pixels():
    values = np.array([[0.0, 1.0], [1.0, 0.0]])
    allowed = np.array([[True, False], [True, True]])
    lut = hp.lut_argb(np.stack([np.arange(256)] * 3, axis=1))
    img, block = hp.render_pixels(values, allowed, 0.0, 1.0, lut, 12, 12, hatch=0xFF00FF00)
    assert block == (1, 1) and img.shape == (12, 12) and img.dtype == np.uint32
    bottom_left, top_left = img[6:, :6], img[:6, :6]
    assert (bottom_left == lut[255]).all() and (top_left == lut[0]).all()
    top_right = img[:6, 6:]
    stripes = top_right == 0xFF00FF00
    assert stripes.any() and not stripes.all()  # diagonal stripes over the forbidden cell
    assert (top_right[~stripes] == lut[255]).all()  # its own colour between the stripes
    assert not (img[6:, :] == 0xFF00FF00).any() and not (img[:6, :6] == 0xFF00FF00).any()


def test_render_pixels_pools_large_matrices_keeping_a_single_peak():
    n = 1000
    w = np.full((n, n), 1e-4)
    w[517, 243] = 0.9
    allowed = causal_mask(n)
    lut = hp.lut_argb(np.stack([np.arange(256)] * 3, axis=1))
    img, (kr, kc) = hp.render_pixels(w, allowed, 0.0, 1.0, lut, 200, 250, background=0xFF0000FF)
    assert (kr, kc) == (5, 4)
    brightest = np.unravel_index(np.argmax(img & 0xFF), img.shape)
    assert hp.pixel_index(n, 200)[brightest[0]] // kr == 517 // kr
    assert hp.pixel_index(n, 250)[brightest[1]] // kc == 243 // kc
    # Above the diagonal every block is forbidden: striped; below it none is.
    assert (img[150:, :20] != 0xFF8C8C8C).all()
    assert (img[:20, 200:] == 0xFF8C8C8C).any()


def test_render_pixels_paints_minus_infinity_with_background():
    v = np.array([[0.5, -np.inf]])
    lut = hp.lut_argb(np.stack([np.arange(256)] * 3, axis=1))
    img, _ = hp.render_pixels(v, np.array([[True, False]]), 0.0, 1.0, lut, 4, 8, period=6)
    stripes = hp.hatch_pattern(4, 8, 6, 2)[:, 4:]
    right = img[:, 4:]
    assert (right[stripes] == 0xFF8C8C8C).all() and (right[~stripes] == 0xFFF2F2F2).all()
    assert (img[:, :4] == lut[128]).all()


def test_hatch_pattern_is_diagonal_and_cached():
    h = hp.hatch_pattern(6, 6, 3, 1)
    assert h[0, 0] and h[1, 2] and not h[0, 1]
    assert hp.hatch_pattern(6, 6, 3, 1) is h and not h.flags.writeable


def test_entropy_has_one_formula_the_engines():
    # The heatmap draws trace.entropy and trace.max_entropy; this module keeps no copy.
    assert not hasattr(hd, "row_entropy_bits") and not hasattr(hd, "entropy_ceiling")


def test_tile_layout_fits_square_cells_side_by_side():
    tiles, rows = hd.tile_layout(
        700, 400, 3, 3, 3, row_label_w=50, col_label_h=16, title_h=18, bar_h=40,
        entropy_w=(0, 0, 46),
    )  # fmt: skip
    assert len(tiles) == 3
    for a, b in itertools.pairwise(tiles):
        assert a.matrix[0] + a.matrix[2] < b.matrix[0]  # no overlap
    last = tiles[-1]
    assert last.entropy is not None and last.entropy[0] == last.matrix[0] + last.matrix[2]
    assert last.entropy[0] + last.entropy[2] <= 700
    for t in tiles:
        assert t.matrix[2] == pytest.approx(t.matrix[3])  # square cells for a square matrix
        assert t.bar[1] + t.bar[3] <= 400
    assert rows[0] + rows[2] == pytest.approx(tiles[0].matrix[0])
    cx, cy, cw, ch = tiles[1].cell_rect(2, 1, 3, 3)
    assert hd.cell_at(cx + cw / 2, cy + ch / 2, tiles[1].matrix, 3, 3) == (2, 1)
    with pytest.raises(ValueError, match="entropy_w"):
        hd.tile_layout(700, 400, 3, 3, 2, row_label_w=1, col_label_h=1, title_h=1, bar_h=1,
                       entropy_w=(0,))  # fmt: skip


def test_thumb_grid_shrinks_then_wraps():
    assert hd.thumb_grid(0, 500) == (0, 0, 0.0, 0.0)
    cols, rows, size, pitch = hd.thumb_grid(2, 600, max_size=72, gap=14, label_w=120)
    assert (cols, rows, size) == (2, 1, 72) and pitch == 134
    cols, rows, size, _ = hd.thumb_grid(12, 600, max_size=72, min_size=36, gap=14)
    assert rows == 1 and 36 <= size < 72
    cols, rows, size, _ = hd.thumb_grid(40, 600, max_size=72, min_size=36, gap=14)
    assert size == 36 and rows == -(-40 // cols) and cols * 50 <= 614


@pytest.mark.parametrize(
    "module", ["attnsim.viewmodels.heatmap", "attnsim.viewmodels.heatmap_pixels"]
)
def test_heatmap_data_imports_no_qt(modules_loaded_by, module):
    loaded = modules_loaded_by(module)
    bad = [m for m in loaded if m.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6")]
    assert not bad, f"{module} pulled in Qt modules: {bad}"


# ---- what the canvas and the controls are handed ---------------------------------------------
def test_canvas_content_shares_one_score_limit_and_draws_entropy_only_with_the_weights():
    tr = compute(river_bank(mask="causal")).heads[0]
    labels = ("the", "river", "bank")
    c = hd.canvas_content(tr, ("scores", "masked", "weights"), labels, labels, 2, 1)
    assert [s.stage for s in c.stages] == ["scores", "masked", "weights"]
    assert c.stages[0].hi == c.stages[1].hi == hd.score_limit(tr)
    assert c.entropy is tr.entropy  # the trace's cached array
    np.testing.assert_array_equal(c.entropy_max, tr.max_entropy)
    assert c.entropy_top == max(float(np.max(tr.max_entropy)), 1.0)
    assert c.receiving == 2 and c.focused_key == 1
    scores = hd.canvas_content(tr, ("scores",), labels, labels, 0)
    assert scores.entropy is None and scores.entropy_max is None
    # With no ceilings the bars run to log2 of the number of keys.
    assert scores.entropy_top == pytest.approx(math.log2(3))
    assert c.same_numbers(tr, ("scores", "masked", "weights"), True, labels, labels)
    assert not c.same_numbers(tr, ("weights",), True, labels, labels)
    assert not c.same_numbers(tr, ("scores", "masked", "weights"), False, labels, labels)
    other = compute(river_bank(mask="causal")).heads[0]
    assert not c.same_numbers(other, ("scores", "masked", "weights"), True, labels, labels)


def test_controls_data_reads_the_scenario_settings():
    sc = river_bank(mask="causal", mask_value=0.0, temperature=0.5, scale=False)
    d = hd.controls_data(sc, "weights")
    assert d == hd.ControlsData("weights", "causal", True, 0.5, False, sc.d_k)
    assert not hd.controls_data(river_bank(), "stages").mask_zero


def test_tile_layout_square_cells_unless_a_wider_aspect_is_allowed():
    common = dict(row_label_w=60.0, col_label_h=16.0, title_h=18.0, bar_h=40.0)
    square, _ = hd.tile_layout(700, 200, 3, 3, 2, **common)
    _, _, w, h = square[0].matrix
    assert w == pytest.approx(h)
    wide, _ = hd.tile_layout(700, 200, 3, 3, 2, max_aspect=hd.MAX_CELL_ASPECT, **common)
    assert wide[0].matrix[3] == pytest.approx(h)  # the height was the limit for both
    assert wide[0].matrix[2] > w and wide[0].matrix[2] <= hd.MAX_CELL_ASPECT * h + 1e-9


def test_a_tall_table_is_coloured_in_row_blocks_with_the_same_pixels(monkeypatch):
    gen = np.random.default_rng(4)
    v = gen.normal(size=(23, 9))
    v[3, 2] = -np.inf
    v[17, 5] = np.nan
    allowed = gen.random((23, 9)) > 0.2
    lut = np.arange(256, dtype=np.uint32) | np.uint32(0xFF000000)
    whole_idx = hp.color_index(v, -1.0, 1.0, 256)
    whole_img, _ = hp.render_pixels(v, allowed, -1.0, 1.0, lut, 23, 9)  # one pixel a cell
    big_img, _ = hp.render_pixels(v, allowed, -1.0, 1.0, lut, 46, 27)  # upsampled
    monkeypatch.setattr(hp, "COLOR_ROWS", 5)  # blocks of 5 rows, the last one short
    np.testing.assert_array_equal(hp.color_index(v, -1.0, 1.0, 256), whole_idx)
    img, _ = hp.render_pixels(v, allowed, -1.0, 1.0, lut, 23, 9)
    np.testing.assert_array_equal(img, whole_img)
    np.testing.assert_array_equal(hp.render_pixels(v, allowed, -1.0, 1.0, lut, 46, 27)[0], big_img)
    assert img[3, 2] in (0xFFF2F2F2, 0xFF8C8C8C)  # -inf: the background (or the hatch over it)


def _reference_pixels(v, allowed, lo, hi, lut, height, width, hatch, background, period):
    """render_pixels written the slow, obvious way: each block's largest value (NaN wins, as
    in np.max), its colour or the background if not finite, the block under each pixel's
    centre, stripes where every cell of that block is forbidden."""
    n_q, n_k = v.shape
    kr, kc = -(-n_q // height), -(-n_k // width)
    img = np.empty((height, width), np.uint32)
    stripes = hp.hatch_pattern(height, width, period, max(1, period // 3))
    for y in range(height):
        bi = min((2 * y + 1) * n_q // (2 * height), n_q - 1) // kr  # the centre, exactly
        for x in range(width):
            bj = min((2 * x + 1) * n_k // (2 * width), n_k - 1) // kc
            block = v[bi * kr : (bi + 1) * kr, bj * kc : (bj + 1) * kc]
            top = np.max(block)
            img[y, x] = hp.cell_colors(top, lo, hi, lut) if np.isfinite(top) else background
            shut = (
                allowed is not None
                and not allowed[bi * kr : (bi + 1) * kr, bj * kc : (bj + 1) * kc].any()
            )
            if shut and stripes[y, x]:
                img[y, x] = hatch
    return img, (kr, kc)


def test_render_pixels_is_the_largest_value_of_each_block_and_reuses_no_stale_numbers():
    rng = np.random.default_rng(7)
    lut = hp.lut_argb(rng.integers(0, 256, (256, 3)))
    sizes = [(70, 45, 20, 13), (33, 100, 33, 30), (70, 45, 20, 13), (9, 9, 9, 9), (40, 7, 11, 7)]
    for n_q, n_k, h, w in sizes:  # the work arrays of one size are reused by the next call
        v = rng.standard_normal((n_q, n_k))
        v[rng.random(v.shape) < 0.05] = -np.inf
        v[rng.random(v.shape) < 0.01] = np.inf
        v[rng.random(v.shape) < 0.01] = np.nan
        allowed = np.tril(np.ones((n_q, n_k), bool)) | (rng.random(v.shape) < 0.05)
        args = (v, allowed, -1.5, 1.5, lut, h, w)
        kw = {"hatch": 0xFF8C8C8C, "background": 0xFFF2F2F2, "period": 4}
        want, block = _reference_pixels(*args, **kw)
        got, got_block = hp.render_pixels(*args, **kw)
        assert got_block == block
        np.testing.assert_array_equal(got, want)
        out = np.zeros((h, w), np.uint32)
        again, _ = hp.render_pixels(*args, **kw, out=out)
        assert again is out
        np.testing.assert_array_equal(out, want)


@settings(max_examples=40, deadline=None)
@given(
    n_q=st.integers(1, 90),
    n_k=st.integers(1, 90),
    height=st.integers(1, 24),
    width=st.integers(1, 24),
    p_allowed=st.sampled_from([0.0, 0.03, 0.5, 1.0]),
    seed=st.integers(0, 1000),
)
def test_render_pixels_is_its_spelled_out_definition(n_q, n_k, height, width, p_allowed, seed):
    # Every pooling route (block sizes that are and are not a whole machine word of mask bytes,
    # rows that are and are not) gives the pixels of the plain definition.
    r = np.random.default_rng(seed)
    v = r.normal(size=(n_q, n_k))
    v[r.random((n_q, n_k)) < 0.05] = -np.inf
    allowed = r.random((n_q, n_k)) < p_allowed
    lut = hp.lut_argb(r.integers(0, 256, size=(256, 3)))
    kw = {"hatch": 0xFF00FF00, "background": 0xFF0000FF, "period": 6}
    img, _ = hp.render_pixels(v, allowed, -1.0, 1.0, lut, height, width, **kw)
    want, _ = _reference_pixels(v, allowed, -1.0, 1.0, lut, height, width, **kw)
    np.testing.assert_array_equal(img, want)
    # The masked logits, read from the logits over the allowed cells (the table not made).
    v[r.random((n_q, n_k)) < 0.02] = np.nan
    masked = np.where(allowed, v, -np.inf)
    lazy = MaskedTable(v, allowed, -np.inf, lambda: masked)
    img, _ = hp.render_pixels(lazy, allowed, -1.0, 1.0, lut, height, width, **kw)
    want, _ = _reference_pixels(masked, allowed, -1.0, 1.0, lut, height, width, **kw)
    np.testing.assert_array_equal(img, want)


def test_the_stripes_of_one_mask_are_not_drawn_for_the_next():
    # The striped pixels are kept from one call to the next while the pooled mask is the same.
    lut = hp.lut_argb(np.stack([np.arange(256)] * 3, axis=1))
    v = np.zeros((120, 120))
    causal = causal_mask(120)
    images = []
    for allowed in (causal, causal.T.copy(), causal, np.ones_like(causal)):
        img, block = hp.render_pixels(v, allowed, 0.0, 1.0, lut, 40, 30)
        images.append(img.copy())
        want, _ = _reference_pixels(v, allowed, 0.0, 1.0, lut, 40, 30, 0xFF8C8C8C, 0xFFF2F2F2, 6)
        np.testing.assert_array_equal(img, want)
    assert block == (3, 4) and (images[0] != images[1]).any()
    np.testing.assert_array_equal(images[0], images[2])
    assert (images[3] == lut[0]).all()


def test_a_pooled_masked_stage_does_not_make_the_masked_table(monkeypatch):
    made = []
    make = HeadTrace._make_masked
    monkeypatch.setattr(HeadTrace, "_make_masked", lambda tr: made.append(1) or make(tr))
    n = 300
    X = np.random.default_rng(3).normal(size=(n, 4))
    eye = np.eye(4)
    sc = Scenario(name="long", tokens=tuple(f"t{i}" for i in range(n)), X=X,
                  heads=(Head(eye, eye, eye),), mask="causal")  # fmt: skip
    tr = compute(sc).heads[0]
    c = hd.canvas_content(tr, ("scores", "masked", "weights"), sc.tokens, sc.tokens, n - 1)
    masked = c.stages[1]
    assert isinstance(masked.table, MaskedTable) and masked.shape == (n, n)
    lut = hp.lut_argb(np.stack([np.arange(256)] * 3, axis=1))
    args = (masked.allowed, masked.lo, masked.hi, lut, 70, 90)
    img, block = hp.render_pixels(masked.table, *args)
    assert block == (5, 4) and made == []  # never asked for
    img = img.copy()
    full = masked.values  # the engine's table, made when asked
    assert full is tr.masked_logits and np.isneginf(full[0, 1]) and made == [1]
    np.testing.assert_array_equal(hp.render_pixels(full, *args)[0], img)


def test_color_index_maps_nan_and_infinities_to_the_ends():
    x = np.array([[np.nan, -np.inf, np.inf, -5.0, 0.0, 0.5, 1.0, 7.0]])
    np.testing.assert_array_equal(hp.color_index(x, 0.0, 1.0), [[0, 0, 255, 0, 0, 128, 255, 255]])
    np.testing.assert_array_equal(hp.color_index(x, 1.0, 1.0)[0, 3:], [0, 0, 0, 0, 255])
