"""``attnsim model compare|patch|lens|flow`` run in this process (``attnsim.cli.main`` with the
output captured): their JSON against the engine's own numbers, and every bad input as one line
and exit status 2.

MiniLM carries most cases (it loads in about 0.1 s); SmolLM2 runs the lens, a short patching
(heads only) and the refusals that only it has (next tokens of the metric).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnsim.cli import main

RIVER = "We sat on the bank of the river."
MONEY = "The bank raised its rates."


def _run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _json(capsys, *args: str) -> dict:
    code, out, err = _run(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def _error(capsys, *args: str) -> str:
    code, out, err = _run(capsys, *args)
    assert code == 2, (out, err)
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.numeric
def test_compare_json_is_the_tokens_streams_in_both_texts(capsys):
    from attnsim.engine.models import load_minilm

    d = _json(capsys, "model", "compare", "--model", "minilm", "--a", RIVER, "--b", MONEY,
              "--token", "bank")  # fmt: skip
    assert d["tokens_a"][d["position_a"]] == "bank" == d["tokens_b"][d["position_b"]]
    assert len(d["layers"]) == 7  # the embeddings and after each of the 6 layers
    m = load_minilm()
    ta = m.forward(np.asarray(m.encode(RIVER)[0]))
    tb = m.forward(np.asarray(m.encode(MONEY)[0]))
    for row in d["layers"]:
        xa, xb = ta.resid[row["layer"], d["position_a"]], tb.resid[row["layer"], d["position_b"]]
        cos = float(xa @ xb / np.linalg.norm(xa) / np.linalg.norm(xb))
        assert row["cosine"] == pytest.approx(cos, abs=1e-5)
        assert row["distance"] == pytest.approx(float(np.linalg.norm(xa - xb)), rel=1e-5)
    att = np.array(d["attention_a"])
    assert att.shape == (6, 12, len(d["columns"]))
    np.testing.assert_allclose(att.sum(-1), 1.0, atol=1e-3)  # A's keys are all in the columns
    assert len(d["most_different_heads"]) == 5
    code, out, _ = _run(capsys, "model", "compare", "--model", "minilm", "--a", RIVER,
                        "--b", MONEY, "--token", "bank")  # fmt: skip
    assert code == 0 and out.splitlines()[1].split() == ["stream", "cosine", "distance"]
    assert sum(ln.startswith("after layer") for ln in out.splitlines()) == 6


@pytest.mark.numeric
def test_flow_json_rows_sum_to_one_and_text_lists_every_token(capsys):
    d = _json(capsys, "model", "flow", "--model", "minilm", "--text", RIVER, "--token", "river")
    assert d["tokens"][d["position"]] == "river"
    assert sum(d["rollout"]) == pytest.approx(1.0, abs=1e-3)
    assert sum(d["last_layer_weights"]) == pytest.approx(1.0, abs=1e-3)
    assert np.array(d["rollout_per_layer"]).shape == (6, len(d["tokens"]))
    code, out, _ = _run(capsys, "model", "flow", "--model", "minilm", "--text", RIVER,
                        "--token", "river")  # fmt: skip
    assert code == 0 and len(out.splitlines()) == 2 + len(d["tokens"])


@pytest.mark.numeric
def test_minilm_patch_json_restores_fractions_of_the_gap(capsys):
    d = _json(capsys, "model", "patch", "--model", "minilm", "--clean", "The river bank was muddy.",
              "--corrupted", "The money bank was closed.", "--token", "bank")  # fmt: skip
    assert d["clean"] == pytest.approx(1.0, abs=1e-6) and d["corrupted"] < d["clean"]
    heads = np.array(d["heads_restored"])
    assert heads.shape == (6, 12)
    top = d["top_heads"]
    assert len(top) == 5 and top[0]["restored"] == pytest.approx(heads.max(), abs=1e-4)
    assert d["top_five_total"] == pytest.approx(sum(t["restored"] for t in top), abs=1e-6)
    assert np.array(d["resid_restored"]).shape == (6, len(d["tokens_clean"]))


@pytest.mark.numeric
def test_smollm2_lens_and_patch_on_a_short_pair(capsys):
    text = "The capital of France is"
    d = _json(capsys, "model", "lens", "--text", text, "--token", " Paris", "--k", "3")
    assert d["token"] == " Paris" and len(d["top_tokens"]) == 30
    assert len(d["top_tokens"][0]) == len(d["tokens"]) and len(d["top_tokens"][0][0]) == 3
    probs = np.array(d["token_probs"])
    assert probs[-1, -1] > 0.3 > probs[20, -1]  # the answer rises in the upper layers
    assert d["top_tokens"][-1][-1][0] == " Paris"
    d = _json(capsys, "model", "patch", "--clean", "When Mary and John met, John thanked",
              "--corrupted", "When John and Mary met, Mary thanked", "--metric", " Mary, John",
              "--what", "heads")  # fmt: skip
    assert "resid_restored" not in d and np.array(d["heads_restored"]).shape == (30, 9)
    assert d["clean"] > d["corrupted"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("flow", "--model", "minilm", "--text", RIVER, "--token", "cat"),
         "'cat' is not in the text"),
        (("flow", "--model", "minilm", "--text", "  ", "--token", "cat"), "--text is empty"),
        (("compare", "--model", "minilm", "--a", RIVER, "--b", "", "--token", "bank"),
         "--b is empty"),
        (("compare", "--model", "minilm", "--a", RIVER, "--b", "a cat", "--token", "bank"),
         "--b: the token 'bank' is not in the text"),
        (("patch", "--model", "minilm", "--clean", "a river bank", "--corrupted", "a bank",
          "--token", "bank"), "same token length"),
        (("patch", "--model", "minilm", "--clean", "a bank", "--corrupted", "a bank",
          "--token", "bank"), "no gap"),
        (("patch", "--model", "minilm", "--clean", "a bank", "--corrupted", "the bank",
          "--metric", " Mary, John"), "minilm takes --token"),
    ],
)  # fmt: skip
def test_bad_inputs_end_in_one_line_and_exit_2(capsys, args, words):
    assert words in _error(capsys, "model", *args)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("patch", "--clean", "When Mary", "--corrupted", "When John", "--metric", " Mary"),
         "must name two next tokens"),
        (("patch", "--clean", "When Mary", "--corrupted", "When John",
          "--metric", " Mary Ann, John"), "must be one token"),
        (("patch", "--clean", "When Mary", "--corrupted", "When John"), 'takes --metric " Mary"'),
        (("lens", "--text", ""), "--text is empty"),
        (("lens", "--text", "a b", "--k", "0"), "--k must lie in [1, 50]"),
    ],
)  # fmt: skip
def test_smollm2_bad_inputs_end_in_one_line_and_exit_2(capsys, args, words):
    assert words in _error(capsys, "model", *args)
