"""The linear memory lab's view-model: the memory S_i is the sum of the terms so far and reads
out the explicit sum, the comparison is the engine's linear vs softmax, the growth plot's
numbers are the memory, the cache and n², and bad settings are refused by name."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.attention import attention, causal_mask
from attnsim.engine.linear import elu_plus_one, linear_attention_sum
from attnsim.viewmodels.linear_lab import (
    PLOT_N_MIN,
    SETTINGS,
    LinearLabState,
    colour_limit,
    comparison_data,
    fmt_tiny,
    growth_data,
    memory_run,
    self_attention_problem,
    step_data,
)


def qkv(n=6, d_k=3, d_v=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d_k)), rng.normal(size=(n, d_k)), rng.normal(size=(n, d_v))


def names(n, prefix):
    return tuple(f"{prefix}{j}" for j in range(n))


def step(Q, K, V, **settings):
    n, d_k, d_v = K.shape[0], K.shape[1], V.shape[1]
    st = LinearLabState(**settings)
    run = memory_run(Q, K, V, names(n, "t"), st.feature_map, st.normalise)
    return step_data(run, names(n, "t"), names(d_k, "k"), names(d_v, "v"), st.position)


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"position": 0}, "position i must lie between 1 and"),
        ({"position": True}, "position i must be a whole number, got True"),
        ({"feature_map": "relu"}, "feature map φ must be one of none"),
        ({"normalise": 1}, "normalise by .* must be on or off, got 1"),
        ({"coord": -1}, "output coordinate must lie"),
        ({"plot_n": PLOT_N_MIN - 1}, "plot up to n must lie between 16 and"),
        ({"plot_n": 2.5}, "plot up to n must be a whole number, got 2.5"),
    ],
)
def test_bad_settings_are_refused_by_name(settings, field):
    with pytest.raises(ValueError, match=field):
        SETTINGS.check(LinearLabState(**settings))
    assert SETTINGS.check(LinearLabState()) == LinearLabState()


@pytest.mark.parametrize("position", [1, 2, 4, 6])
def test_the_memory_is_the_sum_of_the_terms_so_far(position):
    Q, K, V = qkv()
    d = step(Q, K, V, position=position)
    i = position - 1
    np.testing.assert_allclose(d.S, V[: i + 1].T @ K[: i + 1], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(d.term, np.outer(V[i], K[i]), rtol=1e-12)
    before = step(Q, K, V, position=max(position - 1, 1)).S if position > 1 else 0.0
    np.testing.assert_allclose(d.S - before, d.term, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(d.output, d.S @ Q[i], rtol=1e-12)
    np.testing.assert_allclose(d.explicit, linear_attention_sum(Q, K, V)[i], rtol=1e-12)
    assert d.row_difference <= 1e-12 and d.max_difference <= 1e-12
    assert d.memory_numbers == 2 * 3 and d.token == f"t{i}"


def test_elu_plus_one_and_the_normaliser_read_the_weighted_average():
    Q, K, V = qkv(seed=2)
    d = step(Q, K, V, position=4, feature_map="elu+1", normalise=True)
    fq, fk = elu_plus_one(Q[3]), elu_plus_one(K[:4])
    np.testing.assert_allclose(d.q, fq, rtol=1e-12)
    np.testing.assert_allclose(d.z, fk.sum(axis=0), rtol=1e-12)
    w = fk @ fq
    np.testing.assert_allclose(d.output, (w / w.sum()) @ V[:4], rtol=1e-12)
    assert d.denominator == pytest.approx(float(w.sum()), rel=1e-12)
    assert d.memory_numbers == 2 * 3 + 3  # S and z
    assert "z_4 · φ(q_4)" in d.readout and "S_4 = S_3 + v_4 φ(k_4)ᵀ" in d.caption


def test_the_colour_limit_covers_every_memory_and_term():
    Q, K, V = qkv(n=9, seed=5)
    limits = set()
    for p in range(1, 10):
        d = step(Q, K, V, position=p)
        limits.add(d.limit)
        assert np.abs(d.S).max() <= d.limit * (1 + 1e-12)
        assert np.abs(d.term).max() <= d.limit * (1 + 1e-12)
    assert len(limits) == 1  # the same scale at every step: colours keep their meaning


def test_the_position_is_clamped_to_the_scenario():
    Q, K, V = qkv(n=4)
    d = step(Q, K, V, position=50)
    assert d.position == 4 and d.n == 4


def test_a_normaliser_without_a_positive_map_says_why_instead_of_dividing():
    Q, K, V = qkv(seed=1)
    d = step(Q, K, V, normalise=True)  # raw q · k goes negative on these vectors
    assert "not positive" in d.message and "elu + 1" in d.message
    assert d.readout == d.message and d.S.size == 0


def test_cross_attention_scenarios_are_explained():
    rng = np.random.default_rng(0)
    Q, K, V = rng.normal(size=(2, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    assert "2 queries and 5 keys" in self_attention_problem(2, 5)
    assert self_attention_problem(5, 5) == ""
    assert "self-attention" in step(Q, K, V).message
    c = comparison_data(Q, K, V, names(5, "t"), names(2, "v"), LinearLabState())
    assert "self-attention" in c.message and c.linear.size == 0


@pytest.mark.parametrize(("scale", "temperature"), [(True, 1.0), (False, 1.0), (True, 3.0)])
def test_the_comparison_is_softmax_with_the_scenario_settings(scale, temperature):
    Q, K, V = qkv(n=7, d_v=3, seed=3)
    st = LinearLabState(coord=1, position=5)
    c = comparison_data(
        Q, K, V, names(7, "t"), ("a", "b", "c"), st, scale=scale, temperature=temperature
    )
    soft, _ = attention(Q, K, V, mask=causal_mask(7), scale=scale, temperature=temperature)
    np.testing.assert_allclose(c.softmax, soft[:, 1], rtol=1e-12)
    lin = linear_attention_sum(Q, K, V, feature_map="elu+1", normalise=True)
    np.testing.assert_allclose(c.linear, lin[:, 1], rtol=1e-12)
    expected = np.abs(lin - soft).max(axis=1)
    np.testing.assert_allclose(c.max_abs_difference, expected, rtol=1e-9, atol=1e-15)
    # one key: both are v_1; later they differ
    assert c.max_abs_difference[0] < 1e-12 and c.max_abs_difference[1:].max() > 1e-3
    assert c.coord_label == "b" and c.position == 4
    assert "does not" in c.caption or "not a fixed-size" in c.caption


def test_the_coordinate_is_clamped_to_d_v():
    Q, K, V = qkv()
    c = comparison_data(Q, K, V, names(6, "t"), ("x", "y"), LinearLabState(coord=9))
    assert c.coord == 1 and c.coord_label == "y"


def test_growth_numbers_are_the_memory_the_cache_and_n_squared():
    g = growth_data(12, 4, 3, LinearLabState(plot_n=1000, normalise=True))
    assert g.n[0] == 1 and g.n[-1] == 1000 and 12 in g.n.tolist()
    assert (np.diff(g.n) > 0).all()
    assert set(g.memory.tolist()) == {3 * 4 + 4}
    np.testing.assert_array_equal(g.kv_cache, g.n * 7)
    np.testing.assert_array_equal(g.scores, g.n**2)
    assert g.at_current == (16, 84, 144)
    assert g.crossover == 3  # 7 per token passes 16 numbers at n = 3
    assert [t for _, t in g.x_ticks] == ["1", "10", "100", "1\u2009000"]
    assert g.y_range[1] == pytest.approx(6.0)  # n² = 1e6 at the right end
    assert "n = 12" in g.caption and "16 numbers" in g.caption


def test_growth_stretches_to_a_long_scenario():
    g = growth_data(50_000, 8, 8, LinearLabState(plot_n=PLOT_N_MIN))
    assert g.n[-1] == 50_000 and g.current == 50_000
    assert g.at_current == (64, 800_000, 2_500_000_000)
    assert not g.normalised and g.memory[0] == 64


@pytest.mark.parametrize(
    ("x", "text"), [(0.0, "0.00"), (2.2e-16, "2.2e-16"), (0.35, "0.350"), (-3e-5, "3.0e-05")]
)
def test_tiny_differences_read_as_rounding(x, text):
    assert fmt_tiny(x) == text


@pytest.mark.parametrize(
    ("x", "limit"),
    [(25.61, 30.0), (1.0, 1.0), (0.0123, 0.0125), (6.01, 8.0), (8.01, 10.0), (3e5, 3e5)],
)
def test_the_colour_limit_rounds_up_by_at_most_a_third(x, limit):
    assert colour_limit(x) == pytest.approx(limit, rel=1e-12)
    assert x <= colour_limit(x) <= x * 4 / 3


@pytest.mark.parametrize("x", [1.7e308, 5e-324])
def test_the_colour_limit_at_the_ends_of_the_float_range_is_the_value_itself(x):
    assert colour_limit(x) == x


def test_a_comparison_whose_normaliser_underflows_says_why_instead_of_failing():
    # elu + 1 of -1000 is exp(-1000): 0 in float64, so the first query reads a normaliser of 0
    # (found by the GUI stress test after a projection entry of 10 on a long vector)
    Q, K, V = qkv(n=4)
    Q[0], K[0] = -1000.0, -1000.0
    c = comparison_data(Q, K, V, names(4, "t"), names(2, "v"), LinearLabState())
    assert "undefined" in c.message and "normaliser" in c.message and c.linear.size == 0


@pytest.mark.parametrize(
    ("fmap", "normalise"), [("elu+1", True), ("elu+1", False), ("none", False)]
)
def test_a_step_makes_its_own_row_of_the_explicit_sum(fmap, normalise):
    gen = np.random.default_rng(9)
    Q, K, V = gen.normal(size=(9, 3)), gen.normal(size=(9, 3)), gen.normal(size=(9, 2))
    run = memory_run(Q, K, V, tuple(f"t{i}" for i in range(9)), fmap, normalise)
    engine_map = None if fmap == "none" else fmap
    explicit = linear_attention_sum(Q, K, V, feature_map=engine_map, normalise=normalise)
    mapped = elu_plus_one(Q) if fmap == "elu+1" else Q
    for i in range(9):  # a row, not the (n, d_v) sum kept whole
        np.testing.assert_array_equal(run.fq_row(i), mapped[i])
        np.testing.assert_allclose(run.explicit_row(i), explicit[i], rtol=1e-12, atol=1e-14)
    assert not hasattr(run, "explicit")
    # the differences: the memory's output against the explicit sum, never kept whole
    want = np.abs(run.trace.output - explicit).max(axis=1)
    np.testing.assert_allclose(run.differences, want, rtol=0, atol=1e-15)
