"""The scenario as code: the sections a Python script and a Jupyter notebook share.

Each :class:`Section` is a heading, a paragraph about attention and the code that computes it;
:mod:`.code_script` writes them as one script (the prose as comments), :mod:`.code_notebook` as
markdown and code cells. The code needs only NumPy (matplotlib, if installed, draws the
weights) and repeats the engine's arithmetic (:mod:`attnsim.engine.attention`,
``engine.scenario.compute``) step by step in its conventions: row vectors, ``Q = X Wq``, logits
``q · k / (sqrt(d_k) T)``, forbidden keys set to the mask value before the softmax, the heads'
outputs concatenated, projected by ``Wo`` and added to ``X``.

Every number of the scenario is written with ``repr`` (the shortest text that reads back as the
same float), so the script computes the app's numbers, not approximations of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from attnsim.engine.scenario import Scenario

__all__ = ["JSON_PREFIX", "NOT_IN_SCENARIO", "Section", "header_lines", "sections"]

# A custom mask with more keys than this is written one string of 0s and 1s per query.
WIDE_MASK = 32
# The final line of ``--json`` output starts with this word (the tests read it).
JSON_PREFIX = "JSON "

# What is never in a scenario, named at the top of every export.
NOT_IN_SCENARIO = (
    "the labs' own settings, which are not part of the scenario: the routing "
    "lab's synthetic dimension and distractor keys, the context lab's distractors, the induction "
    "lab's model and its training, the training stepper's model, and the real model's text and "
    "heads."
)


@dataclass(frozen=True)
class Section:
    """One step of the export: a heading, a paragraph, and its code."""

    title: str
    prose: str
    code: str
    script_code: str | None = None  # the script's version when it differs (the figure)

    def code_for(self, script: bool) -> str:
        return self.script_code if script and self.script_code is not None else self.code


# ---- numbers and labels written as Python -------------------------------------------------------
def _num(x: object) -> str:
    v = float(x)  # type: ignore[arg-type]
    if math.isinf(v):
        return "-np.inf" if v < 0 else "np.inf"
    return repr(v)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _labels(name: str, values: Sequence[str], comment: str) -> str:
    return f"{name} = {list(values)!r}  # {comment}"


def _matrix(name: str, M: np.ndarray, rows: Sequence[str], cols: Sequence[str], what: str) -> str:
    """``name = np.array([...])``, one row per line with its label, columns aligned."""
    A = np.asarray(M, dtype=float)
    cells = [[_num(v) for v in row] for row in A]
    widths = [max(len(r[j]) for r in cells) for j in range(A.shape[1])]
    lines = [f"# {what}", f"# columns: {_one_line(', '.join(cols))}", f"{name} = np.array(["]
    for r, label in zip(cells, rows, strict=True):
        body = ", ".join(c.rjust(w) for c, w in zip(r, widths, strict=True))
        lines.append(f"    [{body}],  # {_one_line(label)}")
    lines.append("])")
    return "\n".join(lines)


def _mask(sc: Scenario) -> str:
    size = "(len(QUERY_LABELS), len(KEY_LABELS))"
    if sc.mask_kind == "none":
        return f"MASK = np.ones({size}, dtype=bool)  # no mask: every query may read every key"
    if sc.mask_kind == "causal":
        return (
            "# causal mask: query i may read keys 0 .. i (on and below the diagonal)\n"
            "MASK = np.tri(len(QUERY_LABELS), len(KEY_LABELS), dtype=bool)"
        )
    m = np.asarray(sc.mask_matrix(), dtype=bool)
    lines = ["# the scenario's own mask: 1 where a query may read a key"]
    if m.shape[1] <= WIDE_MASK:
        lines.append("MASK = np.array([")
        for row, label in zip(m, sc.query_labels, strict=True):
            cells = ", ".join("1" if v else "0" for v in row)
            lines.append(f"    [{cells}],  # {_one_line(label)}")
        lines.append("], dtype=bool)")
    else:  # one string of 0s and 1s per query: a third of the size
        lines.append("MASK = np.array([[c == '1' for c in row] for row in [")
        for row, label in zip(m, sc.query_labels, strict=True):
            lines.append(f"    {''.join('1' if v else '0' for v in row)!r},  # {_one_line(label)}")
        lines.append("]])")
    return "\n".join(lines)


def _mask_value(sc: Scenario) -> str:
    if math.isinf(sc.mask_value):
        return "MASK_VALUE = -np.inf  # forbidden keys get -inf before the softmax: no weight"
    return (
        f"MASK_VALUE = {_num(sc.mask_value)}  # forbidden keys get this logit instead of -inf: "
        "the classic mistake, they still receive weight"
    )


# ---- the sections -----------------------------------------------------------------------------
def header_lines(sc: Scenario, version: str, notes: Sequence[str] = ()) -> list[str]:
    """What the top of the export says: the scenario, the conventions, what is not exported."""
    lines = [sc.title or sc.name, ""]
    lines.append(f'The attnsim scenario "{sc.name}" as code, exported by attnsim {version}.')
    if sc.description:
        lines += ["", *sc.description.splitlines()]
    lines += [
        "",
        "It needs only NumPy; matplotlib, if installed, draws the attention weights. The "
        "conventions are the app's: one token per row (row vectors), queries Q = X Wq, keys "
        "K = X Wk, values V = X Wv, logits q · k divided by sqrt(d_k) (when scaled) and by the "
        "temperature, forbidden keys given the mask value before the softmax, and the heads' "
        "outputs concatenated, projected by Wo and added to X (the residual).",
        "",
        "Not exported: " + " ".join([NOT_IN_SCENARIO, *notes]),
    ]
    return lines


_SETUP = '''import json
import sys

import numpy as np

np.set_printoptions(precision=4, suppress=True, linewidth=120)
SHOWN = 12  # rows and columns printed of each matrix (--json prints every number)


def show(title, M, rows, cols):
    """Print the matrix M under a title, its rows and columns labelled."""
    M = np.atleast_2d(M)
    print(f"\\n{title}  ({M.shape[0]} x {M.shape[1]})")
    print(" " * 14 + "".join(f"{str(c)[:10]:>11}" for c in cols[:SHOWN]))
    for label, row in zip(rows[:SHOWN], M[:SHOWN, :SHOWN]):
        print(f"{str(label)[:13]:>13} " + "".join(f"{float(v):11.4f}" for v in row))
    if M.shape[0] > SHOWN or M.shape[1] > SHOWN:
        print(f"{'':14}(the first {SHOWN} rows and columns of {M.shape[0]} x {M.shape[1]})")'''

_MATHS = '''def softmax(z):
    """Softmax of each row: exp(z - the row's largest), divided by the row's sum."""
    z = z - z.max(axis=1, keepdims=True)  # subtracting the largest avoids overflow
    e = np.exp(z)  # a logit of -inf becomes exactly 0
    return e / e.sum(axis=1, keepdims=True)  # each row sums to 1


def entropy_bits(w):
    """Shannon entropy of each row of weights, in bits (0 log 0 = 0)."""
    logs = np.zeros_like(w)
    np.log2(w, out=logs, where=w > 0)  # log2 w where w > 0, and 0 where w = 0
    return -(w * logs).sum(axis=1)


def attend(Q, K, V):
    """Every stage of one head, from its queries Q, keys K and values V (one row each)."""
    d_k = Q.shape[1]
    scores = Q @ K.T  # scores[i, j] = q_i · k_j: how well query i matches key j
    divisor = (np.sqrt(d_k) if SCALE else 1.0) * TEMPERATURE  # sqrt(d_k) if scaled, times T
    logits = scores / divisor  # what the softmax sees, before the mask
    masked = np.where(MASK, logits, MASK_VALUE)  # forbidden keys get MASK_VALUE
    weights = softmax(masked)  # the attention weights: each query's row sums to 1
    output = weights @ V  # each query's output: its weighted mixture of the values
    return {
        "Q": Q, "K": K, "V": V, "scores": scores, "logits": logits, "mask": MASK,
        "masked_logits": masked, "weights": weights, "output": output,
        "entropy": entropy_bits(weights),  # how spread each query's attention is, in bits
    }


def report(name, r):
    """Print every stage of one head."""
    show(f"{name}: queries Q", r["Q"], QUERY_LABELS, QK_AXES)
    show(f"{name}: keys K", r["K"], KEY_LABELS, QK_AXES)
    show(f"{name}: values V", r["V"], KEY_LABELS, V_AXES)
    show(f"{name}: scores Q K^T", r["scores"], QUERY_LABELS, KEY_LABELS)
    show(f"{name}: logits (scores / divisor)", r["logits"], QUERY_LABELS, KEY_LABELS)
    show(f"{name}: mask (1 = may read)", r["mask"], QUERY_LABELS, KEY_LABELS)
    show(f"{name}: masked logits", r["masked_logits"], QUERY_LABELS, KEY_LABELS)
    show(f"{name}: attention weights", r["weights"], QUERY_LABELS, KEY_LABELS)
    show(f"{name}: outputs (weights V)", r["output"], QUERY_LABELS, V_AXES)
    show(f"{name}: entropy of each query's weights", r["entropy"][:, None], QUERY_LABELS, ["bits"])
    leaked = np.where(MASK, 0.0, r["weights"]).sum(axis=1)  # weight on keys the mask forbids
    if leaked.any():
        show(f"{name}: weight on forbidden keys", leaked[:, None], QUERY_LABELS, ["weight"])'''

_RECEIVING = """i = RECEIVING
print(f"\\nWhat {QUERY_LABELS[i]} (the receiving query) reads:")
for h, r in enumerate(HEAD_RESULTS):
    shares = ", ".join(f"{k} {w:.4f}" for k, w in zip(KEY_LABELS, r["weights"][i]))
    print(f"  head {h + 1}: {shares}; entropy {r['entropy'][i]:.4f} bits")"""

_FIGURE = """try:
    import matplotlib.pyplot as plt
except ImportError:  # matplotlib is optional: everything above needs only NumPy
    plt = None
    print("matplotlib is not installed, so there is no figure (pip install matplotlib)")
if plt is not None:
    fig, axes = plt.subplots(
        1, len(HEAD_RESULTS), figsize=(4.5 * len(HEAD_RESULTS), 4), squeeze=False
    )
    for h, (ax, r) in enumerate(zip(axes[0], HEAD_RESULTS)):
        image = ax.imshow(r["weights"], cmap="viridis", vmin=0.0, vmax=1.0)  # a row per query
        ax.set_title(f"Head {h + 1}: attention weights")
        if len(KEY_LABELS) <= 40:
            ax.set_xticks(range(len(KEY_LABELS)), KEY_LABELS, rotation=90)
            ax.set_yticks(range(len(QUERY_LABELS)), QUERY_LABELS)
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        fig.colorbar(image, ax=ax, label="weight")
    fig.tight_layout()"""

_JSON = """def as_lists(a):
    return np.asarray(a, dtype=float).tolist()


if "--json" in sys.argv:  # every number on one line, to check against attnsim
    everything = {"heads": [{k: as_lists(v) for k, v in r.items()} for r in HEAD_RESULTS]}
    if BLOCK is not None:
        everything.update({k: as_lists(v) for k, v in BLOCK.items()})
    print("JSON " + json.dumps(everything))"""


def _data(sc: Scenario) -> str:
    parts = [
        _labels("KEY_LABELS", sc.tokens, "the tokens, one key (and value) each"),
        _labels("QUERY_LABELS", sc.query_labels, "one query each"),
        _labels("QK_AXES", sc.qk_axes, "the coordinates of queries and keys"),
        _labels("V_AXES", sc.v_axes, "the coordinates of values"),
    ]
    if sc.mode == "tokens":
        assert sc.X is not None
        parts.insert(3, _labels("AXES", sc.axes, "the coordinates of the token vectors"))
        parts.append(_matrix("X", sc.X, sc.tokens, sc.axes, "the sentence: one token per row"))
        parts.append("HEADS = []  # each head's projections: Q = X @ Wq, K = X @ Wk, V = X @ Wv")
        for h, head in enumerate(sc.heads):
            parts.append(f"\n# head {h + 1}" + (f": {_one_line(head.name)}" if head.name else ""))
            for m, cols in (("Wq", sc.qk_axes), ("Wk", sc.qk_axes), ("Wv", sc.v_axes)):
                what = f"{m}: row i says what input axis i adds to each output coordinate"
                parts.append(_matrix(m, getattr(head, m), sc.axes, cols, what))
            parts.append(f'HEADS.append({{"name": {head.name!r}, "Wq": Wq, "Wk": Wk, "Wv": Wv}})')
        parts.append("")
        parts.append(_wo(sc))
    else:
        for m, rows, cols, what in (
            ("Q", sc.query_labels, sc.qk_axes, "the queries, given directly (one row each)"),
            ("K", sc.tokens, sc.qk_axes, "the keys, given directly"),
            ("V", sc.tokens, sc.v_axes, "the values, given directly"),
        ):
            parts.append(_matrix(m, getattr(sc, m), rows, cols, what))
    parts += [
        "",
        f"TEMPERATURE = {_num(sc.temperature)}  # logits are divided by it: low is sharp",
        f"SCALE = {sc.scale!r}  # divide q · k by sqrt(d_k) before the temperature",
        _mask(sc),
        _mask_value(sc),
        f"RECEIVING = {sc.receiving}  # the query the app follows: "
        + _one_line(sc.query_labels[sc.receiving]),
    ]
    return "\n".join(parts)


def _wo(sc: Scenario) -> str:
    if sc.Wo is not None:
        cols = [f"{_one_line(h.name) or f'head {i + 1}'}: {a}" for i, h in enumerate(sc.heads)
                for a in sc.v_axes]  # fmt: skip
        return _matrix("WO", sc.Wo, cols, sc.axes, "Wo: the output projection, (h d_v) x d")
    if len(sc.heads) * sc.d_v == sc.d:
        return "WO = np.eye(X.shape[1])  # no Wo: the concatenated heads are added back as they are"
    return "WO = None  # no Wo, and the values' width differs from X's: there is no residual"


def _extras(sc: Scenario) -> Section | None:
    if sc.mode != "tokens" or not (sc.wq_presets or sc.absent):
        return None
    parts = []
    if sc.wq_presets:
        parts.append("WQ_PRESETS = {}  # other query maps the app offers for head 1")
        for name, W in sc.wq_presets.items():
            parts.append(_matrix("W", W, sc.axes, sc.qk_axes, f"the query map {_one_line(name)}"))
            parts.append(f"WQ_PRESETS[{name!r}] = W")
    if sc.absent:
        parts.append("ABSENT = {}  # tokens the app can swap into the sentence")
        for tok, v in sc.absent.items():
            row = ", ".join(_num(x) for x in v)
            parts.append(f"ABSENT[{tok!r}] = np.array([{row}])  # {_one_line(', '.join(sc.axes))}")
    return Section(
        "Other numbers the scenario carries",
        "The scenario also holds alternatives the app lets you swap in. They are written out "
        "so that the export keeps the whole scenario, but nothing below uses them.",
        "\n".join(parts),
    )


def _heads(sc: Scenario) -> Section:
    if sc.mode == "direct":
        code = (
            "HEAD_RESULTS = [attend(Q, K, V)]  # the scenario gives Q, K and V directly\n"
            'report("The head", HEAD_RESULTS[0])'
        )
        prose = (
            "This scenario gives the queries, keys and values directly, so there is one head "
            "and no projection matrices."
        )
    else:
        code = (
            'show("The sentence X", X, KEY_LABELS, AXES)\n'
            "HEAD_RESULTS = []\n"
            "for h, head in enumerate(HEADS):\n"
            '    name = f"Head {h + 1}" + (f" ({head[\'name\']})" if head["name"] else "")\n'
            '    Q = X @ head["Wq"]  # queries: q_i = x_i Wq, one row per token\n'
            '    K = X @ head["Wk"]  # keys: k_j = x_j Wk\n'
            '    V = X @ head["Wv"]  # values: v_j = x_j Wv\n'
            "    HEAD_RESULTS.append(attend(Q, K, V))\n"
            "    report(name, HEAD_RESULTS[-1])"
        )
        prose = (
            "Each head projects the same sentence into its own queries, keys and values, "
            "then runs the same attention."
        )
    return Section("Every head, stage by stage", prose, code)


def _block(sc: Scenario) -> Section:
    if sc.mode == "direct" or (sc.Wo is None and len(sc.heads) * sc.d_v != sc.d):
        return Section(
            "No output projection",
            "This scenario has no output projection to apply and no residual to add: its "
            "attention ends with each query's output.",
            "BLOCK = None",
        )
    code = (
        'concat = np.concatenate([r["output"] for r in HEAD_RESULTS], axis=1)  # n x (h d_v)\n'
        "delta = concat @ WO  # the attention update: the output projection of the concatenation\n"
        "Y = X + delta  # the residual: each token's vector plus its update\n"
        'BLOCK = {"concat": concat, "Wo": WO, "delta": delta, "Y": Y}\n'
        'head_axes = [f"{h + 1}:{a}" for h in range(len(HEADS)) for a in V_AXES]\n'
        'show("The heads\' outputs side by side", concat, KEY_LABELS, head_axes)\n'
        'show("The output projection Wo", WO, head_axes, AXES)\n'
        'show("The attention update (concatenation Wo)", delta, KEY_LABELS, AXES)\n'
        'show("The residual result Y = X + update", Y, KEY_LABELS, AXES)'
    )
    return Section(
        "The heads together: Wo and the residual",
        "The heads' outputs are set side by side, projected back to the width of the token "
        "vectors by Wo, and added to the sentence: the residual stream.",
        code,
    )


def sections(sc: Scenario) -> list[Section]:
    """The export's sections, in order, for ``sc``."""
    out = [
        Section(
            "Set-up",
            "NumPy, and a helper that prints a matrix with its rows and columns named.",
            _SETUP,
        ),
        Section(
            "The scenario's numbers",
            "Every number of the scenario, as the app holds it. Edit them and run again.",
            _data(sc),
        ),
    ]
    extras = _extras(sc)
    if extras is not None:
        out.append(extras)
    out += [
        Section(
            "Attention, step by step",
            "Softmax, entropy, and one head's stages: scores, the scaling by sqrt(d_k) and "
            "the temperature, the mask, the weights and the outputs.",
            _MATHS,
        ),
        _heads(sc),
        _block(sc),
        Section(
            "The receiving query",
            "The query the app follows: how its weight is shared over the keys in each head.",
            _RECEIVING,
        ),
        Section(
            "A heatmap of the weights",
            "One row per query, one column per key, as in the app's heatmap (needs matplotlib).",
            _FIGURE,
            script_code=(
                'if "--figure" in sys.argv:  # python this_script.py --figure draws the weights\n'
                + "\n".join(("    " + ln) if ln else ln for ln in _FIGURE.splitlines())
                + "\n    if plt is not None:\n        plt.show()"
            ),
        ),
        Section(
            "Every number as JSON",
            "With --json on the command line, every result is printed on one last line, for "
            "checking these numbers against the app's.",
            _JSON,
        ),
    ]
    return out
