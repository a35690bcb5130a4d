"""The size budget of a scenario: heads × n² (and the n × d vectors) bounded so that every
accepted scenario fits the app's memory goal; a larger one is refused when it is opened, with a
sentence naming the file, the field and the size."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnsim.engine.scenario import MAX_DIM, MAX_HEADS, MAX_TOKENS, Head, Scenario, ScenarioError
from attnsim.engine.scenario.checks import (
    MAX_ATTENTION_BYTES,
    attention_bytes,
    check_attention_size,
)


def _tokens(n: int) -> tuple[str, ...]:
    return tuple(f"t{i}" for i in range(n))


def _scenario(n: int, heads: int, d: int = 1, d_k: int = 1) -> Scenario:
    W = np.ones((d, d_k))
    return Scenario(
        name="big",
        tokens=_tokens(n),
        X=np.ones((n, d)),
        heads=tuple(Head(W, W, W) for _ in range(heads)),
        Wo=np.ones((heads * d_k, d)),
        mask="causal",
    )


def test_the_budget_is_the_largest_one_head_scenario_at_the_limits():
    assert attention_bytes(MAX_TOKENS, 1, MAX_DIM, MAX_DIM, MAX_DIM) == MAX_ATTENTION_BYTES
    # three float64 tables and a mask per cell, plus the float64 vectors: 0.72 GB, well under the
    # 1.5 GB the whole app may use
    assert 0.70e9 < MAX_ATTENTION_BYTES < 0.75e9
    check_attention_size(MAX_TOKENS, 1, MAX_DIM, MAX_DIM, MAX_DIM)  # accepted: no error


@pytest.mark.parametrize(
    ("n", "d", "d_k", "most"),
    [(4096, 1, 1, 1), (4096, 1024, 1024, 1), (2048, 64, 64, 6), (1024, 64, 64, 24)],
)
def test_the_most_heads_at_a_length(n, d, d_k, most):
    check_attention_size(n, most, d, d_k, d_k)
    with pytest.raises(ScenarioError) as err:
        check_attention_size(n, most + 1, d, d_k, d_k)
    assert err.value.field == "heads"
    assert f"at most {most} head" in err.value.problem


def test_every_head_count_fits_at_512_tokens_of_width_64():
    check_attention_size(512, MAX_HEADS, 64, 64, 64)
    assert attention_bytes(512, MAX_HEADS, 64, 64, 64) <= MAX_ATTENTION_BYTES


def test_the_refusal_is_a_sentence_with_the_size():
    with pytest.raises(ScenarioError) as err:
        check_attention_size(4096, 64, MAX_DIM, 16, 16)
    text = err.value.problem
    need = attention_bytes(4096, 64, MAX_DIM, 16, 16) / 1e9
    assert text.startswith(f"4,096 tokens × 64 heads need about {need:.1f} GB")
    assert "attnsim holds at most 1 head of this width at this length" in text
    assert "1.5 GB" in text and "_" not in text


def test_the_constructor_refuses_two_heads_at_the_longest_length():
    _scenario(MAX_TOKENS, 1)  # one head: accepted
    with pytest.raises(ScenarioError) as err:
        _scenario(MAX_TOKENS, 2)
    assert err.value.field == "heads"
    assert "4,096 tokens × 2 heads" in str(err.value)


def test_opening_a_file_over_the_budget_names_the_file_field_and_size(tmp_path):
    sc = _scenario(2048, 6)
    data = json.loads(sc.dumps())
    W = [[1.0]]
    data["heads"] = [{"Wq": W, "Wk": W, "Wv": W} for _ in range(64)]
    data["Wo"] = [[1.0]] * 64
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ScenarioError) as err:
        Scenario.load(path)
    assert err.value.file == str(path)
    assert err.value.field == "heads"
    assert str(err.value).startswith(f"{path}: heads: 2,048 tokens × 64 heads need about ")
    assert "at most 6 heads" in str(err.value)
