"""The linear-memory lab at the size limits: every S_i of the running memory without holding
all of them (n d_v d_k numbers: 32 GiB at n = 4,096, d = 1,024), with the same numbers."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from attnsim.engine import linear
from attnsim.engine.linear import linear_memory, memory_states
from attnsim.viewmodels.linear_lab import memory_run, step_data


def _loop_states(fk, V):
    """The recurrence as written, one position at a time."""
    S = np.zeros((V.shape[1], fk.shape[1]))
    out = []
    for i in range(fk.shape[0]):
        S = S + np.outer(V[i], fk[i])
        out.append(S)
    return np.array(out)


@pytest.mark.parametrize("feature_map", [None, "elu+1"])
def test_blocks_and_kept_states_give_the_loops_numbers_bit_for_bit(monkeypatch, feature_map):
    rng = np.random.default_rng(5)
    n, d_k, d_v = 37, 3, 4
    Q, K, V = (
        rng.standard_normal((n, d_k)),
        rng.standard_normal((n, d_k)),
        rng.standard_normal((n, d_v)),
    )
    per_state = d_v * d_k * 8
    monkeypatch.setattr(linear, "STATE_BLOCK_BYTES", 5 * per_state)  # blocks of 5 positions
    monkeypatch.setattr(linear, "KEPT_STATE_BYTES", 8 * per_state)  # one kept in every 5
    fk = linear._features(K, feature_map)
    want = _loop_states(fk, V)
    tr = linear_memory(Q, K, V, feature_map=feature_map)
    np.testing.assert_array_equal(tr.S, want)
    bare = linear_memory(Q, K, V, feature_map=feature_map, keep_states=False)
    assert bare.S.shape == (0, d_v, d_k) and bare.memory_numbers == tr.memory_numbers == 12
    np.testing.assert_array_equal(bare.numerators, tr.numerators)
    states = memory_states(K, V, feature_map=feature_map)
    assert states.stride == 5 and states.kept.shape == (8, d_v, d_k)
    for i in range(n):
        np.testing.assert_array_equal(states.state(i), want[i])
    assert states.abs_max == float(np.abs(want).max())
    with pytest.raises(IndexError, match=r"outside 0 \.\. 36"):
        states.state(n)


def test_the_lab_steps_through_a_long_wide_memory_in_bounded_space():
    # every state of 1,024 tokens at d = 256 takes 512 MiB; the lab keeps at most 64 MiB
    rng = np.random.default_rng(1)
    n, d = 1024, 256
    Q, K, V = (rng.standard_normal((n, d)) * 0.1 for _ in range(3))
    tokens = tuple(f"t{i}" for i in range(n))
    tracemalloc.start()
    try:
        run = memory_run(Q, K, V, tokens, "elu+1", True)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 300 * 2**20, f"the memory run held {peak / 2**20:.0f} MiB"
    axes = tuple(str(j) for j in range(d))
    step = step_data(run, tokens, axes, axes, 700)
    fk = linear.elu_plus_one(K)
    np.testing.assert_allclose(step.S, V[:700].T @ fk[:700], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(step.output, step.S @ step.q / step.denominator, rtol=1e-9)
    assert np.abs(step.S).max() <= step.limit
