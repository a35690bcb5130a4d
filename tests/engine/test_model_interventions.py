"""Issue 27's engine on the real models: the forward from a layer, activation patching,
contributions, the comparison of two texts, the logit lens and attention rollout, each checked
against an independent computation (the full forward, a forward with a hook, an explicit loop).

SmolLM2's residual stream reaches about 2600 in a few features, so its comparisons are relative
to the stream's size (float32 rounding over up to 30 layers: measured below 2e-6 of it).
"""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.models import load_minilm, load_smollm2
from attnsim.engine.models.compare import align_pieces, compare_traces, find_token
from attnsim.engine.models.contributions import (
    contribution_top,
    contributions,
    output_projection,
    value_norms,
)
from attnsim.engine.models.flow import attention_flow, rollout
from attnsim.engine.models.interventions import (
    activation_patching,
    hidden_cosine,
    logit_difference,
    patch_heads,
    patch_resid,
    single_token,
)
from attnsim.engine.models.layers import final_logits, run_from
from attnsim.engine.models.lens import logit_lens

CLEAN = "When Mary and John went out, John gave a drink to"
CORRUPT = "When John and Mary went out, Mary gave a drink to"
REL = 1e-5  # of the stream's largest value


@pytest.fixture(scope="module")
def smol():
    return load_smollm2()


@pytest.fixture(scope="module")
def mini():
    return load_minilm()


@pytest.fixture(scope="module")
def pair(smol):
    clean, corrupt = smol.forward(smol.encode(CLEAN)), smol.forward(smol.encode(CORRUPT))
    metric = logit_difference(smol, single_token(smol, " Mary"), single_token(smol, " John"))
    return clean, corrupt, metric


def _mini_trace(mini, text):
    ids, pieces = mini.encode(text)
    return mini.forward(np.asarray(ids)), pieces


def _close(got, want, scale):
    np.testing.assert_allclose(got, want, rtol=0, atol=REL * float(np.abs(scale).max()))


# ---- the forward from a layer ------------------------------------------------------------------
@pytest.mark.parametrize("start", [0, 11, 29])
def test_smollm2_from_any_layer_equals_the_full_forward(smol, pair, start):
    t = pair[0]
    _close(run_from(smol, t.resid[start], start), t.resid[-1], t.resid)
    _close(run_from(smol, t.resid[start], start, 20 if start < 20 else 30),
           t.resid[20 if start < 20 else 30], t.resid)  # fmt: skip
    # the known first positions read from the trace, only the last position in the last layer
    part = run_from(smol, t.resid[start, 4:], start, known=(t, 4))
    _close(part, t.resid[-1, 4:], t.resid)
    last = run_from(smol, t.resid[start, 4:], start, known=(t, 4), last_only=True)
    assert last.shape == (1, smol.config.d_model)
    _close(last, t.resid[-1, -1:], t.resid)


def test_smollm2_final_logits_are_the_forwards(smol, pair):
    t = pair[0]
    logits = final_logits(smol, t.resid[-1])
    np.testing.assert_allclose(logits, t.logits, rtol=0, atol=1e-4)
    two = final_logits(smol, t.resid[-1, -1], [5, 7])
    np.testing.assert_allclose(two, t.logits[-1, [5, 7]], rtol=0, atol=1e-4)


def test_a_batch_runs_each_stream_as_alone(smol, mini, pair):
    a, b, _ = pair
    both = run_from(smol, np.stack([a.resid[9], b.resid[9]]), 9)
    _close(both[0], a.resid[-1], a.resid)
    _close(both[1], b.resid[-1], b.resid)
    t, _ = _mini_trace(mini, "The river bank was muddy after the rain.")
    for start in (0, 3, 6):
        got = run_from(mini, np.stack([t.resid[start]] * 2), start)
        np.testing.assert_allclose(got, np.stack([t.resid[-1]] * 2), rtol=0, atol=1e-4)
    np.testing.assert_allclose(run_from(mini, t.resid[1], 1, 4), t.resid[4], rtol=0, atol=1e-4)


def test_bad_layer_ranges_and_shapes_are_refused(smol, mini, pair):
    t = pair[0]
    with pytest.raises(ValueError, match="start <= stop"):
        run_from(smol, t.resid[3], 5, 4)
    with pytest.raises(ValueError, match="resid must be"):
        run_from(smol, t.resid[3, :, :10], 3)
    tm, _ = _mini_trace(mini, "a bank")
    with pytest.raises(ValueError, match="causal"):
        run_from(mini, tm.resid[0], 0, last_only=True)


# ---- activation patching ------------------------------------------------------------------------
def _hooked_metric(smol, ids, layer, head, z_clean, metric):
    def hook(at, z):
        if at == layer:
            z[head] = z_clean
        return z

    t = smol.forward(ids, hooks={"z": hook})
    return float(metric.of(t.resid[-1][None])[0])


def test_smollm2_head_patches_match_forwards_with_a_z_hook(smol, pair):
    clean, corrupt, metric = pair
    values = patch_heads(smol, clean, corrupt, metric)
    assert values.shape == (30, 9)
    for layer, head in [(0, 0), (23, 3), (29, 1), (14, 8)]:
        want = _hooked_metric(smol, corrupt.ids, layer, head, clean.z[layer, head], metric)
        assert values[layer, head] == pytest.approx(want, abs=2e-3)
    # the logit difference as the model's own logits give it
    lg = corrupt.logits[-1]
    m_corr = float(metric.of(corrupt.resid[-1][None])[0])
    good, bad = single_token(smol, " Mary"), single_token(smol, " John")
    assert m_corr == pytest.approx(float(lg[good] - lg[bad]), abs=1e-3)


def test_patching_a_run_into_itself_restores_nothing(smol, pair):
    _, corrupt, metric = pair
    base = float(metric.of(corrupt.resid[-1][None])[0])
    np.testing.assert_allclose(patch_heads(smol, corrupt, corrupt, metric), base, atol=2e-3)
    np.testing.assert_allclose(patch_resid(smol, corrupt, corrupt, metric), base, atol=2e-3)


def test_the_clean_stream_restores_everything_and_the_same_stream_nothing(smol):
    # one token differs (position 1): its embedding patched in makes the clean text
    clean = smol.forward(smol.encode("When Mary went out, John gave a drink to"))
    corrupt = smol.forward(smol.encode("When Anna went out, John gave a drink to"))
    assert (clean.ids != corrupt.ids).sum() == 1 and clean.ids[1] != corrupt.ids[1]
    metric = logit_difference(smol, single_token(smol, " Mary"), single_token(smol, " Anna"))
    r = activation_patching(smol, clean, corrupt, metric, heads=False)
    frac = r.restored(r.resid)
    assert frac.shape == (30, len(clean.ids))
    assert frac[0, 1] == pytest.approx(1.0, abs=1e-3)
    np.testing.assert_array_equal(frac[0, [0, 2, 3]], 0.0)  # the same token: nothing to patch
    np.testing.assert_allclose(frac[:, 0], 0.0, atol=1e-3)  # before the change: the same stream
    # a later layer's patch equals the forward from that layer of the patched stream
    start = np.array(corrupt.resid[12])
    start[5] = clean.resid[12, 5]
    want = float(metric.of(run_from(smol, start, 12)[None])[0])
    assert r.resid[12, 5] == pytest.approx(want, abs=2e-3)
    # the last position's stream entering a layer carries everything the metric reads after it
    assert frac[29, -1] > 0.5


def test_minilm_patching_matches_hooked_forwards(mini):
    clean, pieces = _mini_trace(mini, "The river bank was muddy.")
    corrupt, _ = _mini_trace(mini, "The money bank was closed.")
    pos = find_token(pieces, "bank")
    metric = hidden_cosine(clean.resid[-1], pos)
    r = activation_patching(mini, clean, corrupt, metric)
    assert r.clean == pytest.approx(1.0, abs=1e-6) and r.corrupted < 0.99
    assert r.heads.shape == (6, 12) and r.resid.shape == (6, len(pieces))

    def hook(at, z):
        if at == 4:
            z[7] = clean.z[4, 7]
        return z

    t = mini.forward(corrupt.ids, hooks={"z": hook})
    h, ref = t.resid[-1, pos], clean.resid[-1, pos]
    want = float(h @ ref / np.linalg.norm(h) / np.linalg.norm(ref))
    assert r.heads[4, 7] == pytest.approx(want, abs=1e-5)
    # the first layer's stream at a token both texts share (with its position) is the same
    assert [pieces[i] for i in (2, 5)] == ["river", "muddy"]
    np.testing.assert_array_equal(r.restored(r.resid)[0, [0, 1, 3, 4, 6, 7]], 0.0)
    assert (r.restored(r.resid)[0, [2, 5]] > 0.05).all()
    # and the whole clean stream patched in is the clean run
    assert float(metric.of(run_from(mini, clean.resid[0][None], 0))[0]) == pytest.approx(1.0)


def test_patching_refuses_unequal_lengths_and_no_gap(smol, pair):
    clean, _, metric = pair
    short = smol.forward(smol.encode("When Mary went"))
    with pytest.raises(ValueError, match="same number of tokens"):
        activation_patching(smol, clean, short, metric)
    with pytest.raises(ValueError, match="no gap"):
        activation_patching(smol, clean, clean, metric)
    with pytest.raises(ValueError, match="one token"):
        single_token(smol, " Mary and")


# ---- contributions ------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["smollm2", "minilm"])
def test_contributions_are_weight_times_projected_value_length(smol, mini, pair, which):
    if which == "smollm2":
        model, t = smol, pair[0]
    else:
        model = mini
        t, _ = _mini_trace(mini, "The river bank was muddy after the rain.")
    c = contributions(model, t)
    layers, heads, n, dh = t.v.shape
    assert c.per_head.shape == (layers, heads, n, n) and c.per_layer.shape == (layers, n, n)
    for layer, head, i, j in [
        (0, 0, n - 1, 0),
        (layers - 1, heads - 1, n - 1, n - 2),
        (2, 3, 5, 4),
    ]:
        wo = output_projection(model, layer)[head * dh : (head + 1) * dh]
        want = np.linalg.norm(t.weights[layer, head, i, j] * (t.v[layer, head, j] @ wo))
        assert c.per_head[layer, head, i, j] == pytest.approx(want, rel=1e-4, abs=1e-6)
        vecs = [t.weights[layer, h, i, j] * (t.v[layer, h, j] @
                output_projection(model, layer)[h * dh : (h + 1) * dh]) for h in range(heads)]  # fmt: skip
        assert c.per_layer[layer, i, j] == pytest.approx(np.linalg.norm(np.sum(vecs, axis=0)),
                                                         rel=1e-4, abs=1e-6)  # fmt: skip
    # the triangle inequality: a query's output is at most the sum of its keys' parts
    for layer in (0, layers - 1):
        wo = output_projection(model, layer).reshape(heads, dh, -1)
        out = np.einsum("hnd,hde->hne", t.z[layer], wo)  # each head's output after W_O^h
        assert (np.linalg.norm(out, axis=-1) <= c.per_head[layer].sum(-1) * (1 + 1e-5) + 1e-6).all()
        total = np.linalg.norm(out.sum(axis=0), axis=-1)
        assert (total <= c.per_layer[layer].sum(-1) * (1 + 1e-5) + 1e-6).all()
        assert (c.per_layer[layer] <= c.per_head[layer].sum(0) * (1 + 1e-5) + 1e-6).all()
    if which == "smollm2":  # the causal mask: nothing from a later key
        assert not np.triu(c.per_head[..., :, :], 1).any()
    # the window keeps only the value lengths: weights times them are the same maps
    norms = value_norms(model, t)
    assert norms.shape == (layers, heads, n)
    np.testing.assert_allclose(norms, c.value_norms, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(t.weights * norms[:, :, None, :], c.per_head, rtol=1e-5, atol=1e-6)
    assert contribution_top(t.weights, norms) == pytest.approx(float(c.per_head.max()), rel=1e-5)


# ---- comparison ---------------------------------------------------------------------------------
def test_a_text_compared_with_itself_is_identical(mini):
    t, pieces = _mini_trace(mini, "The bank of the river.")
    c = compare_traces(t, pieces, t, pieces, "bank")
    np.testing.assert_allclose(c.cosine, 1.0, atol=1e-6)
    np.testing.assert_allclose(c.distance, 0.0, atol=1e-4)
    np.testing.assert_array_equal(c.attention_a, c.attention_b)
    np.testing.assert_allclose(c.attention_a.sum(-1), 1.0, atol=1e-5)


def test_the_comparison_is_the_streams_cosine_and_the_aligned_weights(smol):
    a_text, b_text = "We sat on the bank of the river.", "The bank raised its rates."
    ta, tb = smol.forward(smol.encode(a_text)), smol.forward(smol.encode(b_text))
    pa, pb = smol.pieces(ta.ids), smol.pieces(tb.ids)
    c = compare_traces(ta, pa, tb, pb, "Bank")
    assert (c.position_a, c.position_b) == (pa.index(" bank"), pb.index(" bank"))
    xa, xb = ta.resid[17, c.position_a], tb.resid[17, c.position_b]
    want = xa @ xb / np.linalg.norm(xa) / np.linalg.norm(xb)
    assert c.cosine[17] == pytest.approx(float(want), abs=1e-5)
    assert c.distance[17] == pytest.approx(float(np.linalg.norm(xa - xb)), rel=1e-5)
    for col, (piece, ia, ib) in enumerate(c.columns):
        assert ia is not None or ib is not None
        want_a = 0.0 if ia is None else ta.weights[5, 2, c.position_a, ia]
        assert c.attention_a[5, 2, col] == pytest.approx(want_a, abs=1e-7)
        assert piece in ((pa[ia] if ia is not None else None), (pb[ib] if ib is not None else None))
    # every key of each text appears once, in order
    assert [ia for _, ia, _ in c.columns if ia is not None] == list(range(len(pa)))
    assert [ib for _, _, ib in c.columns if ib is not None] == list(range(len(pb)))


def test_pieces_align_and_a_missing_token_names_the_texts_tokens():
    cols = align_pieces(["The", " bank", " rose"], ["A", " bank", " rose", "."])
    assert ("bank" in cols[2][0] or "bank" in cols[1][0]) and (" rose", 2, 2) in cols
    assert find_token(["[CLS]", "the", "bank", "bank"], "bank", occurrence=1) == 3
    assert find_token(["[CLS]", "bank", "the", "bank", "x"], "bank", occurrence=-1) == 3  # last
    with pytest.raises(ValueError, match="not in the text"):
        find_token(["[CLS]", "the"], "bank", occurrence=-1)
    with pytest.raises(ValueError, match=r"not in the text.*'the'"):
        find_token(["[CLS]", "the", "river"], "bank")
    with pytest.raises(ValueError, match="empty"):
        find_token(["a"], "  ")


# ---- the logit lens -----------------------------------------------------------------------------
def test_the_lens_at_the_last_layer_is_the_models_prediction(smol, pair):
    t = pair[0]
    mary = single_token(smol, " Mary")
    lens = logit_lens(smol, t, k=5, token_id=mary)
    n = len(t.ids)
    assert lens.top_ids.shape == (30, n, 5) and lens.token_probs.shape == (30, n)
    lp = t.logits.astype(np.float64)
    p = np.exp(lp - lp.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_array_equal(lens.top_ids[-1, :, 0], np.argmax(t.logits, axis=-1))
    np.testing.assert_allclose(lens.top_probs[-1], np.take_along_axis(p, lens.top_ids[-1], -1),
                               atol=1e-5)  # fmt: skip
    np.testing.assert_allclose(lens.token_probs[-1], p[:, mary], atol=1e-5)
    assert (np.diff(lens.top_probs, axis=-1) <= 1e-7).all()  # most probable first
    assert (lens.top_probs.sum(-1) <= 1 + 1e-5).all()
    # an earlier layer is its stream read the same way
    h = t.resid[8]
    q = final_logits(smol, h).astype(np.float64)
    assert int(lens.top_ids[7, 3, 0]) == int(np.argmax(q[3]))
    # the right name rises in the upper layers at the last position
    assert lens.token_probs[-1, -1] > 0.3 > lens.token_probs[10, -1]


def test_the_lens_is_for_the_causal_model_only(mini):
    t, _ = _mini_trace(mini, "a bank")
    with pytest.raises(ValueError, match="next token"):
        logit_lens(mini, t)


# ---- attention flow -----------------------------------------------------------------------------
def test_rollout_is_the_product_of_mixed_layer_means():
    rng = np.random.default_rng(0)
    w = rng.random((3, 2, 4, 4))
    w /= w.sum(-1, keepdims=True)
    mats = []
    for layer in range(3):
        a = 0.5 * w[layer].mean(0) + 0.5 * np.eye(4)
        mats.append(a / a.sum(-1, keepdims=True))
    r = rollout(w)
    np.testing.assert_allclose(r[0], mats[0], atol=1e-6)
    np.testing.assert_allclose(r[-1], mats[2] @ mats[1] @ mats[0], atol=1e-6)
    np.testing.assert_allclose(r.sum(-1), 1.0, atol=1e-6)
    # uniform attention over n keys: each layer keeps half on the token itself
    u = np.full((1, 1, 4, 4), 0.25)
    np.testing.assert_allclose(rollout(u)[0], 0.5 * np.eye(4) + 0.125, atol=1e-7)


@pytest.mark.parametrize("which", ["smollm2", "minilm"])
def test_flow_from_a_token_on_both_models(smol, mini, which):
    text = "The river bank was muddy after the rain."
    if which == "smollm2":
        t = smol.forward(smol.encode(text))
        pieces = smol.pieces(t.ids)
    else:
        t, pieces = _mini_trace(mini, text)
    pos = find_token(pieces, "bank")
    f = attention_flow(t, pos)
    assert f.rollout.sum() == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_allclose(f.per_layer.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(f.last_weights, t.weights[-1, :, pos].mean(0), atol=1e-6)
    np.testing.assert_allclose(f.per_layer[-1], f.rollout)
    if which == "smollm2":
        assert not f.rollout[pos + 1 :].any()  # a causal token never traces to a later one
    with pytest.raises(ValueError, match="position"):
        attention_flow(t, len(pieces))


def test_batches_split_by_rows_give_the_same_patches_and_report_progress(mini, monkeypatch):
    from attnsim.engine.models import interventions

    clean, pieces = _mini_trace(mini, "The river bank was muddy.")
    corrupt, _ = _mini_trace(mini, "The money bank was closed.")
    metric = hidden_cosine(clean.resid[-1], find_token(pieces, "bank"))
    seen: list[float] = []
    whole = activation_patching(mini, clean, corrupt, metric, progress=seen.append)
    assert len(seen) == 12 and seen[-1] == pytest.approx(1.0)
    assert (np.diff(seen) > 0).all()
    monkeypatch.setattr(interventions, "MAX_ROWS", 2 * len(pieces))  # two runs a batch
    split = activation_patching(mini, clean, corrupt, metric)
    np.testing.assert_allclose(split.heads, whole.heads, atol=1e-6)
    np.testing.assert_allclose(split.resid, whole.resid, atol=1e-6)


def test_a_head_patch_matches_transformers_with_a_hook_when_it_is_installed(mini):
    # optional: transformers' BERT with the clean z of one head written into the input of the
    # output projection of the corrupted run
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from attnsim.engine.models.files import model_dir

    hf = transformers.BertModel.from_pretrained(
        str(model_dir("minilm") / "model"), attn_implementation="eager", add_pooling_layer=False
    ).eval()
    clean, pieces = _mini_trace(mini, "The river bank was muddy.")
    corrupt, _ = _mini_trace(mini, "The money bank was closed.")
    pos = find_token(pieces, "bank")
    layer, head, dh = 4, 7, mini.config.d_head

    def pre(_module, args):
        (x,) = args
        x = x.clone()
        x[0, :, head * dh : (head + 1) * dh] = torch.from_numpy(np.array(clean.z[layer, head]))
        return (x,)

    dense = hf.encoder.layer[layer].attention.output.dense
    handle = dense.register_forward_pre_hook(pre)
    try:
        with torch.no_grad():
            h = hf(torch.tensor([corrupt.ids.tolist()])).last_hidden_state[0, pos].numpy()
    finally:
        handle.remove()
    ref = clean.resid[-1, pos]
    want = float(h @ ref / np.linalg.norm(h) / np.linalg.norm(ref))
    got = patch_heads(mini, clean, corrupt, hidden_cosine(clean.resid[-1], pos))
    assert got[layer, head] == pytest.approx(want, abs=1e-4)
