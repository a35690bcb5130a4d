"""The reproducible experiments of the reference texts, as functions returning plain data.

Two random sources are offered where a reference text printed numbers from Python's ``random``
module: ``rng="reference"`` replays that exact stream (so the printed figures come out to the
printed decimals), ``rng="numpy"`` uses a fast seeded NumPy generator (same findings, other
digits).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .attention import direct_trace, entropy_bits, softmax
from .training import MODELS, Trainer

Array = NDArray[np.float64]
RngKind = Literal["numpy", "reference"]

__all__ = [
    "FIELD_NAMES",
    "entropy_vs_dk",
    "entropy_vs_dk_steps",
    "three_fields",
    "three_fields_keys",
    "three_fields_queries",
    "train_model",
]

FIELD_NAMES = ("acoustics", "control theory", "Buddhist texts")


def _reference_gauss(gen: random.Random, shape: tuple[int, ...]) -> Array:
    # Python's random.gauss, element by element in C order: the reference program's stream.
    size = int(np.prod(shape))
    values = np.fromiter((gen.gauss(0.0, 1.0) for _ in range(size)), dtype=float, count=size)
    return values.reshape(shape)


def entropy_vs_dk_steps(
    dks: Sequence[int] = (16, 64, 256, 1024),
    *,
    n_keys: int = 16,
    trials: int = 200,
    seed: int = 1,
    rng: RngKind = "numpy",
    chunk_values: int = 65536,
) -> Iterator[tuple[float, dict[str, object] | None]]:
    """The entropy experiment, one chunk of random draws at a time.

    Yields ``(fraction_done, None)`` after each chunk (about ``chunk_values`` random numbers)
    and finally ``(1.0, result)``, where ``result`` is what
    :func:`entropy_vs_dk` returns for the same arguments: the same
    random stream is drawn in the same order, trial by trial, so the numbers agree. Stop
    iterating to cancel. Arguments are checked before anything is drawn (ValueError).
    """
    if not dks or any(int(d) != d or d < 1 for d in dks):
        raise ValueError(f"every d_k must be a positive integer, got {tuple(dks)}")
    dks = tuple(int(d) for d in dks)
    if n_keys < 2:
        raise ValueError(f"n_keys must be at least 2, got {n_keys}")
    if trials < 1:
        raise ValueError(f"trials must be at least 1, got {trials}")
    if rng not in ("numpy", "reference"):
        raise ValueError(f"rng must be 'numpy' or 'reference', got {rng!r}")
    gen_py = random.Random(seed)
    gen_np = np.random.default_rng(seed)
    per_trial = [(1 + n_keys) * d for d in dks]
    total = float(trials * sum(per_trial))
    done = 0.0
    raw_mean, scaled_mean, score_sd = [], [], []
    for d, cost in zip(dks, per_trial, strict=True):
        step = max(1, chunk_values // cost)
        rows = []
        for start in range(0, trials, step):
            c = min(step, trials - start)
            shape = (c, 1 + n_keys, d)
            block = (
                _reference_gauss(gen_py, shape)
                if rng == "reference"
                else gen_np.standard_normal(shape)
            )
            rows.append(np.einsum("td,tkd->tk", block[:, 0, :], block[:, 1:, :]))
            done += c * cost
            yield done / total, None
        s = np.concatenate(rows, axis=0)
        raw_mean.append(float(entropy_bits(softmax(s)).mean()))
        scaled_mean.append(float(entropy_bits(softmax(s / math.sqrt(d))).mean()))
        score_sd.append(float(s.std()))
    yield (
        1.0,
        {
            "d_k": list(dks),
            "entropy_unscaled": raw_mean,
            "entropy_scaled": scaled_mean,
            "max_entropy": math.log2(n_keys),
            "score_sd": score_sd,
            "sqrt_d_k": [math.sqrt(d) for d in dks],
            "n_keys": n_keys,
            "trials": trials,
            "seed": seed,
            "rng": rng,
        },
    )


def entropy_vs_dk(
    dks: tuple[int, ...] = (16, 64, 256, 1024),
    *,
    n_keys: int = 16,
    trials: int = 200,
    seed: int = 1,
    rng: RngKind = "numpy",
) -> dict[str, object]:
    """Attention entropy over ``n_keys`` random keys, with and without the 1/sqrt(d_k) divisor.

    For each d_k, ``trials`` queries and key sets with N(0, 1) components are drawn; the result
    holds per-d_k means of the entropy (bits) of the unscaled and scaled weights, the maximum
    ``log2(n_keys)``, and the standard deviation of the raw scores next to ``sqrt(d_k)``.

    With ``rng="reference"`` the draws replay Python's ``random.seed(seed)`` / ``random.gauss``
    stream in the reference program's order (query first, then the keys, trial by trial).
    :func:`entropy_vs_dk_steps` is the same computation in steps, for progress bars.
    """
    steps = entropy_vs_dk_steps(dks, n_keys=n_keys, trials=trials, seed=seed, rng=rng)
    *_, (_, result) = steps
    assert result is not None
    return result


def three_fields_keys(
    *,
    seed: int = 4,
    noise: float = 0.25,
    dim: int = 12,
    per_field: int = 4,
    rng: RngKind = "reference",
) -> tuple[Array, list[str]]:
    """Twelve unit keys in three clusters of ``per_field`` around axis-block directions.

    Returns ``(keys (3 * per_field, dim), labels)``. Field f's centre is 1 on coordinates
    ``[f * dim/3, (f+1) * dim/3)`` and 0 elsewhere; each key is centre + N(0, noise²) noise,
    normalised to unit length.
    """
    if dim % 3:
        raise ValueError(f"dim must be divisible by 3, got {dim}")
    width = dim // 3
    gen_py = random.Random(seed)
    gen_np = np.random.default_rng(seed)
    keys, labels = [], []
    for f, name in enumerate(FIELD_NAMES):
        centre = np.zeros(dim)
        centre[f * width : (f + 1) * width] = 1.0
        for _ in range(per_field):
            if rng == "reference":
                z = _reference_gauss(gen_py, (dim,))
            else:
                z = gen_np.standard_normal(dim)
            v = centre + noise * z
            keys.append(v / np.linalg.norm(v))
            labels.append(name)
    return np.array(keys), labels


def three_fields_queries(dim: int = 12) -> dict[str, Array]:
    """The three probe queries: inside one field, spanning two, and with no direction."""
    width = dim // 3
    one = np.zeros(dim)
    one[:width] = 1.0
    two = np.zeros(dim)
    two[: 2 * width] = 1.0
    everything = np.ones(dim)
    return {
        "query inside acoustics": one / np.linalg.norm(one),
        "query spanning acoustics + control": two / np.linalg.norm(two),
        "query with no direction": everything / np.linalg.norm(everything),
    }


def three_fields(
    *,
    seed: int = 4,
    gain: float = 3.0,
    rng: RngKind = "reference",
    queries: dict[str, Array] | None = None,
) -> dict[str, object]:
    """What one attention operation gathers from three fields of keys for each query.

    Logits are ``gain * q · k`` (no sqrt(d_k): with unit vectors the gain stands in for learned
    lengths). Values are the keys themselves. Per query: weight per field, entropy (bits), the
    mixture (12,), and the weights (12,).
    """
    K, labels = three_fields_keys(seed=seed, rng=rng)
    qs = three_fields_queries(K.shape[1]) if queries is None else queries
    out = []
    for name, q in qs.items():
        tr = direct_trace(np.atleast_2d(q), K, K, scale=False, temperature=1.0 / gain)
        w = tr.weights[0]
        per_field = {f: float(w[[lbl == f for lbl in labels]].sum()) for f in FIELD_NAMES}
        out.append(
            {
                "query": name,
                "weights": w.tolist(),
                "per_field": per_field,
                "entropy": float(tr.entropy[0]),
                "mixture": tr.output[0].tolist(),
            }
        )
    return {"fields": list(FIELD_NAMES), "labels": labels, "keys": K.tolist(), "results": out}


def train_model(name: str, epochs: int, *, seed: int | None = None) -> dict[str, object]:
    """Train one of :data:`attnsim.engine.training.MODELS` for ``epochs`` passes.

    Returns the final mean loss, the per-step loss history and, for every sentence, the
    prediction and the readout token's attention row.
    """
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose one of {', '.join(MODELS)}")
    if epochs < 0:
        raise ValueError(f"epochs must be non-negative, got {epochs}")
    trainer = Trainer(MODELS[name], seed=seed)
    history = trainer.train_epochs(epochs)
    rows = trainer.evaluate()
    return {
        "model": name,
        "epochs": epochs,
        "seed": trainer.seed,
        "optimizer": MODELS[name].optimizer,
        "lr": trainer.lr,
        "final_loss": float(np.mean([r["loss"] for r in rows])),  # type: ignore[misc]
        "all_correct": all(r["correct"] for r in rows),
        "sentences": rows,
        "loss_history": [h.loss for h in history],
        "params": {k: v.tolist() for k, v in trainer.params.items()},
    }
