"""Three fields: which keys belong to which field, per-field weights, queries built from fields."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnsim.engine import edits
from attnsim.engine.experiments import FIELD_NAMES, three_fields
from attnsim.engine.scenario import compute
from attnsim.resources import resolve_scenario
from attnsim.viewmodels.fields_lab import (
    axis_fields,
    field_layout,
    field_of,
    field_sums,
    mix_after_slider,
    mix_of_query,
    plane_coords,
    query_from_mix,
    span_fraction,
)

PRESET = resolve_scenario("three-fields")


def test_labels_and_axes_name_their_fields():
    assert field_of("acoustics 1") == 0
    assert field_of("Control Theory 4") == 1
    assert field_of("Buddhist texts") == 2
    assert field_of("acousticsX") is None and field_of("the") is None
    ax = axis_fields(("acoustics 1", "control 2", "Buddhist 3", "generic", "control"))
    assert ax.tolist() == [0, 1, 2, -1, 1]


def test_the_preset_splits_into_three_fields_of_four_keys():
    layout = field_layout(PRESET)
    assert not isinstance(layout, str)
    assert layout.source == "axes"
    assert layout.key_field.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    assert layout.value_field.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    np.testing.assert_allclose(layout.directions @ layout.directions.T, np.eye(3), atol=1e-15)
    np.testing.assert_array_equal(layout.directions[0], [0.5] * 4 + [0.0] * 8)
    assert layout.members(2).tolist() == [8, 9, 10, 11]


def test_per_field_weights_are_the_reference_numbers():
    layout = field_layout(PRESET)
    assert not isinstance(layout, str)
    w = compute(PRESET).heads[0].weights
    sums = field_sums(w, layout.key_field)
    np.testing.assert_array_equal(sums.round(2), [[0.87, 0.07, 0.07], [0.42, 0.49, 0.10],
                                                  [0.26, 0.32, 0.42]])  # fmt: skip
    ref = three_fields()
    for i, r in enumerate(ref["results"]):
        np.testing.assert_allclose(sums[i], [r["per_field"][f] for f in FIELD_NAMES], rtol=1e-12)
    np.testing.assert_allclose(sums.sum(axis=1), 1.0)


def test_the_lab_refuses_scenarios_without_fields():
    assert "token scenario" in field_layout(resolve_scenario("river-bank"))
    assert "does not start with a field name" in field_layout(resolve_scenario("routing-lab"))
    renamed = edits.rename_token(PRESET, 3, "music 4")
    assert "'music 4'" in field_layout(renamed)
    no_buddhist = PRESET
    for _ in range(4):
        no_buddhist = edits.remove_token(no_buddhist, no_buddhist.n_tokens - 1)
    assert "Buddhist texts" in field_layout(no_buddhist)


def test_without_field_axes_the_directions_are_the_key_means():
    sc = PRESET.replace(qk_axes=tuple(f"k{i}" for i in range(12)))
    layout = field_layout(sc)
    assert not isinstance(layout, str) and layout.source == "keys"
    mean0 = sc.K[:4].mean(axis=0)
    np.testing.assert_allclose(layout.directions[0], mean0 / np.linalg.norm(mean0))


def test_the_preset_queries_have_simple_mixes():
    layout = field_layout(PRESET)
    assert not isinstance(layout, str)
    C = layout.directions
    r = 1 / np.sqrt(2)
    s = 1 / np.sqrt(3)
    for q, mix in zip(PRESET.Q, ([1, 0, 0], [r, r, 0], [s, s, s]), strict=True):
        np.testing.assert_allclose(mix_of_query(q, C), mix, atol=1e-12)
        assert span_fraction(q, C) == pytest.approx(1.0)
        np.testing.assert_allclose(query_from_mix(mix, C), q, atol=1e-12)
    assert mix_of_query(np.zeros(12), C).tolist() == [0.0, 0.0, 0.0]
    assert span_fraction(np.eye(12)[0] + np.eye(12)[1] * 0 - C[0] * 0.5, C) < 1.0


def test_moving_one_share_rescales_the_others():
    C = field_layout(PRESET).directions  # type: ignore[union-attr]
    r = 1 / np.sqrt(2)
    out = mix_after_slider([r, r, 0], C, 0, 0.3)
    assert out[0] == 0.3 and out[2] == 0.0
    assert np.linalg.norm(out @ C) == pytest.approx(1.0)
    # A query inside one field: lowering its share spreads the rest over the other fields.
    out = mix_after_slider([1, 0, 0], C, 0, 0.5)
    np.testing.assert_allclose(out, [0.5, np.sqrt(0.375), np.sqrt(0.375)])
    # Setting an already-full share changes nothing.
    np.testing.assert_allclose(mix_after_slider([1, 0, 0], C, 0, 1.0), [1, 0, 0])
    with pytest.raises(ValueError, match="between 0 and 1"):
        mix_after_slider([1, 0, 0], C, 1, 1.5)
    with pytest.raises(ValueError, match="no direction"):
        query_from_mix([0, 0, 0], C)
    q = query_from_mix([0.2, 0.1, 0.0], C, length=2.5)
    assert np.linalg.norm(q) == pytest.approx(2.5)


@given(
    st.lists(st.floats(0, 1), min_size=3, max_size=3),
    st.integers(0, 2),
    st.floats(0, 1),
    st.booleans(),
)
def test_the_dragged_share_reads_back_exactly(mix, f, value, orthogonal):
    layout = field_layout(
        PRESET if orthogonal else PRESET.replace(qk_axes=tuple(f"k{i}" for i in range(12)))
    )
    C = layout.directions  # type: ignore[union-attr]
    out = mix_after_slider(mix, C, f, value)
    q = query_from_mix(out, C)
    assert np.linalg.norm(q) == pytest.approx(1.0)
    assert mix_of_query(q, C)[f] == pytest.approx(value, abs=1e-9)
    assert np.all(out >= 0)


def test_the_plane_shows_three_separate_clusters():
    basis, explained, centre, key_xy, query_xy = plane_coords(PRESET.K, PRESET.Q)
    assert basis.shape == (12, 2) and key_xy.shape == (12, 2) and query_xy.shape == (3, 2)
    np.testing.assert_allclose(basis.T @ basis, np.eye(2), atol=1e-12)
    assert 0.8 < explained.sum() <= 1.0
    np.testing.assert_allclose(key_xy, (PRESET.K - centre) @ basis)
    centroids = np.array([key_xy[4 * f : 4 * f + 4].mean(axis=0) for f in range(3)])
    spread = max(
        np.linalg.norm(key_xy[4 * f : 4 * f + 4] - centroids[f], axis=1).max() for f in range(3)
    )
    gaps = [np.linalg.norm(centroids[a] - centroids[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    assert min(gaps) > 2 * spread
    # The query inside acoustics sits at the acoustics cluster, nearer to it than to the others.
    dist = np.linalg.norm(centroids - query_xy[0], axis=1)
    assert np.argmin(dist) == 0


# ---- what the lab page draws ------------------------------------------------------------------
def test_lab_data_is_the_traces_numbers_for_the_receiving_query():
    from attnsim.viewmodels.fields_lab import lab_data

    layout = field_layout(PRESET)
    tr = compute(PRESET).heads[0]
    for i in range(PRESET.n_queries):
        data = lab_data(PRESET, tr, i, layout)
        np.testing.assert_array_equal(data.bars.sums, field_sums(tr.weights, layout.key_field))
        np.testing.assert_array_equal(data.bars.entropy, tr.entropy)
        assert data.bars.max_entropy.shape == tr.entropy.shape
        assert data.bars.selected == i == data.scatter.selected
        assert data.bars.labels == tuple(PRESET.query_labels)
        np.testing.assert_array_equal(data.mixture.values, tr.output[i])
        assert data.mixture.title.endswith(f"“{PRESET.query_labels[i]}”")
        np.testing.assert_array_equal(data.mix, mix_of_query(PRESET.Q[i], layout.directions))
        assert data.scatter.key_xy.shape == (PRESET.K.shape[0], 2)
        assert data.scatter.query_xy.shape == (PRESET.n_queries, 2)
        assert "|q| = 1.00" in data.info and "logit = q·k /" in data.info
        # The preset's queries lie in the fields' span: no warning about a dropped part.
        assert "outside the fields" not in data.note


def test_lab_data_says_how_much_of_the_query_a_slider_edit_drops():
    from attnsim.viewmodels.fields_lab import lab_data

    # Directions from the key means span 3 of 12 dimensions: the preset's queries stick out.
    sc = PRESET.replace(qk_axes=tuple(f"k{i}" for i in range(12)))
    layout = field_layout(sc)
    assert not isinstance(layout, str)
    outside = 1 - span_fraction(sc.Q[0], layout.directions)
    assert outside > 0.001
    data = lab_data(sc, compute(sc).heads[0], 0, layout)
    assert f"{100 * outside:.0f} % of this query lies outside the fields’ directions" in data.note
    assert "the mean of each field's keys" in data.note


def test_fit_points_keeps_equal_scale_and_stays_inside():
    from attnsim.viewmodels.fields_lab import fit_points

    px, ppu = fit_points([[0, 0], [2, 1], [1, -1]], 200, 100, margin=10)
    assert ppu == pytest.approx(40.0)  # (100 - 20) / 2 along y limits the scale
    assert px[:, 0].min() >= 10 and px[:, 0].max() <= 190
    assert px[:, 1].min() >= 10 and px[:, 1].max() <= 90
    assert px[1, 1] < px[0, 1]  # y points down on screen


def test_stacked_segments_follow_each_other():
    from attnsim.viewmodels.fields_lab import stacked_segments

    segs = stacked_segments([0.5, 0.25, -0.1, 0.25], 10.0, 100.0)
    np.testing.assert_allclose(segs, [[10, 50], [60, 25], [85, 0], [85, 25]])


def test_place_label_avoids_what_is_taken_and_stays_in_bounds():
    from attnsim.viewmodels.fields_lab import place_label

    bounds = (0.0, 0.0, 100.0, 100.0)
    free = place_label((50, 50), (20, 10), 4.0, bounds, [])
    assert free == (54.0, 45.0)  # right of the anchor, centred on it
    taken = [(54.0, 45.0, 20.0, 10.0)]
    x, y = place_label((50, 50), (20, 10), 4.0, bounds, taken)
    assert x + 20 <= 54 or x >= 74 or y + 10 <= 45 or y >= 55
    x, y = place_label((98, 98), (20, 10), 4.0, bounds, [])
    assert 0 <= x <= 80 and 0 <= y <= 90


def test_off_page_data_is_the_engines_reference_experiment():
    from attnsim.viewmodels.fields_lab import off_page_data, reference_result

    data = off_page_data("a token scenario")
    ref = three_fields()["results"]
    assert data.reason == "a token scenario"
    assert [r[0] for r in data.rows] == [r["query"] for r in ref]
    for row, r in zip(data.rows, ref, strict=True):
        assert row[1] == tuple(r["per_field"][f] for f in FIELD_NAMES)
        assert row[2] == r["entropy"]
    assert reference_result() is reference_result()  # computed once
