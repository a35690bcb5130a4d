"""Write the preset scenarios in attnsim/resources/scenarios/ from the reference texts' numbers.

The JSON files are the source of truth and may be edited by hand; this script documents where
each number comes from and rebuilds them. Run: python tools/make_presets.py
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from attnsim.engine.experiments import three_fields_keys, three_fields_queries
from attnsim.engine.scenario import Head, Scenario

OUT = Path(__file__).resolve().parents[1] / "attnsim" / "resources" / "scenarios"
S002 = "002_e642bca6f1d9b986.txt"
S000 = "000_6b117dc93b01f266.txt"
S004 = "004_b107317a334d5740.txt"

# finance, water, structure, generic (002, "One forward pass, no training")
EMB = {
    "the": [0.0, 0.0, 0.0, 1.0],
    "river": [0.0, 1.0, 0.0, 0.2],
    "money": [1.0, 0.0, 0.0, 0.2],
    "bank": [0.5, 0.5, 0.8, 0.2],
}
AXES4 = ["finance", "water", "structure", "generic"]
I4 = np.eye(4)


def sentence(tokens: list[str]) -> np.ndarray:
    return np.array([EMB[t] for t in tokens])


def bank_scenario(name: str, title: str, tokens: list[str], absent: str, **kw) -> Scenario:
    return Scenario(
        name=name,
        title=title,
        source=S002,
        tokens=tuple(tokens),
        axes=tuple(AXES4),
        qk_axes=tuple(AXES4),
        v_axes=tuple(AXES4),
        X=sentence(tokens),
        heads=(Head(I4, I4, I4, name="identity head"),),
        absent={absent: np.array(EMB[absent])},
        receiving=tokens.index("bank"),
        **kw,
    )


def presets() -> list[Scenario]:
    out = [
        bank_scenario(
            "river-bank",
            "The river bank",
            ["the", "river", "bank"],
            "money",
            description=(
                "Four hand-named coordinates (finance, water, structure, generic) and identity "
                "projections. bank's weights are [0.26, 0.31, 0.43] and its mixture "
                "[0.21, 0.52, 0.34, 0.41]: river supplies the water coordinate."
            ),
        ),
        bank_scenario(
            "money-bank",
            "The money bank",
            ["the", "money", "bank"],
            "river",
            description=(
                "The same bank vector in another sentence. The weights are the same "
                "[0.26, 0.31, 0.43], but the mixture is [0.52, 0.21, 0.34, 0.41]: the vectors "
                "being mixed changed, not the weights."
            ),
        ),
        bank_scenario(
            "bank-river",
            "The bank river (causal hides the future)",
            ["the", "bank", "river"],
            "money",
            mask="causal",
            description=(
                "Under a causal mask bank can read only the and itself: river comes later, so "
                "none of its water reaches bank. Switch the mask off to compare."
            ),
        ),
    ]
    X2 = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    I2, swap = np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])
    eiffel = {
        "eiffel-raw": ("Eiffel tower: raw query", I2, I2, "tower · Eiffel = 0, so Eiffel scores "
                       "like the zero filler: weights [0.2483, 0.2483, 0.5035]."),
        "eiffel-swap-query": ("Eiffel tower: swap query", swap, I2, "The swap matrix turns "
                              "tower's query to [0, 1], which matches Eiffel's identity "
                              "coordinate: weights [0.2483, 0.5035, 0.2483], mixture "
                              "[0.2483, 0.5035]."),
        "eiffel-swap-values": ("Eiffel tower: swap values", swap, swap, "Swapping the values "
                               "too leaves the weights [0.2483, 0.5035, 0.2483] untouched and "
                               "changes the mixture to [0.5035, 0.2483]."),
    }  # fmt: skip
    for name, (title, Wq, Wv, desc) in eiffel.items():
        out.append(
            Scenario(
                name=name,
                title=title,
                description=desc,
                source=S002,
                tokens=("the", "Eiffel", "tower"),
                axes=("structure", "Paris identity"),
                qk_axes=("structure", "Paris identity"),
                v_axes=("structure", "Paris identity"),
                X=X2,
                heads=(Head(Wq, I2, Wv, name="head"),),
                wq_presets={"identity": I2, "swap": swap},
                receiving=2,
            )
        )
    # Wq presets in a 3-D matching space: Wk keeps finance, water, structure, drops generic.
    Wk = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0, 0, 0]])
    wq = {}
    for label, col in (("finance", 0), ("water", 1), ("structure", 2)):
        W = np.zeros((4, 3))
        W[2, col] = 3.75  # only the structure row is non-zero: q_bank = 0.8 * 3.75 = 3.00
        wq[f"find {label} evidence"] = W
    for label in ("water", "finance", "structure"):
        out.append(
            Scenario(
                name=f"wq-find-{label}",
                title=f"Wq preset: find {label} evidence",
                description=(
                    f"bank's query asks for {label} evidence in a 3-D matching space with hand-"
                    "named axes. The keys stay fixed (Wk keeps finance, water, structure and "
                    "drops generic); only Wq changes between presets."
                    + (
                        " Scores q_bank · k / √3: the 0.000, river 1.732, bank 0.866; weights "
                        "11.1%, 62.6%, 26.3%."
                        if label == "water"
                        else ""
                    )
                ),
                source=S002,
                tokens=("the", "river", "bank"),
                axes=tuple(AXES4),
                qk_axes=("finance", "water", "structure"),
                v_axes=("finance", "water", "structure"),
                X=sentence(["the", "river", "bank"]),
                heads=(Head(wq[f"find {label} evidence"], Wk, Wk, name="matching head"),),
                wq_presets=wq,
                absent={"money": np.array(EMB["money"])},
                receiving=2,
            )
        )
    K, labels = three_fields_keys()
    qs = three_fields_queries()
    counts: dict[str, int] = {}
    key_names = []
    for lbl in labels:
        counts[lbl] = counts.get(lbl, 0) + 1
        key_names.append(f"{lbl} {counts[lbl]}")
    out.append(
        Scenario(
            name="three-fields",
            title="Three fields of keys in 12-D",
            description=(
                "Twelve unit keys in three clusters (acoustics, control theory, Buddhist texts) "
                "and three queries: inside one field, spanning two, and with no direction. "
                "Logits are 3 · q·k (temperature 1/3, no √d_k). Weight by field: 0.87/0.07/0.07, "
                "0.42/0.49/0.10 and 0.26/0.32/0.42; entropies 2.69, 3.31 and 3.53 bits."
            ),
            source=S000,
            mode="direct",
            tokens=tuple(key_names),
            query_tokens=("inside acoustics", "acoustics + control", "no direction"),
            qk_axes=tuple(
                f"{f} {i + 1}" for f in ("acoustics", "control", "Buddhist") for i in range(4)
            ),
            v_axes=tuple(
                f"{f} {i + 1}" for f in ("acoustics", "control", "Buddhist") for i in range(4)
            ),
            Q=np.array(list(qs.values())),
            K=K,
            V=K,
            scale=False,
            temperature=1.0 / 3.0,
            receiving=0,
        )
    )
    # The tired cat: the reference's illustrative weights, realised exactly by one-hot tokens,
    # identity keys and a query matrix of sqrt(5) * log(weights).
    cat = ["the", "tired", "cat", "finally", "slept"]
    A = np.array(
        [
            [0.55, 0.05, 0.30, 0.03, 0.07],
            [0.05, 0.45, 0.40, 0.03, 0.07],
            [0.18, 0.30, 0.40, 0.04, 0.08],
            [0.04, 0.05, 0.10, 0.41, 0.40],
            [0.05, 0.20, 0.35, 0.20, 0.20],
        ]
    )
    I5 = np.eye(5)
    out.append(
        Scenario(
            name="tired-cat",
            title="The tired cat (causal vs bidirectional)",
            description=(
                "The reference's illustrative head over 'the tired cat finally slept', built so "
                "that the bidirectional weights are exactly its table. Switch the mask to causal: "
                "the upper triangle becomes -inf and each row renormalises over what it may see."
            ),
            source=S002,
            tokens=tuple(cat),
            axes=tuple(cat),
            qk_axes=tuple(f"k:{t}" for t in cat),
            v_axes=tuple(cat),
            X=I5,
            heads=(Head(math.sqrt(5) * np.log(A), I5, I5, name="illustrative head"),),
            receiving=4,
        )
    )
    out.append(
        Scenario(
            name="routing-lab",
            title="Routing lab: one query, three key-value pairs",
            description=(
                "The address is not the message. Rotate the query and the route moves; swap "
                "values and the route stays while the output changes; raise the dimension "
                "without scaling and the route sharpens for statistical reasons."
            ),
            source=S004,
            mode="direct",
            tokens=("A", "B", "C"),
            query_tokens=("q",),
            qk_axes=("x", "y"),
            v_axes=("v1", "v2"),
            Q=np.array([[1.0, 0.0]]),
            K=np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]]),
            V=np.array([[10.0, 0.0], [0.0, 10.0], [-5.0, 5.0]]),
            scale=False,
            receiving=0,
        )
    )
    # approved_limit = 5000; temporary_limit = 7000; charge < limit   (004)
    code_tokens = ["approved_limit", "temporary_limit", "charge", "limit"]
    Xc = np.array(
        [
            # definition, approved scope, temporary scope, amount (thousands), use site
            [1.0, 1.0, 0.0, 5.0, 0.0],
            [1.0, 0.0, 1.0, 7.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 1.0],
            [0.0, 0.0, 0.0, 0.0, 1.0],
        ]
    )
    Wq_c = np.zeros((5, 3))
    Wq_c[4] = [2.0, 1.5, 0.0]  # a use site asks for a definition, preferably the approved one
    Wk_c = np.zeros((5, 3))
    Wk_c[0, 0] = Wk_c[1, 1] = Wk_c[2, 2] = 1.0
    Wv_c = np.zeros((5, 2))
    Wv_c[3, 0] = 1.0  # the amount travels in the value
    Wv_c[1, 1], Wv_c[2, 1] = 1.0, -1.0  # and the scope: +1 approved, -1 temporary
    out.append(
        Scenario(
            name="code-definition",
            title="Which limit? (approved_limit / temporary_limit / limit)",
            description=(
                "approved_limit = 5000; temporary_limit = 7000; charge < limit. At limit the "
                "query asks for a definition, preferably the approved one; keys advertise the "
                "definition and its scope; values carry the amount and the scope. Make the two "
                "keys equal and the router can no longer tell the definitions apart."
            ),
            source=S004,
            tokens=tuple(code_tokens),
            axes=("definition", "approved scope", "temporary scope", "amount", "use site"),
            qk_axes=("definition", "approved", "temporary"),
            v_axes=("amount (thousands)", "scope"),
            X=Xc,
            heads=(Head(Wq_c, Wk_c, Wv_c, name="lookup head"),),
            mask="causal",
            receiving=3,
        )
    )
    # Two heads over "the river bank": one looks for water, one for finance (002's 2 x 3 count).
    Wq1 = np.zeros((4, 2))
    Wq1[2] = [0.0, 2.0]
    Wq2 = np.zeros((4, 2))
    Wq2[2] = [2.0, 0.0]
    Wk_h = np.zeros((4, 2))
    Wk_h[0, 0] = Wk_h[1, 1] = 1.0
    Wv_h = np.zeros((4, 2))
    Wv_h[0, 0] = Wv_h[1, 1] = 1.0
    out.append(
        Scenario(
            name="two-heads",
            title="Two heads over the river bank",
            description=(
                "Two heads read the same X with their own Wq, Wk, Wv (d = 4, d_k = d_v = 2). "
                "Head 1 asks for water, head 2 for finance; their mixtures are concatenated, "
                "projected by Wo and added to X. 6 learned projection matrices, 18 computed "
                "vectors."
            ),
            source=S002,
            tokens=("the", "river", "bank"),
            axes=tuple(AXES4),
            qk_axes=("finance", "water"),
            v_axes=("finance", "water"),
            X=sentence(["the", "river", "bank"]),
            heads=(
                Head(Wq1, Wk_h, Wv_h, name="water head"),
                Head(Wq2, Wk_h, Wv_h, name="finance head"),
            ),
            # Wo averages the two heads' finance and water coordinates into the stream.
            Wo=0.5 * np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [1.0, 0, 0, 0], [0, 1.0, 0, 0]]),
            absent={"money": np.array(EMB["money"])},
            receiving=2,
        )
    )
    return out


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for sc in presets():
        sc.save(OUT / f"{sc.name}.json")
        print(f"wrote {sc.name}.json")


if __name__ == "__main__":
    main()
