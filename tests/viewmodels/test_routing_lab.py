"""The routing lab: the synthetic-d route, interventions, four causes in words, distractors."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attnsim.engine import edits
from attnsim.engine.attention import direct_trace, softmax
from attnsim.engine.scenario import Scenario, ScenarioError
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.routing_lab import (
    RoutingLabState,
    add_distractor,
    bars_view,
    causes_view,
    change_text,
    controls_view,
    d_note,
    d_position,
    distractor_effect,
    distractor_key,
    distractor_names,
    distractor_view,
    four_causes,
    is_lab_scenario,
    lab_route,
    lab_unfit_reason,
    lab_view,
    last_edit_route,
    payload_arrows,
    payload_view,
    plane_view,
    plane_xy,
    query_angle,
    rotate_query,
    rotate_query_to,
    rotated,
    route_change,
    swap_values,
    synthetic_route,
    with_query_angle,
    without_distractors,
)

Q = np.array([1.0, 0.0])
K = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
V = np.array([[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]])
rng = np.random.default_rng(11)


@pytest.fixture
def lab() -> Scenario:
    return resolve_scenario("routing-lab")


def by_key(rows):
    return {r.key: r for r in rows}


# ---- the route ---------------------------------------------------------------------------------
def test_preset_is_the_seed_lab(lab):
    assert is_lab_scenario(lab)
    np.testing.assert_array_equal(lab.Q, [Q])
    np.testing.assert_array_equal(lab.K, K)
    np.testing.assert_array_equal(lab.V, V)
    assert lab.scale is False


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("t", [0.3, 1.0, 2.5])
def test_at_native_d_the_route_is_the_engines_bit_for_bit(scale, t):
    mask = np.array([True, False, True])
    for m in (None, mask):
        tr = direct_trace(
            Q[None], K, V, temperature=t, scale=scale, mask=None if m is None else m[None]
        )
        r = synthetic_route(Q, K, V, temperature=t, scale=scale, mask=m)
        np.testing.assert_array_equal(r.scores, tr.scores[0])
        np.testing.assert_array_equal(r.logits, tr.logits[0])
        np.testing.assert_array_equal(r.weights, tr.weights[0])
        np.testing.assert_array_equal(r.output, tr.output[0])
        np.testing.assert_array_equal(r.contributions, tr.contributions[0])


@pytest.mark.parametrize("mask_value", [-math.inf, 0.0])
def test_native_d_takes_the_numbers_from_direct_trace_and_other_d_does_not(monkeypatch, mask_value):
    # At the native d the route runs the trace's own arrays (``route_arrays``, which
    # ``direct_trace`` is built on), so its numbers are the trace's, bit for bit.
    from attnsim.engine import routing
    from attnsim.engine.attention import route_arrays

    calls = []

    def counting(*args, **kwargs):
        calls.append(kwargs)
        return route_arrays(*args, **kwargs)

    monkeypatch.setattr(routing, "route_arrays", counting)
    m = np.array([True, False, True])
    r = synthetic_route(Q, K, V, d=2, mask=m, mask_value=mask_value, temperature=0.7)
    assert len(calls) == 1 and calls[0]["mask_value"] == mask_value
    tr = direct_trace(
        Q[None], K, V, mask=m[None], mask_value=mask_value, temperature=0.7, scale=False
    )
    np.testing.assert_array_equal(r.masked_logits, tr.masked_logits[0])
    np.testing.assert_array_equal(r.weights, tr.weights[0])
    # Another d: the grown logits, then the engine's masking rule and softmax.
    g = synthetic_route(Q, K, V, d=32, mask=m, mask_value=mask_value, temperature=0.7)
    assert len(calls) == 1
    np.testing.assert_array_equal(g.scores, tr.scores[0])
    expected = np.where(m, g.scores * 4.0 / 0.7, mask_value)
    np.testing.assert_allclose(g.masked_logits, expected, rtol=1e-15)
    np.testing.assert_array_equal(g.weights, softmax(g.masked_logits))
    np.testing.assert_allclose(g.output, g.weights @ V, rtol=1e-15)
    assert (g.weights[1] > 0) == (mask_value == 0.0)


def test_preset_numbers():
    r = synthetic_route(Q, K, V)
    e = np.exp([1.0, 0.8, 0.0])
    np.testing.assert_allclose(r.weights, e / e.sum(), rtol=1e-14)
    np.testing.assert_allclose(r.output, (e / e.sum()) @ V, rtol=1e-14)
    assert r.top == 0 and r.growth == 1.0 and r.factor == 1.0


@pytest.mark.parametrize("d", [1, 8, 64, 512, 3.5])
def test_synthetic_d_multiplies_logits_by_sqrt_d_over_dk(d):
    r = synthetic_route(Q, K, V, d=d)
    np.testing.assert_allclose(r.logits, r.scores * math.sqrt(d / 2), rtol=1e-15)
    assert r.factor == pytest.approx(math.sqrt(d / 2))
    # Emulating d is the same as a real head whose scores are that much larger.
    tr = direct_trace(Q[None] * math.sqrt(d / 2), K, V, scale=False)
    np.testing.assert_allclose(r.weights, tr.weights[0], rtol=1e-12)


@pytest.mark.parametrize("d", [1, 2, 8, 64, 4096])
def test_scaling_cancels_the_synthetic_growth(d):
    r = synthetic_route(Q, K, V, d=d, scale=True)
    np.testing.assert_allclose(r.logits, r.scores / math.sqrt(2), rtol=1e-14)
    base = synthetic_route(Q, K, V, d=2, scale=True)
    np.testing.assert_allclose(r.weights, base.weights, rtol=1e-13)


def test_unscaled_route_sharpens_with_d():
    tops = [synthetic_route(Q, K, V, d=d).top_weight for d in (2, 8, 32, 128, 512)]
    assert np.all(np.diff(tops) > 0)
    assert tops[-1] > 0.95  # logits 16, 12.8, 0 at d = 512


def test_d_emulation_is_the_statistical_growth():
    """Dot products of d-dim unit-variance vectors have SD √d; the lab's factor is that ratio."""
    d = 256
    qs = rng.normal(size=(4000, d))
    ks = rng.normal(size=(4000, d))
    sd_d = np.std(np.sum(qs * ks, axis=1))
    sd_2 = np.std(np.sum(qs[:, :2] * ks[:, :2], axis=1))
    r = synthetic_route(Q, K, V, d=d)
    assert sd_d / sd_2 == pytest.approx(r.growth, rel=0.08)


def test_mask_and_mask_value():
    m = np.array([False, True, True])
    r = synthetic_route(Q, K, V, mask=m)
    assert r.weights[0] == 0.0
    assert r.weights.sum() == pytest.approx(1.0)
    leak = synthetic_route(Q, K, V, mask=m, mask_value=0.0)
    assert leak.weights[0] > 0  # the classic mistake, reproduced on purpose
    with pytest.raises(ValueError, match="no legal key"):
        synthetic_route(Q, K, V, mask=np.zeros(3, dtype=bool))


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"d": 0}, "synthetic dimension"),
        ({"d": math.inf}, "synthetic dimension"),
        ({"temperature": 0}, "temperature"),
        ({"mask": np.array([1, 0, 1])}, "true/false"),
    ],
)
def test_bad_input_is_refused_with_its_name(kwargs, word):
    with pytest.raises(ValueError, match=word):
        synthetic_route(Q, K, V, **kwargs)


def test_shape_errors_name_the_problem():
    with pytest.raises(ValueError, match="width"):
        synthetic_route([1.0, 0.0, 0.0], K, V)
    with pytest.raises(ValueError, match="each key needs one value"):
        synthetic_route(Q, K, V[:2])


def test_lab_route_follows_the_scenario(lab):
    sc = lab.replace(temperature=0.5, scale=True)
    sc = edits.set_mask_cell(sc, 0, 2, False)
    r = lab_route(sc)
    tr = direct_trace(sc.Q, sc.K, sc.V, mask=sc.mask_matrix(), temperature=0.5, scale=True)
    np.testing.assert_array_equal(r.weights, tr.weights[0])
    assert lab_route(sc, 64).d == 64


def test_unfit_scenarios_are_explained():
    tok = resolve_scenario("river-bank")
    assert "token scenario" in lab_unfit_reason(tok)
    many = resolve_scenario("three-fields")
    assert "queries" in lab_unfit_reason(many)
    with pytest.raises(ScenarioError):
        lab_route(tok)


# ---- interventions -----------------------------------------------------------------------------
def test_rotation_keeps_length_and_changes_only_q(lab):
    for deg in (30.0, -120.0, 179.0):
        sc = rotate_query_to(lab, deg)
        assert query_angle(sc.Q[0]) == pytest.approx(deg)
        assert np.linalg.norm(sc.Q[0]) == pytest.approx(np.linalg.norm(lab.Q[0]), rel=1e-15)
        assert sc.K is lab.K and sc.V is lab.V
        assert (sc.temperature, sc.scale, sc.mask_kind) == (lab.temperature, lab.scale, "none")
    assert query_angle(rotate_query(rotate_query_to(lab, 10), 25).Q[0]) == pytest.approx(35)


def test_rotation_keeps_extra_components():
    q = np.array([3.0, 4.0, 2.0])
    r = with_query_angle(q, 90)
    np.testing.assert_allclose(r, [0.0, 5.0, 2.0], atol=1e-15)
    np.testing.assert_allclose(rotated([1.0, 0.0], 90), [0.0, 1.0], atol=1e-15)
    np.testing.assert_array_equal(rotated([2.0], 180), [-2.0])


def test_zero_query_cannot_be_rotated(lab):
    sc = edits.set_vector(lab, "q", 0, [0.0, 0.0])
    with pytest.raises(ScenarioError, match="length 0"):
        rotate_query_to(sc, 30)


def test_rotating_the_query_rescores_every_key(lab):
    ch = route_change(lab_route(lab), lab_route(rotate_query_to(lab, 90)))
    assert ch.route_changed and ch.output_changed
    assert lab_route(rotate_query_to(lab, 90)).top == 2  # C = [0, 1]


def test_swapping_values_keeps_the_route_exactly_and_moves_the_output(lab):
    sc = swap_values(lab, 0, 1)
    np.testing.assert_array_equal(sc.V, V[[1, 0, 2]])
    assert sc.K is lab.K and sc.Q is lab.Q
    before, after = lab_route(lab), lab_route(sc)
    np.testing.assert_array_equal(before.weights, after.weights)
    ch = route_change(before, after)
    assert not ch.route_changed and ch.max_dw == 0.0
    assert ch.output_changed
    w = before.weights
    expected = abs(w[0] - w[1]) * np.linalg.norm(V[0] - V[1])
    assert ch.output_shift == pytest.approx(expected, rel=1e-12)
    assert "route unchanged (max Δw 0)" in ch.describe()
    with pytest.raises(ScenarioError, match="two different"):
        swap_values(lab, 1, 1)


def test_replacing_a_key_changes_the_route_and_keeps_its_value(lab):
    from attnsim.viewmodels.routing_lab import replace_key

    sc = replace_key(lab, 2, [2.0, 0.0])
    np.testing.assert_array_equal(sc.V, lab.V)
    ch = route_change(lab_route(lab), lab_route(sc))
    assert ch.route_changed and ch.output_changed
    assert lab_route(sc).top == 2


def test_temperature_keeps_the_ranking_and_broadens(lab):
    a, b = lab_route(lab), lab_route(lab.replace(temperature=4.0))
    assert np.array_equal(np.argsort(a.weights), np.argsort(b.weights))
    assert b.top_weight < a.top_weight


def test_route_change_matches_keys_by_label(lab):
    sc, name = add_distractor(lab, "large-norm")
    ch = route_change(lab_route(lab), lab_route(sc), lab.tokens, sc.tokens)
    assert ch.added == (name,) and ch.removed == () and ch.shared == 3
    assert ch.new_weight == pytest.approx(lab_route(sc).weights[3])
    assert ch.route_changed
    back = route_change(lab_route(sc), lab_route(lab), sc.tokens, lab.tokens)
    assert back.removed == (name,)


# ---- four causes -------------------------------------------------------------------------------
def test_four_causes_on_the_preset(lab):
    rows = four_causes(lab_route(lab), lab.tokens)
    assert [r.key for r in rows] == ["norm", "temperature", "dimension", "direction"]
    c = by_key(rows)
    top = lab_route(lab).top_weight
    assert all(r.top_before == top for r in rows)
    # q and the keys are unit vectors already: normalising changes nothing.
    assert c["norm"].effect == "unchanged" and not c["norm"].implicated
    assert c["norm"].top_after == pytest.approx(top, abs=1e-15)
    # T × 4 broadens with the same ranking, but T = 1 is not low, so not implicated.
    assert c["temperature"].effect == "broader" and c["temperature"].top_after < top
    assert c["temperature"].top_key_after == 0 and not c["temperature"].implicated
    # Unscaled: a smaller d broadens the route, so dimension is implicated.
    assert c["dimension"].effect == "broader" and c["dimension"].implicated
    # A is on top only when q points its way: alignment decides.
    assert c["direction"].stays_on_top < c["direction"].trials / 2
    assert not c["direction"].implicated


def test_four_causes_scaled_high_d_blames_nothing_dimensional(lab):
    r = lab_route(lab.replace(scale=True), 256)
    c = by_key(four_causes(r))
    assert c["dimension"].effect == "unchanged" and not c["dimension"].implicated
    assert "cancels" in c["dimension"].verdict


def test_four_causes_unscaled_high_d(lab):
    r = lab_route(lab, 256)
    c = by_key(four_causes(r))
    assert r.top_weight > 0.9
    assert c["dimension"].implicated
    assert c["dimension"].top_after < r.top_weight
    assert "d = 64" in c["dimension"].perturbation


def test_four_causes_blames_a_long_key(lab):
    sc = edits.set_vector(lab, "k", 1, [4.0, 3.0])  # B five times as long as the others
    r = lab_route(sc)
    assert r.top == 1 and r.top_weight > 0.9
    c = by_key(four_causes(r, sc.tokens))
    assert c["norm"].effect == "broader" and c["norm"].implicated
    assert c["norm"].top_after < 0.5
    assert "B" in c["norm"].verdict


def test_four_causes_blames_a_low_temperature(lab):
    r = lab_route(lab.replace(temperature=0.1))
    c = by_key(four_causes(r))
    assert c["temperature"].implicated and "< 1" in c["temperature"].verdict


def test_four_causes_sees_a_dominant_key_under_a_mask(lab):
    sc = edits.set_mask_cell(edits.set_mask_cell(lab, 0, 0, False), 0, 1, False)
    r = lab_route(sc)
    c = by_key(four_causes(r, sc.tokens))
    assert c["direction"].stays_on_top == c["direction"].trials
    assert c["direction"].implicated and "mask" in c["direction"].verdict


def test_four_causes_with_a_zero_query(lab):
    sc = edits.set_vector(lab, "q", 0, [0.0, 0.0])
    c = by_key(four_causes(lab_route(sc), sc.tokens))
    assert c["temperature"].effect == "unchanged"  # equal logits: already uniform
    assert "q = 0" in c["direction"].verdict


# ---- distractors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["large-norm", "near-duplicate"])
def test_distractor_steals_weight_without_touching_the_useful_score(lab, kind):
    sc, name = add_distractor(lab, kind)
    assert name == "dist1" and sc.tokens[-1] == "dist1"
    assert distractor_names(sc) == ["dist1"]
    eff = distractor_effect(sc)
    assert eff is not None and eff.useful == "A"
    assert eff.score_after == eff.score_before == 1.0
    assert eff.weight_after < eff.weight_before
    assert eff.stolen > 0.1
    assert eff.distractor_weight > 0.2
    assert without_distractors(sc).equals(lab)


def test_distractor_keys_are_what_they_say():
    long = distractor_key(Q, K, 0, "large-norm")
    assert np.linalg.norm(long) == pytest.approx(3.0)
    cos = long @ Q / np.linalg.norm(long)
    assert cos == pytest.approx(math.cos(math.radians(50)))
    dup = distractor_key(Q, K, 1, "near-duplicate")
    assert np.linalg.norm(dup) == pytest.approx(1.0)
    assert dup @ K[1] == pytest.approx(math.cos(math.radians(5)))
    with pytest.raises(ValueError, match="unknown distractor"):
        distractor_key(Q, K, 0, "loud")  # type: ignore[arg-type]


def test_second_distractor_gets_a_new_name(lab):
    sc, _ = add_distractor(lab, "large-norm")
    sc2, name = add_distractor(sc, "near-duplicate")
    assert name == "dist2"
    assert distractor_effect(sc2).distractors == ("dist1", "dist2")
    assert distractor_effect(lab) is None


# ---- drawing geometry ---------------------------------------------------------------------------
def test_payload_arrows_sum_to_the_output(lab):
    r = lab_route(lab)
    values, contrib, out = payload_arrows(r)
    np.testing.assert_array_equal(values, V)
    np.testing.assert_allclose(contrib.sum(axis=0), out, rtol=1e-14)
    np.testing.assert_array_equal(out, r.output)
    one = synthetic_route(Q, K, V[:, :1])
    _, c1, o1 = payload_arrows(one)
    assert c1.shape == (3, 2) and np.all(c1[:, 1] == 0) and o1[1] == 0


# ---- what each part of the panel shows -------------------------------------------------------------
@dataclasses.dataclass
class _Last:
    """The workbench's LastEdit, without Qt."""

    text: str
    scenario_before: Scenario | None = None
    labs_before: dict = dataclasses.field(default_factory=dict)


def test_last_edit_route_compares_with_the_right_state(lab):
    assert last_edit_route(lab, 2.0, None) == ("", None, ())
    turned = rotate_query_to(lab, 90.0)
    text, before, labels = last_edit_route(turned, 2.0, _Last("turn", lab))
    assert text == "turn" and labels == lab.tokens
    np.testing.assert_array_equal(before.weights, lab_route(lab).weights)
    # A refused or unfit state before: nothing to compare with.
    token = resolve_scenario("river-bank")
    assert last_edit_route(lab, 2.0, _Last("open", token)) == ("open", None, ())
    # This lab's d changed: the route before is at the old d (None: the scenario's d_k).
    _, before, _ = last_edit_route(
        lab, 64.0, _Last("d", labs_before={RoutingLabState: RoutingLabState()})
    )
    np.testing.assert_array_equal(before.weights, lab_route(lab, 2.0).weights)
    _, before, _ = last_edit_route(
        lab, 2.0, _Last("d", labs_before={RoutingLabState: RoutingLabState(16)})
    )
    np.testing.assert_array_equal(before.weights, lab_route(lab, 16.0).weights)
    # Another lab's setting: this lab is as it was.
    _, before, _ = last_edit_route(lab, 8.0, _Last("other", labs_before={int: 3}))
    np.testing.assert_array_equal(before.weights, lab_route(lab, 8.0).weights)


def test_change_text_words_the_three_cases(lab):
    swapped = swap_values(lab, 0, 1)
    ch = route_change(lab_route(lab), lab_route(swapped))
    assert change_text("", ch) == ""
    assert change_text("Swap", None) == "Swap: the lab starts here"
    assert change_text("Swap", ch) == f"Swap: {ch.describe()}"
    assert change_text("Swap", ch).startswith("Swap: route unchanged (max Δw 0)")


def test_plane_view_pads_to_two_axes_marks_masked_keys_and_the_moved_query(lab):
    np.testing.assert_array_equal(plane_xy([[3.0]]), [[3.0, 0.0]])
    np.testing.assert_array_equal(plane_xy([1.0, 2.0, 3.0]), [[1.0, 2.0]])
    masked = edits.set_mask_cell(lab, 0, 1, False)
    v = plane_view(masked, lab_route(masked), None)
    np.testing.assert_array_equal(v.q, [1.0, 0.0])
    np.testing.assert_array_equal(v.keys, K)
    assert v.before_q is None and v.legal == (True, False, True)
    assert v.key_labels == ("A", "B (masked)", "C") and v.radius == 1.5
    # A (1, 0) sits near the right edge: its label grows leftwards; C (0, 1) rightwards.
    assert v.anchors[0] == (1.0, 1.0) and v.anchors[2] == (0.0, 1.0)
    turned = rotate_query_to(lab, 90.0)
    v = plane_view(turned, lab_route(turned), lab_route(lab))
    np.testing.assert_array_equal(v.before_q, [1.0, 0.0])
    assert plane_view(lab, lab_route(lab), lab_route(lab)).before_q is None


def test_bars_view_matches_keys_before_by_label_and_lifts_labels_over_both_bars(lab):
    plus, _ = add_distractor(lab, "large-norm")
    r0, r1 = lab_route(lab), lab_route(plus)
    v = bars_view(plus, r1, r0, lab.tokens)
    assert v.tokens == ("A", "B", "C", "dist1") and v.emulated_d is None
    np.testing.assert_array_equal(v.before_x, [0.0, 1.0, 2.0])
    np.testing.assert_array_equal(v.before_h, r0.weights)
    expected = [max(a, b) + 0.01 for a, b in zip(r1.weights, [*r0.weights, 0.0], strict=True)]
    np.testing.assert_allclose(v.label_tops, expected, rtol=0, atol=0)
    assert bars_view(lab, lab_route(lab, 64), None, ()).emulated_d == 64.0
    assert bars_view(lab, r0, None, ()).before_x.size == 0


def test_payload_view_draws_what_carries_weight_and_frames_everything(lab):
    masked = edits.set_mask_cell(edits.set_matrix(lab, "V", V * [[1], [1], [0]]), 0, 1, False)
    route = lab_route(masked)
    v = payload_view(masked, route, lab_route(lab))
    values, contrib, out = payload_arrows(route)
    np.testing.assert_array_equal(v.contributions, contrib)
    np.testing.assert_array_equal(v.output, out)
    assert v.drawn == (True, False, True)  # a masked key has weight 0: no arrow
    assert v.labelled == (True, True, False)  # vC = 0 would sit on the output's tail
    assert v.value_labels == ("vA", "vB", "vC")
    np.testing.assert_array_equal(v.before_output, lab_route(lab).output)
    for p in (*values, *contrib, out, v.before_output, (0.0, 0.0)):
        assert v.x_range[0] < p[0] < v.x_range[1] and v.y_range[0] < p[1] < v.y_range[1]
    assert payload_view(lab, lab_route(lab), lab_route(lab)).before_output is None


def test_causes_view_names_a_new_winner(lab):
    long_b = edits.place_key(lab, 1, [8.0, 6.0])
    route = lab_route(long_b)
    causes = four_causes(route, long_b.tokens)
    v = causes_view(long_b, route, causes)
    assert v.top_label == "B" and v.top_weight == route.top_weight
    assert [r.perturbation for r in v.rows] == [c.perturbation for c in causes]
    norm = v.rows[0]
    assert causes[0].top_key_after != causes[0].top_key_before
    assert norm.now == long_b.tokens[causes[0].top_key_after] and not norm.mean
    assert v.rows[3].mean and v.rows[3].now == ""


def test_distractor_view_carries_the_effect_or_the_reason(lab):
    v = distractor_view(lab, 2.0, lab_route(lab))
    assert v.effect is None and v.error == "" and v.top_label == "A"
    plus, _ = add_distractor(lab, "near-duplicate")
    v = distractor_view(plus, 2.0, lab_route(plus))
    assert v.effect == distractor_effect(plus, 2.0)
    # Removing the distractors would leave the clean scenario with no legal key.
    plus, _ = add_distractor(edits.set_mask_cell(lab, 0, 0, False), "large-norm")
    plus = edits.set_mask_cell(edits.set_mask_cell(plus, 0, 1, False), 0, 2, False)
    v = distractor_view(plus, 2.0, lab_route(plus))
    assert v.effect is None and v.error


def test_controls_view_and_the_d_note(lab):
    v = controls_view(lab, lab_route(lab, 64), 64.0, "no")
    assert (v.angle, v.temperature, v.d, v.scale, v.message) == (0.0, 1.0, 64.0, False, "no")
    assert v.labels == ("A", "B", "C") and v.key_texts == ("1, 0", "0.8, 0.6", "0, 1")
    assert "√(64/2)" in v.d_note and "Other panels" in v.d_note
    scaled = lab.replace(scale=True)
    assert "cancels" in d_note(scaled, lab_route(scaled, 64))
    assert d_note(lab, lab_route(lab)).startswith("d = 2 is the real width")
    assert [d_position(d) for d in (1, 2, 3, 64, 1e6)] == [0, 1, 2, 6, 12]
    one_d = {**lab.to_dict(), "Q": [[1.0]], "K": [[1.0], [2.0], [0.5]]}
    one_d.pop("qk_axes")
    one_d = Scenario.from_dict(one_d)
    assert controls_view(one_d, lab_route(one_d), 1.0).angle is None


def test_lab_view_is_the_parts_together(lab):
    turned = rotate_query_to(lab, 90.0)
    v = lab_view(turned, 2.0, _Last("Rotate", lab), "msg")
    assert v.last_text == "Rotate" and v.change.route_changed
    assert v.change_text == change_text("Rotate", v.change)
    np.testing.assert_array_equal(v.route.weights, lab_route(turned).weights)
    np.testing.assert_array_equal(v.before.weights, lab_route(lab).weights)
    assert [c.verdict for c in v.causes] == [r.verdict for r in v.causes_view.rows]
    assert v.controls.message == "msg" and v.controls.angle == pytest.approx(90.0)
    assert lab_view(lab, 2.0).change is None
