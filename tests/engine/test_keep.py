"""What the app accepts, it can keep (issue 22, section 4).

Every text a scenario accepts can be saved as UTF-8 and reads back equal (odd but valid Unicode
included); text that could not be kept (a lone surrogate, a control character in a label) is
refused at open and at every edit, naming the field; the largest scenario of the limits saves
to a file that opens again, and one too large to open again is not written.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnsim.engine import edits, matrix_io
from attnsim.engine.scenario import (
    MAX_DIM,
    MAX_FILE_BYTES,
    MAX_TOKENS,
    Head,
    Scenario,
    ScenarioError,
    ScenarioTooLargeError,
    random_scenario,
)
from attnsim.engine.scenario import model as scenario_model

ODD = [
    "e\u0301",  # e + combining acute
    "\u05e9\u05dc\u05d5\u05dd",  # Hebrew, right to left
    "\u0645\u0631\u062d\u0628\u0627",  # Arabic
    "\u202eevil",  # right-to-left override
    "\U0001f469\u200d\U0001f469\u200d\U0001f467",  # family emoji joined by ZWJ
    "\U0001d518\U0001d52b\U0001d526",  # astral plane (mathematical Fraktur)
    "\U00020000",  # astral CJK
    "\uff21\uff22\uff23",  # full-width ABC
    "\u200bzero width",
    "\ufeffbom",
    "\ufffe\uffff",  # noncharacters: valid in UTF-8
    "\U0001f1eb\U0001f1f7",  # a flag (two regional indicators)
    "a\u2028b",  # line separator (not a control character)
    "\\ud800",  # the six characters a backslash u d 8 0 0, not a surrogate
    '"quoted" \\ /',
    "\u00a0nbsp",
    "\U0010fffd",  # the last private-use character
]
_chars = st.characters(exclude_categories=("Cs", "Cc"))
label = st.one_of(st.sampled_from(ODD), st.text(_chars, min_size=1, max_size=6)).filter(
    lambda s: s.strip()
)
# free text: anything a label may hold, and tabs and line breaks
free_text = st.text(st.one_of(_chars, st.sampled_from("\t\n\r")), max_size=12) | st.sampled_from(
    ODD
)


def _labels(n: int) -> st.SearchStrategy[list[str]]:
    return st.lists(label, min_size=n, max_size=n, unique=True)


@st.composite
def token_scenarios(draw) -> Scenario:
    n, d = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    preset, absent = draw(label), draw(label)
    return Scenario(
        name=draw(label),
        title=draw(label),
        description=draw(free_text),
        source=draw(free_text),
        tokens=tuple(draw(_labels(n))),
        axes=tuple(draw(_labels(d))),
        qk_axes=tuple(draw(_labels(d))),
        v_axes=tuple(draw(_labels(d))),
        X=rng.standard_normal((n, d)),
        heads=(Head(np.eye(d), np.eye(d), rng.standard_normal((d, d)), name=draw(free_label)),),
        wq_presets={preset: rng.standard_normal((d, d))},
        absent={absent: rng.standard_normal(d)},
        mask=draw(st.sampled_from(["none", "causal"])),
    )


free_label = st.one_of(st.just(""), label)


@st.composite
def direct_scenarios(draw) -> Scenario:
    n_q, n_k, d = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    return Scenario(
        name=draw(label),
        mode="direct",
        title=draw(label),
        description=draw(free_text),
        tokens=tuple(draw(_labels(n_k))),
        query_tokens=tuple(draw(_labels(n_q))),
        qk_axes=tuple(draw(_labels(d))),
        v_axes=tuple(draw(_labels(d))),
        Q=rng.standard_normal((n_q, d)),
        K=rng.standard_normal((n_k, d)),
        V=rng.standard_normal((n_k, d)),
    )


def _save_and_open(sc: Scenario) -> Scenario:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.json"
        sc.save(path)
        return Scenario.load(path)


@given(st.one_of(token_scenarios(), direct_scenarios()))
def test_accepted_scenarios_with_odd_unicode_save_and_open_equal(sc):
    # open (the text of a file), save, open: equal, every text field exactly as it was
    opened = Scenario.loads(sc.dumps(), file="drawn.json")
    again = _save_and_open(opened)
    assert again.equals(opened) and again.equals(sc)
    assert (again.name, again.title, again.description) == (sc.name, sc.title, sc.description)
    assert again.tokens == sc.tokens and again.query_labels == sc.query_labels
    assert [h.name for h in again.heads] == [h.name for h in sc.heads]


def _river() -> dict:
    return {
        "name": "river",
        "title": "t",
        "description": "d",
        "source": "s",
        "tokens": ["the", "river", "bank"],
        "axes": ["a", "b"],
        "X": [[1, 0], [0, 1], [1, 1]],
        "heads": [{"name": "h", "Wq": "identity", "Wk": "identity", "Wv": "identity"}],
        "wq_presets": {"p": [[1, 0], [0, 1]]},
        "absent": {"water": [0, 1]},
    }


def _direct() -> dict:
    return {
        "name": "direct",
        "mode": "direct",
        "tokens": ["k1", "k2"],
        "query_tokens": ["q1"],
        "qk_axes": ["x", "y"],
        "v_axes": ["v"],
        "Q": [[1, 0]],
        "K": [[1, 0], [0, 1]],
        "V": [[1], [2]],
    }


def _put(data: dict, where: str, text: str) -> dict:
    """``data`` with ``text`` at ``where`` (``tokens[1]``, ``wq_presets key`` ...)."""
    if where.endswith(" key"):
        field = where.split()[0]
        data[field] = {text: next(iter(data[field].values()))}
    elif where == "heads[0].name":
        data["heads"][0]["name"] = text
    elif "[" in where:
        field, i = where.rstrip("]").split("[")
        data[field][int(i)] = text
    else:
        data[where] = text
    return data


TEXT_FIELDS = [
    (_river, "name", "name"),
    (_river, "title", "title"),
    (_river, "description", "description"),
    (_river, "source", "source"),
    (_river, "tokens[1]", "tokens[1]"),
    (_river, "axes[0]", "axes[0]"),
    (_river, "heads[0].name", "heads[0].name"),
    (_river, "wq_presets key", "wq_presets["),
    (_river, "absent key", "absent["),
    (_direct, "tokens[0]", "tokens[0]"),
    (_direct, "query_tokens[0]", "query_tokens[0]"),
    (_direct, "qk_axes[1]", "qk_axes[1]"),
    (_direct, "v_axes[0]", "v_axes[0]"),
]


@pytest.mark.parametrize(
    ("make", "where", "field"), TEXT_FIELDS, ids=[w for _, w, _ in TEXT_FIELDS]
)
def test_a_lone_surrogate_is_refused_at_open_naming_the_field(make, where, field, tmp_path):
    # JSON can spell a lone surrogate; the old code accepted it, then Save and the autosave
    # failed with UnicodeEncodeError and the work was lost
    path = tmp_path / "lone.json"
    path.write_text(json.dumps(_put(make(), where, "ab\ud800c")), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        Scenario.load(path)
    msg = str(caught.value)
    assert msg.startswith(f"{path}: {field}")
    assert caught.value.field.startswith(field)
    assert "lone surrogate (\\ud800) at character 3" in msg
    assert "cannot be saved as UTF-8 text" in msg
    msg.encode("utf-8")  # the message itself can be shown and logged


def test_a_surrogate_pair_spelt_in_json_is_one_character_and_kept(tmp_path):
    path = tmp_path / "pair.json"
    path.write_text(json.dumps(_put(_river(), "tokens[1]", "\U0001f600")), encoding="utf-8")
    assert "\\ud83d\\ude00" in path.read_text()  # json.dumps spells it as a pair
    sc = Scenario.load(path)
    assert sc.tokens[1] == "\U0001f600"
    assert _save_and_open(sc).equals(sc)


LABEL_FIELDS = [t for t in TEXT_FIELDS if t[1] not in ("description", "source")]


@pytest.mark.parametrize(
    ("make", "where", "field"), LABEL_FIELDS, ids=[w for _, w, _ in LABEL_FIELDS]
)
@pytest.mark.parametrize("control", ["\x00", "\n", "\t", "\x1b", "\x7f", "\x85"])
def test_a_control_character_in_a_label_is_refused_naming_the_field(make, where, field, control):
    text = json.dumps(_put(make(), where, "ab" + control))
    with pytest.raises(ScenarioError, match="control character") as caught:
        Scenario.loads(text, file="c.json")
    assert str(caught.value).startswith(f"c.json: {field}")
    assert f"U+{ord(control):04X} at character 3" in str(caught.value)


@pytest.mark.parametrize("field", ["description", "source"])
def test_free_text_keeps_tabs_and_line_breaks_and_refuses_other_controls(field):
    sc = Scenario.loads(json.dumps(_put(_river(), field, "line 1\r\n\tline 2\n")))
    assert getattr(_save_and_open(sc), field) == "line 1\r\n\tline 2\n"
    with pytest.raises(ScenarioError, match=f"^{field}: .*U\\+0000 .*tabs and line breaks"):
        Scenario.loads(json.dumps(_put(_river(), field, "a\x00")))


def test_edits_cannot_bring_in_text_that_cannot_be_kept():
    sc = Scenario.loads(json.dumps(_river()))
    with pytest.raises(ScenarioError, match=r"^tokens\[1\]: .*lone surrogate"):
        edits.rename_token(sc, 1, "riv\udc80er")
    with pytest.raises(ScenarioError, match=r"^tokens\[0\]: .*U\+0000"):
        edits.add_token(sc, "\x00", index=0)
    with pytest.raises(ScenarioError, match=r"^name: .*lone surrogate"):
        sc.heads[0].replace(name="\udfff")
    with pytest.raises(ScenarioError, match=r"^title: .*lone surrogate"):
        sc.replace(title="\ud800")
    with pytest.raises(ScenarioError, match=r"^axes\[1\]: .*U\+000A"):
        sc.replace(axes=("a", "b\n"))
    # and what an edit may bring in is kept
    renamed = edits.rename_token(sc, 1, "\U0001f30a\u200d")
    assert _save_and_open(renamed).tokens[1] == "\U0001f30a\u200d"


def test_a_scenario_too_large_to_open_again_is_not_written(tmp_path, monkeypatch):
    sc = random_scenario(8, 4, seed=1)
    path = tmp_path / "kept.json"
    sc.save(path)
    before = path.read_bytes()
    size = len((sc.dumps() + "\n").encode("utf-8"))
    monkeypatch.setattr(scenario_model, "MAX_FILE_BYTES", size - 1)
    bigger = edits.rename_token(sc, 0, "a longer first token")
    with pytest.raises(ScenarioTooLargeError) as caught:
        bigger.save(path)
    msg = str(caught.value)
    assert msg.startswith(f"{path}: (file): the scenario would be ")
    assert f"larger than the {size - 1:,} bytes" in msg and "nothing was written" in msg
    # an OSError too, with the message as strerror, so the window's Save reports it
    assert isinstance(caught.value, OSError) and caught.value.strerror in msg
    assert path.read_bytes() == before
    assert not (tmp_path / "kept.json.tmp").exists()
    monkeypatch.setattr(scenario_model, "MAX_FILE_BYTES", size)
    sc.save(path)  # exactly at the limit is fine
    assert Scenario.load(path).equals(sc)


@pytest.mark.slow
def test_the_largest_scenario_of_the_limits_saves_and_opens_again(tmp_path):
    # MAX_TOKENS tokens of MAX_DIM numbers (X imported from a .npy, as a user would), one head
    # of MAX_DIM x MAX_DIM matrices and a custom mask that is mostly false, every number with
    # the longest text a float has: the old 64 MiB limit refused to open it again
    n, d = MAX_TOKENS, MAX_DIM
    longest = -1.2345678901234567e-300
    assert len(repr(longest)) == 24
    X = np.full((n, d), longest)
    X[0, 0] = 1.0  # not all one number
    npy = tmp_path / "X.npy"
    np.save(npy, X)
    W = np.full((d, d), longest)
    sc = Scenario(
        name="largest",
        tokens=tuple(f"t{i}" for i in range(n)),
        X=np.zeros((n, d)),
        heads=(Head(W, W, W),),
        mask=np.eye(n, dtype=bool),
    )
    imported = matrix_io.load_matrix(npy, expected_shape=(n, d), name="X")
    sc = edits.set_matrix(sc, "X", imported)
    path = tmp_path / "largest.json"
    sc.save(path)
    size = path.stat().st_size
    assert 64 * 1024 * 1024 < size <= MAX_FILE_BYTES
    again = Scenario.load(path)
    assert again.equals(sc)
    assert again.X[0, 0] == 1.0 and again.X[5, 7] == longest
