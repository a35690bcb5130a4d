"""Engine benchmarks, each beside its PyTorch equivalent when torch is importable."""

from __future__ import annotations

import math

import numpy as np

from attnsim.engine.attention import attention, head_trace
from attnsim.engine.training import MODELS, Adam, init_params, loss_and_grads

from . import Row, summarize, timeit


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def _budget(quick: bool) -> dict[str, float | int]:
    return {"budget_s": 0.2, "min_runs": 5} if quick else {"budget_s": 1.5, "min_runs": 15}


def attention_forward(quick: bool = False) -> list[Row]:
    """One head forward at d_k = 64, float32 (the dtype both libraries use by default)."""
    rows = []
    torch = _torch()
    for n in (8, 64, 512, 2048):
        rng = np.random.default_rng(n)
        q, k, v = (rng.standard_normal((n, 64)).astype(np.float32) for _ in range(3))
        ours = timeit(lambda q=q, k=k, v=v: attention(q, k, v), **_budget(quick))
        extra: dict[str, object] = {"n": n, "d_k": 64, "dtype": "float32"}
        if torch is not None:
            tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
            sdpa = torch.nn.functional.scaled_dot_product_attention

            def run_torch(tq=tq, tk=tk, tv=tv, sdpa=sdpa):
                with torch.no_grad():
                    return sdpa(tq, tk, tv)

            theirs = timeit(run_torch, **_budget(quick))
            extra["torch_median_ms"] = float(np.median(theirs))
            extra["speedup_vs_torch"] = float(np.median(theirs) / np.median(ours))
        rows.append(summarize(f"attention_forward_n{n}", ours, **extra))
    return rows


def head_trace_n16(quick: bool = False) -> list[Row]:
    rng = np.random.default_rng(16)
    X = rng.standard_normal((16, 64))
    Ws = [rng.standard_normal((64, 64)) / 8 for _ in range(3)]
    times = timeit(lambda: head_trace(X, *Ws), **_budget(quick))
    return [summarize("head_trace_n16", times, n=16, d=64)]


def train_step_sense8d(quick: bool = False) -> list[Row]:
    """One loss_and_grads + Adam step of the 8-D sense model, float64 on both sides."""
    spec = MODELS["sense-8d"]
    ds = spec.dataset
    params = init_params(len(ds.vocab), spec.d, len(ds.classes), seed=0, zero_bias=False)
    opt = Adam(spec.lr)
    ids = ds.encode(ds.sentences[0][0])
    label = ds.sentences[0][1]

    def ours_step():
        _, g = loss_and_grads(params, ids, label)
        opt.step(params, g)

    ours = timeit(ours_step, **_budget(quick))
    extra: dict[str, object] = {}
    torch = _torch()
    if torch is not None:
        tp = {
            k: torch.tensor(v, dtype=torch.float64, requires_grad=True) for k, v in params.items()
        }
        topt = torch.optim.Adam(tp.values(), lr=spec.lr)
        tids = torch.tensor(ids)
        tlabel = torch.tensor([label])

        def torch_step():
            X = tp["emb"][tids]
            Q, K, V = X @ tp["Wq"], X @ tp["Wk"], X @ tp["Wv"]
            A = torch.softmax(Q @ K.T / math.sqrt(spec.d), dim=-1)
            logits = (A @ V)[-1] @ tp["cls_W"] + tp["cls_b"]
            loss = torch.nn.functional.cross_entropy(logits.unsqueeze(0), tlabel)
            topt.zero_grad()
            loss.backward()
            topt.step()

        theirs = timeit(torch_step, **_budget(quick))
        extra["torch_median_ms"] = float(np.median(theirs))
        extra["speedup_vs_torch"] = float(np.median(theirs) / np.median(ours))
    return [summarize("train_step_sense8d", ours, **extra)]


BENCHMARKS = {
    "attention_forward": attention_forward,
    "head_trace_n16": head_trace_n16,
    "train_step_sense8d": train_step_sense8d,
}
