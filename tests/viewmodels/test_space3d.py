"""Scene geometry of the 3-D query/key view, checked as arrays."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.engine.attention import causal_mask, direct_trace
from attnsim.engine.geometry import Camera, best_subspace
from attnsim.viewmodels.space3d import (
    ARROW_LIMIT,
    ARROWS_KEPT,
    WORLD_RADIUS,
    SceneInput,
    ViewOptions,
    apply_layout,
    arrow_geometry,
    as_direction,
    axes_basis,
    axis_segments,
    build_scene,
    drag_world_point,
    grid_segments,
    key_label,
    layout_params,
    make_frame,
    move_within,
    nice_step,
    paint_order,
    place_labels,
    subspace_basis,
    top_by_weight,
    undo_layout,
)

rng = np.random.default_rng(11)


def scene_input(Q, K, V=None, *, mask=None, mask_value=-math.inf, temperature=1.0, scale=True,
                receiving=0, absent=None):  # fmt: skip
    Q, K = np.asarray(Q, float), np.asarray(K, float)
    V = K.copy() if V is None else np.asarray(V, float)
    tr = direct_trace(Q, K, V, mask=mask, temperature=temperature, scale=scale,
                      mask_value=mask_value)  # fmt: skip
    absent_K = np.zeros((0, K.shape[1])) if absent is None else np.asarray(absent, float)
    return tr, SceneInput(
        Q=tr.Q,
        K=tr.K,
        V=tr.V,
        weights=tr.weights,
        score_row=tr.scores[receiving],
        mask=tr.mask,
        receiving=receiving,
        query_labels=tuple(f"q{i}" for i in range(Q.shape[0])),
        key_labels=tuple(f"k{j}" for j in range(K.shape[0])),
        qk_axes=tuple(f"a{c}" for c in range(K.shape[1])),
        absent_K=absent_K,
        absent_labels=tuple(f"gone{a}" for a in range(absent_K.shape[0])),
        mask_value=mask_value,
    )


# ---- bases and the frame ----------------------------------------------------------------------
def test_axes_basis_pads_small_spaces_and_picks_chosen_axes():
    np.testing.assert_array_equal(axes_basis(2), [[1, 0, 0], [0, 1, 0]])
    np.testing.assert_array_equal(axes_basis(3), np.eye(3))
    B = axes_basis(5, (4, 0, 2))
    u = np.array([10.0, 11.0, 12.0, 13.0, 14.0])
    np.testing.assert_array_equal(u @ B, [14.0, 10.0, 12.0])
    with pytest.raises(ValueError, match="three different axes"):
        axes_basis(5, (1, 1, 2))
    with pytest.raises(ValueError, match=r"\[0, 5\)"):
        axes_basis(5, (0, 1, 5))


def test_subspace_basis_is_orthonormal_and_explains_planar_data_fully():
    P = rng.normal(size=(20, 3)) @ rng.normal(size=(3, 7))  # rank 3 in 7-D
    B, explained = subspace_basis(P)
    assert B.shape == (7, 3)
    np.testing.assert_allclose(B.T @ B, np.eye(3), atol=1e-12)
    assert explained.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(P @ B @ B.T, P, atol=1e-9)  # the points lie in the subspace


def test_move_within_changes_only_the_shown_components():
    u = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    B = axes_basis(5, (1, 3, 4))
    new = move_within(u, B, [9.0, 8.0, 7.0])
    np.testing.assert_array_equal(new, [1.0, 9.0, 3.0, 8.0, 7.0])
    # In a general subspace: the shown part becomes p, the orthogonal part is kept.
    Bs, _ = subspace_basis(rng.normal(size=(9, 5)))
    p = np.array([0.3, -1.0, 2.0])
    new = move_within(u, Bs, p)
    np.testing.assert_allclose(Bs.T @ new, p, atol=1e-12)
    proj = np.eye(5) - Bs @ Bs.T
    np.testing.assert_allclose(proj @ new, proj @ u, atol=1e-12)
    # d_k < 3: the padded coordinate is dropped.
    np.testing.assert_array_equal(move_within([1.0, 2.0], axes_basis(2), [5.0, 6.0, 7.0]), [5, 6])


def test_as_direction_keeps_zero_rows():
    out = as_direction([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0]], 2.0)
    np.testing.assert_allclose(out, [[1.2, 1.6, 0.0], [0.0, 0.0, 0.0]])


def test_frame_scales_the_scene_into_the_world_radius():
    _, inp = scene_input([[1.0, 0.0, 0.0]], [[4.0, 0.0, 0.0], [0.0, 2.0, 0.0]])
    fr = make_frame(inp, ViewOptions(direction=False))
    scene = build_scene(inp, ViewOptions(direction=False), fr)
    assert np.linalg.norm(scene.world, axis=1).max() == pytest.approx(WORLD_RADIUS / 1.1)
    assert fr.extent == pytest.approx(4.4)


# ---- the scene ---------------------------------------------------------------------------------
def test_scene_labels_weights_and_sizes_come_from_the_trace():
    Q = [[0.0, 3.0, 0.0]]
    K = [[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.5, 0.5, 0.8]]
    tr, inp = scene_input(Q, K, absent=[[1.0, 0.0, 0.0]])
    scene = build_scene(inp, ViewOptions())
    assert scene.kind == ("query", "key", "key", "key", "absent")
    keys = np.flatnonzero(np.asarray(scene.kind) == "key")
    np.testing.assert_array_equal(scene.weight[keys], tr.weights[0])
    assert scene.label[2] == f"k1 {tr.weights[0, 1]:.2f}"
    # A key's pen grows with its weight; the receiving query stands out.
    order = np.argsort(scene.weight[keys])
    assert np.all(np.diff(scene.width[keys][order]) > 0)
    assert scene.width[0] > scene.width[keys].max() or scene.width[0] >= 3.5
    # The absent key is faded and has a score but no weight.
    a = scene.index("absent", 0)
    assert a is not None and scene.faded[a] and math.isnan(scene.weight[a])
    assert scene.score[a] == pytest.approx(0.0)
    assert not scene.faded[keys].any()


def test_query_drawn_as_direction_only_when_asked():
    Q = [[0.0, 30.0, 0.0]]
    K = [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]
    _, inp = scene_input(Q, K)
    on = build_scene(inp, ViewOptions(direction=True))
    off = build_scene(inp, ViewOptions(direction=False))
    assert np.linalg.norm(on.pos[0]) == pytest.approx(on.frame.direction_length)
    assert on.frame.direction_length == pytest.approx(1.1 * 2.0)
    np.testing.assert_allclose(on.pos[0] / np.linalg.norm(on.pos[0]), [0, 1, 0])
    np.testing.assert_array_equal(off.pos[0], [0.0, 30.0, 0.0])
    assert off.frame.direction_length == 0.0


def test_masked_keys_are_marked_and_big_key_sets_become_points():
    Q = rng.normal(size=(3, 4))
    K = rng.normal(size=(3, 4))
    tr0, inp = scene_input(Q, K, mask=causal_mask(3, 3), receiving=0)
    scene = build_scene(inp, ViewOptions())
    keys = np.flatnonzero(np.asarray(scene.kind) == "key")
    np.testing.assert_array_equal(scene.masked[keys], [False, True, True])
    # The engine's weight, which a -inf mask makes exactly 0; drawn thin, no leak.
    assert tr0.weights[0, 1] == 0.0
    assert scene.label[keys[1]] == "k1 0.00 (masked)"
    assert not scene.leaks.any() and scene.width[keys[1]] == 1.0

    n = ARROW_LIMIT + 10
    _, big = scene_input(rng.normal(size=(2, 5)), rng.normal(size=(n, 5)))
    scene = build_scene(big, ViewOptions())
    keys = np.flatnonzero(np.asarray(scene.kind) == "key")
    arrows = keys[scene.arrow[keys]]
    assert arrows.size == ARROWS_KEPT
    # The arrows are the most attended keys.
    assert scene.weight[arrows].min() >= scene.weight[keys[~scene.arrow[keys]]].max()


def test_masking_with_zero_shows_the_engines_leaking_weight():
    # The mistake: forbidden logits set to 0, not -inf. Forbidden keys still get weight, and
    # the scene must say so with the engine's numbers, not pretend they got nothing.
    Q = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    K = [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 1.0, 0.0]]
    tr, inp = scene_input(Q, K, mask=causal_mask(2, 3), mask_value=0.0, receiving=0)
    scene = build_scene(inp, ViewOptions())
    keys = np.flatnonzero(scene.kinds == "key")
    w = tr.weights[0]
    assert w[1] > 0.1 and w[2] > 0.05  # forbidden, yet weighted
    np.testing.assert_array_equal(scene.weight[keys], w)
    np.testing.assert_array_equal(scene.masked[keys], [False, True, True])
    np.testing.assert_array_equal(scene.leaks[keys], [False, True, True])
    assert scene.label[keys[1]] == f"k1 {w[1]:.2f} (forbidden, leaks)"
    assert scene.label[keys[2]] == f"k2 {w[2]:.2f} (forbidden, leaks)"
    # The pen follows the leaked weight like any other key's.
    np.testing.assert_allclose(scene.width[keys], 1.2 + 4.0 * w)
    leak_note = [n for n in scene.notes if "not −∞" in n]
    assert leak_note and f"{w[1] + w[2]:.3f}" in leak_note[0]
    # The same keys under a -inf mask: no leak, no note.
    _, ok = scene_input(Q, K, mask=causal_mask(2, 3), receiving=0)
    honest = build_scene(ok, ViewOptions())
    assert not honest.leaks.any() and not any("not −∞" in n for n in honest.notes)


def test_key_label_names_the_weight_and_the_leak():
    assert key_label("river", 0.2198, True) == "river 0.22"
    assert key_label("river", 0.2198, False) == "river 0.22 (forbidden, leaks)"
    assert key_label("river", 0.0, False) == "river 0.00 (masked)"


def test_top_by_weight_keeps_the_largest_and_breaks_ties_by_position():
    w = np.array([0.1, 0.5, 0.0, 0.5, 0.3, 0.0, 0.0])
    np.testing.assert_array_equal(np.flatnonzero(top_by_weight(w, 3)), [1, 3, 4])
    # Three zeros compete for the last two places: the earliest win.
    np.testing.assert_array_equal(np.flatnonzero(top_by_weight(w, 6)), [0, 1, 2, 3, 4, 5])
    assert top_by_weight(w, 10).all() and not top_by_weight(w, 0).any()
    big = rng.random(5000)
    keep = top_by_weight(big, ARROWS_KEPT)
    np.testing.assert_array_equal(np.flatnonzero(keep), np.sort(np.argsort(-big)[:ARROWS_KEPT]))


def test_a_long_sequence_labels_only_its_arrows():
    n = 2048
    Q = rng.normal(size=(n, 8))
    K = rng.normal(size=(n, 8))
    tr, inp = scene_input(Q, K, mask=causal_mask(n, n), receiving=n - 1)
    scene = build_scene(inp, ViewOptions(subspace=True, values=True, other_queries=True))
    keys = np.flatnonzero(scene.kinds == "key")
    values = np.flatnonzero(scene.kinds == "value")
    others = np.flatnonzero(scene.kinds == "other_query")
    assert keys.size == values.size == n and others.size == n - 1
    # The arrows: the query, the ARROWS_KEPT most attended keys and their values.
    assert scene.arrow.sum() == 1 + 2 * ARROWS_KEPT
    top = np.sort(np.argsort(-tr.weights[n - 1])[:ARROWS_KEPT])
    np.testing.assert_array_equal(scene.row[keys[scene.arrow[keys]]], top)
    np.testing.assert_array_equal(scene.row[values[scene.arrow[values]]], top)
    labelled = np.flatnonzero([bool(t) for t in scene.label])
    np.testing.assert_array_equal(labelled, np.flatnonzero(scene.arrow))
    np.testing.assert_array_equal(scene.weight[keys], tr.weights[n - 1])
    assert scene.index("key", 1234) == keys[1234] and scene.index("key", n) is None


def test_other_queries_and_values_only_when_asked():
    _, inp = scene_input(rng.normal(size=(3, 3)), rng.normal(size=(2, 3)), receiving=1)
    plain = build_scene(inp, ViewOptions())
    assert "other_query" not in plain.kind and "value" not in plain.kind
    full = build_scene(inp, ViewOptions(other_queries=True, values=True))
    others = [int(r) for k, r in zip(full.kind, full.row, strict=True) if k == "other_query"]
    assert others == [0, 2]
    assert full.kind.count("value") == 2


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n_q=st.integers(1, 5),
    n_k=st.integers(1, 6),
    d_k=st.integers(1, 6),
    temperature=st.floats(0.2, 3.0),
    scale=st.booleans(),
    causal=st.booleans(),
)
def test_attentionviz_layout_keeps_every_weight(seed, n_q, n_k, d_k, temperature, scale, causal):
    r = np.random.default_rng(seed)
    Q, K = r.normal(size=(n_q, d_k)) * 2, r.normal(size=(n_k, d_k)) + 1.5
    mask = causal_mask(n_q, n_k) if causal and n_q <= n_k else None
    tr, inp = scene_input(Q, K, mask=mask, temperature=temperature, scale=scale)
    scene = build_scene(inp, ViewOptions(layout=True, subspace=d_k > 3))
    # The weights computed from the displayed vectors are the engine's weights.
    shown = direct_trace(scene.Q_shown, scene.K_shown, inp.V, mask=mask,
                         temperature=temperature, scale=scale)  # fmt: skip
    np.testing.assert_allclose(shown.weights, tr.weights, rtol=1e-9, atol=1e-12)
    keys = np.flatnonzero(np.asarray(scene.kind) == "key")
    np.testing.assert_array_equal(scene.weight[keys], tr.weights[0])
    # The layout's inverse gives back the engine's vectors.
    fr = scene.frame
    for j in range(n_k):
        back = undo_layout(scene.K_shown[j], "key", fr.shift, fr.factor)
        np.testing.assert_allclose(back, K[j], atol=1e-9)
    np.testing.assert_allclose(undo_layout(scene.Q_shown[0], "query", fr.shift, fr.factor), Q[0])


def test_layout_moves_keys_toward_queries():
    Q = np.array([[5.0, 0.0], [4.0, 1.0]])
    K = np.array([[-3.0, 0.0], [-3.0, 1.0], [-4.0, 0.0]])
    t, c = layout_params(Q, K)
    Qd, Kd = apply_layout(Q, K, t, c)
    before = np.linalg.norm(Q.mean(0) - K.mean(0))
    after = np.linalg.norm(Qd.mean(0) - Kd.mean(0))
    assert after < 0.2 * before
    np.testing.assert_allclose(Qd @ Kd.T - Q @ K.T, np.tile((Q @ t)[:, None], 3), atol=1e-12)


def test_layout_skips_the_shift_when_masked_logits_are_zero():
    Q = rng.normal(size=(3, 3)) + 2
    K = rng.normal(size=(3, 3)) - 2
    mask = causal_mask(3, 3)
    tr, inp = scene_input(Q, K, mask=mask, mask_value=0.0)
    scene = build_scene(inp, ViewOptions(layout=True))
    assert not scene.frame.translated and not scene.frame.shift.any()
    assert any("without the shift" in n for n in scene.notes)
    shown = direct_trace(scene.Q_shown, scene.K_shown, inp.V, mask=mask, mask_value=0.0)
    np.testing.assert_allclose(shown.weights, tr.weights, rtol=1e-12)
    # A shift would have changed them: prove the guard matters.
    t, c = layout_params(Q, K, translate=True)
    Qd, Kd = apply_layout(Q, K, t, c)
    shifted = direct_trace(Qd, Kd, inp.V, mask=mask, mask_value=0.0)
    assert not np.allclose(shifted.weights, tr.weights)


def test_subspace_of_many_points_matches_the_full_svd():
    # subspace_basis reduces a tall (m, d) cloud to its R factor first: same answer.
    P = rng.normal(size=(500, 6)) * [5.0, 3.0, 2.0, 1.0, 0.5, 0.1]
    basis, explained = subspace_basis(P)
    ref_basis, ref_explained = best_subspace(P, 3)
    np.testing.assert_allclose(basis, ref_basis, atol=1e-10)
    np.testing.assert_allclose(explained, ref_explained, rtol=1e-10)
    # Few points (m < d) go straight to the full SVD.
    few = rng.normal(size=(2, 5))
    np.testing.assert_allclose(subspace_basis(few)[0], best_subspace(few, 3)[0], atol=1e-12)


# ---- screen geometry ---------------------------------------------------------------------------
def test_axis_and_grid_segments():
    ax = axis_segments(2.0)
    assert ax.shape == (3, 2, 3)
    np.testing.assert_array_equal(ax[2], [[0, 0, -2], [0, 0, 2]])
    grid = grid_segments(2.0, 1.0)
    assert grid.shape == (10, 2, 3)  # ticks -2..2, both directions
    assert np.all(grid[:, :, 2] == 0.0)
    assert [nice_step(x, 4) for x in (1.0, 7.0, 0.03)] == [0.5, 2.0, 0.01]


def test_arrow_heads_point_at_the_tip_and_shrink_on_short_arrows():
    base, heads = arrow_geometry([0.0, 0.0], [[100.0, 0.0], [10.0, 0.0], [0.0, 0.0]], 12.0, 8.0)
    np.testing.assert_allclose(heads[:, 0], [[100, 0], [10, 0], [0, 0]])
    np.testing.assert_allclose(base[0], [88.0, 0.0])
    np.testing.assert_allclose(heads[0, 1:], [[88.0, 4.0], [88.0, -4.0]])
    assert 10.0 - base[1, 0] == pytest.approx(4.0)  # 40% of a 10 px arrow
    np.testing.assert_allclose(heads[1, 1:, 1], [4.0 / 3.0, -4.0 / 3.0])  # proportions kept
    assert np.isfinite(heads).all()


def test_paint_order_is_far_to_near():
    np.testing.assert_array_equal(paint_order([5.0, 9.0, 1.0, 9.0]), [1, 3, 0, 2])
    np.testing.assert_array_equal(paint_order([5.0, 9.0, 1.0, 9.0], on_top=1), [3, 0, 2, 1])


def test_labels_avoid_each_other_and_obstacles():
    anchors = np.array([[100.0, 100.0], [102.0, 101.0], [300.0, 100.0]])
    away = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])
    sizes = np.array([[60.0, 14.0]] * 3)
    pos, visible = place_labels(anchors, away, sizes, [0, 1, 2],
                                obstacles=[[300.0, 80.0, 400.0, 120.0]])  # fmt: skip
    assert visible.all()
    boxes = np.hstack([pos, pos + sizes])

    def overlap(a, b):
        return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])

    assert not overlap(boxes[0], boxes[1])
    assert not overlap(boxes[2], [300.0, 80.0, 400.0, 120.0])
    # Crowded labels past the first `always` are hidden rather than drawn on top.
    many = np.array([[50.0, 50.0]] * 30)
    _, vis = place_labels(many, np.tile([1.0, 0.0], (30, 1)), np.tile([60.0, 14.0], (30, 1)),
                          np.arange(30), always=2, bounds=(0, 0, 200, 120))  # fmt: skip
    assert vis[:2].all() and vis.sum() < 30


def test_labels_shown_past_the_first_never_overlap_a_shown_label_or_an_obstacle():
    # Many crowded labels, obstacles and lines: every label after the first ``always`` that is
    # shown sits on free ground (the free-spot test works on the grid's taken cells).
    rng = np.random.default_rng(5)
    for _ in range(60):
        m = int(rng.integers(2, 30))
        anchors = rng.uniform(0, 400, (m, 2))
        away = rng.standard_normal((m, 2))
        away /= np.linalg.norm(away, axis=1, keepdims=True)
        sizes = np.column_stack([rng.uniform(10, 70, m), np.full(m, 14.0)])
        prio = rng.uniform(0, 3, m)
        obs = rng.uniform(0, 400, (3, 4))
        obs[:, 2:] = obs[:, :2] + 25
        pos, visible = place_labels(anchors, away, sizes, prio, always=2,
                                    bounds=(0.0, 0.0, 420.0, 420.0), obstacles=obs)  # fmt: skip
        boxes = np.hstack([pos, pos + sizes])
        ranked = np.argsort(prio, kind="stable")
        late = [int(k) for k in ranked[2:] if visible[k]]
        for k in late:
            b = boxes[k]
            others = [boxes[j] for j in np.flatnonzero(visible) if j != k] + list(obs)
            for o in others:
                overlap_w = min(b[2], o[2]) - max(b[0], o[0])
                overlap_h = min(b[3], o[3]) - max(b[1], o[1])
                assert overlap_w <= 1e-9 or overlap_h <= 1e-9, (k, b, o)


def _crosses(box, seg) -> bool:
    """Whether the segment (x0, y0, x1, y1) passes through the box (x0, y0, x1, y1)."""
    t = np.linspace(0.0, 1.0, 2001)
    x, y = seg[0] + t * (seg[2] - seg[0]), seg[1] + t * (seg[3] - seg[1])
    return bool(((x > box[0]) & (x < box[2]) & (y > box[1]) & (y < box[3])).any())


def test_labels_keep_off_lines():
    # A label pushed right of its tip would sit across a vertical line just past the tip and
    # across the arrow carried on; with the lines as segments it finds a spot clear of both.
    anchor = np.array([[100.0, 100.0]])
    size = np.array([[60.0, 14.0]])
    wall = [130.0, 0.0, 130.0, 200.0]
    shaft = [0.0, 100.0, 100.0, 100.0]  # its own arrow, arriving from the left
    free, _ = place_labels(anchor, [[1.0, 0.0]], size, [0])
    assert _crosses(np.hstack([free[0], free[0] + size[0]]), wall)
    pos, visible = place_labels(anchor, [[1.0, 0.0]], size, [0], segments=[wall, shaft])
    box = np.hstack([pos[0], pos[0] + size[0]])
    assert visible[0]
    assert not _crosses(box, wall) and not _crosses(box, shaft)
    # still next to its tip: a corner within a gap and a line of it
    near = np.hypot(np.clip(100.0, box[0], box[2]) - 100.0, np.clip(100.0, box[1], box[3]) - 100.0)
    assert near <= 6.0 * math.sqrt(2) + 14.0 * math.sqrt(2) + 1e-9


def test_drag_points_land_under_the_mouse():
    cam = Camera(yaw_deg=20.0, pitch_deg=30.0, zoom=1.3)
    w, h = 800.0, 600.0
    start = np.array([0.4, -0.2, 0.7])
    (xy,), (depth,) = cam.project(start, w, h)
    target = xy + np.array([37.0, -12.0])
    p = drag_world_point(cam, target, depth, w, h)
    (back,), (d2,) = cam.project(p, w, h)
    np.testing.assert_allclose(back, target, atol=1e-9)
    assert d2 == pytest.approx(depth)
    # In a 2-D matching space the tip stays in the plane z = 0 and still follows the mouse.
    p2 = drag_world_point(cam, target, depth, w, h, dims=2)
    assert p2[2] == pytest.approx(0.0, abs=1e-12)
    (back2,), _ = cam.project(p2, w, h)
    np.testing.assert_allclose(back2, target, atol=1e-9)
    p1 = drag_world_point(cam, target, depth, w, h, dims=1)
    assert p1[1] == 0.0 and p1[2] == 0.0


# ---- display: camera presets, controls, inputs, drags --------------------------------------------
def test_cameras_start_from_above_for_planar_spaces_and_presets_keep_the_zoom():
    from attnsim.viewmodels.space3d import DEFAULT_CAMERA, TOP_CAMERA, default_camera, preset_camera

    assert default_camera(1) is TOP_CAMERA and default_camera(2) is TOP_CAMERA
    assert default_camera(3) is DEFAULT_CAMERA and default_camera(9) is DEFAULT_CAMERA
    cam = Camera(yaw_deg=33.0, pitch_deg=12.0, distance=6.5, fov_deg=40.0, zoom=2.5)
    along_x = preset_camera(2, cam)
    assert (along_x.yaw_deg, along_x.pitch_deg) == (270.0, 0.0)
    assert (along_x.distance, along_x.fov_deg, along_x.zoom) == (6.5, 40.0, 2.5)
    assert (preset_camera(0, cam).yaw_deg, preset_camera(0, cam).pitch_deg) == (0.0, 90.0)


def test_view_menu_names_the_shown_axes_and_padded_ones_by_number():
    from attnsim.viewmodels.space3d import view_menu_texts

    texts = view_menu_texts(("finance", "water", "structure"))
    assert texts == (
        "Look along structure: the finance–water plane",
        "Look along water: the finance–structure plane",
        "Look along finance: the water–structure plane",
    )
    assert "axis 3 (= 0)" in view_menu_texts(("x", "y", ""))[0]


def test_choosing_an_axis_shown_elsewhere_swaps_the_two():
    from attnsim.viewmodels.space3d import choose_axis

    opts = ViewOptions(axes=(0, 1, 2), layout=True)
    assert choose_axis(opts, 0, 3).axes == (3, 1, 2)
    swapped = choose_axis(ViewOptions(axes=(1, 3, 2)), 0, 3)
    assert swapped.axes == (3, 1, 2)
    assert choose_axis(opts, 1, 1).axes == (0, 1, 2)
    assert choose_axis(opts, 0, 3).layout  # the other choices stay


def test_a_new_width_resets_the_axes_and_picks_the_subspace_only_for_many_coordinates():
    from attnsim.viewmodels.space3d import options_for_width

    opts = ViewOptions(axes=(4, 2, 0), subspace=False, values=True)
    wide, narrow = options_for_width(opts, 8), options_for_width(opts, 4)
    assert wide.axes == narrow.axes == (0, 1, 2)
    assert wide.subspace and not narrow.subspace and wide.values


def test_controls_data_hides_the_axis_choice_unless_there_are_more_than_three_axes():
    from attnsim.viewmodels.space3d import controls_data

    _, inp = scene_input(rng.standard_normal((2, 5)), rng.standard_normal((4, 5)))
    opts = ViewOptions()
    data = controls_data(opts, inp.qk_axes, 2, make_frame(inp, opts))
    assert data.axis_items == ("a0", "a1", "a2", "a3", "a4")
    assert data.set_axes and data.axes_visible and data.mode_enabled and data.mode_index == 0
    assert data.others_enabled and data.direction_enabled
    assert data.menu_texts[0] == "Look along a2: the a0–a1 plane"
    sub = ViewOptions(subspace=True, layout=True)
    data = controls_data(sub, inp.qk_axes, 1, make_frame(inp, sub))
    assert not data.axes_visible and data.mode_index == 1
    assert not data.others_enabled and not data.direction_enabled
    assert data.menu_texts[0].startswith("Look along PC3")
    _, small = scene_input(rng.standard_normal((1, 2)), rng.standard_normal((3, 2)))
    data = controls_data(sub, small.qk_axes, 1, make_frame(small, sub))
    assert not (data.set_axes or data.axes_visible or data.mode_enabled) and data.mode_index == 0


def test_scene_input_keys_the_absent_tokens_through_the_focused_head_and_drops_stale_points():
    from attnsim.resources import resolve_scenario
    from attnsim.viewmodels.space3d import scene_input as make_input

    sc = resolve_scenario("river-bank")
    tr = sc.compute().heads[0]
    inp = make_input(sc, tr, 1, 0, np.ones((4, tr.d_k)))
    assert inp.receiving == 1 and inp.key_labels == tuple(sc.tokens)
    assert inp.points is not None and inp.points.shape == (4, tr.d_k)
    assert make_input(sc, tr, 0, 0, np.ones((4, tr.d_k + 1))).points is None
    assert sc.mode == "tokens" and inp.absent_labels == tuple(sc.absent) == ("money",)
    np.testing.assert_allclose(inp.absent_K[0], sc.absent["money"] @ sc.heads[0].Wk)


@pytest.mark.parametrize("layout", [False, True])
@pytest.mark.parametrize("kind", ["query", "key"])
def test_dragged_vector_moves_the_shown_part_to_the_mouse_and_keeps_the_hidden_part(kind, layout):
    from attnsim.viewmodels.space3d import dragged_vector

    _, inp = scene_input(rng.standard_normal((2, 5)), rng.standard_normal((4, 5)))
    opts = ViewOptions(direction=False, layout=layout)
    fr = make_frame(inp, opts)
    cam = Camera(yaw_deg=20.0, pitch_deg=30.0)
    w, h = 640.0, 400.0
    current = (inp.Q if kind == "query" else inp.K)[1]
    target = current + np.array([0.3, -0.2, 0.1, 0.0, 0.0])  # shown axes are 0, 1, 2
    u = target * fr.factor if kind == "query" else (target + fr.shift) / fr.factor
    xy, depth = cam.project((u @ fr.basis)[None, :] * fr.scale, w, h)
    got = dragged_vector(fr, kind, current, cam, tuple(xy[0]), float(depth[0]), w, h)
    np.testing.assert_allclose(got, target, atol=1e-9)
    np.testing.assert_allclose(got[3:], current[3:], rtol=1e-12, atol=1e-12)


def test_dragged_query_shown_as_a_direction_keeps_its_shown_length():
    from attnsim.viewmodels.space3d import dragged_vector

    _, inp = scene_input(rng.standard_normal((1, 3)), rng.standard_normal((4, 3)))
    fr = make_frame(inp, ViewOptions(direction=True))
    assert fr.direction_length > 0
    cam = Camera()
    q = inp.Q[0]
    got = dragged_vector(fr, "query", q, cam, (100.0, 80.0), 5.0, 640.0, 400.0)
    assert np.linalg.norm(got) == pytest.approx(np.linalg.norm(q))


def test_a_layout_that_moves_nothing_makes_no_copies():
    from attnsim.viewmodels.space3d.frame import apply_layout

    Q, K = rng.normal(size=(5, 3)), rng.normal(size=(6, 3))
    Qd, Kd = apply_layout(Q, K, np.zeros(3), 1.0)
    assert Qd is Q and Kd is K
    Qd, Kd = apply_layout(Q, K, np.array([0.0, 1.0, 0.0]), 2.0)
    np.testing.assert_allclose(Qd, Q * 2.0)
    np.testing.assert_allclose(Kd, (K + np.array([0.0, 1.0, 0.0])) / 2.0)


def test_labels_shown_anyway_take_the_spot_least_covered_by_the_ones_before():
    # Two names of one tip, a line through every spot round it: no spot is free, so both are
    # shown anyway, each where it overlaps least; the second counts the first among what it
    # would overlap, so it does not sit on it.
    anchors = np.array([[100.0, 100.0], [100.0, 100.0]])
    away = np.array([[1.0, 0.0], [1.0, 0.0]])
    sizes = np.array([[40.0, 14.0], [40.0, 14.0]])
    lines = [[0.0, y, 300.0, y] for y in np.arange(20.0, 190.0, 7.0)]  # every spot is crossed
    pos, visible = place_labels(anchors, away, sizes, [0, 1], always=2, segments=lines)
    assert visible.all()
    boxes = np.hstack([pos, pos + sizes])
    overlap_w = min(boxes[0, 2], boxes[1, 2]) - max(boxes[0, 0], boxes[1, 0])
    overlap_h = min(boxes[0, 3], boxes[1, 3]) - max(boxes[0, 1], boxes[1, 1])
    assert overlap_w <= 0 or overlap_h <= 0
    # with a third name not shown anyway and nowhere free, it is hidden
    pos3, visible3 = place_labels(np.vstack([anchors, anchors[:1]]), np.vstack([away, away[:1]]),
                                  np.vstack([sizes, sizes[:1]]), [0, 1, 2], always=2,
                                  segments=lines)  # fmt: skip
    assert visible3.tolist() == [True, True, False]
    np.testing.assert_array_equal(pos3[:2], pos)
