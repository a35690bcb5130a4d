"""The scaling lab's view-model: stepped entropy experiment, Jacobians and saturation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnsim.engine.attention import direct_trace, softmax
from attnsim.engine.experiments import entropy_vs_dk
from attnsim.engine.jacobian import softmax_jacobian
from attnsim.viewmodels import scaling_lab as labs
from attnsim.viewmodels.scaling_lab import (
    MAX_JACOBIAN_KEYS,
    entropy_vs_dk_steps,
    jacobian_sizes,
    row_jacobian,
    saturation_curve,
    softmax_keys,
)


# ---- the stepped entropy experiment -------------------------------------------------------------
@pytest.mark.parametrize("rng", ["reference", "numpy"])
@pytest.mark.parametrize(
    "kw",
    [
        dict(dks=(4, 16, 64), n_keys=8, trials=23, seed=5),
        dict(dks=(16, 64, 256), n_keys=16, trials=12, seed=1),
    ],
)
def test_stepped_experiment_gives_exactly_the_engine_numbers(rng, kw):
    # Small chunks force many steps: the split must not change the random stream.
    steps = list(entropy_vs_dk_steps(rng=rng, chunk_values=500, **kw))
    assert len(steps) > 5
    final = steps[-1]
    assert final[0] == 1.0 and final[1] is not None
    assert all(res is None for _, res in steps[:-1])
    assert final[1] == entropy_vs_dk(rng=rng, **kw)


def test_stepped_experiment_progress_rises_to_one():
    fractions = [f for f, _ in entropy_vs_dk_steps((16, 64), trials=10, chunk_values=300)]
    assert all(0 < f <= 1 for f in fractions)
    assert fractions == sorted(fractions)
    assert fractions[-2] == pytest.approx(1.0) and fractions[-1] == 1.0


def test_stepped_experiment_can_stop_early_without_finishing():
    gen = entropy_vs_dk_steps((16, 1024), trials=50, rng="numpy", chunk_values=1000)
    first = next(gen)
    assert 0 < first[0] < 0.05 and first[1] is None
    gen.close()  # cancelling is just not iterating further


@pytest.mark.parametrize(
    "kw, word",
    [
        (dict(n_keys=1), "n_keys"),
        (dict(trials=0), "trials"),
        (dict(dks=(16, 0)), "d_k"),
        (dict(dks=(16.5,)), "d_k"),
        (dict(dks=()), "d_k"),
        (dict(rng="mersenne"), "rng"),
    ],
)
def test_stepped_experiment_refuses_bad_settings_before_drawing(kw, word):
    with pytest.raises(ValueError, match=word):
        next(entropy_vs_dk_steps(**kw))


# ---- Jacobian and saturation --------------------------------------------------------------------
def test_row_jacobian_drops_masked_keys_and_matches_softmax_jacobian():
    logits = np.array([0.3, -np.inf, 1.2, -0.4])
    w = softmax(logits)
    keys, J = row_jacobian(logits, w, 0.5)
    assert keys.tolist() == [0, 2, 3]
    np.testing.assert_array_equal(J, softmax_jacobian(w[[0, 2, 3]], 0.5))
    # Rows sum to zero: the weights always sum to one.
    np.testing.assert_allclose(J.sum(axis=1), 0.0, atol=1e-15)


def test_row_jacobian_is_the_derivative_of_the_weights():
    z = np.array([0.5, -1.0, 2.0])  # scaled scores before the temperature
    T = 0.7
    w = softmax(z / T)
    _, J = row_jacobian(z / T, w, T)
    h = 1e-6
    for j in range(3):
        dz = np.zeros(3)
        dz[j] = h
        numeric = (softmax((z + dz) / T) - softmax((z - dz) / T)) / (2 * h)
        np.testing.assert_allclose(J[:, j], numeric, atol=1e-8)


def test_saturation_curve_matches_the_jacobian_at_each_factor():
    logits = np.array([1.0, 0.2, -0.5, 0.9])
    factors = np.array([0.25, 1.0, 3.0, 16.0])
    c = saturation_curve(logits, 2.0, factors)
    for k, f in enumerate(factors):
        J = softmax_jacobian(softmax(f * logits), 2.0)
        assert c.frobenius[k] == pytest.approx(np.linalg.norm(J), abs=1e-15)
        assert c.max_abs[k] == pytest.approx(np.max(np.abs(J)), abs=1e-15)
        assert c.max_weight[k] == pytest.approx(softmax(f * logits).max(), abs=1e-15)
    # A distinct winner saturates: the derivatives collapse as the factor grows.
    big = saturation_curve(logits, 1.0, np.array([1.0, 16.0, 64.0]))
    assert big.frobenius[2] < big.frobenius[1] < big.frobenius[0]
    assert big.frobenius[2] < 0.01 * big.frobenius[0]


def test_saturation_curve_refuses_bad_input():
    with pytest.raises(ValueError, match="factors"):
        saturation_curve(np.array([1.0, 2.0]), 1.0, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="logits"):
        saturation_curve(np.array([1.0, np.nan]), 1.0, np.array([1.0]))
    with pytest.raises(ValueError, match="logits"):
        saturation_curve(np.array([-np.inf, -np.inf]), 1.0, np.array([1.0]))
    with pytest.raises(ValueError, match="temperature"):
        saturation_curve(np.array([1.0, 2.0]), 0.0, np.array([1.0]))
    with pytest.raises(ValueError, match="temperature"):
        jacobian_sizes(np.array([0.5, 0.5]), math.inf)
    with pytest.raises(ValueError, match="weights"):
        jacobian_sizes(np.array([]), 1.0)


def textbook_closed_forms(w: np.ndarray, t: float) -> tuple[float, float]:
    """``(||J||_F^2, max |J|)`` by the textbook formulas, independently of the module's version.

    The square, because ``sum w^2 - 2 sum w^3 + (sum w^2)^2`` cancels when one weight nears 1
    and a square root would magnify that rounding.
    """
    s2, s3 = float(np.sum(w**2)), float(np.sum(w**3))
    top = np.sort(w)[::-1]
    pair = top[0] * top[1] if w.size > 1 else 0.0
    return (s2 - 2 * s3 + s2 * s2) / t**2, max(float(np.max(w * (1 - w))), pair) / t


@settings(max_examples=300, deadline=None)
@given(
    z=st.lists(st.floats(-60, 60, allow_nan=False, allow_infinity=False), min_size=1, max_size=40),
    t=st.floats(1e-3, 1e3),
    c=st.floats(0.25, 16.0),
)
def test_closed_forms_equal_the_built_jacobian_on_random_rows(z, t, c):
    logits = np.array(z)
    w = softmax(c * logits)
    J = softmax_jacobian(w, t)
    frob, biggest = jacobian_sizes(w, t)
    # Entries are at most 1/(4T): compare in units of that.
    tol = 1e-13 / t
    assert frob == pytest.approx(np.linalg.norm(J), abs=tol)
    assert biggest == pytest.approx(np.max(np.abs(J)), abs=tol)
    frob2, top = textbook_closed_forms(w, t)
    assert frob**2 == pytest.approx(frob2, abs=1e-14 / t**2)
    assert biggest == pytest.approx(top, abs=tol)
    # The curve at the same factor gives the same sizes (and the same weights).
    curve = saturation_curve(logits, t, np.array([c]))
    assert curve.frobenius[0] == pytest.approx(np.linalg.norm(J), abs=tol)
    assert curve.max_abs[0] == pytest.approx(np.max(np.abs(J)), abs=tol)
    assert curve.max_weight[0] == pytest.approx(w.max(), abs=1e-14)


def test_saturated_rows_keep_their_tiny_sizes():
    # w_top rounds to 1.0: 1 - w_top would be 0, the other keys' weights are not.
    w = softmax(np.array([0.0, -50.0, -60.0]))
    assert w[0] == 1.0
    frob, biggest = jacobian_sizes(w, 1.0)
    assert biggest == pytest.approx(w[1] * (1 - w[1]), rel=1e-12)
    a, b = w[1], w[2]
    # Every term positive (no cancellation), with 1 - w_0 = a + b:
    # w0^2 (a+b)^2 + a^2 (1-a)^2 + b^2 (1-b)^2 + 2 (w0^2 a^2 + w0^2 b^2 + a^2 b^2).
    exact = math.sqrt(
        (a + b) ** 2 + a**2 * (1 - a) ** 2 + b**2 * (1 - b) ** 2 + 2 * (a**2 + b**2 + a**2 * b**2)
    )
    assert frob == pytest.approx(exact, rel=1e-12) and frob > 1e-22
    assert jacobian_sizes(np.array([1.0]), 0.001) == (0.0, 0.0)


def test_a_2048_key_row_never_builds_a_key_by_key_matrix(monkeypatch):
    import tracemalloc

    def refuse_large(weights, temperature=1.0):
        raise AssertionError(f"built a {len(weights)} x {len(weights)} Jacobian")

    monkeypatch.setattr(labs, "softmax_jacobian", refuse_large)
    m = 2048
    logits = np.random.default_rng(3).normal(size=m) * 4.0
    factors = np.exp2(np.linspace(-2.0, 4.0, 121))
    tracemalloc.start()
    try:
        curve = saturation_curve(logits, 0.001, factors)
        sizes = jacobian_sizes(softmax(logits), 0.001)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # One (m, m) float array alone is 32 MiB; the old code built 121 of them.
    assert peak < m * m * 8
    assert curve.frobenius.shape == (121,) and np.isfinite(curve.frobenius).all()
    k = int(np.argmin(np.abs(factors - 1.0)))
    assert factors[k] == 1.0 and curve.frobenius[k] == pytest.approx(sizes[0], rel=1e-12)


@pytest.mark.parametrize("t", [0.001, 1.0, 1000.0])
def test_extreme_logits_never_raise_or_warn(t):
    # Scores near the float limit over T = 0.001 overflow: +inf wins the row, -inf gets 0.
    q = np.array([[1e307, 1.0, -1e307, 2.0]])
    tr = direct_trace(q, np.eye(4), np.eye(4), scale=False, temperature=t)
    if t == 0.001:
        assert np.isposinf(tr.masked_logits[0, 0]) and np.isneginf(tr.masked_logits[0, 2])
    keys = softmax_keys(tr.mask[0], tr.mask_value)
    assert keys.tolist() == [0, 1, 2, 3]  # all legal, whatever their logits
    keys, J = row_jacobian(tr.masked_logits[0], tr.weights[0], t, keys)
    np.testing.assert_array_equal(J, softmax_jacobian(tr.weights[0], t))
    curve = saturation_curve(tr.masked_logits[0][keys], t, np.exp2(np.linspace(-2, 4, 121)))
    assert np.isfinite(curve.frobenius).all() and np.isfinite(curve.max_abs).all()
    assert curve.max_weight[-1] == 1.0
    assert jacobian_sizes(tr.weights[0], t) == pytest.approx(
        (np.linalg.norm(J), np.abs(J).max()), abs=1e-15 / t
    )


def test_softmax_keys_follow_the_mask_and_the_mask_value():
    row = np.array([True, False, True])
    assert softmax_keys(row, -np.inf).tolist() == [0, 2]
    # Mask value 0: the forbidden key's logit is 0 and it takes part in the softmax.
    assert softmax_keys(row, 0.0).tolist() == [0, 1, 2]
    keys3 = np.eye(2)[[0, 1, 0]]
    tr = direct_trace(np.ones((1, 2)), keys3, keys3, mask=row[None], mask_value=0.0)
    keys, J = row_jacobian(tr.masked_logits[0], tr.weights[0], 1.0)
    assert keys.tolist() == [0, 1, 2]
    np.testing.assert_array_equal(J, softmax_jacobian(tr.weights[0], 1.0))
    assert np.log2(softmax_keys(tr.mask[0], tr.mask_value).size) == tr.max_entropy[0]
    # Without keys, an overflowed +inf logit still takes part; only -inf is left out.
    assert row_jacobian([np.inf, -np.inf, 0.5], [1.0, 0.0, 0.0], 1.0)[0].tolist() == [0, 2]
    assert MAX_JACOBIAN_KEYS == 32
    with pytest.raises(ValueError, match="mask"):
        softmax_keys(np.ones((2, 2), dtype=bool), -np.inf)


def test_labs_module_imports_no_qt(modules_loaded_by):
    loaded = modules_loaded_by("attnsim.viewmodels.scaling_lab")
    bad = [m for m in loaded if m.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6")]
    assert not bad, f"attnsim.viewmodels.scaling_lab pulled in Qt: {bad}"


# ---- what the two sides show ----------------------------------------------------------------------
def _trace(n: int, mask: str = "causal", mask_value: float = -math.inf, scale: bool = True):
    from attnsim.engine.attention import causal_mask

    X = np.random.default_rng(3).normal(size=(n, 4))
    m = causal_mask(n) if mask == "causal" else None
    return direct_trace(X, X, X, mask=m, mask_value=mask_value, scale=scale)


def test_jacobian_data_is_the_jacobian_over_the_keys_of_the_row_softmax():
    tr = _trace(5)
    tokens = ["a", "b", "c", "d", "e"]
    d = labs.jacobian_data(tr, 2, tokens, "c")
    assert d.query == "c" and d.drawn and d.keys.tolist() == [0, 1, 2]
    assert d.labels == ("a", "b", "c")
    np.testing.assert_allclose(d.matrix, softmax_jacobian(tr.weights[2][:3], tr.temperature))
    assert (d.frobenius, d.max_abs) == pytest.approx(jacobian_sizes(tr.weights[2][:3], 1.0))
    assert d.forbidden == 0 and d.top_weight == float(tr.weights[2].max())
    np.testing.assert_array_equal(d.curve.factor, labs.FACTORS)
    assert d.unscaled_at == pytest.approx(math.log2(2.0))  # sqrt(d_k = 4) = 2
    assert labs.jacobian_data(_trace(5, scale=False), 2, tokens).unscaled_at is None


def test_jacobian_data_of_a_long_row_keeps_only_its_sizes_and_counts_zero_masked_keys():
    n = MAX_JACOBIAN_KEYS + 1
    d = labs.jacobian_data(_trace(n, mask="none"), 0, [f"t{i}" for i in range(n)])
    assert not d.drawn and d.matrix.shape == (0, 0) and d.labels == ()
    assert d.keys.size == n and d.frobenius > 0
    zero = labs.jacobian_data(_trace(4, mask_value=0.0), 1, list("abcd"))
    assert zero.keys.tolist() == [0, 1, 2, 3] and zero.forbidden == 2


def test_experiment_shown_axis_and_the_power_of_two_range():
    e = labs.ExperimentShown(16, 10, 1, "numpy", (16, 64, 256))
    assert e.max_bits == 4.0 and e.x.tolist() == [4.0, 6.0, 8.0]
    assert e.result is None and e.error is None and e.fraction == 0.0
    assert labs.log2_range(np.array([3.0, 5.0]), np.array([16.0])) == (1, 4)
    assert labs.log2_range(np.array([4.0]), np.array([8.0])) == (2, 3)


def test_saturation_weights_are_the_engines_to_the_last_bit_and_huge_logits_do_not_overflow():
    z = np.array([46.5, 46.531122678282074])  # shifting first rounded differently here
    curve = saturation_curve(z, 1.0, np.array([12.0]))
    assert curve.max_weight[0] == softmax(12.0 * z).max()
    huge = saturation_curve(np.array([1e308, 0.0]), 1.0, np.array([0.25, 16.0]))
    assert np.isfinite(huge.max_weight).all() and huge.max_weight[1] == 1.0
