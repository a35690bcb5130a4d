"""``attnsim model compare|patch|lens|flow``: two texts side by side, activation patching, the
logit lens and attention rollout on the pretrained models (issue 27).

Layers, heads and positions count from 0, as in ``attnsim model heads``. A bad input (an empty
text, a token not in the text, texts of different token lengths for patching, a next token
that is not one token) ends in one line and exit status 2 through
:func:`attnsim.cli.entry.main`.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

__all__ = ["TOOLS", "add_tool_parsers", "cmd_tool"]

MODELS = ("smollm2", "minilm")
MAX_TOKENS = 512
TOP = 5  # heads listed, and the "top five" total of the patching


class ToolUsageError(ValueError):
    """A bad argument of a model tool: main prints it as one line and exits 2."""


def add_tool_parsers(what: Any) -> None:
    """Add ``compare``, ``patch``, ``lens`` and ``flow`` to the ``model`` sub-commands."""
    c = what.add_parser("compare", help="a token's residual stream and attention in two texts")
    c.add_argument("--model", required=True, choices=MODELS)
    c.add_argument("--a", required=True, metavar="TEXT", help="the first text")
    c.add_argument("--b", required=True, metavar="TEXT", help="the second text")
    c.add_argument(
        "--token",
        required=True,
        help="a word in both texts, e.g. bank (its last occurrence in each)",
    )
    c.add_argument("--json", action="store_true")
    p = what.add_parser("patch", help="activation patching from a clean into a corrupted text")
    p.add_argument("--model", default="smollm2", choices=MODELS)
    p.add_argument("--clean", required=True, metavar="TEXT")
    p.add_argument("--corrupted", required=True, metavar="TEXT", help="as many tokens as --clean")
    p.add_argument(
        "--metric",
        metavar='" Mary"," John"',
        help="smollm2: two next tokens; the metric is their logit difference",
    )
    p.add_argument("--token", help="minilm: the token whose final hidden state is compared")
    p.add_argument(
        "--what",
        choices=("heads", "resid", "both"),
        default="both",
        help="patch each head's output, each layer's stream at each position, or both",
    )
    p.add_argument("--json", action="store_true")
    ln = what.add_parser("lens", help="the logit lens of smollm2: each layer's next tokens")
    ln.add_argument("--model", default="smollm2", choices=("smollm2",))
    ln.add_argument("--text", required=True)
    ln.add_argument("--token", help="a next token to follow (default: the model's prediction)")
    ln.add_argument("--k", type=int, default=5, help="top tokens per layer and position")
    ln.add_argument("--json", action="store_true")
    f = what.add_parser("flow", help="attention rollout from a token back to the input")
    f.add_argument("--model", required=True, choices=MODELS)
    f.add_argument("--text", required=True)
    f.add_argument("--token", required=True, help="a word of the text")
    f.add_argument("--json", action="store_true")


# ---- shared -------------------------------------------------------------------------------------
def _load(model: str) -> Any:
    from attnsim.engine.models import load_minilm, load_smollm2

    return load_smollm2() if model == "smollm2" else load_minilm()


def _run(model: str, m: Any, text: str, flag: str, prog: str) -> tuple[Any, list[str]]:
    """The forward trace of ``text`` and its token pieces."""
    if not text.strip():
        raise ToolUsageError(f"{prog}: {flag} is empty: give a text for the model to read")
    if model == "smollm2":
        ids = m.encode(text)
        pieces = m.pieces(ids)
    else:
        raw, pieces = m.encode(text)
        ids = np.asarray(raw, dtype=np.int64)
    if len(ids) > MAX_TOKENS:
        raise ToolUsageError(f"{prog}: {flag} is {len(ids)} tokens; the limit is {MAX_TOKENS}")
    return m.forward(ids), list(pieces)


def _position(pieces: list[str], token: str, flag: str, prog: str) -> int:
    from attnsim.engine.models.compare import find_token

    try:
        return find_token(pieces, token)
    except ValueError as exc:
        raise ToolUsageError(f"{prog}: {flag}: {exc}") from None


def _show(value: Any, nd: int = 4) -> Any:
    """Floats rounded for JSON."""
    return np.round(np.asarray(value, dtype=np.float64), nd).tolist()


def _emit(d: dict[str, Any], as_json: bool, printer) -> int:
    if as_json:
        print(json.dumps(d, indent=1))
    else:
        printer(d)
    return 0


# ---- compare ------------------------------------------------------------------------------------
def _cmd_compare(args: argparse.Namespace) -> int:
    from attnsim.engine.models.compare import compare_traces

    prog = "attnsim model compare"
    m = _load(args.model)
    ta, pa = _run(args.model, m, args.a, "--a", prog)
    tb, pb = _run(args.model, m, args.b, "--b", prog)
    _position(pa, args.token, "--a", prog)
    _position(pb, args.token, "--b", prog)
    c = compare_traces(ta, pa, tb, pb, args.token)
    # over the keys both texts have (the first token, SmolLM2's attention sink, often differs)
    shared = np.array([ia is not None and ib is not None for _, ia, ib in c.columns])
    diff = np.abs(c.attention_a - c.attention_b)[..., shared].sum(axis=-1)  # (layers, heads)
    order = np.argsort(-diff, axis=None, kind="stable")[:TOP]
    heads = m.config.n_heads
    d = {
        "model": args.model,
        "token": args.token,
        "tokens_a": pa,
        "tokens_b": pb,
        "position_a": c.position_a,
        "position_b": c.position_b,
        "layers": [
            {"layer": la, "cosine": float(c.cosine[la]), "distance": float(c.distance[la])}
            for la in range(len(c.cosine))
        ],
        "columns": [{"piece": p, "a": ia, "b": ib} for p, ia, ib in c.columns],
        "attention_a": _show(c.attention_a),
        "attention_b": _show(c.attention_b),
        "most_different_heads": [
            {"layer": int(i // heads), "head": int(i % heads), "l1": float(diff.flat[i])}
            for i in order
        ],
    }
    return _emit(d, args.json, _print_compare)


def _print_compare(d: dict[str, Any]) -> None:
    ta, tb = d["tokens_a"][d["position_a"]], d["tokens_b"][d["position_b"]]
    print(f"{d['model']}: token {ta!r} at position {d['position_a']} of A and {tb!r} at "
          f"position {d['position_b']} of B")  # fmt: skip
    print(f"{'stream':18s} {'cosine':>8s} {'distance':>10s}")
    for row in d["layers"]:
        la = row["layer"]
        name = "embedding" if la == 0 else f"after layer {la - 1}"
        print(f"{name:18s} {row['cosine']:8.4f} {row['distance']:10.3f}")
    heads = ", ".join(f"L{h['layer']}H{h['head']} {h['l1']:.2f}" for h in d["most_different_heads"])
    print(f"heads whose attention of the token to the tokens both texts share differs most "
          f"(sum of |A - B|): {heads}")  # fmt: skip


# ---- patch --------------------------------------------------------------------------------------
def _metric(args: argparse.Namespace, m: Any, clean: Any, pieces: list[str], prog: str):
    from attnsim.engine.models.interventions import hidden_cosine, logit_difference, single_token

    if args.model == "smollm2":
        if args.metric is None or args.token is not None:
            raise ToolUsageError(f'{prog}: smollm2 takes --metric " Mary"," John" (no --token)')
        parts = args.metric.split(",")
        if len(parts) != 2 or not all(p.strip() for p in parts):
            raise ToolUsageError(
                f'{prog}: --metric must name two next tokens, e.g. " Mary"," John", '
                f"got {args.metric!r}"
            )
        try:
            good, bad = (single_token(m, p) for p in parts)
        except ValueError as exc:
            raise ToolUsageError(f"{prog}: --metric: {exc}") from None
        return logit_difference(m, good, bad)
    if args.token is None or args.metric is not None:
        raise ToolUsageError(f"{prog}: minilm takes --token (its final hidden state; no --metric)")
    return hidden_cosine(clean.resid[-1], _position(pieces, args.token, "--token", prog))


def _cmd_patch(args: argparse.Namespace) -> int:
    from attnsim.engine.models.interventions import activation_patching

    prog = "attnsim model patch"
    m = _load(args.model)
    clean, pc = _run(args.model, m, args.clean, "--clean", prog)
    corrupt, pk = _run(args.model, m, args.corrupted, "--corrupted", prog)
    if len(pc) != len(pk):
        raise ToolUsageError(
            f"{prog}: --clean is {len(pc)} tokens and --corrupted {len(pk)}: patching needs "
            "texts of the same token length"
        )
    metric = _metric(args, m, clean, pc, prog)
    try:
        r = activation_patching(m, clean, corrupt, metric, heads=args.what != "resid",
                                resid=args.what != "heads")  # fmt: skip
    except ValueError as exc:
        raise ToolUsageError(f"{prog}: {exc}") from None
    d: dict[str, Any] = {
        "model": args.model,
        "metric": r.label,
        "tokens_clean": pc,
        "tokens_corrupted": pk,
        "clean": r.clean,
        "corrupted": r.corrupted,
    }
    if r.heads is not None:
        frac = r.restored(r.heads)
        order = np.argsort(-frac, axis=None, kind="stable")[:TOP]
        heads = frac.shape[1]
        d["heads_restored"] = _show(frac)
        d["top_heads"] = [{"layer": int(i // heads), "head": int(i % heads),
                           "restored": float(frac.flat[i])} for i in order]  # fmt: skip
        d["top_five_total"] = float(frac.flat[order].sum())
    if r.resid is not None:
        frac = r.restored(r.resid)
        d["resid_restored"] = _show(frac)
    return _emit(d, args.json, _print_patch)


def _print_patch(d: dict[str, Any]) -> None:
    print(f"{d['model']}: {d['metric']}: clean {d['clean']:.3f}, corrupted {d['corrupted']:.3f}")
    if "top_heads" in d:
        print("heads whose output restores the most of the gap:")
        for h in d["top_heads"]:
            print(f"  L{h['layer']}H{h['head']}  {h['restored']:+.3f}")
        print(f"total restored by the top {len(d['top_heads'])}: {d['top_five_total']:+.3f}")
    if "resid_restored" in d:
        frac = np.asarray(d["resid_restored"])
        labels = [f"{i} {t!r}" for i, t in enumerate(d["tokens_clean"])]
        print("fraction restored by the stream entering each layer at each position:")
        print(f"{'position':22s} " + " ".join(f"{la:>5d}" for la in range(frac.shape[0])))
        for p, label in enumerate(labels):
            print(f"{label[:22]:22s} " + " ".join(f"{v:5.2f}" for v in frac[:, p]))


# ---- lens ---------------------------------------------------------------------------------------
def _cmd_lens(args: argparse.Namespace) -> int:
    from attnsim.engine.models.interventions import single_token
    from attnsim.engine.models.lens import logit_lens

    prog = "attnsim model lens"
    if not 1 <= args.k <= 50:
        raise ToolUsageError(f"{prog}: --k must lie in [1, 50], got {args.k}")
    m = _load("smollm2")
    trace, pieces = _run("smollm2", m, args.text, "--text", prog)
    if args.token is None:
        token = int(np.argmax(trace.logits[-1]))
    else:
        try:
            token = single_token(m, args.token)
        except ValueError as exc:
            raise ToolUsageError(f"{prog}: --token: {exc}") from None
    lens = logit_lens(m, trace, args.k, token)
    d = {
        "model": "smollm2",
        "tokens": pieces,
        "token": m.pieces([token])[0],
        "token_id": token,
        "top_tokens": [[m.pieces(row) for row in layer] for layer in lens.top_ids],
        "top_probs": _show(lens.top_probs),
        "token_probs": _show(lens.token_probs, 6),
    }
    return _emit(d, args.json, _print_lens)


def _print_lens(d: dict[str, Any]) -> None:
    print(f"smollm2 logit lens at the last token {d['tokens'][-1]!r} (predicting the next), "
          f"following {d['token']!r}")  # fmt: skip
    chosen = f"p({d['token']!r})"
    print(f"{'after layer':>11s}  {'top token':18s} {'prob':>6s}  {chosen:>12s}")
    for la, (tops, probs) in enumerate(zip(d["top_tokens"], d["top_probs"], strict=True)):
        p_tok = d["token_probs"][la][-1]
        print(f"{la:11d}  {tops[-1][0]!r:18s} {probs[-1][0]:6.3f}  {p_tok:12.4f}")


# ---- flow ---------------------------------------------------------------------------------------
def _cmd_flow(args: argparse.Namespace) -> int:
    from attnsim.engine.models.flow import attention_flow

    prog = "attnsim model flow"
    m = _load(args.model)
    trace, pieces = _run(args.model, m, args.text, "--text", prog)
    pos = _position(pieces, args.token, "--token", prog)
    f = attention_flow(trace, pos)
    d = {
        "model": args.model,
        "tokens": pieces,
        "position": pos,
        "rollout": _show(f.rollout, 5),
        "rollout_per_layer": _show(f.per_layer, 5),
        "last_layer_weights": _show(f.last_weights, 5),
    }
    return _emit(d, args.json, _print_flow)


def _print_flow(d: dict[str, Any]) -> None:
    print(f"{d['model']}: attention rollout of {d['tokens'][d['position']]!r} (position "
          f"{d['position']}) over the input, beside the last layer's mean weights")  # fmt: skip
    print(f"{'input token':24s} {'rollout':>8s} {'last layer':>10s}")
    for i, t in enumerate(d["tokens"]):
        print(f"{f'{i} {t!r}'[:24]:24s} {d['rollout'][i]:8.4f} {d['last_layer_weights'][i]:10.4f}")


TOOLS = {"compare": _cmd_compare, "patch": _cmd_patch, "lens": _cmd_lens, "flow": _cmd_flow}


def cmd_tool(args: argparse.Namespace) -> int:
    """Run one of ``attnsim model compare|patch|lens|flow``."""
    return TOOLS[args.model_command](args)
