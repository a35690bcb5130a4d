"""Pure scenario edits and matrix import/export."""

from __future__ import annotations

import re

import numpy as np
import pytest

from attnsim.engine import edits, matrix_io
from attnsim.engine.scenario import ScenarioError, random_scenario
from attnsim.resources import resolve_scenario


def test_token_edits_keep_everything_consistent():
    sc = resolve_scenario("river-bank")
    added = edits.add_token(sc, "deep", [0, 0.7, 0.1, 0.2], index=1)
    assert added.tokens == ("the", "deep", "river", "bank")
    assert added.receiving == 3  # bank moved one place down
    np.testing.assert_array_equal(added.X[1], [0, 0.7, 0.1, 0.2])
    moved = edits.move_token(added, 3, 0)
    assert moved.tokens == ("bank", "the", "deep", "river") and moved.receiving == 0
    removed = edits.remove_token(moved, 0)
    assert removed.tokens == ("the", "deep", "river") and removed.receiving == 0
    renamed = edits.rename_token(removed, 1, "muddy")
    assert renamed.tokens[1] == "muddy"
    assert sc.tokens == ("the", "river", "bank")  # the original is untouched
    with pytest.raises(ScenarioError, match="last token"):
        edits.remove_token(edits.remove_token(edits.remove_token(sc, 0), 0), 0)
    with pytest.raises(ScenarioError, match="non-empty string"):
        edits.rename_token(sc, 0, "  ")


def test_custom_mask_follows_token_edits():
    sc = resolve_scenario("river-bank")
    m = edits.set_mask_cell(sc, 2, 0, False)
    assert m.mask_kind == "custom" and not m.mask_matrix()[2, 0]
    grown = edits.add_token(m, "x")
    assert grown.mask_matrix().shape == (4, 4) and grown.mask_matrix()[3].all()
    assert not grown.mask_matrix()[2, 0]
    with pytest.raises(ScenarioError, match="'the' would have no key left"):
        edits.set_mask_cell(sc.replace(mask="causal"), 0, 0, False)


def test_direct_mode_edits():
    sc = resolve_scenario("routing-lab")
    sc2 = edits.set_vector(sc, "k", 1, [0.0, 2.0])
    np.testing.assert_array_equal(sc2.K[1], [0.0, 2.0])
    sc3 = edits.add_token(sc, "D", [3.0, 0.0], value=[1.0, 1.0])
    assert sc3.K.shape == (4, 2) and sc3.V[3].tolist() == [1.0, 1.0]
    with pytest.raises(ScenarioError, match="direct scenarios have no X"):
        edits.set_vector(sc, "x", 0, [0, 0])
    with pytest.raises(ScenarioError, match="finite"):
        edits.set_cell(sc, "q", 0, 0, float("inf"))


def test_head_matrix_shape_is_kept():
    sc = resolve_scenario("river-bank")
    with pytest.raises(ScenarioError, match=r"must keep its shape \(4, 4\)"):
        edits.set_head_matrix(sc, 0, "Wq", np.ones((4, 3)))


def test_matrix_export_csv_and_npz(tmp_path):
    sc = resolve_scenario("two-heads")
    from attnsim.engine.scenario import compute

    res = compute(sc)
    files = matrix_io.save_csv_folder(res, tmp_path / "csv", sc)
    names = {f.stem for f in files}
    assert {"X", "weights_h1", "weights_h2", "output_h1", "concat", "Y"} <= names
    first = (tmp_path / "csv" / "weights_h1.csv").read_text().splitlines()
    assert first[0] == "query \\ key,the,river,bank"
    back = matrix_io.load_matrix(tmp_path / "csv" / "weights_h1.csv")
    np.testing.assert_array_equal(back, res.heads[0].weights)
    npz = np.load(matrix_io.save_npz(res, tmp_path / "m.npz", sc))
    np.testing.assert_array_equal(npz["Y"], res.block.Y)
    assert npz["contributions_h2"].shape == (3, 3, 2)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("1,2\n3,x\n", "row 2 holds 'x', which is not a number"),
        ("1,2\n3\n", "row 2 has 1 values, the first has 2"),
        ("1,nan\n", "holds nan at row 1, column 2"),
        ("", "is empty"),
    ],
)
def test_matrix_import_refusals_name_the_problem(tmp_path, content, message):
    p = tmp_path / "m.csv"
    p.write_text(content)
    with pytest.raises(ScenarioError) as info:
        matrix_io.load_matrix(p, name="X")
    assert message in str(info.value) and str(p) in str(info.value)


def test_import_targets():
    assert matrix_io.importable_targets(resolve_scenario("two-heads"))[:4] == [
        "X", "Wq (head 1)", "Wk (head 1)", "Wv (head 1)",
    ]  # fmt: skip
    assert matrix_io.parse_target("Wv (head 2)") == ("Wv", 1)
    assert matrix_io.target_shape(resolve_scenario("routing-lab"), "K") == (3, 2)


def test_a_copy_keeps_the_checked_fields_and_checks_the_changed_ones():
    sc = resolve_scenario("river-bank")
    moved = edits.set_vector(sc, "x", 1, [0.5, 0.25, 0.0, 1.0])
    # the fields not changed are the scenario's own, not checked and copied again
    assert moved.tokens is sc.tokens and moved.axes is sc.axes and moved.heads is sc.heads
    assert not moved.X.flags.writeable and moved.X is not sc.X
    np.testing.assert_array_equal(moved.X[1], [0.5, 0.25, 0.0, 1.0])
    np.testing.assert_array_equal(np.delete(moved.X, 1, 0), np.delete(sc.X, 1, 0))
    # what is changed is checked as before: a new label, a value past the bound, a NaN
    with pytest.raises(ScenarioError, match=r"tokens\[1\].*repeats"):
        sc.replace(tokens=("the", "the", "bank"))
    for bad, where in ((1e300, "X[2, 3]"), (float("nan"), "X[0, 1]")):
        X = np.array(sc.X)
        X[tuple(int(k) for k in where[2:-1].split(", "))] = bad
        with pytest.raises(ScenarioError, match=re.escape(where)):
            sc.replace(X=X)
    assert sc.replace(axes=sc.axes[::-1]).axes == sc.axes[::-1]


def test_the_fast_reader_gives_the_standard_readers_numbers_and_words():
    import json

    from attnsim.engine.scenario.json_io import parse_json

    # the same values, to the bit, as the standard reader (the edges of float64 included)
    text = json.dumps({"X": [[5e-324, 0.1, -0.0, 1.7976931348623157e308, 2.5e-310],
                             [123456789012345678, -1, 1e-7, 3.141592653589793, 0]],
                       "a": 1, "a ": "\u00e9"})  # fmt: skip
    got, want = parse_json(text), json.loads(text)
    assert got == want and list(got) == list(want)
    assert np.array_equal(np.array(got["X"]).view(np.int64), np.array(want["X"]).view(np.int64))
    assert [type(x) for x in got["X"][1]] == [type(x) for x in want["X"][1]]
    # what only the standard reader takes reaches the scenario's checks, which name the cell
    sc = resolve_scenario("river-bank").to_dict()
    sc["X"][1][2] = float("nan")
    with pytest.raises(ScenarioError, match=re.escape("X[1, 2]")):
        from attnsim.engine.scenario import Scenario

        Scenario.loads(json.dumps(sc))
    sc["X"][1][2] = 10**30  # an integer past 64 bits, and past the bound
    with pytest.raises(ScenarioError, match=re.escape("X[1, 2]")):
        Scenario.loads(json.dumps(sc))
    sc["X"][1][2] = True  # in a row of numbers: found although the row is read by its types
    with pytest.raises(ScenarioError, match=r"X\[1, 2\].*not a number"):
        Scenario.loads(json.dumps(sc))
    # and a broken file is refused with the standard reader's words
    with pytest.raises(ScenarioError, match="line 1, column 2"):
        parse_json("{]")


def test_a_large_row_edit_reuses_only_the_memory_of_a_dropped_edit():
    # A drag's move at n = 4,096, d = 1,024 copies 32 MB; a move replaced before it went in
    # leaves its copy to the next move instead of new pages from the kernel.
    d = 1024
    sc = random_scenario(edits.RECYCLE_BYTES // (8 * d) + 1, d, seed=3)
    first = edits.set_vector(sc, "x", 5, np.ones(d))
    dropped = edits.set_vector(sc, "x", 5, np.full(d, 2.0))
    held = np.asarray(first.X)[7]  # a view keeps first's array alive too
    where = dropped.X.ctypes.data
    del dropped
    again = edits.set_vector(sc, "x", 5, np.full(d, 3.0))
    assert (again.X.ctypes.data == where) == edits._COUNTS_EXACT
    assert not np.shares_memory(again.X, first.X) and not np.shares_memory(again.X, sc.X)
    assert again.X[5].tolist() == [3.0] * d and first.X[5].tolist() == [1.0] * d
    np.testing.assert_array_equal(np.delete(again.X, 5, axis=0), np.delete(sc.X, 5, axis=0))
    assert held.base is not None and not again.X.flags.writeable
