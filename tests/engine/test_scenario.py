"""Scenarios: presets load and round-trip; malformed files are refused with a clear message."""

from __future__ import annotations

import dataclasses
import json
import math
from types import SimpleNamespace

import numpy as np
import pytest

from attnsim.engine.scenario import Head, Scenario, ScenarioError
from attnsim.resources import preset_names, preset_titles, resolve_scenario, scenario_path

EXPECTED_PRESETS = {
    "river-bank", "money-bank", "eiffel-raw", "eiffel-swap-query", "eiffel-swap-values",
    "wq-find-water", "wq-find-finance", "wq-find-structure", "three-fields", "tired-cat",
    "bank-river", "routing-lab", "code-definition", "two-heads",
}  # fmt: skip


def test_every_worked_example_has_a_preset():
    assert set(preset_names()) >= EXPECTED_PRESETS
    titles = preset_titles()
    assert all(titles[n] for n in preset_names())


@pytest.mark.parametrize("name", sorted(EXPECTED_PRESETS))
def test_preset_loads_and_round_trips_bit_for_bit(name, tmp_path):
    sc = resolve_scenario(name)
    assert sc.name == name
    out = tmp_path / f"{name}.json"
    sc.save(out)
    again = Scenario.load(out)
    assert again.equals(sc)
    assert again.dumps() == sc.dumps()
    for field in ("X", "Q", "K", "V", "Wo"):
        a, b = getattr(sc, field), getattr(again, field)
        assert (a is None and b is None) or np.array_equal(a, b)
    for h1, h2 in zip(sc.heads, again.heads, strict=True):
        assert h1.equals(h2)
    result = sc.compute()
    assert all(np.isfinite(h.weights).all() for h in result.heads)


def test_scenario_arrays_are_read_only():
    sc = resolve_scenario("river-bank")
    with pytest.raises(ValueError):
        sc.X[0, 0] = 5.0


def test_identity_shorthand_and_receiving_by_name():
    data = {
        "name": "tiny",
        "tokens": ["a", "b"],
        "X": [[1, 0], [0, 1]],
        "Wq": "identity",
        "Wk": "identity",
        "Wv": "identity",
        "receiving": "a",
    }
    sc = Scenario.from_dict(data)
    assert sc.receiving == 0
    np.testing.assert_array_equal(sc.heads[0].Wq, np.eye(2))
    assert sc.axes == ("x1", "x2")


def base() -> dict:
    return json.loads(scenario_path("river-bank").read_text())


def mutate(path: str, value):
    d = base()
    node = d
    keys = path.split(".")
    for k in keys[:-1]:
        node = node[int(k)] if isinstance(node, list) else node[k]
    last = keys[-1]
    if value is KeyError:
        del node[last]
    elif isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return d


BAD_CASES = [
    ("missing name", mutate("name", KeyError), "name", "is missing"),
    ("missing X", mutate("X", KeyError), "X", "is missing"),
    ("missing Wq", mutate("heads.0.Wq", KeyError), "heads[0].Wq", "is missing"),
    ("ragged X", mutate("X", [[0, 0, 0, 1], [0, 1]]), "X", "must be a matrix"),
    ("X too few rows", mutate("X", [[0, 0, 0, 1], [0, 1, 0, 0]]), "X", "has 2 rows but there are 3 tokens"),
    ("Wk wrong rows", mutate("heads.0.Wk", [[1, 0], [0, 1]]), "heads[0].Wk", "has 2 rows but X has 4 columns"),
    ("NaN", mutate("X", [[0, 0, 0, float("nan")], [0, 1, 0, 0.2], [0.5, 0.5, 0.8, 0.2]]), "X[0, 3]", "nan"),
    ("inf", mutate("X", [[0, 0, 0, float("inf")], [0, 1, 0, 0.2], [0.5, 0.5, 0.8, 0.2]]), "X[0, 3]", "inf"),
    ("string in X", mutate("X", [[0, 0, 0, "one"], [0, 1, 0, 0.2], [0.5, 0.5, 0.8, 0.2]]), "X[0, 3]", "'one' is not a number"),
    ("bool in X", mutate("X", [[0, 0, 0, True], [0, 1, 0, 0.2], [0.5, 0.5, 0.8, 0.2]]), "X[0, 3]", "True is not a number"),
    ("huge in Wq", mutate("heads.0.Wq.2.1", 1e200), "heads[0].Wq[2, 1]", "1e+200 is outside ±1e+06"),
    ("just over the bound", mutate("X.1.2", -1000000.1), "X[1, 2]", "-1000000.1 is outside ±1e+06"),
    ("1e160 in X", mutate("X.0.0", 1e160), "X[0, 0]", "1e+160 is outside"),
    ("huge int in X", mutate("X.2.3", 10**400), "X[2, 3]", "is outside ±1e+06"),
    ("huge int temperature", mutate("temperature", 10**400), "temperature", "is outside the range"),
    ("duplicate tokens", mutate("tokens", ["the", "bank", "the"]), "tokens[2]", "'the' repeats tokens[0]"),
    ("duplicate axes", mutate("axes", ["a", "b", "a", "c"]), "axes[2]", "repeats axes[0]"),
    ("row not a list", mutate("X", [[0, 0, 0, 1], 5, [0.5, 0.5, 0.8, 0.2]]), "X[1]", "must be a row"),
    ("empty mask row", mutate("mask", [[False, False, False], [True, True, False], [True] * 3]), "mask", "row 0 has no legal key"),
    ("mask shape", mutate("mask", [[True, True], [True, True]]), "mask", "must have shape (3, 3)"),
    ("mask kind", mutate("mask", "sideways"), "mask", "'none', 'causal'"),
    ("temperature", mutate("temperature", 0), "temperature", "positive"),
    ("temperature str", mutate("temperature", "hot"), "temperature", "positive"),
    ("receiving", mutate("receiving", 9), "receiving", "query index"),
    ("version", mutate("version", 99), "version", "not supported"),
    ("unknown field", mutate("colour", "red"), "colour", "not a scenario field"),
    ("axes count", mutate("axes", ["a", "b"]), "axes", "names 2 axes but X has 4 columns"),
    ("enormous", mutate("X", np.zeros((3, 100_000)).tolist()), "X", "too large"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("label", "data", "field", "problem"), BAD_CASES, ids=[c[0] for c in BAD_CASES]
)
def test_malformed_scenarios_name_file_field_and_problem(tmp_path, label, data, field, problem):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ScenarioError) as info:
        Scenario.load(path)
    err = info.value
    assert err.file == str(path)
    assert err.field == field
    assert problem in err.problem
    assert str(path) in str(err) and field in str(err)


def test_bad_json_reports_line_and_column(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"name": "x",\n "tokens": [1, 2,, 3]}')
    with pytest.raises(ScenarioError, match=r"broken.json: \(JSON\): not valid JSON: .* line 2"):
        Scenario.load(path)


def test_missing_file_and_unknown_preset():
    with pytest.raises(ScenarioError, match="cannot be read"):
        Scenario.load("/nonexistent/x.json")
    with pytest.raises(ScenarioError, match="no preset named 'nope'"):
        resolve_scenario("nope")


def test_replace_validates_and_keeps_the_original():
    sc = resolve_scenario("river-bank")
    with pytest.raises(ScenarioError, match="temperature"):
        sc.replace(temperature=-1.0)
    changed = sc.replace(temperature=2.0)
    assert sc.temperature == 1.0 and changed.temperature == 2.0
    assert changed.X is sc.X  # unchanged arrays are shared, not copied


def test_direct_scenario_and_mask_matrix():
    sc = Scenario(
        name="d",
        mode="direct",
        tokens=("a", "b", "c"),
        Q=[[1.0, 0.0], [0.0, 1.0]],
        K=[[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]],
        V=[[1.0], [2.0], [3.0]],
        mask=[[True, False, True], [False, True, False]],
    )
    assert sc.n_queries == 2 and sc.query_labels == ("q1", "q2")
    assert sc.mask_kind == "custom"
    w = sc.compute().heads[0].weights
    assert w[0, 1] == 0.0 and w[1, 0] == 0.0 and w[1, 1] == 1.0
    text = sc.dumps()
    assert Scenario.loads(text).equals(sc)


def test_mask_value_zero_round_trips():
    sc = resolve_scenario("bank-river").replace(mask_value=0.0)
    again = Scenario.loads(sc.dumps())
    assert again.mask_value == 0.0
    assert again.compute().heads[0].weights[0, 2] > 0
    assert resolve_scenario("bank-river").mask_value == -math.inf


def test_multi_head_needs_matching_widths():
    X = np.eye(4)
    h1 = Head(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)))
    h2 = Head(np.ones((4, 3)), np.ones((4, 3)), np.ones((4, 2)))
    with pytest.raises(ScenarioError, match="all heads must share d_k"):
        Scenario(name="m", tokens=tuple("abcd"), X=X, heads=(h1, h2))


def test_engine_imports_no_qt(modules_loaded_by):
    loaded = modules_loaded_by("attnsim.engine, attnsim.engine.experiments, attnsim.resources")
    qt = ("PySide6", "pyqtgraph", "PyQt5", "PyQt6", "shiboken6")
    bad = [m for m in loaded if m.split(".")[0] in qt]
    assert not bad, f"engine pulled in Qt modules: {bad}"


@pytest.mark.parametrize("t", [1e-4, 5e-324, 1e4])
def test_temperature_outside_the_apps_range_is_refused(t):
    sc = resolve_scenario("river-bank")
    with pytest.raises(ScenarioError, match=r"outside the range 0\.001 to 1000"):
        sc.replace(temperature=t)


def test_random_scenario_is_seeded_and_valid():
    from attnsim.engine.scenario import random_scenario

    a = random_scenario(50, 6, seed=3, mask="causal")
    b = random_scenario(50, 6, seed=3, mask="causal")
    assert np.array_equal(a.X, b.X) and a.X.shape == (50, 6)
    assert a.tokens[:2] == ("t0", "t1") and a.receiving == 49 and a.mask == "causal"
    assert not np.array_equal(a.X, random_scenario(50, 6, seed=4).X)
    np.testing.assert_array_equal(a.compute().heads[0].Q, a.X)  # identity projections


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_no_accepted_scenario_overflows_the_engine(mask):
    from attnsim.engine.scenario import MAX_ABS_VALUE, MAX_DIM, MIN_TEMPERATURE

    # Every entry at the bound, signs chosen so the largest scores add up, widest d and d_k,
    # the coldest temperature: the scores, logits, weights and outputs all stay finite.
    big = MAX_ABS_VALUE
    X = np.full((3, MAX_DIM), big)
    X[1] *= -1
    W = np.full((MAX_DIM, MAX_DIM), big)
    sc = Scenario(
        name="at-the-bound",
        tokens=("a", "b", "c"),
        X=X,
        heads=(Head(W, W, W), Head(W, -W, W)),
        Wo=np.full((2 * MAX_DIM, MAX_DIM), -big),
        temperature=MIN_TEMPERATURE,
        mask=mask,
    )
    res = sc.compute()
    for tr in res.heads:
        assert np.abs(tr.scores).max() > 1e32  # really at the extreme
        for name in ("Q", "K", "V", "scores", "logits", "weights", "output", "entropy"):
            assert np.isfinite(getattr(tr, name)).all(), name
        assert np.isfinite(tr.masked_logits[tr.mask]).all()
        np.testing.assert_allclose(tr.weights.sum(axis=1), 1.0, rtol=1e-12)
        assert np.isfinite(tr.contribution_norms).all()
    assert res.block is not None
    assert np.isfinite(res.block.Y).all() and np.isfinite(res.block.delta).all()


def test_no_accepted_direct_scenario_overflows_the_engine():
    from attnsim.engine.audit import run_audit
    from attnsim.engine.scenario import MAX_ABS_VALUE, MAX_DIM, MIN_TEMPERATURE

    Q = np.full((2, MAX_DIM), MAX_ABS_VALUE)
    K = np.vstack([Q[0], -Q[0], Q[0] * 0.5])
    sc = Scenario(
        name="direct-bound", tokens=("a", "b", "c"), mode="direct", query_tokens=("p", "q"),
        Q=Q, K=K, V=K, temperature=MIN_TEMPERATURE,
    )  # fmt: skip
    tr = sc.compute().heads[0]
    for name in ("scores", "logits", "weights", "output", "entropy"):
        assert np.isfinite(getattr(tr, name)).all(), name
    for check in run_audit(sc):
        assert np.isfinite(check.value), check.name


def test_rows_given_as_arrays_or_tuples_are_accepted():
    rows = [np.array([1.0, 0.0]), (0.5, 2), [np.float32(0.25), np.int64(3)]]
    sc = Scenario(
        name="rows", tokens=("a", "b", "c"), mode="direct", query_tokens=("q",),
        Q=[np.array([1.0, 0.0])], K=rows, V=rows,
    )  # fmt: skip
    np.testing.assert_array_equal(sc.K, [[1.0, 0.0], [0.5, 2.0], [0.25, 3.0]])


# ---- the package's single-value checks and per-mode field checks ---------------------------------
def test_single_value_checks_normalise_or_refuse_naming_the_field():
    from attnsim.engine.scenario import checks

    assert checks.check_mask_value("zero") == 0.0 and checks.check_mask_value("-inf") == -math.inf
    assert checks.check_temperature(2) == 2.0 and isinstance(checks.check_temperature(2), float)
    assert checks.check_scale(np.bool_(True)) is True
    # A label names the last query of that name; an index may count from the end.
    assert checks.check_receiving("the", ("the", "cat", "the")) == 2
    assert checks.check_receiving(-1, ("a", "b", "c")) == 2
    for call, field in (
        (lambda: checks.check_mask_value(1), "mask_value"),
        (lambda: checks.check_temperature(10**400), "temperature"),
        (lambda: checks.check_temperature(True), "temperature"),
        (lambda: checks.check_scale(1), "scale"),
        (lambda: checks.check_receiving(3, ("a", "b", "c")), "receiving"),
        (lambda: checks.labels(["a", "a"], "tokens"), "tokens[1]"),
        (lambda: checks.axes_or_default(["u", "v"], "axes", 3, "x"), "axes"),
        (lambda: checks.validate_mask([[False, False]], 1, 2), "mask"),
    ):
        with pytest.raises(ScenarioError) as err:
            call()
        assert err.value.field == field
    assert checks.axes_or_default((), "qk_axes", 2, "k") == ("k1", "k2")


def test_validate_mask_never_freezes_the_callers_array():
    from attnsim.engine.scenario.checks import validate_mask

    mine = np.array([[True, False], [True, True]])
    m = validate_mask(mine, 2, 2)
    assert m is not mine and not m.flags.writeable and mine.flags.writeable
    assert validate_mask(m, 2, 2) is m  # a frozen mask is reused as it is


def test_field_checks_return_every_validated_field_of_their_mode():
    from attnsim.engine.scenario.fields import direct_fields, token_fields

    sc = resolve_scenario("river-bank")
    tok = token_fields(sc, sc.n_tokens)
    assert set(tok) == {"X", "axes", "heads", "qk_axes", "v_axes", "wq_presets", "absent",
                        "query_tokens"}  # fmt: skip
    assert tok["X"] is sc.X and tok["query_tokens"] == ()
    direct = resolve_scenario("routing-lab")
    out = direct_fields(direct, direct.n_tokens)
    assert set(out) == {"Q", "K", "V", "query_tokens", "qk_axes", "axes", "v_axes"}
    assert out["axes"] == out["qk_axes"] == direct.qk_axes
    # A field of the other mode is refused, not dropped.
    raw = {f.name: getattr(direct, f.name) for f in dataclasses.fields(direct)}
    with pytest.raises(ScenarioError, match="belongs to token scenarios") as err:
        direct_fields(SimpleNamespace(**{**raw, "Wo": np.eye(2)}), direct.n_tokens)
    assert err.value.field == "Wo"


def test_every_preset_has_a_declared_place_and_a_plain_line_in_the_teaching_order():
    from attnsim.resources import TEACHING_ORDER, presets_in_order

    declared = [name for name, _ in TEACHING_ORDER]
    assert sorted(declared) == preset_names()  # a new preset must be placed in the course
    assert len(set(declared)) == len(declared)
    assert declared[0] == "river-bank"  # the basic mixing example first
    assert declared.index("river-bank") < declared.index("bank-river")
    assert [p.name for p in presets_in_order()] == declared
    for name, blurb in TEACHING_ORDER:
        assert blurb.endswith(".") and "\n" not in blurb and len(blurb) <= 110, name
        assert "_" not in blurb, name  # a sentence about attention, not a code name


def test_a_preset_not_yet_placed_follows_with_its_descriptions_first_sentence(monkeypatch):
    import attnsim.resources as res

    monkeypatch.setattr(res, "TEACHING_ORDER", res.TEACHING_ORDER[1:])  # river-bank undeclared
    listed = res.presets_in_order()
    assert listed[-1].name == "river-bank"
    assert (
        listed[-1].blurb == "Four hand-named coordinates (finance, water, structure, generic) "
        "and identity projections."
    )
