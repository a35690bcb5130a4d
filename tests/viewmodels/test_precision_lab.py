"""The precision lab's view-model: the padded mask, the large logit riding on an extra
coordinate, leaks and NaN rows against a hand-written float64 softmax, the table's current row,
and dropout's realised mixture against its expectation."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attnsim.engine.attention import direct_trace
from attnsim.engine.numbers import fmt_significant
from attnsim.viewmodels.precision_lab import (
    LOGIT_MAX,
    SETTINGS,
    PrecisionLabState,
    dropout_data,
    lab_inputs,
    padded_mask,
    padding_problem,
    precision_data,
    table_data,
    table_rows,
)

RNG = np.random.default_rng(11)
N, D = 5, 4
Q = RNG.normal(size=(N, D))
K = RNG.normal(size=(N, D))
V = RNG.normal(size=(N, 3))
LABELS = tuple(f"t{j}" for j in range(N))
V_LABELS = ("a", "b", "c")


def trace(mask=None, temperature: float = 1.0):
    return direct_trace(Q, K, V, mask=mask, temperature=temperature)


def softmax_rows(logits: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Float64 softmax over the allowed keys only, written out."""
    out = np.zeros_like(logits)
    for i in range(logits.shape[0]):
        keep = allowed[i]
        z = logits[i, keep] - logits[i, keep].max()
        out[i, keep] = np.exp(z) / np.exp(z).sum()
    return out


def data(st: PrecisionLabState, tr=None, receiving: int = 4):
    tr = trace() if tr is None else tr
    inp = lab_inputs(tr, receiving, st)
    return inp, precision_data(inp, receiving, LABELS, LABELS, st)


def test_padded_mask_is_causal_with_the_first_positions_closed():
    m, note = padded_mask(np.ones((N, N), dtype=bool), 2)
    expected = np.tri(N, dtype=bool)
    expected[:, :2] = False
    np.testing.assert_array_equal(m, expected)
    assert not m[0].any() and not m[1].any() and m[2, 2]
    assert "positions 1–2 are padding" in note
    same, note0 = padded_mask(np.ones((N, N), dtype=bool), 0)
    assert same.all() and note0 == ""
    # queries that are not the keys' tokens: only the padding keys close, no row empties
    cross, cross_note = padded_mask(np.ones((2, N), dtype=bool), 1)
    assert not cross[:, 0].any() and cross[:, 1:].all() and "position 1 is" in cross_note


def test_float64_boolean_equals_a_plain_softmax_of_the_scaled_logits():
    tr = trace(temperature=2.0)
    _, d = data(PrecisionLabState(dtype="float64", style="boolean"), tr)
    logits = Q @ K.T / (math.sqrt(D) * 2.0)
    ref = softmax_rows(logits, np.ones((N, N), dtype=bool))
    np.testing.assert_allclose(d.weights, ref, atol=1e-12)
    np.testing.assert_allclose(d.reference, ref, atol=1e-12)
    assert d.max_diff < 1e-12 and d.leaked_total == 0 and not d.nan_rows.any()
    assert "Boolean" in d.title


def test_the_large_logit_is_added_to_exactly_one_logit():
    st = PrecisionLabState(dtype="float64", style="boolean", boost=True, logit=3.0,
                           boost_row=1, boost_key=2)  # fmt: skip
    inp, d = data(st)
    base = Q @ K.T / math.sqrt(D)
    added = inp.q @ inp.k.T - base
    expected = np.zeros((N, N))
    expected[1, 2] = 3.0
    np.testing.assert_allclose(added, expected, atol=1e-12)
    assert inp.boost == (1, 2) and d.boost == (1, 2)


def test_minus_1e4_plus_a_large_logit_is_a_live_route_and_minus_inf_is_not():
    causal = np.tri(N, dtype=bool)
    tr = trace(mask=causal)
    leak = PrecisionLabState(dtype="float16", style="-1e4", boost=True, boost_row=1)
    _, d = data(leak, tr, receiving=1)
    assert d.boost == (1, 2)  # the first forbidden key of row 1
    assert d.weights[1, 2] == pytest.approx(1.0, abs=1e-3)
    assert d.leaked_cells[1, 2] and d.leaked_cells.sum() == 1
    assert d.leaked_total == pytest.approx(d.weights[1, 2])
    assert d.max_diff == pytest.approx(1.0, abs=1e-3)  # float64 Boolean gives it 0
    # the summary says what the difference is taken from in words a reader knows, a phrase a
    # line (so that no phrase is wrapped in its middle)
    lines = d.summary.splitlines()
    assert len(lines) == 3 and lines[1] == "NaN rows: 0"
    assert lines[0] == "Leaked weight on forbidden keys: " + fmt_significant(d.leaked_total) + (
        " in total (1 cell)"
    )
    assert lines[2] == "Largest difference from float64 with a Boolean mask: " + (
        fmt_significant(d.max_diff)
    )
    assert "(forbidden)" in d.caption
    closed = dataclasses.replace(leak, style="-inf")
    _, d2 = data(closed, tr, receiving=1)
    assert d2.weights[1, 2] == 0 and d2.leaked_total == 0 and not d2.leaked_cells.any()
    assert d2.max_diff < 5e-3  # float16 rounding only


def test_minus_1e9_overflows_to_minus_inf_in_float16_only():
    st = PrecisionLabState(dtype="float16", style="-1e9", pad=2)
    _, d = data(st)
    assert d.stored_mask_value == -np.inf and "stored as −∞" in d.title
    np.testing.assert_array_equal(d.nan_rows, [True, True, False, False, False])
    assert "NaN rows (t0, t1)" in d.caption
    _, d32 = data(dataclasses.replace(st, dtype="float32"))
    assert d32.stored_mask_value == -1e9 and not d32.nan_rows.any()
    # finite mask, no legal key: a silent uniform route over the forbidden keys
    assert d32.silent_rows.tolist() == [True, True, False, False, False]
    np.testing.assert_allclose(d32.weights[0], 1 / N, atol=1e-6)
    assert d32.leaked_total == pytest.approx(2.0, abs=1e-5)
    assert "silent route" in d32.caption


def test_boolean_style_gives_an_empty_row_no_route_instead_of_nan():
    _, d = data(PrecisionLabState(dtype="bfloat16", style="boolean", pad=1))
    assert not d.nan_rows.any() and d.empty_rows[0] and not d.silent_rows.any()
    assert (d.weights[0] == 0).all() and "declares no route" in d.caption
    live = d.weights[1:]
    np.testing.assert_allclose(live.sum(axis=1), 1.0, atol=2e-2)  # bfloat16 keeps 8 bits
    assert d.max_diff > 0  # bfloat16 is not float64


def test_the_table_is_the_engines_and_marks_the_current_choice():
    st = PrecisionLabState(dtype="bfloat16", style="min", pad=2)
    inp, _ = data(st)
    rows = table_rows(inp, st.logit)
    t = table_data(rows, st)
    assert len(t.rows) == 16 and t.keys[t.current] == ("bfloat16", "min")
    assert t.rows[t.current][2] == "−3.39e38"
    by_key = dict(zip(t.keys, t.rows, strict=True))
    assert by_key[("float16", "-1e9")][4] == "2"  # two NaN rows once -1e9 is -inf
    assert by_key[("float32", "-1e4")][6] == "1"  # a finite route that takes the row
    assert by_key[("float32", "-1e9")][6] == "0"  # finite, yet too far down to get weight
    assert by_key[("float64", "-inf")][6] == "−∞"
    assert table_data(rows, dataclasses.replace(st, style="boolean")).current is None


def test_dropout_realised_weights_average_to_the_expectation():
    tr = trace(mask=np.tri(N, dtype=bool))
    st = PrecisionLabState(p=0.3)
    d = dropout_data(tr, 4, LABELS, LABELS, V_LABELS, st)
    np.testing.assert_allclose(d.expected, tr.weights, atol=1e-12)
    kept = d.kept & ~d.forbidden
    np.testing.assert_allclose(d.realised[kept], tr.weights[kept] / 0.7, atol=1e-12)
    assert (d.realised[~d.kept] == 0).all()
    np.testing.assert_allclose(d.output_diff, d.realised @ V - tr.weights @ V, atol=1e-12)
    assert d.max_diff > 0 and "seed 0" in d.summary
    mean = np.mean(
        [dropout_data(tr, 4, LABELS, LABELS, V_LABELS, dataclasses.replace(st, seed=s)).realised
         for s in range(3000)], axis=0,
    )  # fmt: skip
    np.testing.assert_allclose(mean, tr.weights, atol=0.03)


@pytest.mark.parametrize("st", [PrecisionLabState(train=False), PrecisionLabState(dropout=False)])
def test_evaluation_or_dropout_off_leaves_the_output_exactly_the_reference(st):
    tr = trace()
    d = dropout_data(tr, 0, LABELS, LABELS, V_LABELS, dataclasses.replace(st, p=0.5))
    np.testing.assert_array_equal(d.realised, tr.weights)
    assert d.max_diff == 0.0 and "(exactly)" in d.summary
    assert (
        d.summary.splitlines()[-1]
        == "Largest difference from the output without dropout: 0 (exactly)."
    )


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"dtype": "float8"}, "dtype must be one of"),
        ({"style": "-1e3"}, "mask must be one of"),
        ({"pad": -1}, "left padding must lie between 0 and"),
        ({"logit": 0.0}, "large logit value must lie above 0 and at most 60000, got 0"),
        ({"logit": LOGIT_MAX * 2}, "large logit value must lie"),
        ({"logit": math.nan}, "large logit value must lie .* got nan"),
        ({"p": 0.99}, "dropout p must lie between 0 and 0.95, got 0.99"),
        ({"seed": -3}, "seed must lie"),
        ({"seed": 1.5}, "seed must be a whole number, got 1.5"),
        ({"train": 1}, "mode must be on or off, got 1"),
    ],
)
def test_the_settings_check_refuses_bad_settings_naming_them(change, words):
    with pytest.raises(ValueError, match=words):
        SETTINGS.check(dataclasses.replace(PrecisionLabState(), **change))
    assert SETTINGS.check(PrecisionLabState()) == PrecisionLabState()


def test_the_padding_may_not_exceed_the_scenarios_keys():
    assert padding_problem(PrecisionLabState(pad=N), N) == ""
    why = padding_problem(PrecisionLabState(pad=N + 1), N)
    assert f"padding {N + 1} is more than the scenario's {N} keys" in why


@pytest.mark.parametrize(
    "st",
    [
        PrecisionLabState(dtype="float16", style="-1e4", pad=2),
        PrecisionLabState(dtype="bfloat16", style="-inf", pad=1),
        PrecisionLabState(dtype="float64", style="boolean", pad=3),
        PrecisionLabState(dtype="float32", style="min", boost=True, logit=30.0),
    ],
)
def test_weights_in_row_blocks_are_the_whole_computation(monkeypatch, st):
    import attnsim.viewmodels.precision_lab as lab
    from attnsim.engine.precision import low_precision_attention, mask_value_for

    gen = np.random.default_rng(5)
    n = 13
    tr = direct_trace(gen.normal(size=(n, D)) * 3, gen.normal(size=(n, D)) * 3,
                      gen.normal(size=(n, 3)), mask=np.tri(n, dtype=bool))  # fmt: skip
    labels = tuple(f"w{j}" for j in range(n))
    inp = lab_inputs(tr, n - 1, st)
    whole = precision_data(inp, n - 1, labels, labels, st)
    monkeypatch.setattr(lab, "ROW_BLOCK", 4)  # four blocks, the last one short
    blocks = precision_data(inp, n - 1, labels, labels, st)
    # float16 / bfloat16 / float32 numbers are float32 numbers: kept in float32, unchanged
    assert blocks.weights.dtype == (np.float64 if st.dtype == "float64" else np.float32)
    # a block of rows is its own matrix product, equal to the whole one up to rounding in the
    # last place (float64's for the reference; float32's when one row is a block of its own)
    rtol = {"float64": 1e-12, "float32": 1e-6}.get(st.dtype, 0.0)
    np.testing.assert_allclose(blocks.weights, whole.weights, rtol=rtol, atol=1e-15)
    assert blocks.max_diff == pytest.approx(whole.max_diff, rel=max(rtol, 1e-9), abs=1e-15)
    assert blocks.leaked_total == pytest.approx(whole.leaked_total, rel=1e-12, abs=1e-15)
    np.testing.assert_array_equal(blocks.leaked_cells, whole.leaked_cells)
    np.testing.assert_array_equal(blocks.nan_rows, whole.nan_rows)
    assert blocks.summary == whole.summary and blocks.caption == whole.caption
    if st.style != "boolean":  # against the engine on the whole head at once
        value = mask_value_for(st.style, st.dtype)
        r = low_precision_attention(inp.q, inp.k, inp.v, mask=inp.mask, mask_value=value,
                                    dtype=st.dtype, scale=False)  # fmt: skip
        np.testing.assert_allclose(blocks.weights, r.weights, rtol=rtol, atol=1e-15)
        assert blocks.stored_mask_value == r.stored_mask_value
    ref = blocks.reference  # made again when asked: float64, NaN on rows with no legal key
    assert ref.dtype == np.float64 and np.isnan(ref[: st.pad]).all()
    both = np.isfinite(ref) & np.isfinite(blocks.weights)
    worst = float(np.max(np.abs(blocks.weights - ref)[both], initial=0.0))
    assert blocks.max_diff == pytest.approx(worst, rel=1e-9, abs=1e-15)
