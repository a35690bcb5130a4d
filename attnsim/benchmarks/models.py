"""Issue 14's real models: SmolLM2's second (cached) load, and a 64-token forward of each model
with every trace (weights, q, k, v, z, residual stream; logits for SmolLM2) on one BLAS thread.

Each forward is timed beside HuggingFace transformers (its own Llama / BERT, eager attention,
float32, also asked for the attention weights and hidden states, on one thread) when torch and
transformers are importable: an optional comparison, never a dependency. The two are timed in
alternating rounds, so that a change in the machine's load between them cannot decide the
ratio; the row gives the ratio of the process's CPU times beside that of the wall times (on a
machine shared with other work, the CPU time moves less). Without the model files every row
says so instead of failing (``attnsim models install`` fetches them).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from . import Row, summarize, timeit

N = 64
# rounds of the torch comparison, each timing ROUND_RUNS runs of either side, the side going
# first alternating. Six runs of the bench on a shared 2-core machine (load 4-7) gave paired CPU
# ratios of 1.20-1.24 and wall ratios of 1.21-1.28, where five rounds of a second a side, ours
# always first, gave CPU ratios of 1.19-1.24 and wall ratios of 1.08-1.56 in six runs beside them
ROUNDS, ROUND_RUNS = 12, 2
LOAD_TARGET_MS = 1500  # the target for a second load
MISSING = "model files not installed"
# a text of more than 64 tokens for both tokenizers; the ids are cut to N
TEXT = " ".join(
    f"Sentence {i}: the river bank was {i * 3} metres wide, and the money bank opened at {i}."
    for i in range(8)
)


def _budget(quick: bool) -> dict[str, float | int]:
    return (
        {"budget_s": 0.3, "min_runs": 3, "warmup": 1}
        if quick
        else {"budget_s": 3.0, "min_runs": 10}
    )


def _skipped(name: str, why: str = MISSING) -> Row:
    # timing fields present, so `attnsim bench` prints the row like any other
    return {"name": name, "median_ms": 0.0, "p95_ms": 0.0, "runs": 0, "skipped": why}


def _installed(key: str) -> bool:
    from attnsim.engine.models import files

    return bool(files.status()[key]["installed"])


def _torch() -> tuple[Any, Any] | None:
    try:
        import torch
        import transformers
    except ImportError:
        return None
    # its load reports and progress bars would land in the middle of the bench table
    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    return torch, transformers


def _cpu_timed(fn, into: list[float]):
    """``fn`` that also appends the process's CPU time of each call (ms) to ``into``."""

    def run() -> None:
        t0 = time.process_time()
        fn()
        into.append((time.process_time() - t0) * 1e3)

    return run


def _alternating(
    ours, theirs, torch: Any, quick: bool, cpu: tuple[list[float], list[float]] | None = None
) -> tuple[list[float], list[float]]:
    """Times of ``ours()`` and of ``theirs()`` (under no_grad on one torch thread, as the NumPy
    side has one BLAS thread; the thread count restored afterwards), in alternating rounds.
    With ``cpu`` (two lists), the CPU times of the same timed runs go to them.

    Each round times one side then the other, the first side changing from round to round
    (ours first in the first round), so that a load that rises or falls through the run weighs
    on both alike. Every round times each side the same number of runs (ROUND_RUNS), so the
    runs of round r are ``ours[r * k : (r + 1) * k]`` and ``theirs[r * k : (r + 1) * k]``."""
    rounds, k = (2, 2) if quick else (ROUNDS, ROUND_RUNS)
    mine: list[float] = []
    other: list[float] = []
    if cpu is not None:
        ours, theirs = _cpu_timed(ours, cpu[0]), _cpu_timed(theirs, cpu[1])
    before = torch.get_num_threads()
    torch.set_num_threads(1)

    def block(fn, into: list[float], times: list[float] | None) -> None:
        mark = None if times is None else len(times)
        into += timeit(fn, budget_s=0.0, min_runs=k, max_runs=k, warmup=1)
        if times is not None:
            del times[mark]  # the untimed warm-up call

    try:
        for r in range(rounds):
            sides = [(ours, mine, cpu and cpu[0]), (theirs, other, cpu and cpu[1])]
            for fn, into, times in sides if r % 2 == 0 else sides[::-1]:
                if fn is theirs:
                    with torch.no_grad():
                        block(fn, into, times)
                else:
                    block(fn, into, times)
    finally:
        torch.set_num_threads(before)
    return mine, other


def _round_ratios(ours: list[float], theirs: list[float], k: int) -> list[float]:
    """Per round, the median of their k runs over the median of our k runs."""
    n = min(len(ours), len(theirs)) // k
    return [
        float(np.median(theirs[r * k : (r + 1) * k]) / np.median(ours[r * k : (r + 1) * k]))
        for r in range(n)
    ]


def _spread(times: list[float]) -> float:
    """The interquartile range of ``times`` over their median: how much a side's runs wander."""
    q1, med, q3 = np.percentile(times, [25, 50, 75])
    return float((q3 - q1) / med)


def _compare(
    extra: dict[str, object],
    ours: list[float],
    theirs: list[float],
    diff: float,
    cpu: tuple[list[float], list[float]] | None = None,
    k: int = 1,
) -> None:
    """The comparison fields: the ratios of the medians (wall, CPU) and, with the CPU times of
    rounds of ``k`` runs a side, the median of the rounds' CPU ratios (the paired figure, which
    a change of load between rounds cannot move) and each side's spread (whose runs are the
    noisy ones)."""
    extra["torch_median_ms"] = float(np.median(theirs))
    extra["speedup_vs_torch"] = float(np.median(theirs) / np.median(ours))
    if cpu is not None and cpu[0] and cpu[1]:
        extra["cpu_median_ms"] = float(np.median(cpu[0]))
        extra["torch_cpu_median_ms"] = float(np.median(cpu[1]))
        extra["cpu_speedup_vs_torch"] = float(np.median(cpu[1]) / np.median(cpu[0]))
        ratios = _round_ratios(cpu[0], cpu[1], k)
        if ratios:
            extra["cpu_speedup_rounds"] = [round(r, 3) for r in ratios]
            extra["cpu_speedup_paired"] = float(np.median(ratios))
        extra["cpu_spread"] = _spread(cpu[0])
        extra["torch_cpu_spread"] = _spread(cpu[1])
    extra["max_weight_diff_vs_torch"] = diff


def model_load_smollm2(quick: bool = False) -> list[Row]:
    """load_smollm2() once the dequantised cache exists: memory-mapped arrays and the tokenizer."""
    name = "model_load_smollm2"
    if not _installed("smollm2"):
        return [_skipped(name)]
    from attnsim.engine.models import load_smollm2

    load_smollm2()  # writes the cache if this is the first load on the machine
    budget = {"budget_s": 0.5, "min_runs": 2, "warmup": 0} if quick else {"budget_s": 5.0}
    times = timeit(load_smollm2, **budget)
    return [summarize(name, times, target_ms=LOAD_TARGET_MS)]


def _hf_llama(transformers: Any, torch: Any, model: Any) -> Any:
    """transformers' Llama with SmolLM2's weights as attnsim holds them (q/k rows already in the
    rotate-half order both use), so both sides run the same dequantised numbers."""
    cfg = model.config
    conf = transformers.LlamaConfig(
        vocab_size=cfg.vocab, hidden_size=cfg.d_model, intermediate_size=cfg.d_ff,
        num_hidden_layers=cfg.n_layers, num_attention_heads=cfg.n_heads,
        num_key_value_heads=cfg.n_kv_heads, head_dim=cfg.d_head, rms_norm_eps=cfg.eps,
        rope_theta=cfg.rope_base, max_position_embeddings=8192, tie_word_embeddings=True,
        bos_token_id=cfg.bos_id, eos_token_id=cfg.eos_id, attn_implementation="eager",
    )  # fmt: skip
    w = model.weights
    state = {"model.embed_tokens.weight": w["embed"], "model.norm.weight": w["out_norm"]}
    names = {"wq": "self_attn.q_proj", "wk": "self_attn.k_proj", "wv": "self_attn.v_proj",
             "wo": "self_attn.o_proj", "w_gate": "mlp.gate_proj", "w_up": "mlp.up_proj",
             "w_down": "mlp.down_proj"}  # fmt: skip
    for layer in range(cfg.n_layers):
        pre = f"model.layers.{layer}."
        state[pre + "input_layernorm.weight"] = w["attn_norm"][layer]
        state[pre + "post_attention_layernorm.weight"] = w["ffn_norm"][layer]
        for ours, theirs in names.items():  # attnsim keeps (in, out), torch's Linear (out, in)
            state[pre + theirs + ".weight"] = w[ours][layer].T
    hf = transformers.LlamaForCausalLM(conf).eval()
    # copies: torch wants writable arrays and the cache's are memory-mapped read-only
    tensors = {k: torch.from_numpy(np.array(v, dtype=np.float32)) for k, v in state.items()}
    hf.load_state_dict(tensors, strict=False)  # lm_head is tied to the embedding
    return hf


def _forward_row(name: str, model: Any, ids: np.ndarray, hf_model, quick: bool) -> Row:
    """The row of ``model.forward(ids)`` (one BLAS thread inside), timed beside
    ``hf_model(transformers, torch)``'s forward with the attention weights compared, when torch
    and transformers are importable; alone otherwise."""

    def forward():
        return model.forward(ids)

    extra: dict[str, object] = {"n": len(ids), "layers": model.config.n_layers}
    lib = _torch()
    if lib is None:
        return summarize(name, timeit(forward, **_budget(quick)), **extra)
    torch, transformers = lib
    hf = hf_model(transformers, torch)
    t_ids = torch.from_numpy(ids[None])

    def run():
        return hf(t_ids, output_attentions=True, output_hidden_states=True)

    cpu: tuple[list[float], list[float]] = ([], [])
    ours, theirs = _alternating(forward, run, torch, quick, cpu)
    with torch.no_grad():
        want = np.stack([a[0].numpy() for a in run().attentions])
    diff = float(np.abs(forward().weights - want).max())
    _compare(extra, ours, theirs, diff, cpu, k=2 if quick else ROUND_RUNS)
    return summarize(name, ours, **extra)


def model_forward_smollm2_n64(quick: bool = False) -> list[Row]:
    name = "model_forward_smollm2_n64"
    if not _installed("smollm2"):
        return [_skipped(name)]
    from attnsim.engine.models import load_smollm2

    model = load_smollm2()
    ids = model.encode(TEXT)[:N]
    return [_forward_row(name, model, ids, lambda tf, torch: _hf_llama(tf, torch, model), quick)]


def model_forward_minilm_n64(quick: bool = False) -> list[Row]:
    name = "model_forward_minilm_n64"
    if not _installed("minilm"):
        return [_skipped(name)]
    from attnsim.engine.models import load_minilm
    from attnsim.engine.models.files import model_dir

    model = load_minilm()
    raw, _ = model.encode(TEXT)
    ids = np.asarray([*raw[: N - 1], raw[-1]], dtype=np.int64)  # [CLS] ... [SEP], N tokens

    def bert(transformers: Any, torch: Any) -> Any:
        return transformers.BertModel.from_pretrained(
            str(model_dir("minilm") / "model"), attn_implementation="eager",
            add_pooling_layer=False,
        ).eval()  # fmt: skip

    return [_forward_row(name, model, ids, bert, quick)]


# Issue 27: activation patching on a 20-token name-swap pair (the metric: logit(" Mary") -
# logit(" John") at the last position), contributions and the logit lens at n = 64.
PATCH_CLEAN = (
    "Then, when Mary and John went to the store after school, John gave a bottle of milk to"
)
PATCH_CORRUPTED = PATCH_CLEAN.replace("Mary", "X").replace("John", "Mary").replace("X", "John")
PATCH_TARGET_MS = 10_000  # the bound for each patching (heads; layers x positions)


def _patch_setup(model: Any) -> tuple[Any, Any, Any]:
    from attnsim.engine.models.interventions import logit_difference, single_token

    clean, corrupted = (
        model.forward(model.encode(PATCH_CLEAN)),
        model.forward(model.encode(PATCH_CORRUPTED)),
    )
    metric = logit_difference(model, single_token(model, " Mary"), single_token(model, " John"))
    return clean, corrupted, metric


def _once(quick: bool) -> dict[str, float | int]:
    # a patching takes seconds: time it a few times, without a warm-up run
    return {"budget_s": 0.0, "min_runs": 1 if quick else 3, "warmup": 0}


def _patch_row(name: str, which: str, quick: bool) -> list[Row]:
    """The row of patching every head (270 batched runs) or every (layer, position) (600
    runs, fewer where the two streams are equal) of SmolLM2 on the 20-token name-swap pair,
    each run started at its layer. The process's CPU time is given beside the wall time: on a
    machine shared with other work the two differ."""
    if not _installed("smollm2"):
        return [_skipped(name)]
    import time

    from attnsim.engine.models import load_smollm2
    from attnsim.engine.models.interventions import patch_heads, patch_resid

    model = load_smollm2()
    clean, corrupted, metric = _patch_setup(model)
    fn = patch_heads if which == "heads" else patch_resid
    cpu: list[float] = []

    def once() -> None:
        t0 = time.process_time()
        fn(model, clean, corrupted, metric)
        cpu.append((time.process_time() - t0) * 1e3)

    times = timeit(once, **_once(quick))
    return [summarize(name, times, n=len(clean.ids), target_ms=PATCH_TARGET_MS,
                      cpu_median_ms=float(np.median(cpu)))]  # fmt: skip


def patch_heads_smollm2_n20(quick: bool = False) -> list[Row]:
    return _patch_row("patch_heads_smollm2_n20", "heads", quick)


def patch_resid_smollm2_n20(quick: bool = False) -> list[Row]:
    return _patch_row("patch_resid_smollm2_n20", "resid", quick)


def _maps_row(name: str, which: str, quick: bool) -> list[Row]:
    """Contribution maps of all 270 heads and 30 layers, or the logit lens (top 5 and one
    token's probability at every layer and position), of one 64-token SmolLM2 forward."""
    if not _installed("smollm2"):
        return [_skipped(name)]
    from attnsim.engine.models import load_smollm2
    from attnsim.engine.models.contributions import contributions
    from attnsim.engine.models.lens import logit_lens

    model = load_smollm2()
    trace = model.forward(model.encode(TEXT)[:N])
    budget = _budget(quick) if quick else {"budget_s": 2.0, "min_runs": 3, "warmup": 1}
    if which == "contributions":
        times = timeit(lambda: contributions(model, trace), **budget)
    else:
        times = timeit(lambda: logit_lens(model, trace, 5, 1), **budget)
    return [summarize(name, times, n=N)]


def contributions_smollm2_n64(quick: bool = False) -> list[Row]:
    return _maps_row("contributions_smollm2_n64", "contributions", quick)


def lens_smollm2_n64(quick: bool = False) -> list[Row]:
    return _maps_row("lens_smollm2_n64", "lens", quick)


BENCHMARKS = {
    "model_load_smollm2": model_load_smollm2,
    "model_forward_smollm2_n64": model_forward_smollm2_n64,
    "model_forward_minilm_n64": model_forward_minilm_n64,
    # issue 27 (not named model_*: ``--only model_`` stays the forwards' quick check)
    "patch_heads_smollm2_n20": patch_heads_smollm2_n20,
    "patch_resid_smollm2_n20": patch_resid_smollm2_n20,
    "contributions_smollm2_n64": contributions_smollm2_n64,
    "lens_smollm2_n64": lens_smollm2_n64,
}
