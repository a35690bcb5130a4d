"""The variant checks behind ``attnsim variants``: each alternative computation stays within its
tolerance of ``attention()``, a wrong one is caught, and the precision rows and memory figures
are the engine functions' own numbers."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

import numpy as np
import pytest

from attnsim.engine import variant_checks as vc
from attnsim.engine.kernels import peak_memory
from attnsim.engine.linear import memory_sizes
from attnsim.engine.precision import DTYPES, MASK_LABELS, left_padded_causal_mask, precision_table
from attnsim.engine.scenario import compute
from attnsim.engine.scenario.model import random_scenario
from attnsim.engine.variants import sharing_counts
from attnsim.resources import preset_names, resolve_scenario


def _head(sc):
    tr = compute(sc).heads[0]
    return np.asarray(tr.Q) / sc.temperature, np.asarray(tr.K), np.asarray(tr.V)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@pytest.mark.parametrize("name", preset_names())
def test_every_applicable_check_is_within_its_tolerance_on_every_preset(name):
    sc = resolve_scenario(name)
    r = vc.variant_report(sc)
    assert [c.name for c in r.checks] == ["tiled", "kv_cache", "gqa", "linear_memory"]
    square = r.n_q == r.n_k
    for c in r.checks:
        if c.name in ("kv_cache", "linear_memory") and not square:
            assert c.skipped and c.cases == ()
            continue
        assert not c.skipped and c.cases
        # a tolerance of rounding, not a loophole: far below any visible difference
        assert 0 < c.tolerance < 1e-8
        assert all(0.0 <= x.max_abs_diff <= c.tolerance for x in c.cases), c
    assert r.passed


def test_tiled_cases_cover_both_masks_and_blocks_that_do_not_divide_n():
    q, k, v = _head(resolve_scenario("tired-cat"))  # n = 5
    c = vc.check_tiled(q, k, v)
    assert {x.get("mask") for x in c.cases} == {"none", "causal"}
    blocks = {(x.get("block_q"), x.get("block_k")): x.get("divides_n") for x in c.cases}
    assert blocks[(2, 2)] is False and blocks[(5, 5)] is True and blocks[(1, 1)] is True
    assert (vc.DEFAULT_BLOCK_Q, vc.DEFAULT_BLOCK_K) in blocks
    assert len(c.cases) == 2 * len(blocks)


def test_a_long_scenario_drops_block_sizes_that_would_make_too_many_tiles():
    sc = random_scenario(130, 6, seed=3, mask="causal")
    r = vc.variant_report(sc)
    tiled = r.checks[0]
    sizes = {x.get("block_q") for x in tiled.cases}
    # 1, 2, 3 would make 130², 65², 44² tiles; 5 makes 26² = 676, under the limit of 1,024
    assert sizes.isdisjoint({1, 2, 3})
    assert {5, 16, 64, 100}.issubset(sizes)
    for x in tiled.cases:
        assert math.ceil(130 / x.get("block_q")) * math.ceil(130 / x.get("block_k")) <= 1024
    assert r.passed
    assert r.checks[1].cases[0].get("steps") == 130


@pytest.mark.parametrize(
    ("target", "check"),
    [
        ("tiled_attention", vc.check_tiled),
        ("kv_cache_generate", vc.check_kv_cache),
        ("grouped_query_attention", vc.check_gqa),
        ("linear_memory", vc.check_linear_memory),
    ],
)
def test_a_computation_off_by_more_than_rounding_fails_its_check(monkeypatch, target, check):
    real = getattr(vc, target)

    def off(*args, **kwargs):
        out = real(*args, **kwargs)
        if isinstance(out, tuple):  # (output, weights or trace)
            return out[0] + 1e-6, out[1]
        object.__setattr__(out, "output", out.output + 1e-6)  # a frozen run or trace
        return out

    monkeypatch.setattr(vc, target, off)
    q, k, v = _head(resolve_scenario("river-bank"))
    c = check(q, k, v)
    assert not c.passed
    assert c.max_abs_diff == pytest.approx(1e-6, rel=1e-6)


def test_gqa_heads_keep_the_scenario_as_head_zero_and_are_reproducible():
    q, k, v = _head(resolve_scenario("river-bank"))
    qh, kh, vh = vc.gqa_heads(q, k, v, 4, 2)
    assert qh.shape == (4, *q.shape) and kh.shape == (2, *k.shape) and vh.shape == (2, *v.shape)
    np.testing.assert_array_equal(qh[0], q)
    np.testing.assert_array_equal(kh[0], k)
    assert np.abs(qh[1] - q).max() > 1e-3 and np.abs(kh[1] - k).max() > 1e-3  # heads differ
    again = vc.gqa_heads(q, k, v, 4, 2)
    for a, b in zip((qh, kh, vh), again, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["river-bank", "three-fields"])
def test_precision_rows_are_precision_table_called_directly(name):
    sc = resolve_scenario(name)
    q, k, v = _head(sc)
    r = vc.variant_report(sc)
    if q.shape[0] == k.shape[0]:
        mask = left_padded_causal_mask(q.shape[0], 1)
    else:  # three-fields: 3 queries over 12 keys, the same rule
        mask = np.tri(q.shape[0], k.shape[0], dtype=bool)
        mask[:, 0] = False
    np.testing.assert_array_equal(r.precision_mask, mask)
    direct = precision_table(q, k, v, mask=mask, scale=sc.scale)
    assert len(r.precision) == len(DTYPES) * len(MASK_LABELS) == len(direct)
    for got, want in zip(r.precision, direct, strict=True):
        a, b = asdict(got), asdict(want)
        assert a.keys() == b.keys()
        for key in a:
            assert _same(a[key], b[key]) if isinstance(a[key], float) else a[key] == b[key], key
    # the padded query: -inf turns its row into NaN in every dtype
    by = {(p.dtype, p.mask_label): p for p in r.precision}
    assert all(by[(d, "-inf")].nan_rows == 1 for d in DTYPES)
    assert by[("float16", "-1e9")].stored_mask_value == -math.inf


def test_memory_figures_are_the_engine_functions_numbers():
    sc = resolve_scenario("code-definition")  # d_k 3, d_v 2
    q, _, v = _head(sc)
    m = vc.variant_report(sc).memory
    n, d_k, d_v = q.shape[0], q.shape[1], v.shape[1]
    assert m.peak == (
        peak_memory(n, n, d_v, dtype="float32"),
        peak_memory(2048, 2048, d_v, dtype="float32"),
    )
    want = memory_sizes(np.array([64, 512, 4096]), d_k, d_v, normalised=True)
    np.testing.assert_array_equal(m.linear.n, want.n)
    np.testing.assert_array_equal(m.linear.linear_numbers, want.linear_numbers)
    np.testing.assert_array_equal(m.linear.kv_cache_numbers, want.kv_cache_numbers)
    assert m.linear.crossover == want.crossover
    assert m.sharing == tuple(sharing_counts(32, g, 32 * d_k, d_k, d_v) for g in (32, 8, 1))
    assert [s.kind for s in m.sharing] == ["MHA", "GQA", "MQA"]
    d = m.to_dict()
    assert d["linear_vs_kv_cache"]["kv_cache_numbers"] == [64 * 5, 512 * 5, 4096 * 5]
    assert d["peak"][1]["plain_bytes"] == 2 * 2048 * 2048 * 4


def test_the_report_is_strict_json_with_infinities_as_strings():
    r = vc.variant_report(resolve_scenario("bank-river"))
    d = r.to_dict()
    text = json.dumps(d, allow_nan=False)  # raises on a bare inf or NaN
    back = json.loads(text)
    assert back["passed"] is True and back["n_q"] == 3
    assert back["precision"]["rows_without_legal_key"] == [0]
    first = back["precision"]["rows"][0]
    assert (first["dtype"], first["mask_value"], first["probe_masked_logit"]) == (
        "float64",
        "-inf",
        "-inf",
    )
    assert vc.jsonable([np.float32(np.nan), np.int64(3), np.inf, np.bool_(True)]) == [
        "nan",
        3,
        "inf",
        True,
    ]
