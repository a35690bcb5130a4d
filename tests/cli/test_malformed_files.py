"""The malformed-file corpus through the command line: one line, exit 2, nothing written.

Every file in tests/data/malformed/ goes through ``attnsim export`` and ``attnsim audit`` by
``cli.main`` in this process (fast, and any escaping exception fails the test with its
traceback); a sample, and under the ``slow`` marker all of them, through a real subprocess.
"""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from attnsim import cli
from attnsim.cli import export as cli_export
from attnsim.engine.scenario import MAX_FILE_BYTES

CORPUS_DIR = Path(__file__).resolve().parents[1] / "data" / "malformed"
CORPUS = sorted(CORPUS_DIR.glob("*.json"))

# What the one line must say about each file (besides its name): the field, cell or cause.
EXPECTED = {
    "Wk-wrong-shape.json": "heads[0].Wk: has 2 rows",
    "Wo-wrong-shape.json": "Wo: must have shape",
    "Wq-huge-1e200.json": "heads[0].Wq[2, 1]: 1e+200 is outside ±1e+06",
    "Wv-missing.json": "heads[0].Wv: is missing",
    "Wv-unknown-word.json": "heads[0].Wv: must be a matrix or 'identity'",
    "X-1e400-literal.json": "X[2, 0]: inf is not a finite number",
    "X-3d.json": "X[0, 0]: [0.0, 0.0, 0.0, 0.0] is not a number",
    "X-Infinity-literal.json": "X[1, 1]: -inf is not a finite number",
    "X-NaN-literal.json": "X[0, 3]: nan is not a finite number",
    "X-a-number.json": "X: must be a matrix",
    "X-bool-cell.json": "X[2, 1]: True is not a number",
    "X-huge-1e160.json": "X[2, 2]: 1e+160 is outside ±1e+06",
    "X-huge-1e7.json": "X[0, 1]: 1e+07 is outside ±1e+06",
    "X-huge-integer.json": "X[2, 2]: 99999",
    "X-null-cell.json": "X[0, 0]: None is not a number",
    "X-object.json": "X: must be a matrix",
    "X-ragged.json": "X: must be a matrix (a list of equal-length rows): row 1 has 2 values",
    "X-string-cell.json": "X[1, 2]: '0.5' is not a number",
    "X-too-few-rows.json": "X: has 2 rows but there are 3 tokens",
    "absent-huge.json": "absent['money'][1]: -5e+06 is outside",
    "axes-count.json": "axes: names 2 axes",
    "binary.json": "is not UTF-8 text",
    "deep-X.json": "nested too deeply",
    "deep-list.json": "nested too deeply",
    "deep-object.json": "nested too deeply",
    "direct-K-huge.json": "K[1, 0]: -2e+06 is outside",
    "direct-Q-wrong-width.json": "Q: width 3 differs",
    "direct-V-missing.json": "V: is missing",
    "direct-with-X.json": "X: belongs to token scenarios",
    "empty.json": "not valid JSON",
    "future-version.json": "version 2 is not supported",
    "head-not-an-object.json": "heads[0]: must be an object",
    "heads-empty.json": "heads: needs at least one head",
    "heads-not-a-list.json": "heads: must be a list",
    "mask-empty-row.json": "mask: row 0 has no legal key",
    "mask-numbers.json": "mask: entries must be true or false",
    "mask-unknown-word.json": "mask: must be 'none', 'causal'",
    "mask-value-unknown.json": "mask_value: must be '-inf' or 0",
    "mask-wrong-shape.json": "mask: must have shape (3, 3)",
    "missing-X.json": "X: is missing",
    "missing-name.json": "name: is missing",
    "missing-tokens.json": "tokens: is missing",
    "mode-unknown.json": "mode: must be 'tokens' or 'direct'",
    "name-is-a-number.json": "name: must be a non-empty string",
    "not-json.json": "not valid JSON",
    "not-utf8.json": "is not UTF-8 text",
    "only-whitespace.json": "not valid JSON",
    "receiving-fraction.json": "receiving: must be a query index",
    "receiving-out-of-range.json": "receiving: must be a query index in [0, 3), got 7",
    "receiving-unknown-token.json": "receiving: 'money' is not one of the query tokens",
    "scale-a-string.json": "scale: must be true or false",
    "temperature-NaN-literal.json": "temperature: must be a positive finite number, got nan",
    "temperature-a-string.json": "temperature: must be a positive finite number",
    "temperature-negative.json": "temperature: must be a positive finite number, got -1.5",
    "temperature-too-large.json": "temperature: 1000000.0 is outside the range",
    "temperature-too-small.json": "temperature: 1e-09 is outside the range",
    "temperature-true.json": "temperature: must be a positive finite number, got True",
    "temperature-zero.json": "temperature: must be a positive finite number, got 0",
    "token-a-number.json": "tokens[1]: must be a non-empty string",
    "token-blank.json": "tokens[2]: must be a non-empty string",
    "token-empty-string.json": "tokens[1]: must be a non-empty string",
    "tokens-a-string.json": "tokens: must be a list of strings",
    "tokens-duplicate.json": "tokens[2]: 'the' repeats tokens[0]",
    "tokens-empty-list.json": "tokens: needs at least one token",
    "tokens-with-Q.json": "Q: belongs to direct scenarios",
    "top-level-list.json": "must be a JSON object",
    "trailing-comma.json": "not valid JSON",
    "unknown-key-typo.json": "temprature: is not a scenario field",
    "unknown-key.json": "colour: is not a scenario field",
    "utf16.json": "is not UTF-8 text",
    "wrong-format.json": "format: must be 'attnsim-scenario'",
}


def test_the_corpus_is_complete():
    assert len(CORPUS) >= 40
    assert sorted(EXPECTED) == [p.name for p in CORPUS]


@pytest.fixture
def extra_cases(tmp_path):
    """Cases made at test time: a folder, a 50 MB file, a file over the size limit."""
    folder = tmp_path / "a-folder.json"
    folder.mkdir()
    fifty = tmp_path / "fifty-mb.json"
    with fifty.open("w") as fh:
        fh.write("[" * (50 * 1024 * 1024))
    over = tmp_path / "over-the-limit.json"
    with over.open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: no disk is used
    return {
        folder: "is a folder, not a file",
        fifty: "nested too deeply",
        over: "larger than the",
    }


def _run_main(argv, capsys, monkeypatch):
    # export sets up a headless Qt message handler; the scenario fails before Qt is used
    monkeypatch.setattr(cli_export, "headless", lambda: None)
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def _check_refusal(code, out, err, path, expected):
    assert code == 2
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith("attnsim: error: ")
    assert str(path) in lines[0]
    assert expected in lines[0], lines[0]


@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_every_malformed_file_is_one_line_and_exit_2(path, tmp_path, capsys, monkeypatch):
    out_dir = tmp_path / "out"
    code, out, err = _run_main(
        ["export", "--scenario", str(path), "--out", str(out_dir), "--format", "png"],
        capsys,
        monkeypatch,
    )
    _check_refusal(code, out, err, path, EXPECTED[path.name])
    assert not out_dir.exists() or not any(out_dir.iterdir())
    code, out, err = _run_main(["audit", "--scenario", str(path)], capsys, monkeypatch)
    _check_refusal(code, out, err, path, EXPECTED[path.name])


def test_a_folder_and_huge_files_are_refused(extra_cases, tmp_path, capsys, monkeypatch):
    for path, expected in extra_cases.items():
        out_dir = tmp_path / "out"
        code, out, err = _run_main(
            ["export", "--scenario", str(path), "--out", str(out_dir)], capsys, monkeypatch
        )
        _check_refusal(code, out, err, path, expected)
        assert not out_dir.exists()
        code, out, err = _run_main(["audit", "--scenario", str(path)], capsys, monkeypatch)
        _check_refusal(code, out, err, path, expected)


def _check_process(r, path, expected, out_dir=None):
    assert r.returncode == 2, r.stderr
    assert r.stdout == ""
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert "Traceback" not in r.stderr
    assert str(path) in r.stderr and expected in r.stderr
    if out_dir is not None:
        assert not out_dir.exists() or not any(out_dir.iterdir())


SAMPLE = [
    "X-huge-1e160.json",  # a segmentation fault on the original code
    "deep-list.json",  # a RecursionError traceback on the original code
    "Wq-huge-1e200.json",
    "not-utf8.json",
    "tokens-duplicate.json",
]


def _process_case(attnsim, path, tmp_path):
    out_dir = tmp_path / "out"
    expected = EXPECTED.get(path.name, "")
    r = attnsim("export", "--scenario", str(path), "--out", str(out_dir), "--format", "png")
    _check_process(r, path, expected, out_dir)
    _check_process(attnsim("audit", "--scenario", str(path)), path, expected)


@pytest.mark.parametrize("name", SAMPLE)
def test_malformed_files_through_the_real_command(attnsim, name, tmp_path):
    _process_case(attnsim, CORPUS_DIR / name, tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_every_malformed_file_through_the_real_command(attnsim, path, tmp_path):
    _process_case(attnsim, path, tmp_path)


def test_a_folder_through_the_real_command(attnsim, tmp_path):
    folder = tmp_path / "folder.json"
    folder.mkdir()
    _check_process(attnsim("audit", "--scenario", str(folder)), folder, "is a folder, not a file")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["export", "--scenario", "river-bank", "--out", "/etc/passwd/x", "--format", "png"],
         "/etc/passwd/x: Not a directory"),
        (["export", "--scenario", "river-bank", "--out", "/proc/attnsim-cannot-write",
          "--format", "png"], "/proc/attnsim-cannot-write"),
        (["screenshot", "--scenario", "river-bank", "--out", "/etc/passwd/x/s.png"],
         "/etc/passwd/x"),
    ],
)  # fmt: skip
def test_unwritable_output_is_one_line_and_exit_2(attnsim, args, expected):
    r = attnsim(*args)
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("attnsim: error: ") and expected in lines[0]


@pytest.mark.parametrize(
    "exc",
    [
        OSError(28, "No space left on device", "/tmp/out/x.png"),
        ValueError("bad value\nover two lines"),
        RecursionError("maximum recursion depth exceeded"),
        MemoryError(),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte"),
        IsADirectoryError(21, "Is a directory", "/tmp"),
        RuntimeError("Qt said no"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_any_failure_of_a_subcommand_is_one_line_and_exit_2(exc, capsys, monkeypatch):
    def fail(_args):
        raise exc

    monkeypatch.setitem(cli.COMMANDS, "audit", fail)
    assert cli.main(["audit", "--scenario", "river-bank"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("attnsim: error: ")


def test_an_audit_of_tied_scores_passes(attnsim, tmp_path):
    from attnsim.engine.scenario import Scenario

    sc = Scenario(
        name="tied", tokens=("k1", "k2", "k3"), mode="direct", query_tokens=("q",),
        Q=[[-62.0, -100.5, 36.7, 79.5]],
        K=[[-4.8, -2.1, -5.8, 5.3], [74.7, -2.1, -5.8, 67.3], [-1.1, 0.4, 0.4, -0.4]],
        V=[[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], scale=False, temperature=0.1,
    )  # fmt: skip
    path = tmp_path / "tied.json"
    sc.save(path)
    r = attnsim("audit", "--scenario", str(path))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout and "PASS  temperature keeps the ranking" in r.stdout


@pytest.mark.parametrize("name", ["X-huge-1e160.json", "deep-object.json", "unknown-key.json"])
def test_gui_refuses_a_malformed_scenario_before_opening_a_window(name, capsys, monkeypatch):
    import attnsim.app

    monkeypatch.setattr(attnsim.app, "create_app", lambda *a: pytest.fail("window opened"))
    path = CORPUS_DIR / name
    code, out, err = _run_main(["gui", "--scenario", str(path)], capsys, monkeypatch)
    _check_refusal(code, out, err, path, EXPECTED[name])
    assert gc.isenabled()  # the start turns the collector off: a refusal turns it back on
    code, out, err = _run_main(["--scenario", str(path)], capsys, monkeypatch)
    _check_refusal(code, out, err, path, EXPECTED[name])
    assert gc.isenabled()
