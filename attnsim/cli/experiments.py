"""The commands that print the engine's numbers: ``scenarios`` (the presets), ``audit`` (attention's
invariants on a scenario), ``train`` (a tiny classifier) and ``experiment`` (entropy, fields)."""

from __future__ import annotations

import argparse
import json

from .options import UsageError, load_scenario

__all__ = ["cmd_audit", "cmd_experiment", "cmd_scenarios", "cmd_train"]


def cmd_scenarios(_: argparse.Namespace) -> int:
    from attnsim.resources import preset_titles

    for name, title in preset_titles().items():
        print(f"{name}\t{title}")
    return 0


def cmd_audit(args: argparse.Namespace) -> int:
    from attnsim.engine.audit import audit_summary, run_audit

    sc = load_scenario(args.scenario)
    checks = run_audit(sc)
    failed = [c for c in checks if not c.passed]
    if args.json:
        print(json.dumps({"scenario": sc.name, "passed": not failed,
                          "checks": [c.to_dict() for c in checks]}, indent=1))  # fmt: skip
    else:
        for c in checks:
            verdict = "SKIP" if c.skipped else "PASS" if c.passed else "FAIL"
            print(f"{verdict}  {c.name:34s} {c.detail}")
        passed, run, skipped = audit_summary(checks)
        tail = f", {skipped} skipped" if skipped else ""
        print(f"{passed} of {run} checks pass on {sc.name}{tail}")
    return 1 if failed else 0


def cmd_train(args: argparse.Namespace) -> int:
    from attnsim.engine.experiments import train_model

    if args.epochs < 0:
        raise UsageError(f"attnsim train: --epochs must be 0 or more, got {args.epochs}")
    r = train_model(args.model, args.epochs, seed=args.seed)
    if args.json:
        r = {k: v for k, v in r.items() if k != "params"}
        print(json.dumps(r, indent=1))
        return 0
    print(
        f"model {r['model']} ({r['optimizer']}, lr {r['lr']}), seed {r['seed']}, "
        f"{r['epochs']} epochs"
    )
    print(f"final mean loss {r['final_loss']:.6f}")
    for s in r["sentences"]:
        ok = "✓" if s["correct"] else "✗"
        row = ", ".join(f"{t} {w:.2f}" for t, w in s["attention"])
        sentence = " ".join(s["tokens"])
        print(
            f"{ok} {sentence:24s} label {s['label']:8s} predicted {s['prediction']:8s} "
            f"attention of '{s['tokens'][-1]}': {row}"
        )
    return 0


def cmd_experiment(args: argparse.Namespace) -> int:
    from attnsim.engine.experiments import entropy_vs_dk, three_fields

    if args.name == "entropy":
        r = entropy_vs_dk(rng=args.rng)
        if args.json:
            print(json.dumps(r, indent=1))
            return 0
        print(
            f"attention entropy over {r['n_keys']} random keys, {r['trials']} trials, "
            f"seed {r['seed']} ({r['rng']} generator); maximum {r['max_entropy']:.2f} bits"
        )
        for d, raw, sc, sd in zip(
            r["d_k"], r["entropy_unscaled"], r["entropy_scaled"], r["score_sd"], strict=True
        ):
            print(f"d_k = {d:4d}: without scaling {raw:4.2f} bits, with 1/√d_k {sc:4.2f} bits; "
                  f"score SD {sd:6.2f} vs √d_k {d ** 0.5:6.2f}")  # fmt: skip
        return 0
    r = three_fields(rng=args.rng)
    if args.json:
        print(json.dumps({k: v for k, v in r.items() if k != "keys"}, indent=1))
        return 0
    for res in r["results"]:
        fields = ", ".join(f"{f} {w:.2f}" for f, w in res["per_field"].items())
        print(f"{res['query']:36s} weight by field: {fields} | entropy {res['entropy']:.2f} bits")
    return 0
