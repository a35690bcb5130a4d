"""Two edits of one scenario put together: the later one's changes win, the rest is kept."""

from __future__ import annotations

import numpy as np
import pytest

from attnsim.engine.scenario import Head, ScenarioError, merge_edits, random_scenario


@pytest.fixture
def base():
    return random_scenario(6, 4, mask="causal", receiving=5, seed=2)


def with_x(sc, row, col, value):
    X = np.array(sc.X)
    X[row, col] = value
    return sc.replace(X=X)


def test_changes_to_different_entries_of_one_array_are_both_kept(base):
    ours = with_x(base, 3, 0, 9.0)  # a drag's move
    theirs = with_x(base, 1, 2, -4.0)  # a value typed meanwhile
    merged = merge_edits(base, ours, theirs)
    assert merged.X[3, 0] == 9.0 and merged.X[1, 2] == -4.0
    untouched = np.ones(base.X.shape, bool)
    untouched[3, 0] = untouched[1, 2] = False
    assert np.array_equal(merged.X[untouched], base.X[untouched])


def test_the_later_edit_wins_where_both_changed_the_same_entry(base):
    merged = merge_edits(base, with_x(base, 3, 0, 9.0), with_x(base, 3, 0, 1.5))
    assert merged.X[3, 0] == 1.5


def test_different_fields_are_both_kept(base):
    merged = merge_edits(base, with_x(base, 3, 0, 9.0), base.replace(temperature=2.5))
    assert merged.X[3, 0] == 9.0 and merged.temperature == 2.5


def test_heads_are_merged_matrix_by_matrix(base):
    h = base.heads[0]
    wq = np.array(h.Wq)
    wq[0, 0] += 1.0
    wv = np.array(h.Wv)
    wv[1, 1] -= 1.0
    ours = base.replace(heads=(Head(wq, h.Wk, h.Wv, name=h.name),))
    theirs = base.replace(heads=(Head(h.Wq, h.Wk, wv, name=h.name),))
    merged = merge_edits(base, ours, theirs).heads[0]
    assert np.array_equal(merged.Wq, wq) and np.array_equal(merged.Wv, wv)
    assert np.array_equal(merged.Wk, h.Wk)


def test_a_structural_edit_wins_over_a_move_it_cannot_hold(base):
    ours = with_x(base, 3, 0, 9.0)
    theirs = base.replace(tokens=base.tokens[:4], X=base.X[:4], mask="causal", receiving=3)
    merged = merge_edits(base, ours, theirs)  # X changed shape: the later edit's X wins
    assert merged.n_tokens == 4 and np.array_equal(merged.X, base.X[:4])


def test_an_unchanged_side_gives_the_other_side_itself(base):
    ours = with_x(base, 3, 0, 9.0)
    assert merge_edits(base, ours, base) is ours
    assert merge_edits(base, base, ours) is ours


def test_a_merge_that_is_not_a_valid_scenario_raises(base):
    ours = base.replace(tokens=base.tokens[:4], X=base.X[:4], mask="causal", receiving=3)
    theirs = base.replace(receiving=4)  # the fifth token, which the other edit removed
    with pytest.raises(ScenarioError):
        merge_edits(base, ours, theirs)
