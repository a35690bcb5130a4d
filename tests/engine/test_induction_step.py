"""The fused one-head training step against the general path and central differences."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine import induction_step
from attnsim.engine.induction import (
    Ablation,
    Config,
    backward,
    forward,
    init_params,
    loss_and_grads,
    loss_of,
    repeated_sequences,
)
from attnsim.engine.induction_step import one_head_loss_and_grads

ONE_HEAD = Config(n_layers=2, n_heads=1, d_model=8, d_head=3, d_vocab=7, n_ctx=9)


def _general(p, toks):
    # the head-axis path, which the 1e-6 central-difference test of test_induction checks
    tr = forward(p, toks)
    return loss_of(tr), backward(p, tr)


def test_one_head_gradients_match_central_differences() -> None:
    p = init_params(ONE_HEAD, 1, dtype=np.float64)
    toks = repeated_sequences(3, 4, 7, np.random.default_rng(0), bos=0)
    _, grads = one_head_loss_and_grads(p, toks, 2)
    assert list(grads) == list(p)
    for name, w in p.items():
        numeric = np.zeros_like(w)
        for i in np.ndindex(w.shape):
            old = w[i]
            w[i] = old + 1e-5
            hi = loss_of(forward(p, toks))
            w[i] = old - 1e-5
            lo = loss_of(forward(p, toks))
            w[i] = old
            numeric[i] = (hi - lo) / 2e-5
        assert grads[name].shape == w.shape
        err = float(np.abs(grads[name] - numeric).max()) / max(float(np.abs(numeric).max()), 1e-8)
        assert err < 1e-6, f"{name}: relative error {err:.2e}"


@pytest.mark.parametrize("cfg", [ONE_HEAD, Config(), Config(n_layers=3, d_model=16, d_head=5)])
def test_the_fused_step_is_the_general_one(cfg: Config) -> None:
    rng = np.random.default_rng(2)
    p = init_params(cfg, 4, dtype=np.float64)
    for n in (cfg.n_ctx, cfg.n_ctx // 2 + 1, 2):  # lengths change from step to step
        toks = rng.integers(0, cfg.d_vocab, size=(5, n))
        loss, grads = one_head_loss_and_grads(p, toks, cfg.n_layers)
        want_loss, want = _general(p, toks)
        assert loss == pytest.approx(want_loss, rel=1e-13)
        for name, g in grads.items():
            np.testing.assert_allclose(g, want[name], rtol=1e-10, atol=1e-14, err_msg=name)


def test_loss_and_grads_takes_the_general_path_for_ablations_and_several_heads() -> None:
    p = init_params(ONE_HEAD, 3, dtype=np.float64)
    toks = repeated_sequences(4, 4, 7, np.random.default_rng(1), bos=0)
    base, _ = loss_and_grads(p, toks)
    cut, grads = loss_and_grads(p, toks, ablate=Ablation.of([(1, 0)]))
    assert cut != pytest.approx(base, rel=1e-9)
    assert np.all(grads["blocks.1.attn.W_O"] == 0)
    assert loss_and_grads(p, toks, ablate=Ablation())[0] == base


def test_huge_scores_and_logits_give_the_general_loss_and_gradients() -> None:
    # scores and logits spread over thousands: every softmax must shift by each row's maximum
    p = init_params(ONE_HEAD, 5, dtype=np.float64)
    p["unembed.W_U"] *= 3000.0
    p["blocks.0.attn.W_Q"] *= 300.0
    p["blocks.0.attn.W_K"] *= 300.0
    toks = repeated_sequences(3, 4, 7, np.random.default_rng(3), bos=0)
    loss, grads = one_head_loss_and_grads(p, toks, 2)
    want_loss, want = _general(p, toks)
    assert np.isfinite(loss)
    assert loss == pytest.approx(want_loss, rel=1e-12)
    for name, g in grads.items():
        scale = float(np.abs(want[name]).max())
        np.testing.assert_allclose(g, want[name], rtol=1e-9, atol=1e-12 * scale, err_msg=name)


def test_float32_steps_match_the_general_path_to_rounding() -> None:
    cfg = Config()
    p = init_params(cfg, 0)
    toks = repeated_sequences(32, 16, cfg.d_vocab, np.random.default_rng(4), bos=0)
    loss, grads = one_head_loss_and_grads(p, toks, cfg.n_layers)
    want_loss, want = _general(p, toks)
    assert loss == pytest.approx(want_loss, rel=1e-6)
    for name, g in grads.items():
        assert g.dtype == np.float32
        err = float(np.abs(g - want[name]).max()) / float(np.abs(want[name]).max())
        assert err < 1e-5, f"{name}: relative error {err:.2e}"


def test_arrays_beyond_the_kept_size_are_not_kept(monkeypatch) -> None:
    # the results must not depend on whether the workspace kept an array
    monkeypatch.setattr(induction_step, "KEEP_BYTES", 0)
    monkeypatch.setattr(induction_step._WS, "flat", {})
    monkeypatch.setattr(induction_step._WS, "kept", 0)
    p = init_params(ONE_HEAD, 6, dtype=np.float64)
    toks = repeated_sequences(3, 4, 7, np.random.default_rng(5), bos=0)
    loss, grads = one_head_loss_and_grads(p, toks, 2)
    assert induction_step._WS.flat == {}
    want_loss, want = _general(p, toks)
    assert loss == pytest.approx(want_loss, rel=1e-13)
    for name, g in grads.items():
        np.testing.assert_allclose(g, want[name], rtol=1e-10, atol=1e-14, err_msg=name)


def test_the_softmax_leaves_no_subnormal_probability() -> None:
    # exp(-100) is subnormal in float32: it becomes zero, and the normal ones are exact
    s = np.array([[0.0, 0.0], [-100.0, -0.5], [-np.inf, -80.0]], np.float32)
    out, top, sums = np.empty_like(s), np.empty(2, np.float32), np.empty(2, np.float32)
    induction_step._softmax_columns(s, out, top, sums, over=4.0)
    want = np.exp(s.astype(np.float64) - s.max(axis=0))
    want /= 4.0 * want.sum(axis=0)
    tiny = np.finfo(np.float32).tiny
    assert not np.any((out != 0) & (np.abs(out) < tiny))
    assert out[1, 0] == 0.0 and out[2, 0] == 0.0
    np.testing.assert_allclose(out[want >= tiny], want[want >= tiny], rtol=1e-6)
    np.testing.assert_array_equal(top, [0.0, 0.0])


def test_a_thread_keeps_a_bounded_workspace_whatever_it_trained(monkeypatch) -> None:
    # many sequence lengths and a model far wider than the default: what stays between steps
    # is bounded (the GUI thread keeps its workspace for the app's lifetime)
    monkeypatch.setattr(induction_step._WS, "flat", {})
    monkeypatch.setattr(induction_step._WS, "kept", 0)
    monkeypatch.setattr(induction_step._WS, "mask", None)
    rng = np.random.default_rng(3)
    for d_model, half in ((64, 4), (512, 9), (64, 30), (256, 60)):
        cfg = Config(n_layers=2, n_heads=1, d_model=d_model, d_head=16, d_vocab=32, n_ctx=128)
        p = init_params(cfg, 1, dtype=np.float32)
        one_head_loss_and_grads(p, repeated_sequences(8, half, 32, rng, bos=0), 2)
    kept = sum(a.nbytes for a in induction_step._WS.flat.values())
    assert kept == induction_step._WS.kept <= induction_step.KEEP_BYTES
    assert induction_step._WS.mask is None or induction_step._WS.mask[2].nbytes <= (1 << 20)
