"""Matrix import (CSV, .npy, .npz, JSON): every refusal names the file and the problem."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from attnsim.engine import matrix_io
from attnsim.engine.scenario import MAX_ABS_VALUE, ScenarioError


def _refused(path, name="X", **kw) -> str:
    with pytest.raises(ScenarioError) as info:
        matrix_io.load_matrix(path, name=name, **kw)
    text = str(info.value)
    assert str(path) in text and "\n" not in text
    return text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("1;2;3\n4;5;6\n", "uses ';' as separator; attnsim reads comma-separated values"),
        ("1,5;2,5\n3,5;4,5\n", "uses ';' as separator"),
        ("1\t2\n3\t4\n", "uses a tab as separator"),
        ("1,1e7\n", "1e+07 is outside ±1e+06"),
        ("1,-1e160\n", "-1e+160 is outside ±1e+06"),
        ("1e400,0\n", "holds inf at row 1, column 1"),
    ],
)
def test_csv_refusals_name_the_cause(tmp_path, content, message):
    p = tmp_path / "m.csv"
    p.write_text(content)
    assert message in _refused(p)


def test_a_value_at_the_bound_is_accepted(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text(f"{MAX_ABS_VALUE!r},{-MAX_ABS_VALUE!r}\n")
    np.testing.assert_array_equal(matrix_io.load_matrix(p), [[MAX_ABS_VALUE, -MAX_ABS_VALUE]])


def _npy_bytes(arr) -> bytes:
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "is empty"),
        (_npy_bytes(np.ones((4, 4)))[:-7], "cannot read .npy"),
        (_npy_bytes(np.ones((4, 4)))[:20], "cannot read .npy"),
        (b"not a numpy file at all", "cannot read .npy"),
        (_npy_bytes(np.array([[1, "a"]], dtype=object)), "holds values of type object"),
        (_npy_bytes(np.array([["a", "b"]])), "not real numbers"),
        (_npy_bytes(np.array([[1 + 2j]])), "not real numbers"),
        (_npy_bytes(np.zeros((0, 3))), "is empty"),
        (_npy_bytes(np.zeros((2, 2, 2))), "must be a 2-D matrix"),
        (_npy_bytes(np.array([[1.0, np.nan]])), "nan"),
        (_npy_bytes(np.array([[1.0, 2e6]])), "2e+06 is outside ±1e+06"),
    ],
)
def test_npy_refusals_name_the_cause(tmp_path, data, message):
    p = tmp_path / "m.npy"
    p.write_bytes(data)
    assert message in _refused(p)


def test_object_npy_is_never_unpickled(tmp_path, monkeypatch):
    import pickle

    calls = []
    monkeypatch.setattr(pickle, "load", lambda *a, **k: calls.append(a))
    p = tmp_path / "m.npy"
    p.write_bytes(_npy_bytes(np.array([[1, None]], dtype=object)))
    _refused(p)
    assert not calls


def test_npz_takes_the_only_array_or_the_named_one(tmp_path):
    p = tmp_path / "one.npz"
    np.savez(p, anything=np.eye(2))
    np.testing.assert_array_equal(matrix_io.load_matrix(p, name="X"), np.eye(2))
    p2 = tmp_path / "two.npz"
    np.savez(p2, X=np.ones((2, 3)), Wq=np.eye(3))
    np.testing.assert_array_equal(matrix_io.load_matrix(p2, name="Wq (head 1)"), np.eye(3))
    assert "has no array named 'Wk'" in _refused(p2, name="Wk")
    p3 = tmp_path / "empty.npz"
    np.savez(p3)
    assert "holds no arrays" in _refused(p3)
    p4 = tmp_path / "bad.npz"
    p4.write_bytes(b"PK\x03\x04 truncated")
    assert "cannot read .npz" in _refused(p4)
    p5 = tmp_path / "obj.npz"
    np.savez(p5, X=np.array([[1, None]], dtype=object))
    assert "cannot read .npz" in _refused(p5)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[[1, 2], [3, "x"]]', "X[1, 1]: 'x' is not a number"),
        ("[[1, 2], [3, NaN]]", "X[1, 1]: nan is not a finite number"),
        ("[[1, 2], [3, 1e400]]", "X[1, 1]: inf is not a finite number"),
        ("[[1, 2], [3, 1e7]]", "X[1, 1]: 1e+07 is outside ±1e+06"),
        ("[[1, 2], [3]]", "row 1 has 1 values but row 0 has 2"),
        ("[[1, 2], [3, true]]", "X[1, 1]: True is not a number"),
        ('{"Y": [[1]]}', "has no matrix named 'X'"),
        ('"text"', "must be a JSON list of rows"),
        ("[[1, 2]", "not valid JSON"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_json_refusals_name_the_position(tmp_path, text, message):
    p = tmp_path / "m.json"
    p.write_text(text)
    assert message in _refused(p)


def test_json_matrix_and_object_import(tmp_path):
    p = tmp_path / "m.json"
    p.write_text(json.dumps({"X": [[1.5, -2.0], [0.0, 3.0]]}))
    np.testing.assert_array_equal(matrix_io.load_matrix(p, name="X"), [[1.5, -2.0], [0.0, 3.0]])
    p.write_text("[1, 2, 3]")
    np.testing.assert_array_equal(matrix_io.load_matrix(p, name="X"), [[1.0, 2.0, 3.0]])


def test_unreadable_files_are_refused_by_name(tmp_path):
    assert "is a folder" in _refused(tmp_path)
    assert "cannot be read" in _refused(tmp_path / "missing.csv")
    p = tmp_path / "latin1.csv"
    p.write_bytes("1,2\nå,3\n".encode("latin-1"))
    assert "is not UTF-8 text" in _refused(p)
    big = tmp_path / "big.csv"
    with big.open("wb") as fh:
        fh.truncate(65 * 1024 * 1024)  # sparse: no disk is used
    assert "larger than" in _refused(big)
