"""The position lab's view-model: RoPE numbers against a hand-built rotation, the offset
property, ALiBi and window/sink weights against a plain softmax, and the sharing counts."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attnsim.engine.attention import direct_trace
from attnsim.viewmodels.position_lab import (
    SETTINGS,
    PositionLabState,
    fmt_bytes,
    kv_group,
    mask_data,
    rope_width,
    rotation_data,
    sharing_data,
)

RNG = np.random.default_rng(7)
Q = RNG.normal(size=(4, 6))
K = RNG.normal(size=(5, 6))
V = RNG.normal(size=(5, 3))
KEYS = tuple(f"k{j}" for j in range(5))
QUERIES = tuple(f"q{i}" for i in range(4))


def rotate(v: np.ndarray, position: float, d: int) -> np.ndarray:
    """RoPE written out pair by pair from the paper: pair i turned by position · 10000^(-2i/d)."""
    out = np.empty(d)
    for i in range(d // 2):
        a = position * 10000.0 ** (-2 * i / d)
        c, s = math.cos(a), math.sin(a)
        x, y = v[2 * i], v[2 * i + 1]
        out[2 * i], out[2 * i + 1] = c * x - s * y, s * x + c * y
    return out


def rot(state: PositionLabState, receiving: int = 1):
    return rotation_data(Q, K, receiving, QUERIES[receiving], KEYS, state)


def test_rotation_matches_the_pairwise_rotation_of_the_paper():
    st = PositionLabState(key=3, width=6, pair=2, q_pos=7, k_pos=2, shift=0)
    r = rot(st)
    q_ref, k_ref = rotate(Q[1], 7, 6), rotate(K[3], 2, 6)
    np.testing.assert_allclose(r.q_rot, q_ref[4:6], atol=1e-12)
    np.testing.assert_allclose(r.k_rot, k_ref[4:6], atol=1e-12)
    np.testing.assert_allclose(r.q_pair, Q[1, 4:6])
    assert r.score == pytest.approx(float(q_ref @ k_ref), abs=1e-12)
    assert r.pair_score == pytest.approx(float(q_ref[4:] @ k_ref[4:]), abs=1e-12)
    assert r.plain_score == pytest.approx(float(Q[1] @ K[3]), abs=1e-12)
    assert r.q_angle == pytest.approx(7 * 10000.0 ** (-4 / 6))
    assert r.theta == pytest.approx(10000.0 ** (-4 / 6))
    assert r.k_label == "k3" and r.q_label == "q1"


@pytest.mark.parametrize("c", [1, 17, 250, 1000])
def test_shifting_both_positions_keeps_the_score(c):
    base = PositionLabState(key=2, width=6, q_pos=9, k_pos=4)
    r = rot(dataclasses.replace(base, shift=c))
    assert (r.q_at, r.k_at) == (9 + c, 4 + c)
    assert r.score == pytest.approx(r.score_unshifted, abs=1e-9)
    assert r.score_unshifted == pytest.approx(rot(base).score, abs=1e-12)
    # the angles themselves did move
    assert abs(r.q_angle - rot(base).q_angle) > 0.5
    assert f"c = {c}" in r.shift_text


def test_equal_positions_give_the_unrotated_score_and_offsets_change_it():
    same = rot(PositionLabState(key=0, width=6, q_pos=30, k_pos=30))
    assert same.score == pytest.approx(same.plain_score, abs=1e-12)
    apart = rot(PositionLabState(key=0, width=6, q_pos=30, k_pos=3))
    assert abs(apart.score - apart.plain_score) > 1e-3


def test_width_and_pair_are_clamped_to_the_scenario():
    assert rope_width(6, 0) == 6 and rope_width(5, 0) == 4 and rope_width(6, 4) == 4
    assert rope_width(6, 100) == 6 and rope_width(1, 0) == 0
    r = rot(PositionLabState(key=99, width=4, pair=10))
    assert (r.key, r.d, r.pair) == (4, 4, 1)  # the last key, the last pair of d = 4
    np.testing.assert_allclose(r.q_pair, Q[1, 2:4])
    one = rotation_data(Q[:, :1], K[:, :1], 0, "q0", KEYS, PositionLabState())
    assert "fewer than two" in one.message and one.readout == one.message


def test_huge_vectors_give_numbers_not_errors():
    big = np.full((2, 4), 1e200)
    r = rotation_data(big, big, 0, "q", ("a", "b"), PositionLabState(width=4))
    assert math.isinf(r.score) or abs(r.score) > 1e300
    assert r.readout  # still writes a sentence


# ---- masks ----------------------------------------------------------------------------------
def trace(mask=None):
    return direct_trace(Q, K, V, mask=mask, scale=True)


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_no_mode_shows_the_scenario_weights():
    tr = trace()
    m = mask_data(tr, 0, QUERIES, KEYS, PositionLabState(mode="none"))
    np.testing.assert_array_equal(m.weights, tr.weights)
    assert m.max_change == 0.0 and m.bias is None and not m.forbidden.any()


def test_alibi_weights_are_the_softmax_of_logits_minus_slope_times_distance():
    tr = trace()
    st = PositionLabState(mode="alibi", alibi_heads=4, alibi_head=1)
    m = mask_data(tr, 0, QUERIES, KEYS, st)
    slope = 2.0 ** (-8 * 2 / 4)  # head 2 of 4: 2^(-8k/h), k = 2
    dist = np.abs(np.arange(4)[:, None] - np.arange(5)[None, :])
    ref = softmax_rows(Q @ K.T / math.sqrt(6) - slope * dist)
    np.testing.assert_allclose(m.weights, ref, atol=1e-12)
    np.testing.assert_allclose(m.bias, -slope * dist)
    assert "0.0625" in m.title and m.max_change > 1e-3


def test_window_and_sinks_forbid_exactly_the_keys_outside_and_renormalise():
    tr = trace()
    st = PositionLabState(mode="window", window=2, sinks=1)
    m = mask_data(tr, 2, QUERIES, KEYS, st)
    i, j = np.arange(4)[:, None], np.arange(5)[None, :]
    allowed = (j <= i) & ((i - j < 2) | (j < 1))
    np.testing.assert_array_equal(m.forbidden, ~allowed)
    assert (m.weights[~allowed] == 0).all()
    np.testing.assert_allclose(m.weights.sum(axis=1), 1.0, atol=1e-12)
    logits = np.where(allowed, Q @ K.T / math.sqrt(6), -np.inf)
    np.testing.assert_allclose(m.weights, softmax_rows(logits), atol=1e-12)
    assert m.weights[0, 0] == pytest.approx(1.0)  # the first query reads only itself


def test_a_query_left_without_keys_gets_no_weight_and_is_named():
    only_first = np.zeros((4, 5), dtype=bool)
    only_first[:, 0] = True
    only_first[0, :] = True
    tr = trace(only_first)
    m = mask_data(tr, 0, QUERIES, KEYS, PositionLabState(mode="window", window=1, sinks=0))
    # rows 1..3 may read only key 0, and a window of 1 keeps only the diagonal
    assert m.empty_rows == (1, 2, 3)
    assert (m.weights[1:] == 0).all() and m.forbidden[1:].all()
    assert m.weights[0, 0] == pytest.approx(1.0)
    assert "No legal key left for q1, q2, q3" in m.caption


# ---- sharing --------------------------------------------------------------------------------
def test_query_heads_read_the_key_value_head_of_their_group():
    np.testing.assert_array_equal(kv_group(8, 2), [0, 0, 0, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(kv_group(4, 4), [0, 1, 2, 3])
    np.testing.assert_array_equal(kv_group(6, 1), np.zeros(6))


def test_sharing_counts_match_the_formulas():
    st = PositionLabState(h=32, g=8, d_model=4096, d_k=128, n=8192, dtype_bytes=2)
    s = sharing_data(st)
    assert s.counts.kind == "GQA" and s.counts.cache_ratio == 0.25
    assert s.counts.params == 4096 * 128 * (32 + 8 + 8 + 32)
    assert s.counts.kv_cache_bytes(8192) == 8192 * 8 * 256 * 2  # 32 MiB
    assert s.rows[3] == ("KV cache, n = 8\u2009192", "32 MiB", "128 MiB")
    assert s.rows[0][1] == "8\u2009388\u2009608"  # 2 · 4096 · 8 · 128
    assert "25.0 %" in s.caption
    mqa = sharing_data(dataclasses.replace(st, g=1))
    assert mqa.counts.kind == "MQA" and "1 key/value head " in mqa.caption


def test_fmt_bytes_uses_binary_units():
    assert fmt_bytes(512) == "512 B"
    assert fmt_bytes(1536) == "1.5 KiB"
    assert fmt_bytes(2**31) == "2 GiB"
    assert fmt_bytes(3 * 2**60) == "3.07e+03 PiB"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"g": 3}, "g = 3 does not divide h = 32"),
        ({"h": 12}, "g = 8 does not divide h = 12"),
        ({"width": 5}, "d must be even"),
        ({"q_pos": 101}, "query position m must lie between 0 and 100, got 101"),
        ({"shift": -1}, "shift both by c must lie between"),
        ({"mode": "rotary"}, "add must be one of no bias or mask, ALiBi"),
        ({"alibi_head": 8}, "ALiBi head must lie between 1 and 8, got 9"),  # shown from 1
        ({"window": 0}, "window w must lie between"),
        ({"n": 1.5}, "n must be a whole number"),
    ],
)
def test_the_settings_check_refuses_settings_out_of_range_naming_them(change, words):
    with pytest.raises(ValueError, match=words):
        SETTINGS.check(dataclasses.replace(PositionLabState(), **change))


def test_the_settings_check_accepts_the_defaults_and_every_divisor():
    assert SETTINGS.check(PositionLabState()) == PositionLabState()
    for g in (1, 2, 4, 8, 16, 32):
        SETTINGS.check(PositionLabState(h=32, g=g))
