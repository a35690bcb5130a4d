"""The null-space lab's view-model: the query map's spaces, probe and 3-D scene."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnsim.engine.attention import direct_trace
from attnsim.viewmodels.nullspace_lab import (
    DEFAULT_E,
    DEFAULT_KEYS,
    DEFAULT_M,
    closest_param_on_line,
    query_map_spaces,
    query_probe,
    readable_direction,
    subspace_scene,
)


def test_readable_direction():
    np.testing.assert_allclose(readable_direction(np.array([1, 1, -1]) / -math.sqrt(3)), [1, 1, -1])
    np.testing.assert_allclose(readable_direction([0.0, -2.0, 1.0]), [0.0, 1.0, -0.5])
    with pytest.raises(ValueError):
        readable_direction([0.0, 0.0])


def test_the_reference_example_null_direction_and_query():
    sp = query_map_spaces(DEFAULT_M)
    assert sp.rank == 2
    np.testing.assert_allclose(sp.null_dir, [1.0, 1.0, -1.0], atol=1e-15)
    M = np.array(DEFAULT_M)
    np.testing.assert_allclose(M @ sp.row_dir, M @ sp.row_dir)  # finite
    assert np.linalg.norm(M @ sp.row_dir) > 1.0
    p0 = query_probe(DEFAULT_M, DEFAULT_E, 0.0)
    p1 = query_probe(DEFAULT_M, DEFAULT_E, 1.0)
    np.testing.assert_allclose(p0.query, [4.0, 5.0])
    np.testing.assert_allclose(p1.x, [2.0, 3.0, 2.0], atol=1e-15)
    np.testing.assert_allclose(p1.query, [4.0, 5.0], atol=1e-14)


@pytest.mark.parametrize(
    "M",
    [DEFAULT_M, [[2.0, -1.0, 0.5], [0.3, 4.0, -2.0]], [[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]]],
)
@pytest.mark.parametrize("t", [-2.7, 0.35, 3.0])
def test_null_moves_keep_query_scores_and_weights_row_moves_do_not(M, t):
    e = np.array([0.4, -1.3, 2.2])
    base = query_probe(M, e)
    moved = query_probe(M, e, t)
    for name in ("query", "scores", "logits", "weights"):
        np.testing.assert_allclose(getattr(moved, name), getattr(base, name), rtol=0, atol=1e-12)
    assert np.linalg.norm(moved.x - base.x) > 0.3
    # The query sees only the row-space part, which the null move leaves alone.
    np.testing.assert_allclose(moved.x_row, base.x_row, atol=1e-12)
    np.testing.assert_allclose(moved.x_row + moved.x_null, moved.x, atol=1e-14)
    row = query_probe(M, e, 0.0, 0.8)
    assert np.max(np.abs(row.query - base.query)) > 0.1
    assert np.max(np.abs(row.weights - base.weights)) > 1e-3


def test_probe_attention_is_the_engine_attention():
    p = query_probe(DEFAULT_M, DEFAULT_E, 0.5, -0.4)
    K = np.array(DEFAULT_KEYS)
    tr = direct_trace(p.query[None, :], K, K, scale=True)
    np.testing.assert_array_equal(p.weights, tr.weights[0])
    # K @ q runs BLAS's matrix-vector product, the engine a 1-row matrix product: the two may
    # round differently (FMA or not, another summation order) on another CPU kernel.
    np.testing.assert_allclose(p.scores, K @ p.query, rtol=1e-14, atol=1e-14)


def test_probe_refuses_bad_input():
    with pytest.raises(ValueError, match="e must"):
        query_probe(DEFAULT_M, [1.0, 2.0])
    with pytest.raises(ValueError, match="non-finite"):
        query_probe([[1.0, np.nan, 0.0], [0.0, 1.0, 1.0]], DEFAULT_E)
    with pytest.raises(ValueError, match="keys"):
        query_probe(DEFAULT_M, DEFAULT_E, keys=[[1.0, 0.0, 0.0]])


def test_zero_map_has_everything_in_its_null_space():
    p = query_probe(np.zeros((2, 3)), DEFAULT_E, 1.5, 2.0)
    assert p.spaces.rank == 0 and p.spaces.row_dir is None
    np.testing.assert_allclose(p.query, 0.0)
    np.testing.assert_allclose(p.weights, 1 / 3)
    scene = subspace_scene(np.zeros((2, 3)), DEFAULT_E, p.x, 2.0)
    assert scene.row_patch.shape == (0, 3) and scene.null_line.shape == (0, 3)


def test_subspace_scene_shapes_and_membership():
    M = np.array(DEFAULT_M)
    x = np.array([2.0, 3.0, 2.0])
    s = subspace_scene(M, DEFAULT_E, x, 4.0)
    assert s.row_patch.shape == (4, 3)
    assert s.null_line.shape == (2, 3) and s.level_line.shape == (2, 3)
    n = np.array([1.0, 1.0, -1.0])
    # The row-space patch is orthogonal to n; the null line is along n, through the origin.
    np.testing.assert_allclose(s.row_patch @ n, 0.0, atol=1e-12)
    np.testing.assert_allclose(np.cross(s.null_line[1] - s.null_line[0], n), 0.0, atol=1e-12)
    np.testing.assert_allclose(s.null_line.sum(axis=0), 0.0, atol=1e-12)
    # Every input on the level line gives e's query.
    np.testing.assert_allclose(s.level_line @ M.T, [[4.0, 5.0], [4.0, 5.0]], atol=1e-12)
    np.testing.assert_allclose(s.x_row, DEFAULT_E, atol=1e-12)
    rank1 = subspace_scene([[1.0, 0.0, 0.0], [2.0, 0.0, 0.0]], DEFAULT_E, x, 1.0)
    assert rank1.row_patch.shape == (2, 3) and rank1.null_line.shape == (4, 3)
    # Two null directions: the inputs sharing e's query fill a plane through e.
    assert rank1.level_line.shape == (4, 3)
    np.testing.assert_allclose(rank1.level_line[:, 0], DEFAULT_E[0], atol=1e-12)
    with pytest.raises(ValueError, match="R\\^3"):
        subspace_scene(np.ones((2, 4)), np.ones(4), np.ones(4), 1.0)


def test_closest_param_on_line():
    p, d = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, -1.0])
    target = p + 1.7 * d
    # A ray through the target, in an arbitrary direction not parallel to the line.
    a, b = target - np.array([0.3, -2.0, 1.0]), target + np.array([0.3, -2.0, 1.0]) * 4
    assert closest_param_on_line(p, d, a, b) == pytest.approx(1.7, abs=1e-12)
    assert closest_param_on_line(p, d, p, p + d) == 0.0  # parallel: no preferred point


def test_nullspace_module_imports_no_qt(modules_loaded_by):
    loaded = modules_loaded_by("attnsim.viewmodels.nullspace_lab")
    bad = [m for m in loaded if m.split(".")[0] in ("PySide6", "pyqtgraph", "shiboken6")]
    assert not bad, f"attnsim.viewmodels.nullspace_lab pulled in Qt: {bad}"


# ---- what the lab's widgets show ----------------------------------------------------------------
def test_lab_state_defaults_are_the_reference_example():
    from attnsim.viewmodels.nullspace_lab import DEFAULT_T, NullSpaceLabState

    st = NullSpaceLabState()
    assert st.M == DEFAULT_M and st.e == DEFAULT_E and st.t == DEFAULT_T == 1.0 and st.s == 0.0
    with pytest.raises(AttributeError):
        st.t = 2.0  # type: ignore[misc]


def test_matrix_entry_parses_and_refuses_naming_the_cell():
    from attnsim.viewmodels.nullspace_lab import matrix_entry

    assert matrix_entry("M[1,1]", " −2.5 ") == -2.5
    assert matrix_entry("M[1,1]", "100") == 100.0
    for text, why in (("abc", "not a number"), ("inf", "not a finite"), ("100.5", "outside")):
        with pytest.raises(ValueError, match=rf"M\[2,3\]: .*{why}"):
            matrix_entry("M[2,3]", text)


def test_view_extent_fits_both_inputs():
    from attnsim.viewmodels.nullspace_lab import view_extent

    assert view_extent([0, 0, 0], [0, 0, 0]) == 3.0
    assert view_extent([4, 0, 0], [0, 0, 0]) == pytest.approx(6.0)
    assert view_extent([0, 0, 0], [0, 0, 10]) == pytest.approx(11.5)


def test_lab_view_of_the_example():
    from attnsim.viewmodels.nullspace_lab import NullSpaceLabState, input_scene, lab_view

    view = lab_view(NullSpaceLabState())
    np.testing.assert_allclose(view.probe.query, [4.0, 5.0])  # e + n: the same query as e
    np.testing.assert_allclose(view.probe.base_query, [4.0, 5.0])
    t_row, s_row = view.params
    assert (t_row.kind, s_row.kind) == ("t", "s") and t_row.enabled and s_row.enabled
    assert t_row.name == "t along null space n = [1.00, 1.00, −1.00]"
    assert t_row.value_text == "t = 1.00" and s_row.value_text == "s = 0.00"
    assert view.x_text == "[2.00, 3.00, 2.00]" and view.query_text == "[4.000, 5.000]"
    assert view.compare_text.endswith("(same query) · rank 2")
    assert [c[0] for c in view.key_cells] == ["k1 [1, 0]", "k2 [0, 1]", "k3 [1, 1]"]
    assert view.key_cells[2][2] == f"{view.probe.weights[2]:.4f}"
    assert sum(float(c[2]) for c in view.key_cells) == pytest.approx(1.0, abs=2e-4)
    # The query plane frames every query the s slider reaches.
    step = view.M @ view.probe.spaces.row_dir
    for s in (-3.0, 3.0):
        assert np.abs(view.probe.base_query + s * step).max() <= view.query_plane.extent
    scene = input_scene(view, 5.0)
    assert scene.extent == 5.0 and scene.t == 1.0 and scene.s == 0.0
    np.testing.assert_array_equal(scene.x, view.probe.x)
    assert scene.scene.row_patch.shape == (4, 3) and scene.scene.null_line.shape == (2, 3)


def test_lab_view_of_a_zero_map_disables_the_row_slider():
    from attnsim.viewmodels.nullspace_lab import NullSpaceLabState, lab_view

    view = lab_view(NullSpaceLabState(M=((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)), s=1.0))
    t_row, s_row = view.params
    assert t_row.enabled and not s_row.enabled
    assert s_row.name == "s: the row space is only 0"
    assert view.query_plane.extent == pytest.approx(1.1)
    assert view.compare_text.endswith("· rank 0")
