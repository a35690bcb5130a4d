"""The named quantities against NumPy computed here, on the river-bank preset; ``token_index``
with repeated tokens; ``Check.holds`` at NaN and at both bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsim.engine import edits as scenario_edits
from attnsim.engine.scenario import ScenarioError
from attnsim.lessons.format import Check
from attnsim.lessons.labs import LAB_QUANTITIES
from attnsim.lessons.quantities import QUANTITIES, Quantity, resolve, token_index
from attnsim.resources import resolve_scenario

THE, RIVER, BANK = 0, 1, 2


@pytest.fixture(scope="module")
def river_bank():
    return resolve_scenario("river-bank")


def read(sc, name, **kw) -> float:
    return resolve(Quantity(name, **kw), sc).read(sc, sc.compute())


def by_hand(sc, temperature=None):
    """Q, K, V, scores, logits, weights and output of head 1, from X and the matrices."""
    X = np.asarray(sc.X, dtype=float)
    h = sc.heads[0]
    Q, K, V = X @ np.asarray(h.Wq), X @ np.asarray(h.Wk), X @ np.asarray(h.Wv)
    scores = Q @ K.T
    t = sc.temperature if temperature is None else temperature
    logits = scores / math.sqrt(K.shape[1]) / t
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    weights = e / e.sum(axis=1, keepdims=True)
    return Q, K, V, scores, logits, weights, weights @ V


def test_the_preset_is_the_one_the_numbers_are_for(river_bank):
    assert river_bank.tokens == ("the", "river", "bank")
    assert river_bank.mode == "tokens" and river_bank.scale is True
    assert river_bank.temperature == 1.0
    assert river_bank.axes == ("finance", "water", "structure", "generic")


def test_weights_of_bank(river_bank):
    *_, weights, _ = by_hand(river_bank)
    np.testing.assert_allclose(weights[BANK], [0.2619, 0.3105, 0.4276], atol=1e-4)
    got = [read(river_bank, "weight", of="bank", on=t) for t in ("the", "river", "bank")]
    np.testing.assert_allclose(got, weights[BANK], atol=1e-12)
    np.testing.assert_allclose(got, [0.2619, 0.3105, 0.4276], atol=1e-4)
    assert sum(got) == pytest.approx(1.0, abs=1e-12)


def test_weight_by_position(river_bank):
    assert read(river_bank, "weight", of=3, on=2) == pytest.approx(0.3105, abs=1e-4)


def test_output_of_bank(river_bank):
    *_, output = by_hand(river_bank)
    np.testing.assert_allclose(output[BANK], [0.214, 0.524, 0.342, 0.41], atol=1e-3)
    axes = river_bank.axes
    got = [read(river_bank, "output", of="bank", axis=a) for a in axes]
    np.testing.assert_allclose(got, output[BANK], atol=1e-12)
    by_number = [read(river_bank, "output", of="bank", axis=n) for n in range(1, 5)]
    np.testing.assert_allclose(by_number, got, atol=1e-15)


def test_score_logit_and_cosine(river_bank):
    Q, K, _, scores, logits, _, _ = by_hand(river_bank)
    q, k = Q[BANK], K[RIVER]
    # bank's query [0.5, 0.5, 0.8, 0.2] with river's key [0, 1, 0, 0.2]
    assert scores[BANK, RIVER] == pytest.approx(0.54, abs=1e-12)
    assert read(river_bank, "score", of="bank", on="river") == pytest.approx(0.54, abs=1e-12)
    assert read(river_bank, "logit", of="bank", on="river") == pytest.approx(0.27, abs=1e-12)
    assert logits[BANK, RIVER] == pytest.approx(0.27, abs=1e-12)
    cos = 0.54 / (math.sqrt(0.25 + 0.25 + 0.64 + 0.04) * math.sqrt(1 + 0.04))
    assert float(q @ k / np.linalg.norm(q) / np.linalg.norm(k)) == pytest.approx(cos, abs=1e-12)
    assert read(river_bank, "cosine", of="bank", on="river") == pytest.approx(cos, abs=1e-12)
    assert read(river_bank, "cosine", of="the", on="the") == pytest.approx(1.0, abs=1e-12)


def test_entropy_and_max_weight(river_bank):
    *_, weights, _ = by_hand(river_bank)
    w = weights[BANK]
    bits = -sum(p * math.log2(p) for p in w)
    assert 0 < bits < math.log2(3)
    assert read(river_bank, "entropy", of="bank") == pytest.approx(bits, abs=1e-10)
    assert read(river_bank, "max_weight", of="bank") == pytest.approx(max(w), abs=1e-12)
    assert read(river_bank, "max_weight", of="bank") == pytest.approx(0.4276, abs=1e-4)


def test_entropy_of_a_uniform_row_is_log2_n(river_bank):
    # with every vector equal, every row is uniform over the 3 keys
    sc = river_bank
    for row in range(3):
        sc = scenario_edits.set_vector(sc, "x", row, [1.0, 0.0, 0.0, 0.0])
    assert read(sc, "entropy", of="bank") == pytest.approx(math.log2(3), abs=1e-12)


def test_residual_query_key_and_temperature(river_bank):
    Q, K, _, _, _, _, output = by_hand(river_bank)
    X = np.asarray(river_bank.X)
    residual = [read(river_bank, "residual", of="bank", axis=a) for a in river_bank.axes]
    # identity Wo: bank becomes X + output, [0.71, 1.02, 1.14, 0.61] in the lesson's words
    np.testing.assert_allclose(residual, X[BANK] + output[BANK], atol=1e-12)
    np.testing.assert_allclose(residual, [0.714, 1.024, 1.142, 0.61], atol=1e-3)
    assert read(river_bank, "query", of="bank", axis="structure") == pytest.approx(Q[BANK, 2])
    assert read(river_bank, "key", of="river", axis="water") == pytest.approx(K[RIVER, 1])
    assert read(river_bank, "temperature") == 1.0
    warm = river_bank.replace(temperature=2.0)
    assert read(warm, "temperature") == 2.0


def test_a_lower_temperature_sharpens_the_row(river_bank):
    cold = river_bank.replace(temperature=0.3)
    *_, weights, _ = by_hand(river_bank, temperature=0.3)
    assert read(cold, "weight", of="bank", on="bank") == pytest.approx(weights[BANK, BANK])
    assert weights[BANK, BANK] > 0.6 > read(river_bank, "weight", of="bank", on="bank")


def test_forbidden_weight_with_the_masking_mistake(river_bank):
    """Causal mask with mask_value 0: forbidden logits become 0 instead of -inf."""
    sc = river_bank.replace(mask="causal")
    assert read(sc, "forbidden_weight", of="the") == pytest.approx(0.0, abs=1e-12)
    wrong = sc.replace(mask_value=0.0)
    _, _, _, _, logits, _, _ = by_hand(river_bank)
    allowed = np.tril(np.ones((3, 3), dtype=bool))
    z = np.where(allowed, logits, 0.0)
    w = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    forbidden = np.where(allowed, 0.0, w).sum(axis=1)
    assert forbidden[THE] > 0.1
    assert read(wrong, "forbidden_weight", of="the") == pytest.approx(forbidden[THE], abs=1e-10)
    assert read(wrong, "forbidden_weight") == pytest.approx(forbidden.max(), abs=1e-10)


def test_every_quantity_is_read_by_some_test():
    """A quantity added to QUANTITIES without a test here fails this list."""
    assert set(QUANTITIES) == {
        "weight", "score", "logit", "cosine", "max_weight", "entropy", "output", "residual",
        "query", "key", "forbidden_weight", "temperature",
    } | set(LAB_QUANTITIES)  # fmt: skip
    # the lab's quantities are read in test_labs.py
    assert set(LAB_QUANTITIES) == {
        "induction_score", "previous_token_score", "repeated_loss", "first_loss", "heads_removed"
    }  # fmt: skip


@pytest.mark.parametrize(
    ("quantity", "problem"),
    [
        (Quantity("weight", of="bank"), "needs 'on'"),
        (Quantity("weight", on="bank"), "needs 'of'"),
        (Quantity("entropy", of="bank", on="river"), "takes no key token"),
        (Quantity("temperature", of="bank"), "is about no token"),
        (Quantity("output", of="bank"), "needs 'axis'"),
        (Quantity("weight", of="bank", on="river", axis=1), "takes no axis"),
        (Quantity("output", of="bank", axis=0), "there is no axis 0"),
        (Quantity("weight", of="bank", on="river", head=2), "there is no head 2 (there are 1)"),
        (Quantity("weight", of="money", on="river"), "there is no token 'money'"),
        (Quantity("softmax", of="bank"), "there is no quantity 'softmax'"),
    ],
)
def test_resolve_names_the_problem(river_bank, quantity, problem):
    with pytest.raises(ValueError) as info:
        resolve(quantity, river_bank)
    assert problem in str(info.value)


def test_the_words_of_a_reading(river_bank):
    assert resolve(Quantity("weight", "bank", "river"), river_bank).words == (
        "bank's weight on river"
    )
    two = resolve_scenario("two-heads")
    assert resolve(Quantity("weight", "bank", "river", head=2), two).words.endswith("in head 2")


def test_head_two_reads_head_two():
    two = resolve_scenario("two-heads")
    result = two.compute()
    for head in (1, 2):
        got = resolve(Quantity("weight", "bank", "river", head=head), two).read(two, result)
        assert got == pytest.approx(float(result.heads[head - 1].weights[BANK, RIVER]))


# ---- token_index --------------------------------------------------------------------------------
class Tokens:
    """What token_index reads of a scenario (its tokens), for a sentence with a repeated word:
    a real Scenario refuses repeated tokens (see test_a_scenario_refuses_repeated_tokens)."""

    def __init__(self, *tokens: str) -> None:
        self.tokens = tokens
        self.n_tokens = len(tokens)


BANK_RIVER_BANK = Tokens("bank", "river", "bank")


def test_a_scenario_refuses_repeated_tokens(river_bank):
    """Why the repeated-token cases use a stand-in: neither edit makes bank, river, bank."""
    with pytest.raises(ScenarioError, match="repeats"):
        scenario_edits.rename_token(river_bank, 0, "bank")
    with pytest.raises(ScenarioError, match="repeats"):
        scenario_edits.add_token(river_bank, "river", [0.0, 1.0, 0.0, 0.0])
    assert river_bank.tokens == ("the", "river", "bank")


def test_token_index_of_a_repeated_token():
    sc = BANK_RIVER_BANK
    assert token_index(sc, "bank#1") == 0
    assert token_index(sc, "bank#2") == 2
    assert token_index(sc, "river") == 1
    assert token_index(sc, "river#1") == 1
    assert token_index(sc, 3) == 2
    assert token_index(sc, 1) == 0


def test_token_index_on_a_real_scenario(river_bank):
    assert [token_index(river_bank, t) for t in ("the", "river", "bank")] == [0, 1, 2]
    assert token_index(river_bank, "bank#1") == 2
    with pytest.raises(ValueError, match="'bank' occurs 1 times, not 2"):
        token_index(river_bank, "bank#2")


@pytest.mark.parametrize(
    ("ref", "problem"),
    [
        ("bank", "'bank' occurs 2 times: say which, as bank#2"),
        ("bank#", "'bank' occurs 2 times"),  # nothing after '#': the plain label
        ("bank#3", "'bank' occurs 2 times, not 3"),
        ("bank#0", "after '#' comes which occurrence"),
        ("bank#-1", "after '#' comes which occurrence"),
        ("bank#two", "after '#' comes which occurrence"),
        ("money", "there is no token 'money' (the tokens are bank, river, bank)"),
        ("money#2", "there is no token 'money'"),
        (0, "there is no token at position 0 (there are 3)"),
        (4, "there is no token at position 4 (there are 3)"),
        (-1, "there is no token at position -1"),
    ],
)
def test_token_index_refusals(ref, problem):
    with pytest.raises(ValueError) as info:
        token_index(BANK_RIVER_BANK, ref)
    assert problem in str(info.value)


def test_token_index_of_a_query_reads_the_queries_names(routing_lab):
    assert token_index(routing_lab, "q", query=True) == 0
    assert token_index(routing_lab, "C") == 2
    with pytest.raises(ValueError, match="no query at position 2"):
        token_index(routing_lab, 2, query=True)
    with pytest.raises(ValueError, match="there is no query 'A'"):
        token_index(routing_lab, "A", query=True)


@pytest.mark.parametrize("name", ["C#", "x#2"])
def test_a_token_with_a_hash_in_its_name(river_bank, name):
    sc = scenario_edits.rename_token(river_bank, 0, name)
    assert sc.tokens[0] == name
    assert token_index(sc, name) == 0


# ---- Check.holds --------------------------------------------------------------------------------
Q = Quantity("weight", "bank", "river")


@pytest.mark.parametrize(
    ("check", "value", "holds"),
    [
        (Check(Q, at_least=0.7), 0.7, True),
        (Check(Q, at_least=0.7), 0.69, False),
        (Check(Q, at_least=0.7), float("inf"), True),
        (Check(Q, at_most=0.2), 0.2, True),
        (Check(Q, at_most=0.2), 0.21, False),
        (Check(Q, at_most=0.2), float("-inf"), True),
        (Check(Q, at_least=0.2, at_most=0.4), 0.3, True),
        (Check(Q, at_least=0.2, at_most=0.4), 0.2, True),
        (Check(Q, at_least=0.2, at_most=0.4), 0.4, True),
        (Check(Q, at_least=0.2, at_most=0.4), 0.1, False),
        (Check(Q, at_least=0.2, at_most=0.4), 0.5, False),
        (Check(Q, at_least=0.3, at_most=0.3), 0.3, True),
        (Check(Q, at_least=0.2, at_most=0.4), float("nan"), False),
        (Check(Q, at_least=0.7), float("nan"), False),
        (Check(Q, at_most=0.2), float("nan"), False),
        (Check(Q, at_least=float("-inf")), float("nan"), False),
        (Check(Q), float("nan"), False),
        (Check(Q, at_least=0.2, at_most=0.4), np.float64("nan"), False),
    ],
)
def test_check_holds(check, value, holds):
    assert check.holds(value) is holds


# ---- scenarios of queries and keys given directly ------------------------------------------------
@pytest.fixture(scope="module")
def routing_lab():
    sc = resolve_scenario("routing-lab")
    assert sc.mode == "direct" and sc.tokens == ("A", "B", "C") and sc.query_labels == ("q",)
    return sc


def test_direct_weights_by_position(routing_lab):
    result = routing_lab.compute()
    w = result.heads[0].weights
    got = [
        resolve(Quantity("weight", 1, j), routing_lab).read(routing_lab, result) for j in (1, 2, 3)
    ]
    np.testing.assert_allclose(got, w[0], atol=1e-12)
    Q, K = np.asarray(routing_lab.Q), np.asarray(routing_lab.K)
    assert routing_lab.scale is False  # no 1/sqrt(d_k) here
    logits = Q @ K.T / routing_lab.temperature
    np.testing.assert_allclose(w[0], np.exp(logits[0]) / np.exp(logits[0]).sum(), atol=1e-12)


def test_direct_query_named_by_its_label(routing_lab):
    r = resolve(Quantity("weight", of="q", on="B"), routing_lab)
    assert r.words == "q's weight on B"
    result = routing_lab.compute()
    assert r.read(routing_lab, result) == pytest.approx(result.heads[0].weights[0, 1], abs=1e-12)


def test_direct_key_of_the_third_key(routing_lab):
    r = resolve(Quantity("key", of="C", axis=1), routing_lab)
    assert r.read(routing_lab, routing_lab.compute()) == pytest.approx(routing_lab.K[2, 0])
