"""The kernel lab's view-model: every step's m, ℓ, rescale factor and accumulator against sums
written out from the logits, the final output against attention(), the moves, clamping, the
refusals, and the scaling plot's curves."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attnsim.engine.attention import attention, causal_mask, direct_trace
from attnsim.engine.kernel_scaling import METHODS, ScalingResult
from attnsim.engine.kernels import peak_memory
from attnsim.viewmodels.kernel_lab import (
    BLOCK_MAX,
    ROWS_SHOWN,
    SETTINGS,
    KernelLabState,
    fmt_floats,
    kernel_run,
    log_ticks,
    moved,
    scaling_shown,
    skipped_runs,
    stepper_data,
    table_rows,
)

RNG = np.random.default_rng(13)
N, D_K, D_V = 7, 4, 3
Q, K, V = RNG.normal(size=(N, D_K)), RNG.normal(size=(N, D_K)), RNG.normal(size=(N, D_V))
LABELS = tuple(f"t{i}" for i in range(N))


def head(mask=None, temperature=1.0):
    return direct_trace(Q, K, V, mask=mask, temperature=temperature)


def data(state: KernelLabState, h=None):
    h = head() if h is None else h
    return stepper_data(
        h, kernel_run(h, state.block_q, state.block_k, state.q_block), LABELS, LABELS, state
    )


def by_hand(h, rows, upto_col):
    """m, ℓ and acc of ``rows`` over the legal keys before ``upto_col``, from the logits."""
    lg = np.where(h.mask, h.logits, -np.inf)[rows[0] : rows[1], :upto_col]
    m = lg.max(axis=1, initial=-np.inf)
    e = np.where(np.isneginf(lg), 0.0, np.exp(lg - np.where(np.isneginf(m), 0, m)[:, None]))
    return m, e.sum(axis=1), e @ V[:upto_col]


@pytest.mark.parametrize(("bq", "bk"), [(1, 1), (2, 3), (3, 2), (4, 4), (7, 7), (50, 5)])
@pytest.mark.parametrize("causal", [False, True])
def test_every_step_matches_the_online_softmax_written_out(bq, bk, causal):
    h = head(mask=causal_mask(N) if causal else None, temperature=0.7)
    n_qb, n_kb = math.ceil(N / bq), math.ceil(N / bk)
    for qb in range(n_qb):
        prev_m = None
        for s in range(n_kb + 1):
            d = data(KernelLabState(block_q=bq, block_k=bk, q_block=qb, step=s), h)
            assert (d.n_query_blocks, d.n_key_blocks, d.q_block, d.step) == (n_qb, n_kb, qb, s)
            rows = (qb * bq, min(N, (qb + 1) * bq))
            assert d.rows == rows
            m, l_sum, acc = by_hand(h, rows, min(N, s * bk))
            got_m = np.array([r.m for r in d.row_steps])
            np.testing.assert_array_equal(np.isneginf(got_m), np.isneginf(m))
            seen = np.isfinite(m)
            np.testing.assert_allclose(got_m[seen], m[seen], rtol=1e-12)
            np.testing.assert_allclose([r.l for r in d.row_steps], l_sum, rtol=1e-12, atol=0)
            np.testing.assert_allclose([r.acc for r in d.row_steps], acc.reshape(-1, D_V),
                                       rtol=1e-12, atol=1e-14)  # fmt: skip
            if prev_m is not None and s > 0 and not d.tile_skipped:
                both = np.isfinite(prev_m)
                alpha = np.array([r.alpha for r in d.row_steps])
                np.testing.assert_allclose(alpha[both], np.exp(prev_m - m)[both], rtol=1e-12)
                assert np.all(alpha <= 1.0)
            prev_m = m
        assert d.done
        np.testing.assert_allclose(d.estimate, d.reference[rows[0] : rows[1]], rtol=1e-12)
        assert d.block_diff < 1e-12 and d.max_diff < 1e-12
        assert "Done" in d.caption


def test_output_and_reference_are_the_engines():
    h = head(mask=causal_mask(N))
    run = kernel_run(h, 3, 2)
    ref, _ = attention(Q, K, V, mask=causal_mask(N))
    np.testing.assert_allclose(run.reference, ref, rtol=0, atol=0)
    np.testing.assert_allclose(run.trace.output, ref, rtol=1e-12)
    assert run.max_diff == pytest.approx(float(np.abs(run.trace.output - ref).max()), abs=0)


def test_the_reference_of_a_long_head_is_made_a_few_rows_at_a_time(monkeypatch):
    import attnsim.viewmodels.kernel_lab as lab

    h = head(mask=causal_mask(N), temperature=0.5)
    whole = kernel_run(h, 2, 3)
    monkeypatch.setattr(lab, "REFERENCE_ROWS", 3)  # blocks of 3, 3 and 1 rows
    run = kernel_run(h, 2, 3)
    ref, _ = attention(Q, K, V, mask=causal_mask(N), temperature=0.5)
    # each block is its own matrix product: equal to the whole one up to the last place
    np.testing.assert_allclose(run.reference, ref, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(run.reference, whole.reference, rtol=1e-14, atol=1e-15)
    assert run.max_diff == pytest.approx(whole.max_diff, abs=1e-15)
    assert run.max_diff < 1e-12


def test_causal_mask_skips_the_tiles_above_the_diagonal_and_says_so():
    d = data(KernelLabState(block_q=2, block_k=2, q_block=0, step=2), head(mask=causal_mask(N)))
    # Tile (i, j) is skipped when every key of block j lies after every query of block i.
    want = np.array([[j > i for j in range(4)] for i in range(4)])
    np.testing.assert_array_equal(d.skipped, want)
    assert d.tile_skipped and "skipped" in d.status
    assert "6 of 16 tiles are skipped" in d.caption
    before = data(KernelLabState(block_q=2, block_k=2, q_block=0, step=1), head(causal_mask(N)))
    # A skipped tile changes nothing: the same m, ℓ and accumulator as the step before.
    for a, b in zip(d.row_steps, before.row_steps, strict=True):
        assert (a.m, a.l, a.alpha) == (b.m, b.l, 1.0)
        np.testing.assert_array_equal(a.acc, b.acc)


def test_step_zero_has_seen_nothing():
    d = data(KernelLabState(block_q=3, block_k=3, q_block=1, step=0))
    assert d.cols is None and d.rows == (3, 6)
    assert all(math.isinf(r.m) and r.m < 0 and r.l == 0 for r in d.row_steps)
    assert np.isnan(d.estimate).all()
    assert "nothing seen yet" in d.status
    assert table_rows(d)[1][-1] == "—"  # no acc / ℓ while ℓ = 0
    assert "0 / 0" in d.caption and "differs" not in d.caption  # no difference from nothing


def test_query_block_and_step_are_clamped_to_the_scenario():
    d = data(KernelLabState(block_q=3, block_k=3, q_block=40, step=99))
    assert (d.q_block, d.step) == (2, 3) and d.rows == (6, 7) and d.done and d.at_end


def test_moves_walk_through_key_blocks_and_on_to_the_next_query_block():
    st = KernelLabState(q_block=0, step=0)
    path = []
    for _ in range(8):
        q, s = moved(st, 2, 3, "step")
        st = KernelLabState(q_block=q, step=s)
        path.append((q, s))
    assert path == [(0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2), (1, 3), (1, 3)]
    assert moved(KernelLabState(q_block=1, step=0), 2, 3, "back") == (0, 3)
    assert moved(KernelLabState(q_block=0, step=0), 2, 3, "back") == (0, 0)
    assert moved(KernelLabState(q_block=1, step=2), 2, 3, "reset") == (1, 0)
    assert moved(KernelLabState(q_block=1, step=1), 2, 3, "end") == (1, 3)
    with pytest.raises(ValueError, match="no such move"):
        moved(st, 2, 3, "jump")


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"block_q": 0}, ("block_q", "0")),
        ({"block_k": BLOCK_MAX + 1}, ("block_k", str(BLOCK_MAX + 1))),
        ({"block_k": 2.5}, ("block_k", "2.5")),
        ({"q_block": -1}, ("query block must lie between 1 and", "got 0")),  # shown from 1
        ({"n_max": 3000}, ("largest n", "3000")),
        ({"n_max": 8192}, ("largest n", "8192")),
        ({"repeats": 0}, ("repeats", "0")),
        ({"d": 10**4}, ("d", "10000")),
    ],
)
def test_bad_settings_are_refused_naming_the_setting_and_value(change, words):
    with pytest.raises(ValueError) as err:
        SETTINGS.check(KernelLabState(**change))
    assert all(w in str(err.value) for w in words)


def test_good_settings_pass_unchanged():
    st = KernelLabState(block_q=5, block_k=BLOCK_MAX, n_max=128, repeats=1, d=1)
    assert SETTINGS.check(st) is st


def test_memory_is_the_engines_peak_memory_in_floats():
    d = data(KernelLabState(block_q=3, block_k=2))
    pm = peak_memory(N, N, D_V, 3, 2, np.float64)
    assert d.memory == pm
    assert fmt_floats(pm.plain_bytes // 8) in d.memory_text
    assert f"{2 * N * N} (the" in d.memory_text and f"{3 * 2 + 2 * 3 + 3 * D_V}" in d.memory_text
    assert fmt_floats(16777216) == "16\u2009777\u2009216"


def test_an_engine_refusal_is_a_message_not_a_crash():
    h = dataclasses.replace(head(), mask=np.eye(N, dtype=bool) & False)  # no key for anyone
    run = kernel_run(h, 2, 2)
    assert run.trace is None and "no legal key" in run.message
    d = stepper_data(h, run, LABELS, LABELS, KernelLabState())
    assert d.message == run.message and d.n_key_blocks == 0 and d.memory is None
    assert table_rows(d) == (table_rows(d)[0],)


def test_table_has_a_header_and_at_most_the_rows_shown():
    big = RNG.normal(size=(30, D_K))
    h = direct_trace(big, big, RNG.normal(size=(30, D_V)))
    labels = tuple(str(i) for i in range(30))
    st = KernelLabState(block_q=20, block_k=7, step=2)
    d = stepper_data(h, kernel_run(h, 20, 7, st.q_block), labels, labels, st)
    rows = table_rows(d)
    assert rows[0][0] == "query" and len(rows) == ROWS_SHOWN + 1
    assert rows[1][0] == "0"
    assert float(rows[1][3]) == pytest.approx(d.row_steps[0].alpha, abs=5e-4)
    assert 0.0 < d.row_steps[0].alpha <= 1.0


def fake_result(n, seconds):
    n = np.asarray(n)
    mem = np.vstack([2 * n * n * 8, np.minimum(n, 256) * 64 * 8, np.full(n.size, 72 * 8)])
    return ScalingResult(n.astype(np.int64), 8, 3, np.asarray(seconds, float), mem.astype(np.int64))


def test_scaling_curves_are_the_measurement_in_ms_and_mib_with_fitted_slopes():
    n = np.array([64, 128, 256, 512])
    secs = np.vstack([1e-6 * n**2.0, 1e-5 * n**1.0, 1e-4 * np.ones(4)])
    shown = scaling_shown(fake_result(n, secs), KernelLabState())
    np.testing.assert_allclose(shown.ms, secs * 1e3)
    np.testing.assert_allclose(shown.mib[0], 2 * n * n * 8 / 2**20)
    assert shown.slopes == pytest.approx((2.0, 1.0, 0.0), abs=1e-9)
    assert "plain ~ n^2.00" in shown.caption.replace("−", "-")
    assert [t[1] for t in shown.x_ticks] == ["64", "128", "256", "512"]
    assert shown.x_ticks[0][0] == pytest.approx(math.log10(64))


def test_before_a_run_the_plot_is_empty_and_says_how_to_start():
    shown = scaling_shown(None, KernelLabState(n_max=512, repeats=5, d=32))
    assert shown.n.size == 0 and shown.ms.shape == (len(METHODS), 0)
    assert "Run" in shown.caption and "512" in shown.caption and "d = 32" in shown.caption


def test_log_ticks_cover_the_values_at_powers_of_ten():
    ticks = log_ticks(np.array([0.03, 2.0, 150.0]))
    labels = [t[1] for t in ticks]
    assert labels == ["0.1", "1", "10", "100"]
    assert all(t[0] == pytest.approx(math.log10(float(t[1]))) for t in ticks)
    assert [t[1] for t in log_ticks(np.array([3.0, 4.0]))] == ["2", "5"]
    assert log_ticks(np.array([0.0, -1.0])) == ()


def test_skipped_runs_are_each_rows_runs_of_skipped_tiles():
    skipped = np.array(
        [[True, True, False, True], [False, False, False, False], [False, True, True, True]]
    )
    runs = skipped_runs(skipped)
    assert runs.tolist() == [[0, 0, 2], [0, 3, 4], [2, 1, 4]]
    assert skipped_runs(np.zeros((2, 3), dtype=bool)).shape == (0, 3)
    rebuilt = np.zeros_like(skipped)
    for r, a, b in runs:
        rebuilt[r, a:b] = True
    np.testing.assert_array_equal(rebuilt, skipped)


def test_the_stepper_carries_the_kernel_runs_of_skipped_tiles():
    h = head(mask=causal_mask(N))
    run = kernel_run(h, 2, 3)
    d = stepper_data(h, run, LABELS, LABELS, KernelLabState(block_q=2, block_k=3))
    assert d.skipped.any() and d.skipped_runs is run.skipped_runs
    covered = np.zeros_like(d.skipped)
    for r, a, b in d.skipped_runs:
        covered[r, a:b] = True
    np.testing.assert_array_equal(covered, d.skipped)
