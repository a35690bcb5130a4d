"""The explorer's arithmetic: readouts from geometry, hold modes, the q-k plane, the strip."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attnsim.engine import geometry
from attnsim.viewmodels import explorer as em

finite = st.floats(-50, 50, allow_nan=False, allow_infinity=False)


def vec(d: int):
    return arrays(np.float64, d, elements=finite)


def test_the_twenty_degree_example():
    a = 10 * np.array([math.cos(math.radians(20)), math.sin(math.radians(20))])
    r = em.pair_readout(a, [1.0, 0.0], 4)
    assert round(r.dot, 2) == 9.40 and round(r.projection, 2) == 9.40
    assert r.angle_deg == pytest.approx(20.0)
    assert r.cosine == pytest.approx(math.cos(math.radians(20)))
    assert r.scaled_dot == pytest.approx(r.dot / 2)
    assert np.allclose(r.projection_vector, [r.dot, 0.0])


@pytest.mark.parametrize(
    ("q", "k", "dot", "cos"),
    [((1, 0), (1, 0), 1, 1), ((10, 0), (10, 0), 100, 1), ((1, 0), (0, 1), 0, 0),
     ((1, 0), (-1, 0), -1, -1)],
)  # fmt: skip
def test_reference_table_of_dot_and_cosine(q, k, dot, cos):
    r = em.pair_readout(q, k, 2)
    assert r.dot == dot and r.cosine == pytest.approx(cos)


def test_zero_vectors_are_undefined_not_nan():
    r = em.pair_readout([0.0, 0.0], [1.0, 2.0], 2)
    assert r.cosine is None and r.angle_deg is None
    assert r.dot == 0.0 and r.projection == 0.0
    r = em.pair_readout([1.0, 2.0], [0.0, 0.0], 2)
    assert r.projection is None and r.projection_vector is None and r.cosine is None
    assert em.signed_angle([0, 0], [1, 0]) is None
    assert em.angle_arc([0, 0], [1, 0], 1.0).shape == (0, 2)


@given(vec(2), vec(2))
def test_signed_angle_has_geometry_magnitude_and_rotates_b_onto_a(a, b):
    turn = em.signed_angle(a, b)
    if not (np.linalg.norm(a) > 1e-6 and np.linalg.norm(b) > 1e-6):
        return
    assert abs(turn) == pytest.approx(geometry.angle(a, b, degrees=True))
    rebuilt = em.with_angle(a, b, turn)
    assert np.allclose(rebuilt, a, atol=1e-6 * max(1.0, np.linalg.norm(a)))


@given(vec(2), vec(2))
def test_hold_lengths_keeps_the_length(start, target):
    out = em.constrain_drag("lengths", start, target)
    assert np.linalg.norm(out) == pytest.approx(np.linalg.norm(start), abs=1e-9)
    if np.linalg.norm(target) > 1e-6 and np.linalg.norm(start) > 1e-6:
        assert geometry.cosine(out, target) == pytest.approx(1.0)


@given(vec(2), vec(2), vec(2))
def test_hold_angle_keeps_the_angle_to_any_b(start, target, b):
    out = em.constrain_drag("angle", start, target)
    ok = min(np.linalg.norm(start), np.linalg.norm(b)) > 1e-6
    if ok and np.linalg.norm(out) > 1e-9:
        assert geometry.angle(out, b) == pytest.approx(geometry.angle(start, b), abs=1e-6)
    assert np.all(np.isfinite(out))


def test_hold_angle_never_goes_behind_the_origin_and_modes_are_checked():
    assert np.array_equal(em.constrain_drag("angle", [1.0, 0.0], [-3.0, 2.0]), [0.0, 0.0])
    assert np.allclose(em.constrain_drag("angle", [0.0, 0.0], [3.0, 3.0], [0.0, 1.0]), [0, 3])
    assert np.array_equal(em.constrain_drag("free", [1.0, 0.0], [-3.0, 2.0]), [-3.0, 2.0])
    with pytest.raises(ValueError, match="unknown hold mode"):
        em.constrain_drag("sideways", [1, 0], [0, 1])


def test_with_length_keeps_direction_and_refuses_negative():
    assert np.allclose(em.with_length([3.0, 4.0], 10.0), [6.0, 8.0])
    assert np.allclose(em.with_length([0.0, 0.0], 2.0, [0.0, -1.0]), [0.0, -2.0])
    with pytest.raises(ValueError, match="length"):
        em.with_length([1.0, 0.0], -1.0)


@settings(max_examples=60)
@given(st.integers(2, 8).flatmap(lambda d: st.tuples(vec(d), vec(d))))
def test_plane_basis_is_orthonormal_and_keeps_dot_and_lengths(pair):
    q, k = pair
    B = em.plane_basis(q, k)
    assert np.allclose(B.T @ B, np.eye(2), atol=1e-9)
    q2, k2 = em.to_plane(q, B), em.to_plane(k, B)
    tol = 1e-7 * max(1.0, np.linalg.norm(q) * np.linalg.norm(k))
    assert float(q2 @ k2) == pytest.approx(geometry.dot(q, k), abs=tol)
    assert np.linalg.norm(q2) == pytest.approx(
        np.linalg.norm(q), abs=1e-7 * max(1, np.linalg.norm(q))
    )
    assert np.allclose(em.from_plane(q2, B, q), q, atol=1e-7 * max(1.0, np.linalg.norm(q)))
    if np.linalg.norm(k) > 0:
        assert k2[1] == pytest.approx(0.0, abs=1e-9 * max(1.0, np.linalg.norm(k)))
        assert k2[0] > 0


def test_plane_basis_degenerate_cases():
    parallel = em.plane_basis([2.0, 0.0, 0.0], [1.0, 0.0, 0.0])
    assert np.allclose(parallel.T @ parallel, np.eye(2))
    zero = em.plane_basis([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    assert np.allclose(zero.T @ zero, np.eye(2))
    only_q = em.plane_basis([0.0, 3.0, 0.0], [0.0, 0.0, 0.0])
    assert np.allclose(only_q[:, 0], [0.0, 1.0, 0.0])
    one_d = em.plane_basis([2.0], [-1.0])
    assert np.allclose(one_d, [[-1.0, 0.0]])
    with pytest.raises(ValueError, match="one length"):
        em.plane_basis([1.0, 2.0], [1.0, 2.0, 3.0])


def test_plane_basis_keeps_its_orientation_and_its_plane():
    k = np.array([1.0, 0.0, 0.0])
    B = em.plane_basis([1.0, 1.0, 0.0], k)
    below = em.plane_basis([1.0, -1.0, 0.0], k, previous=B)  # q crossed k's line: no flip
    assert np.allclose(below[:, 1], B[:, 1])
    along = em.plane_basis([2.0, 0.0, 0.0], k, previous=B)  # q on k's line: same plane
    assert np.allclose(along, B)


def test_from_plane_keeps_the_out_of_plane_part():
    B = em.plane_basis([0.0, 1.0, 0.0], [1.0, 0.0, 0.0])
    old = np.array([1.0, 2.0, 5.0])
    assert np.allclose(em.from_plane([3.0, 4.0], B, old), [3.0, 4.0, 5.0])
    assert em.in_plane([3.0, 4.0, 0.0], B) and not em.in_plane(old, B)


def test_shadow_geometry_drop_is_perpendicular_to_b():
    a, b = np.array([3.0, 4.0]), np.array([2.0, 1.0])
    g = em.shadow_geometry(a, b, 10.0)
    foot = g.shadow[1]
    assert np.allclose(foot, geometry.projection_vector(a, b))
    assert float((g.drop[0] - g.drop[1]) @ b) == pytest.approx(0.0, abs=1e-12)
    assert np.linalg.norm(g.line[1]) == pytest.approx(10.0)
    flat = em.shadow_geometry(a, [0.0, 0.0], 10.0)
    assert np.all(np.isfinite(np.concatenate([flat.line, flat.shadow, flat.drop])))


def test_angle_arc_runs_from_b_to_a_the_short_way():
    arc = em.angle_arc([0.0, -2.0], [1.0, 0.0], 0.5, n=9)
    assert arc.shape == (9, 2)
    assert np.allclose(arc[0], [0.5, 0.0]) and np.allclose(arc[-1], [0.0, -0.5])
    assert np.all(arc[:, 1] <= 1e-12)  # clockwise, not round the long way


def test_view_bounds_hold_every_point_and_the_origin():
    box = em.view_bounds(np.array([[9.4, 3.4], [1.0, 0.0]]))
    assert box[0] < 0 < 9.4 < box[1] and box[2] < 0 < 3.4 < box[3]
    flat = em.view_bounds(np.array([[5.0, 0.0]]))
    assert flat[3] - flat[2] >= 0.4 * 5.0


def test_softmax_strip_reference_numbers():
    _, raw, d1 = em.softmax_strip([4, 2, 0])
    assert d1 == 1.0 and [round(100 * w, 1) for w in raw] == [86.7, 11.7, 1.6]
    logits, scaled, d2 = em.softmax_strip([4, 2, 0], scale=True, d_k=4)
    assert d2 == 2.0 and np.allclose(logits, [2, 1, 0])
    assert [round(100 * w, 1) for w in scaled] == [66.5, 24.5, 9.0]
    _, hot, _ = em.softmax_strip([4, 2, 0], 2.0)  # T = 2 is the same as dividing by sqrt(4)
    assert np.allclose(hot, scaled)
    with pytest.raises(ValueError, match="temperature"):
        em.softmax_strip([1, 2], 0.0)
    with pytest.raises(ValueError, match="d_k"):
        em.softmax_strip([1, 2], scale=True, d_k=0)


def test_parse_scores():
    assert np.array_equal(em.parse_scores("4, 2, 0"), [4.0, 2.0, 0.0])
    assert np.array_equal(em.parse_scores("[1 −2;3]"), [1.0, -2.0, 3.0])
    for bad, why in [("4, x", "'x' is not a number"), ("1", "at least two"),
                     ("1, inf", "finite"), (",".join("1" * 11), "at most")]:  # fmt: skip
        with pytest.raises(ValueError, match=why):
            em.parse_scores(bad)


# ---- what the sub-views show ----------------------------------------------------------------


def _scenario(name: str):
    from attnsim.engine.scenario import compute
    from attnsim.resources import resolve_scenario

    sc = resolve_scenario(name)
    return sc, compute(sc).heads[0]


def _values(readouts: em.Readouts) -> dict[str, tuple]:
    return {r.key: r.value for r in readouts.rows}


def test_free_readouts_carry_the_pair_readout_numbers():
    out = em.free_readouts(em.A_DEFAULT, em.B_DEFAULT, 4)
    r = em.pair_readout(em.A_DEFAULT, em.B_DEFAULT, 4)
    v = _values(out)
    assert [row.key for row in out.rows] == [k for k in em.READOUT_KEYS if k in v]
    assert out.row("logit") is None and out.row("weight") is None  # free vectors: no heatmap
    assert v["dot"] == (em.Number(r.dot),) and round(r.dot, 2) == 9.40
    assert v["angle"] == (em.Number(r.angle_deg, 2, "degrees"),)
    assert v["cosine"] == (em.Number(r.cosine, 3),)
    pv = r.projection_vector
    assert v["projection_vector"] == ("(", em.Number(pv[0]), ", ", em.Number(pv[1]), ")")
    assert out.row("scaled").note == ("d_k = 4",)
    assert v["scaled"][0].value == pytest.approx(r.dot / 2)


def test_free_readouts_of_zero_vectors_are_undefined():
    out = em.free_readouts([0.0, 0.0], [0.0, 0.0], 1)
    v = _values(out)
    for key in ("cosine", "angle", "projection", "projection_vector"):
        assert [n.value for n in v[key]] == [None], key  # one undefined number, never NaN
    assert v["dot"] == (em.Number(0.0),)


def test_linked_readouts_are_the_traces_heatmap_cell():
    sc, tr = _scenario("river-bank")
    bank, river = 2, 1
    out = em.linked_readouts(sc, tr, 0, bank, river)
    v = _values(out)
    assert out.row("projection_vector") is None
    assert v["dot"] == (em.Number(float(tr.scores[bank, river]), 3),)
    assert v["logit"] == (em.Number(float(tr.logits[bank, river]), 3),)
    assert v["weight"] == (em.Number(float(tr.weights[bank, river]), 4),)
    assert v["scaled"] == (em.Number(tr.divisor, 4, "significant"),)
    assert v["len_a"][0].value == pytest.approx(np.linalg.norm(tr.Q[bank]))
    assert out.row("scaled").note == ("= √4 × T, T = ", em.Number(1.0, 4, "significant"))
    assert out.row("logit").note == ("= q·k / divisor",)  # allowed: no mask note
    assert f"<b>{sc.query_labels[bank]}</b> → <b>{sc.tokens[river]}</b>" in out.title
    assert f"head “{sc.heads[0].name}”" in out.title and "d_k = 4" in out.title
    assert out.row("weight").note == (f"softmax over {sc.n_tokens} keys",)


def test_linked_readouts_name_a_masked_cell_and_unscaled_divisor():
    sc, tr = _scenario("bank-river")
    out = em.linked_readouts(sc, tr, 0, 0, 2)  # causal: "the" cannot read "river"
    assert not tr.mask[0, 2]
    note = out.row("logit").note
    assert note[:2] == ("= q·k / divisor", ", masked → ")
    assert note[2] == "−∞" if math.isinf(tr.mask_value) else em.Number(tr.mask_value, 3)
    sc2 = sc.replace(scale=False, temperature=0.5)
    from attnsim.engine.scenario import compute

    tr2 = compute(sc2).heads[0]
    out2 = em.linked_readouts(sc2, tr2, 0, 1, 0)
    assert out2.row("scaled").note == ("= T = ", em.Number(0.5, 4, "significant"), " (scaling off)")
    assert out2.row("scaled").value == (em.Number(tr2.divisor, 4, "significant"),)
    assert tr2.divisor == pytest.approx(0.5)


def test_default_pair_and_pair_choice():
    w = np.array([[0.1, 0.7, 0.2], [0.5, 0.25, 0.25]])
    assert em.default_pair(w, 0, None) == (0, 1)  # the top-weighted key
    assert em.default_pair(w, 1, None) == (1, 0)
    assert em.default_pair(w, 0, 2) == (0, 2)  # a focused key wins
    sc, _ = _scenario("river-bank")
    choice = em.pair_choice(sc, 2, 1)
    assert choice.queries == tuple(sc.query_labels) and choice.keys == tuple(sc.tokens)
    assert (choice.query, choice.key) == (2, 1)


def test_needs_refit_when_the_picture_leaves_or_shrinks():
    have = np.array([-1.0, 1.0, -1.0, 1.0])
    assert em.needs_refit(have, None)
    assert not em.needs_refit(np.array([-0.8, 0.9, -0.5, 0.5]), have)
    assert em.needs_refit(np.array([-0.8, 1.2, -0.5, 0.5]), have)  # out on the right
    assert em.needs_refit(np.array([-0.4, 0.4, -0.2, 0.2]), have)  # under half the span


def test_plane_picture_keeps_the_box_while_held_and_refits_after():
    a, b = np.array([3.0, 4.0]), np.array([1.0, 0.0])
    first = em.plane_picture(a, b)
    assert first.refit and np.array_equal(first.box, em.view_bounds([a, b, [3.0, 0.0]]))
    assert first.projection == pytest.approx(3.0) and np.allclose(first.foot, [3.0, 0.0])
    assert first.angle_at is not None and first.arc.shape == (33, 2)
    far = np.array([30.0, 40.0])
    held = em.plane_picture(far, b, shown=first.box, may_refit=False)
    assert not held.refit and np.array_equal(held.box, first.box)
    free = em.plane_picture(far, b, shown=first.box)
    assert free.refit and free.box[1] > 30.0
    same = em.plane_picture(a * 0.9, b, shown=first.box)
    assert not same.refit  # a small move keeps the view still
    # labels sit past the tip and off the arrow's line, on the side away from the other
    # arrow: b points right with a above it, so b's label hangs right of and below its tip
    assert same.anchors[1] == pytest.approx((-0.1, -0.1))
    # a points up and right with b below it: its label sits above the tip, off a's line
    ax, ay = same.anchors[0]
    assert ay > 1.0 and 0.0 < ax < 1.0


def test_plane_picture_of_a_zero_vector_has_no_angle_or_shadow():
    pic = em.plane_picture([2.0, 1.0], [0.0, 0.0], directions=([1.0, 0.0], [0.0, 1.0]))
    assert pic.angle_at is None and pic.arc.shape == (0, 2) and pic.projection is None
    assert np.isfinite(pic.box).all() and np.isfinite(pic.shadow.line).all()
    # from the remembered direction (up), on the side away from a (which points right)
    assert pic.anchors[1] == pytest.approx((1.1, 1.1))


def test_guide_lines_follow_the_hold_mode():
    a, b = np.array([3.0, 4.0]), np.array([0.0, 0.0])
    dirs = (em.unit(a), np.array([0.0, 1.0]))
    circle, none = em.guide_lines("lengths", (a, b), dirs, 10.0)
    assert np.allclose(np.linalg.norm(circle, axis=1), 5.0) and none.shape == (0, 2)
    ray_a, ray_b = em.guide_lines("angle", (a, b), dirs, 10.0)
    assert np.allclose(ray_a, [[0, 0], 10 * dirs[0]]) and np.allclose(ray_b, [[0, 0], [0, 10]])
    assert all(g.shape == (0, 2) for g in em.guide_lines("free", (a, b), dirs, 10.0))


def test_hint_text_says_what_a_drag_does():
    assert "circle" in em.hint_text("free", "lengths", True)
    assert em.hint_text("free", "free", True).startswith("Drag the tips of a and b")
    assert "edits this scenario" in em.hint_text("linked", "angle", True)
    assert "cannot be dragged" in em.hint_text("linked", "free", False)


def test_slider_view_positions_and_enables_by_hold():
    a, b = em.A_DEFAULT, em.B_DEFAULT
    rows = {r.key: r for r in em.slider_view(a, b, hold="angle")}
    assert rows["len_a"].tick == round(10.0 / 20.0 * em.LENGTH_TICKS) == 200
    assert rows["angle"].tick == round(20.0 * em.ANGLE_TICKS)
    assert rows["len_a"].enabled and not rows["angle"].enabled
    assert rows["len_a"].name == "‖a‖" and rows["len_a"].shown[0].value == pytest.approx(10.0)
    rows = {r.key: r for r in em.slider_view(a, b, names=("q", "k"), hold="lengths")}
    assert rows["len_b"].name == "‖k‖" and rows["angle"].enabled
    assert not rows["len_a"].enabled and not rows["len_b"].enabled
    locked = em.slider_view(a, b, editable=False)
    assert not any(r.enabled for r in locked)
    zero = {r.key: r for r in em.slider_view([0.0, 0.0], b)}
    assert zero["angle"].tick is None and zero["angle"].shown == ("—",)
    long = {r.key: r for r in em.slider_view([50.0, 0.0], b)}
    assert long["len_a"].tick == em.LENGTH_TICKS  # beyond the reach: at the end


def test_length_reach():
    assert em.length_reach([100.0, 0.0], [1.0, 0.0], linked=False) == em.FREE_REACH
    assert em.length_reach([0.3, 0.4], [1.0, 0.0], linked=True) == 2.0
    assert em.length_reach([0.0, 0.0], [0.0, 0.0], linked=True) == 1.0


def test_slider_edit_turns_and_stretches_and_names_the_step():
    a, b = em.A_DEFAULT, em.B_DEFAULT
    name, new, text = em.slider_edit("angle", 120, a, b)
    assert name == "a" and text == "Turn a to 60°"
    assert np.linalg.norm(new) == pytest.approx(10.0)
    assert em.signed_angle(new, b) == pytest.approx(60.0)
    name, new, text = em.slider_edit("len_b", 100, a, b, reach=8.0, names=("q", "k"))
    assert name == "b" and text == "Set ‖k‖ to 2" and np.allclose(new, [2.0, 0.0])
    # a zero vector comes back along the direction it had
    name, new, _ = em.slider_edit("len_a", 200, [0.0, 0.0], b, directions=(em.unit(a), em.unit(b)))
    assert np.allclose(new, a)


def test_follow_basis_holds_while_dragged():
    q, k = np.array([1.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])
    first = em.follow_basis(q, k, None, same_pair=False, held=False)
    assert np.allclose(first, em.plane_basis(q, k))
    q2 = np.array([1.0, 1.0, 0.0])
    assert np.array_equal(em.follow_basis(q2, k, first, same_pair=True, held=True), first)
    moved = em.follow_basis(q2, k, first, same_pair=True, held=False)
    assert em.in_plane(q2, moved) and not np.allclose(moved, first)


def test_tip_drag_keeps_the_grab_offset_and_the_hold():
    drag = em.TipDrag.grab("a", [3.0, 4.0], [3.2, 4.1], drag=7)
    assert drag.name == "a" and drag.drag == 7 and np.allclose(drag.offset, [0.2, 0.1])
    assert np.allclose(drag.to([1.2, 1.1], "free"), [1.0, 1.0])
    held = drag.to([0.2, 8.1], "lengths")
    assert np.linalg.norm(held) == pytest.approx(5.0) and held[1] > 4.9


def test_strip_picture_reference_rows_and_captions():
    pic = em.strip_picture(em.ExplorerState())
    assert [f"{100 * w:.1f}%" for w in pic.raw] == ["86.7%", "11.7%", "1.6%"]
    assert [f"{100 * w:.1f}%" for w in pic.weights] == ["66.5%", "24.5%", "9.0%"]
    assert pic.divisor == 2.0 and pic.row_labels == ("softmax(s)", "softmax(s / √4)")
    assert pic.header[0] == ("key 1: 4 → 2.00", "4→2")
    hot = em.strip_picture(em.ExplorerState(temperature=2.0, scale=True, d_k=9))
    assert hot.divisor == pytest.approx(6.0) and hot.row_labels[1] == "softmax(s / (√9×2.00))"
    plain = em.strip_picture(em.ExplorerState(scale=False))
    assert plain.row_labels[1] == "softmax(s / 1)" and np.allclose(plain.weights, plain.raw)
