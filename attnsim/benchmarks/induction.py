"""Induction-head lab benchmarks: one training step, and the wall time until a head forms.

``induction_train_step``: ``loss_and_grads`` + Adam on the default model, batch 32 at the full
half length (33 tokens with the BOS), float32; beside the same model, loss and Adam in PyTorch
autograd on CPU when torch is importable, timed in alternation with ours, with torch's default
threads and with one (``speedup_vs_torch`` against the faster; target >= 1.5).

``induction_emergence_s``: :func:`train_until` the induction criterion (checks included) for
seeds 0-4 of the default model (0-1 with ``--quick``); the median wall time over the seeds in
which a head formed, and in how many it did (target <= 60 s).

Both record ``OPENBLAS_NUM_THREADS``: on a loaded two-core machine OpenBLAS's threads wait on
each other, and one thread has measured several times faster for these small products.
"""

from __future__ import annotations

import importlib.util
import math
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

from . import Row, qt_app, shown_panel, summarize, timeit

TARGET_SPEEDUP_VS_TORCH = 1.5
TARGET_EMERGENCE_S = 60.0
MAX_STEPS = 5000


def _threads() -> str:
    return os.environ.get("OPENBLAS_NUM_THREADS", "default")


def _torch_step(params: dict, tokens: np.ndarray, lr: float, d_head: int):
    """The same model, loss and optimiser in PyTorch: one step per call, returning the loss."""
    import torch

    tp = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
    opt = torch.optim.Adam(tp.values(), lr=lr)
    toks = torch.from_numpy(tokens)
    n = toks.shape[1]
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    layers = sum(1 for k in tp if k.endswith("W_Q"))

    def step() -> float:
        resid = tp["embed.W_E"][toks] + tp["pos_embed.W_pos"][:n]
        for layer in range(layers):
            w = {m: tp[f"blocks.{layer}.attn.W_{m}"] for m in "QKVO"}
            x = resid[:, None]
            q, k, v = x @ w["Q"], x @ w["K"], x @ w["V"]
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(d_head)
            pattern = torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
            resid = resid + ((pattern @ v) @ w["O"]).sum(dim=1)
        logits = resid @ tp["unembed.W_U"]
        loss = torch.nn.functional.cross_entropy(
            logits[:, :-1].reshape(-1, logits.shape[-1]), toks[:, 1:].reshape(-1)
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
        return float(loss.detach())

    return step


def induction_train_step(quick: bool = False) -> list[Row]:
    from attnsim.engine.induction import Config, InductionTrainer, loss_and_grads, one_blas_thread
    from attnsim.engine.training import Adam

    cfg = Config()
    trainer = InductionTrainer(cfg, seed=0, batch=32)
    tokens = trainer.next_batch()
    while tokens.shape[1] != cfg.n_ctx:  # the longest sequences, the heaviest step
        tokens = trainer.next_batch()
    start = {k: v.copy() for k, v in trainer.params.items()}
    params = {k: v.copy() for k, v in start.items()}
    opt = Adam(trainer.opt.lr)
    first_loss = loss_and_grads(params, tokens)[0]

    def ours() -> None:
        _, grads = loss_and_grads(params, tokens)
        opt.step(params, grads)

    rounds = 2 if quick else 5
    budget = {"budget_s": (0.5 if quick else 2.0) / rounds, "max_runs": 2000}
    torch_steps: dict[str, Callable[[], float]] = {}
    torch_threads, first_loss_diff = 0, 0.0
    if importlib.util.find_spec("torch") is not None:
        import torch

        # one model per thread setting: each trains about as many steps as ours does (a model
        # that has fitted this one batch longer computes on smaller, slower numbers)
        torch_steps = {
            k: _torch_step(start, tokens, trainer.opt.lr, cfg.d_head) for k in ("default", "one")
        }
        torch_threads = torch.get_num_threads()
        # the same first loss: the comparison is of one computation, not two models
        first_loss_diff = abs(torch_steps["default"]() - first_loss)
        torch_steps["one"]()
    # Ours and torch's in alternation, so that a change in the machine's load between the two
    # cannot decide the ratio. Torch both with its default threads and with one, as ours runs,
    # and compared at the faster: on a loaded 2-core machine its threads wait on each other
    # (measured during test runs: 130 ms a step with its 2 threads, 19 ms with one).
    times: list[float] = []
    theirs: dict[str, list[float]] = {"default": [], "one": []}
    for _ in range(rounds):
        with one_blas_thread():  # as the lab, the CLI and train_until run it
            times += timeit(ours, **budget)
        if torch_steps:
            theirs["default"] += timeit(torch_steps["default"], **budget)
            torch.set_num_threads(1)
            try:
                theirs["one"] += timeit(torch_steps["one"], **budget)
            finally:
                torch.set_num_threads(torch_threads)
    extra: dict[str, object] = {
        "batch": 32,
        "n": int(tokens.shape[1]),
        "steps_per_s": 1000.0 / statistics.median(times),
        "openblas_num_threads": _threads(),
        "target_speedup_vs_torch": TARGET_SPEEDUP_VS_TORCH,
    }
    if torch_steps:
        extra["torch_first_loss_diff"] = first_loss_diff
        medians = {k: statistics.median(v) for k, v in theirs.items()}
        best = min(medians, key=medians.__getitem__)
        extra["torch_median_ms"] = medians[best]
        extra["torch_threads"] = 1 if best == "one" else torch_threads
        extra["torch_default_threads_median_ms"] = medians["default"]
        extra["torch_one_thread_median_ms"] = medians["one"]
        speedup = medians[best] / statistics.median(times)
        extra["speedup_vs_torch"] = speedup
        extra["meets_target"] = speedup >= TARGET_SPEEDUP_VS_TORCH
    else:
        extra["speedup_vs_torch"] = "unmeasured (torch not importable)"
    return [summarize("induction_train_step", times, **extra)]


def induction_emergence_s(quick: bool = False) -> list[Row]:
    from attnsim.engine.induction import Config, InductionTrainer
    from attnsim.engine.induction_circuits import train_until

    seeds = range(2 if quick else 5)
    wall, steps, where = [], [], []
    for seed in seeds:
        e = train_until(InductionTrainer(Config(), seed=seed), MAX_STEPS, check_every=50)
        if e.step is not None:
            wall.append(e.seconds * 1000.0)
            steps.append(e.step)
            where.append(f"L{e.criterion.layer}H{e.criterion.head}")
    median_s = statistics.median(wall) / 1000.0 if wall else float("nan")
    extra: dict[str, object] = {
        "median_s": median_s,
        "formed": len(wall),
        "seeds": len(seeds),
        "steps_to_criterion": steps,
        "where": where,
        "max_steps": MAX_STEPS,
        "openblas_num_threads": _threads(),
        "target_s": TARGET_EMERGENCE_S,
        "meets_target": bool(wall) and median_s <= TARGET_EMERGENCE_S,
    }
    row = summarize("induction_emergence_s", wall or [float("nan")], **extra)
    row["runs"] = len(wall)
    return [row]


# One frame at 60 frames a second (issue 25's goal for the p95).
TARGET_REPAINT_MS = 16.0


def induction_repaint_training(quick: bool = False) -> list[Row]:
    """While the lab trains in the background: deliver what arrived, refresh the panel and
    repaint it (1,400 x 950, the default model): what one GUI frame costs during training
    (``max_ms``: the dearest frame). A chunk's redraw is spread over the frames after it lands
    (see ``panels/induction_lab/stages.py``), one part a frame, so these frames are timed too."""
    from PySide6.QtGui import QColor, QImage

    from attnsim.panels.induction_lab import InductionLabPanel
    from attnsim.resources import resolve_scenario

    app = qt_app()
    wb, panel = shown_panel(InductionLabPanel, resolve_scenario("river-bank"), (1400, 950))
    image = QImage(panel.width(), panel.height(), QImage.Format.Format_ARGB32)
    panel.session.play()

    def frame() -> None:
        app.processEvents()
        panel.flush()
        image.fill(QColor("white"))
        panel.render(image)

    # Frames at the display's pace (60 a second), as the event loop draws them: between two
    # frames the GUI thread sleeps and the training thread runs. Back-to-back frames would
    # starve the trainer of the interpreter lock and time frames in which nothing arrives.
    period = 1.0 / 60.0
    times: list[float] = []
    started = time.perf_counter()
    try:
        while time.perf_counter() - started < (1.0 if quick else 4.0) and len(times) < 400:
            t0 = time.perf_counter()
            frame()
            took = time.perf_counter() - t0
            times.append(took * 1000.0)
            time.sleep(max(0.0, period - took))
        steps = panel.session.step_count
    finally:
        panel.session.pause()
        panel.session.wait()
        wb.close()
    # Most frames copy kept paintings; those in which a part of a chunk's redraw is drawn are
    # dearer, and the dearest (max_ms) is the one a user could see stutter: report it too.
    row = summarize(
        "induction_repaint_training", times, target_ms=TARGET_REPAINT_MS, trained_steps=steps,
        frames_per_s=60,
        max_ms=round(max(times), 1),
    )  # fmt: skip
    row["meets_target"] = row["p95_ms"] <= TARGET_REPAINT_MS
    return [row]


BENCHMARKS = {
    "induction_train_step": induction_train_step,
    "induction_emergence_s": induction_emergence_s,
    "induction_repaint_training": induction_repaint_training,
}
