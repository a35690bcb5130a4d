"""``attnsim induction``: train the attention-only induction-head model headless, for one seed or
several, and say where an induction head formed."""

from __future__ import annotations

import argparse
import json
import time

__all__ = ["cmd_induction"]


def _induction_run(cfg, seed: int, steps: int) -> dict:
    from dataclasses import asdict

    from attnsim.engine.induction import InductionTrainer, forward, one_blas_thread
    from attnsim.engine.induction_circuits import (
        ablation_table,
        evaluation_batch,
        head_scores,
        induction_criterion,
    )

    trainer = InductionTrainer(cfg, seed=seed)
    t0 = time.perf_counter()
    with one_blas_thread():
        for _ in range(steps):
            trainer.step()
    seconds = time.perf_counter() - t0
    toks, half = evaluation_batch(trainer), trainer.half_len
    scores = head_scores(forward(trainer.params, toks), half)
    loss, _, rows = ablation_table(trainer.params, toks, half)
    crit = induction_criterion(trainer.params, toks, half)
    return {
        "seed": seed,
        "steps": steps,
        "seconds": seconds,
        "steps_per_s": steps / seconds if seconds > 0 else None,
        "loss": loss,
        "loss_first_half": crit.first_loss,
        "loss_repeated_half": crit.repeated_loss,
        "previous_token": scores.previous_token.astype(float).tolist(),
        "induction": scores.induction.astype(float).tolist(),
        "ablation": [asdict(r) for r in rows],
        "criterion": asdict(crit),
    }


def _head_verdict(c: dict) -> str:
    if c["layer"] < 0:
        return "no induction head: a one-layer model has no later head to compose"
    where = f"L{c['layer']}H{c['head']} (induction {c['induction']:.2f}, zero-ablation gives "
    where += f"back {100 * c['ablation_share']:.0f} % of the gap)"
    return f"induction head {where}" if c["met"] else f"no induction head; best candidate {where}"


def _print_induction_run(r: dict) -> None:
    rate = f", {r['steps_per_s']:.0f} steps/s" if r["steps_per_s"] else ""
    print(f"seed {r['seed']}: {r['steps']} steps in {r['seconds']:.1f} s{rate}")
    first, rep = r["loss_first_half"], r["loss_repeated_half"]
    print(f"loss: first half {first:.3f}, repeated half {rep:.3f} ({100 * rep / first:.0f} %)")
    print(f"{'head':6s} {'prev-token':>10s} {'induction':>10s}")
    for layer, (prev, ind) in enumerate(zip(r["previous_token"], r["induction"], strict=True)):
        for h, (p, i) in enumerate(zip(prev, ind, strict=True)):
            print(f"L{layer}H{h:<4d} {p:10.3f} {i:10.3f}")
    print(f"ablation (baseline loss {r['loss']:.3f}, repeated half {rep:.3f}):")
    print(f"{'head':6s} {'mode':5s} {'loss':>8s} {'delta':>8s} {'repeated':>9s} {'delta':>8s}")
    for a in r["ablation"]:
        print(f"L{a['layer']}H{a['head']:<4d} {a['mode']:5s} {a['loss']:8.3f} {a['delta']:+8.3f} "
              f"{a['repeated_loss']:9.3f} {a['repeated_delta']:+8.3f}")  # fmt: skip
    print(_head_verdict(r["criterion"]))


def cmd_induction(args: argparse.Namespace) -> int:
    from attnsim.engine.induction import Config

    cfg = Config(n_layers=args.layers, n_heads=args.heads)
    runs = [_induction_run(cfg, s, args.steps) for s in range(args.seed, args.seed + args.seeds)]
    where = [f"L{c['layer']}H{c['head']}" for c in (r["criterion"] for r in runs) if c["met"]]
    if args.json:
        summary = {"formed": len(where), "seeds": len(runs), "where": where}
        print(json.dumps({"config": vars(cfg), "runs": runs, **summary}, indent=1))
        return 0
    print(f"model {cfg.n_layers} layers x {cfg.n_heads} heads, d_model {cfg.d_model}, "
          f"d_head {cfg.d_head}, vocabulary {cfg.d_vocab}")  # fmt: skip
    if len(runs) == 1:
        _print_induction_run(runs[0])
        return 0
    for r in runs:
        first, rep = r["loss_first_half"], r["loss_repeated_half"]
        print(f"seed {r['seed']}: loss first half {first:.3f}, repeated {rep:.3f}; "
              f"{_head_verdict(r['criterion'])}")  # fmt: skip
    places = ", ".join(f"{w} x{where.count(w)}" for w in sorted(set(where)))
    print(f"an induction head formed in {len(where)} of {len(runs)} seeds"
          + (f": {places}" if places else ""))  # fmt: skip
    return 0
