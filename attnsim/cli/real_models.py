"""``attnsim model heads|probe`` and ``attnsim export --model``: the pretrained models (SmolLM2,
MiniLM) from the command line (``model compare|patch|lens|flow`` are in :mod:`.model_tools`).

Layers and heads count from 0 here, as the engine and the probe's ``L18H6`` labels do. Every
bad argument, and a model whose files are not installed, ends in one line and exit status 2
(through :func:`attnsim.cli.entry.main`, which prints any ValueError or OSError that way).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .model_tools import TOOLS, add_tool_parsers, cmd_tool

if TYPE_CHECKING:
    import numpy as np

__all__ = ["MAX_TOKENS", "add_model_parser", "cmd_model", "with_model_export"]

MODELS = ("smollm2", "minilm")
MAX_TOKENS = 512  # the panel's limit too; MiniLM's position table stops there as well
TOP = 4  # heads zeroed in the probe's ablation table (the "top 4")


class ModelUsageError(ValueError):
    """A bad argument of a model command: main prints it as one line and exits 2."""


def add_model_parser(sub, export: argparse.ArgumentParser) -> None:
    """Add ``model heads|probe|compare|patch|lens|flow``, and give ``export`` its model
    options."""
    m = sub.add_parser("model", help="head metrics, patching, the logit lens and attention flow")
    what = m.add_subparsers(
        dest="model_command",
        required=True,
        metavar="heads|probe|compare|patch|lens|flow",
        parser_class=type(m),
    )
    h = what.add_parser("heads", help="every head's metrics on a text; one head's weights")
    h.add_argument("--model", required=True, choices=MODELS)
    h.add_argument("--text", required=True, help=f"up to {MAX_TOKENS} tokens")
    h.add_argument("--layer", type=int, metavar="L", help="with --head: print this head's weights")
    h.add_argument("--head", type=int, metavar="H", help="counting from 0, like --layer")
    h.add_argument("--json", action="store_true")
    p = what.add_parser("probe", help="induction and previous-token scores, the ablation table")
    p.add_argument("--model", default="smollm2", choices=("smollm2",))
    p.add_argument("--seed", type=int, default=0, help="seed of the random token sequences")
    p.add_argument("--half", type=int, default=20, help="random tokens before the repeat")
    p.add_argument("--batch", type=int, default=4, help="sequences averaged over")
    p.add_argument("--json", action="store_true")
    add_tool_parsers(what)
    export.add_argument("--model", choices=MODELS, help="export one head of a model")
    export.add_argument("--text", help="with --model: the text the head reads")
    export.add_argument("--layer", type=int, metavar="L", help="with --model: layer from 0")


# ---- loading and checking ---------------------------------------------------------------------
def _load(model: str):
    from attnsim.engine.models import load_minilm, load_smollm2

    return load_smollm2() if model == "smollm2" else load_minilm()


def _encode(model: str, m: Any, text: str, prog: str) -> tuple[np.ndarray, list[str]]:
    import numpy as np

    if model == "smollm2":
        ids = m.encode(text)
        pieces = m.pieces(ids)
        own = len(ids)
    else:
        raw, pieces = m.encode(text)
        ids = np.asarray(raw, dtype=np.int64)
        own = len(ids) - 2  # MiniLM wraps every text in [CLS] ... [SEP]
    if len(ids) > MAX_TOKENS:
        raise ModelUsageError(f"{prog}: --text is {len(ids)} tokens; the limit is {MAX_TOKENS}")
    if len(ids) < 2 or own < 1:  # the metrics average over the queries after the first
        raise ModelUsageError(f"{prog}: --text must be at least 2 tokens, got {max(own, 0)}")
    return ids, pieces


def _sizes(m: Any) -> tuple[int, int]:
    return m.config.n_layers, m.config.n_heads


def _check_head(m: Any, model: str, layer: int | None, head: int | None, prog: str) -> None:
    if (layer is None) != (head is None):
        raise ModelUsageError(f"{prog}: give --layer and --head together")
    if layer is None:
        return
    n_layers, n_heads = _sizes(m)
    if not 0 <= layer < n_layers:
        raise ModelUsageError(
            f"{prog}: --layer {layer} is out of range: {model} has {n_layers} layers "
            f"(0 to {n_layers - 1})"
        )
    if not 0 <= head < n_heads:
        raise ModelUsageError(
            f"{prog}: --head {head} is out of range: {model} has {n_heads} heads per layer "
            f"(0 to {n_heads - 1})"
        )


def _head_trace(model: str, text: str, layer: int | None, head: int | None, prog: str):
    """The loaded model, its trace over ``text``, the token ids and pieces."""
    m = _load(model)
    _check_head(m, model, layer, head, prog)
    ids, pieces = _encode(model, m, text, prog)
    return m, m.forward(ids), ids, pieces


# ---- model heads --------------------------------------------------------------------------------
def _heads_dict(model: str, m: Any, trace: Any, ids, pieces, layer, head) -> dict[str, Any]:
    from attnsim.engine.models import head_metrics
    from attnsim.engine.models.scores import text_induction

    met = head_metrics(trace.weights)
    induct = text_induction(trace.weights, ids)
    n_layers, n_heads = _sizes(m)
    out: dict[str, Any] = {
        "model": model,
        "layers": n_layers,
        "heads_per_layer": n_heads,
        "causal": model == "smollm2",
        "ids": [int(i) for i in ids],
        "tokens": pieces,
        "group": [int(g) for g in trace.group],
        # positions whose token occurred earlier: 0 leaves every head's induction score null
        "repeated_positions": induct.count,
        "heads": [
            {
                "layer": la,
                "head": he,
                "previous_token": float(met.previous_token[la, he]),
                "first_token": float(met.first_token[la, he]),
                "entropy_bits": float(met.entropy[la, he]),
                "induction": float(induct.score[la, he]) if induct.defined else None,
            }
            for la in range(n_layers)
            for he in range(n_heads)
        ],
    }
    if layer is not None:
        row = out["heads"][layer * n_heads + head]
        out["selected"] = {**row, "weights": trace.weights[layer, head].astype(float).tolist()}
    return out


def _print_heads(d: dict[str, Any]) -> None:
    n = len(d["tokens"])
    kind = "causal" if d["causal"] else "bidirectional"
    print(f"{d['model']} ({kind}): {d['layers']} layers x {d['heads_per_layer']} heads, "
          f"{n} tokens: {' | '.join(repr(t) for t in d['tokens'])}")  # fmt: skip
    sel = d.get("selected")
    rows = [sel] if sel else d["heads"]
    print(f"{'head':8s} {'prev-token':>10s} {'first-token':>11s} {'entropy bits':>12s} "
          f"{'induction':>9s}")  # fmt: skip
    for r in rows:
        name = f"L{r['layer']}H{r['head']}"
        ind = "-" if r["induction"] is None else f"{r['induction']:.3f}"
        print(f"{name:8s} {r['previous_token']:10.3f} {r['first_token']:11.3f} "
              f"{r['entropy_bits']:12.3f} {ind:>9s}")  # fmt: skip
    if not sel:
        keys = [("previous_token", "previous-token"), ("first_token", "first-token")]
        if d["repeated_positions"]:
            keys.append(("induction", "induction"))
        for key, label in keys:
            best = max(d["heads"], key=lambda r, k=key: r[k])
            print(f"most {label}: L{best['layer']}H{best['head']} ({best[key]:.3f})")
        if not d["repeated_positions"]:
            print("induction: no token repeats in the text, so no head has an induction score")
        return
    print(f"weights of L{sel['layer']}H{sel['head']} (row: query, column: key):")
    labels = [f"{i} {t!r}" for i, t in enumerate(d["tokens"])]
    width = max(len(s) for s in labels)
    print(" " * width + " " + " ".join(f"{j:>5d}" for j in range(n)))
    for label, row in zip(labels, sel["weights"], strict=True):
        print(f"{label:{width}s} " + " ".join(f"{w:5.3f}" for w in row))


def _cmd_heads(args: argparse.Namespace) -> int:
    prog = "attnsim model heads"
    m, trace, ids, pieces = _head_trace(args.model, args.text, args.layer, args.head, prog)
    d = _heads_dict(args.model, m, trace, ids, pieces, args.layer, args.head)
    if args.json:
        print(json.dumps(d, indent=1))
    else:
        _print_heads(d)
    return 0


# ---- model probe --------------------------------------------------------------------------------
ABLATION_NAMES = {"none": "none", "top": f"top-{TOP} induction", "random": f"{TOP} random"}


def probe(seed: int = 0, half: int = 20, batch: int = 4) -> dict[str, Any]:
    """The induction probe of SmolLM2 (:func:`attnsim.engine.models.induction_probe`, the one
    the Real model panel runs) on ``batch`` sequences of ``half`` random tokens repeated twice:
    mean previous-token and induction scores per head, and the repeated-half loss with the
    top-4 induction heads zeroed against 4 random other heads zeroed."""
    from attnsim.engine.models import induction_probe, load_smollm2

    r = induction_probe(load_smollm2(), seed=seed, half=half, batch=batch, top=TOP)
    induct = r.induction
    rows = [{"ablation": ABLATION_NAMES[a.kind], "heads": [list(h) for h in a.heads],
             "repeated_loss": a.repeated_loss, "delta": a.repeated_loss - r.base_loss}
            for a in r.ablations]  # fmt: skip
    return {
        "model": "smollm2",
        "seed": r.seed,
        "half_len": r.half,
        "batch": r.batch,
        "previous_token": r.previous_token.astype(float).tolist(),
        "induction": induct.astype(float).tolist(),
        "top_induction": [
            {"layer": la, "head": he, "induction": float(induct[la, he])}
            for la, he in r.ablations[1].heads
        ],
        "ablation": rows,
    }


def _print_probe(r: dict[str, Any]) -> None:
    import numpy as np

    print(f"smollm2 induction probe: {r['batch']} sequences of {r['half_len']} random tokens "
          f"repeated twice, seed {r['seed']}")  # fmt: skip
    prev, induct = np.array(r["previous_token"]), np.array(r["induction"])
    print(f"{'head':8s} {'prev-token':>10s} {'induction':>10s}")
    for la in range(prev.shape[0]):
        for he in range(prev.shape[1]):
            print(f"{f'L{la}H{he}':8s} {prev[la, he]:10.3f} {induct[la, he]:10.3f}")
    tops = ", ".join(f"L{t['layer']}H{t['head']} {t['induction']:.2f}" for t in r["top_induction"])
    print(f"top induction heads: {tops}")
    print(f"{'ablation (zeroed)':18s} {'repeated-half loss':>18s} {'delta':>8s}  heads")
    for a in r["ablation"]:
        heads = " ".join(f"L{la}H{he}" for la, he in a["heads"]) or "-"
        print(f"{a['ablation']:18s} {a['repeated_loss']:18.3f} {a['delta']:+8.3f}  {heads}")


def _cmd_probe(args: argparse.Namespace) -> int:
    prog = "attnsim model probe"
    if not 2 <= args.half <= MAX_TOKENS // 2:
        raise ModelUsageError(f"{prog}: --half must lie in [2, {MAX_TOKENS // 2}], got {args.half}")
    if not 1 <= args.batch <= 64:
        raise ModelUsageError(f"{prog}: --batch must lie in [1, 64], got {args.batch}")
    if args.seed < 0:
        raise ModelUsageError(f"{prog}: --seed must be 0 or more, got {args.seed}")
    r = probe(args.seed, args.half, args.batch)
    if args.json:
        print(json.dumps(r, indent=1))
    else:
        _print_probe(r)
    return 0


def cmd_model(args: argparse.Namespace) -> int:
    """Run ``attnsim model heads|probe|compare|patch|lens|flow``."""
    if args.model_command in TOOLS:
        return cmd_tool(args)
    return _cmd_heads(args) if args.model_command == "heads" else _cmd_probe(args)


# ---- export --model -----------------------------------------------------------------------------
def _export_files(args: argparse.Namespace, prog: str) -> list[tuple[Path, str]]:
    """(path, format) of each file: ``--out`` as given when its suffix names the format."""
    from attnsim.export.registry import exporter, exporters, names

    out: Path = args.out
    by_suffix = {e.suffix: e.name for e in exporters()}
    own = by_suffix.get(out.suffix.lower())
    formats = tuple(args.format)
    if own is not None:
        if formats == names():  # the default: the file's own suffix decides
            return [(out, own)]
        if formats != (own,):
            raise ModelUsageError(
                f"{prog}: --out {out} is a {out.suffix.lower()} file but --format asks for "
                f"{','.join(formats)}"
            )
        return [(out, own)]
    return [(out.with_name(f"{out.name}{exporter(f).suffix}"), f) for f in formats]


def _check_export(args: argparse.Namespace, prog: str) -> None:
    if args.model is None:
        raise ModelUsageError(f"{prog}: --text and --layer go with --model")
    if args.scenario is not None:
        raise ModelUsageError(f"{prog}: give --scenario or --model, not both")
    scenario_only = {"--panels": args.panels, "--mask": args.mask, "--receiving": args.receiving,
                     "--temperature": args.temperature}  # fmt: skip
    for flag, value in scenario_only.items():
        if value is not None:
            raise ModelUsageError(f"{prog}: {flag} is for a scenario, not with --model")
    missing = [f for f, v in (("--text", args.text), ("--layer", args.layer),
                              ("--head", args.head)) if v is None]  # fmt: skip
    if missing:
        raise ModelUsageError(f"{prog}: --model needs {', '.join(missing)}")


def head_canvas(model: str, pieces: list[str], weights: np.ndarray, layer: int, head: int,
                kv_head: int | None = None):  # fmt: skip
    """A :class:`~attnsim.panels.real_model.token_map.TokenMap` of one head's weights with the
    whole token pieces (and their positions) as labels, sized so that every cell shows (4 to
    40 px a side) and every label is whole."""
    from attnsim.panels.real_model.token_map import TokenMap

    n = len(pieces)
    causal = model == "smollm2"
    cell = max(4.0, min(40.0, 900.0 / n))
    canvas = TokenMap(max_cell=cell, min_cell=cell)
    kv = f" (key/value head {kv_head})" if kv_head is not None else ""
    canvas.set_map(
        weights, pieces, causal=causal,
        title=f"{model} layer {layer} head {head}{kv}: attention weights, "
              f"{'causal' if causal else 'bidirectional'}, {n} tokens",
    )  # fmt: skip
    # room for the labels (their whole width), the title line and the colour bar
    label = max(canvas.label_widths(), default=0.0) + 6
    canvas.resize(int(max(n * cell + label + 80, 500)), int(n * cell + label + 40))
    return canvas


def _cmd_export_model(args: argparse.Namespace) -> int:
    prog = "attnsim export"
    _check_export(args, prog)
    files = _export_files(args, prog)
    _, trace, _, pieces = _head_trace(args.model, args.text, args.layer, args.head, prog)
    from .headless import headless

    headless()
    from attnsim.app import create_app
    from attnsim.export import export_widget

    create_app()
    kv = int(trace.group[args.head]) if args.model == "smollm2" else None
    canvas = head_canvas(args.model, list(pieces), trace.weights[args.layer, args.head],
                         args.layer, args.head, kv)  # fmt: skip
    title = f"{args.model} L{args.layer}H{args.head}"
    for path, fmt in files:
        path.parent.mkdir(parents=True, exist_ok=True)
        print(export_widget(canvas, path, fmt, scale=args.scale, title=title))
    return 0


def with_model_export(cmd_export):
    """``cmd_export`` that hands ``--model`` exports to this module and asks for one of
    ``--scenario`` and ``--model`` (neither is required alone)."""

    def run(args: argparse.Namespace) -> int:
        if args.model is not None or args.text is not None or args.layer is not None:
            return _cmd_export_model(args)
        if args.scenario is None:
            raise ModelUsageError(
                "attnsim export: give --scenario NAME|PATH, or --model with --text, --layer "
                "and --head"
            )
        return cmd_export(args)

    return run
