"""The session as code: the exported script and notebook run without attnsim and print the
engine's numbers, for every preset, unmasked and masked (and the mask-value mistake, a custom
mask, another temperature without scaling); ``attnsim export-code`` refuses bad input in one
line and never leaves half a file."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from attnsim.engine.scenario import Scenario, compute, random_scenario
from attnsim.export import code_notebook, code_script
from attnsim.export.code_sections import JSON_PREFIX, WIDE_MASK
from attnsim.export.session import (
    session_exporter,
    session_exporter_for,
    session_exporters,
)
from attnsim.resources import preset_names, resolve_scenario

from .conftest import run_attnsim

TOL = 1e-12  # the script repeats the engine's operations: only the last bits may differ
ENTROPY_TOL = 1e-9  # bits; the engine takes the entropy from the logits, the script from -w log w
HEAD_FIELDS = ("Q", "K", "V", "scores", "logits", "mask", "masked_logits", "weights", "output")

# Runs each exported file in this interpreter (started with -S -E: no site-packages, so no
# editable attnsim), with NumPy's folder alone put on the path, and prints one JSON object:
# file -> {"numbers": the file's JSON line, "text": what it printed before it}.
DRIVER = textwrap.dedent(
    """
    import contextlib, importlib.util, io, json, os, runpy, sys
    numpy_dir, extra = sys.argv[1], sys.argv[2]
    sys.path.append(numpy_dir)
    if extra != "-":
        sys.path.insert(0, extra)
    assert importlib.util.find_spec("attnsim") is None, "attnsim must not be importable here"
    out = {}
    for path in sys.argv[3:]:
        sys.argv = [path, "--json", *os.environ.get("EXPORT_ARGS", "").split()]
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            runpy.run_path(path, run_name="__main__")
        *text, last = buf.getvalue().splitlines()
        assert last.startswith(PREFIX), last[:80]
        out[path] = {"numbers": json.loads(last[len(PREFIX):]), "text": "\\n".join(text)}
    print(json.dumps(out))
    """
).replace("PREFIX", repr(JSON_PREFIX))


def _numpy_dir() -> str:
    return str(Path(np.__file__).resolve().parents[1])


def run_without_attnsim(tmp_path: Path, files: list[Path], extra: Path | None = None) -> dict:
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["MPLBACKEND"] = "Agg"
    r = subprocess.run(
        [sys.executable, "-S", "-E", str(driver), _numpy_dir(), str(extra or "-"), *map(str, files)],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout)


def cases() -> dict[str, Scenario]:
    """Every preset unmasked and causal, and three variants that exercise the other options."""
    out: dict[str, Scenario] = {}
    for name in preset_names():
        sc = resolve_scenario(name)
        out[f"{name}-none"] = sc.replace(mask="none")
        out[f"{name}-causal"] = sc.replace(mask="causal")
    tired = resolve_scenario("tired-cat")
    out["tired-cat-mask-value-0"] = tired.replace(mask="causal", mask_value=0.0)
    custom = np.ones((5, 5), dtype=bool)
    custom[:, 1] = False
    custom[1, 1] = True
    out["tired-cat-custom"] = tired.replace(mask=custom)
    out["two-heads-cold-unscaled"] = resolve_scenario("two-heads").replace(
        temperature=0.25, scale=False, mask="causal"
    )
    # a custom mask wider than WIDE_MASK is written as strings of 0s and 1s
    wide = np.random.default_rng(0).random((WIDE_MASK + 8, WIDE_MASK + 8)) < 0.5
    wide[:, 0] = True
    out["random-wide-mask"] = random_scenario(WIDE_MASK + 8, 3, seed=2, mask="none").replace(
        mask=wide
    )
    # labels and texts that would break a careless writer of Python source
    odd = resolve_scenario("two-heads")
    out["quotes-and-braces"] = odd.replace(
        tokens=('a"""b', "c\\d", "{e} # f"),
        axes=("x'", 'y"', "{z}", "w\\"),
        title='Quotes """ and \\ braces {}',
        description='A line\n"""\nand {braces} # not a comment',
        heads=tuple(h.replace(name=f"head '{i}' \"{{}}\"") for i, h in enumerate(odd.heads)),
    )
    return out


def check_numbers(numbers: dict, sc: Scenario, where: str) -> None:
    result = compute(sc)
    assert len(numbers["heads"]) == len(result.heads), where
    for h, (got, tr) in enumerate(zip(numbers["heads"], result.heads, strict=True)):
        for f in HEAD_FIELDS:
            want = np.asarray(getattr(tr, f), dtype=float)
            np.testing.assert_allclose(
                np.asarray(got[f], dtype=float), want, rtol=TOL, atol=TOL,
                err_msg=f"{where}: head {h + 1} {f}",
            )  # fmt: skip
        np.testing.assert_allclose(
            got["entropy"], tr.entropy, rtol=0, atol=ENTROPY_TOL, err_msg=f"{where}: entropy"
        )
    if result.block is None:
        assert set(numbers) == {"heads"}, where
        return
    for f, want in (("concat", result.block.concat), ("Wo", result.block.Wo),
                    ("delta", result.block.delta), ("Y", result.block.Y)):  # fmt: skip
        np.testing.assert_allclose(
            np.asarray(numbers[f]), want, rtol=TOL, atol=TOL, err_msg=f"{where}: {f}"
        )


def notebook_as_script(path: Path, out: Path) -> Path:
    """The notebook's code cells, one after another, as one script."""
    import nbformat

    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    out.write_text("\n\n".join(code) + "\n")
    return out


@pytest.mark.numeric
@pytest.mark.process
def test_scripts_and_notebooks_print_the_engines_numbers_without_attnsim(tmp_path) -> None:
    all_cases = cases()
    files: dict[Path, tuple[str, Scenario]] = {}
    for key, sc in all_cases.items():
        script = session_exporter("py").write(sc, tmp_path / f"{key}.py")
        if key == "random-wide-mask":
            assert "MASK = np.array([[c == '1' for c in row] for row in [" in script.read_text()
        nb = session_exporter("ipynb").write(sc, tmp_path / f"{key}.ipynb")
        files[script] = (key, sc)
        files[notebook_as_script(nb, tmp_path / f"{key}-notebook.py")] = (f"{key} notebook", sc)
    ran = run_without_attnsim(tmp_path, list(files))
    assert len(ran) == len(files) == 2 * len(all_cases) >= 2 * 28 + 10
    for path, (key, sc) in files.items():
        got = ran[str(path)]
        check_numbers(got["numbers"], sc, key)
        text = got["text"]
        assert "attention weights" in text and "entropy" in text, key
        # the readable print-out shows the weights too: the receiving query's, to 4 places
        weights = compute(sc).heads[0].weights[sc.receiving]
        share = f"{sc.tokens[0]} {weights[0]:.4f}"
        assert f"What {sc.query_labels[sc.receiving]} (the receiving query) reads" in text, key
        assert share in text, (key, share)
        if sc.mode == "tokens" and compute(sc).block is not None:
            assert "The residual result Y = X + update" in text, key
        if sc.mask_value == 0.0:
            assert "weight on forbidden keys" in text, key
    # the notebooks without matplotlib say there is no figure, and go on
    assert (
        "matplotlib is not installed" in ran[str(tmp_path / "two-heads-none-notebook.py")]["text"]
    )


FAKE_PYPLOT = textwrap.dedent(
    """
    import json, os
    DRAWN = []

    class _Any:
        def __init__(self, name="obj"):
            self.name = name
        def __getattr__(self, name):
            return _Any(name)
        def __call__(self, *args, **kwargs):
            return _Any(self.name)

    def _log(entry):
        DRAWN.append(entry)
        with open(os.environ["FAKE_PLOT_LOG"], "w") as f:
            json.dump(DRAWN, f)

    class Axes(_Any):
        def imshow(self, data, **kwargs):
            _log({"data": [list(map(float, row)) for row in data], **kwargs})
            return _Any("image")

    def show():
        _log("shown")

    class _Grid:
        def __init__(self, n):
            self.row = [Axes() for _ in range(n)]
        def __getitem__(self, i):
            return self.row

    def subplots(nrows, ncols, **kwargs):
        assert kwargs.get("squeeze") is False
        return _Any("figure"), _Grid(ncols)
    """
)


@pytest.mark.process
def test_the_figure_draws_every_heads_weights(tmp_path) -> None:
    # matplotlib is not installed here: a stand-in records what the figure cell draws
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("")
    (fake / "matplotlib" / "pyplot.py").write_text(FAKE_PYPLOT)
    sc = resolve_scenario("two-heads")
    result = compute(sc)
    nb = session_exporter("ipynb").write(sc, tmp_path / "two-heads.ipynb")
    notebook = notebook_as_script(nb, tmp_path / "two-heads-nb.py")
    script = session_exporter("py").write(sc, tmp_path / "two-heads.py")
    # the notebook draws in its cell; the script only with --figure, and then shows it
    for path, args, end in (
        (notebook, "", []),
        (script, "", None),
        (script, "--figure", ["shown"]),
    ):
        log = tmp_path / "drawn.json"
        log.unlink(missing_ok=True)
        os.environ.update(FAKE_PLOT_LOG=str(log), EXPORT_ARGS=args)
        try:
            ran = run_without_attnsim(tmp_path, [path], extra=fake)
        finally:
            del os.environ["FAKE_PLOT_LOG"], os.environ["EXPORT_ARGS"]
        check_numbers(ran[str(path)]["numbers"], sc, f"{path.name} {args}")
        if end is None:
            assert not log.exists()
            continue
        assert "matplotlib is not installed" not in ran[str(path)]["text"]
        drawn = json.loads(log.read_text())
        assert len(drawn) == len(result.heads) + len(end) == 2 + len(end)
        assert drawn[2:] == end
        for d, tr in zip(drawn, result.heads, strict=False):
            np.testing.assert_allclose(d["data"], tr.weights, rtol=0, atol=TOL)
            assert (d["vmin"], d["vmax"], d["cmap"]) == (0.0, 1.0, "viridis")


def test_the_script_imports_only_numpy_and_says_what_it_leaves_out(tmp_path) -> None:
    sc = resolve_scenario("routing-lab")
    text = code_script.render(sc, notes=["Changed in this session and left out: the routing lab."])
    tree = ast.parse(text)
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported == {"json", "sys", "numpy", "matplotlib"}
    top = " ".join(ln.removeprefix("#").strip() for ln in text.split("\nimport ")[0].splitlines())
    assert text.startswith("# Routing lab: one query, three key-value pairs\n")
    assert "Not exported: the labs' own settings" in top
    assert "routing lab's synthetic dimension and distractor keys" in top
    assert "induction lab's model" in top
    assert "Changed in this session and left out: the routing lab." in top
    # the direct scenario's Q, K, V are written as numbers, each row labelled
    assert "Q = np.array([\n    [1.0, 0.0],  # q\n])" in text
    assert "SCALE = False" in text and "MASK_VALUE = -np.inf" in text
    # every computing line of one head says what it computes
    attend = text.split("def attend(Q, K, V):")[1].split("return {")[0]
    lines = [ln for ln in attend.splitlines()[2:] if ln.strip()]
    assert len(lines) >= 7 and all("  # " in ln for ln in lines[1:]), lines


def test_the_numbers_are_written_exactly_and_readably() -> None:
    sc = resolve_scenario("tired-cat")
    X = np.array(sc.X, copy=True)
    X[0, 0] = 1 / 3  # a number with every digit
    text = code_script.render(sc.replace(X=X, mask="causal", mask_value=0.0, temperature=0.5))
    assert f"[{1 / 3!r}," in text and "0.3333333333333333" in text
    assert "TEMPERATURE = 0.5" in text
    assert "MASK = np.tri(len(QUERY_LABELS), len(KEY_LABELS), dtype=bool)" in text
    assert "MASK_VALUE = 0.0  # forbidden keys get this logit instead of -inf" in text
    assert "# columns: the, tired, cat, finally, slept" in text


def test_the_notebook_is_valid_and_holds_the_scripts_code() -> None:
    import nbformat

    sc = resolve_scenario("two-heads")
    nb = nbformat.reads(code_notebook.render(sc), as_version=4)
    nbformat.validate(nb)
    kinds = [c.cell_type for c in nb.cells]
    assert kinds[0] == "markdown" and nb.cells[0].source.startswith("# Two heads")
    assert kinds[1:] == ["markdown", "code"] * ((len(kinds) - 1) // 2)
    script = code_script.render(sc)
    figure = [c.source for c in nb.cells if c.cell_type == "code" and "imshow" in c.source]
    assert len(figure) == 1 and "except ImportError" in figure[0]
    for cell in nb.cells[2::2]:
        if cell is not nb.cells[2::2][-2]:  # the figure cell: the script draws it on --figure
            assert cell.source in script
    assert nb.metadata["kernelspec"]["language"] == "python"


def test_the_session_formats_are_registered_beside_the_figure_formats() -> None:
    from attnsim.export import registry

    assert [e.name for e in session_exporters()] == ["py", "ipynb"]
    assert [e.label for e in session_exporters()] == ["Python script", "Jupyter notebook"]
    assert session_exporter_for("a/b.IPYNB").name == "ipynb"
    assert registry.names() == ("png", "svg", "pdf")  # figures and sessions stay apart
    with pytest.raises(ValueError, match=r"must end in \.py or \.ipynb"):
        session_exporter_for("a/b.txt")


def test_export_code_writes_a_script_from_the_command_line(tmp_path) -> None:
    out = tmp_path / "bank.py"
    r = run_attnsim("export-code", "--scenario", "bank-river", "--out", str(out), "--mask", "none")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out)
    text = out.read_text()
    assert "no mask: every query may read every key" in text
    assert 'The attnsim scenario "bank-river" as code' in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--scenario", "no-such-preset", "--out", "{tmp}/a.py"],
            "no preset named 'no-such-preset'",
        ),
        (["--scenario", "river-bank", "--out", "{tmp}/a.txt"], "must end in .py or .ipynb"),
        (
            ["--scenario", "river-bank", "--out", "{tmp}/missing/a.py"],
            "is not a folder that exists",
        ),
        (["--scenario", "river-bank", "--out", "{tmp}/a.py", "--temperature", "0"], "temperature"),
    ],
)
def test_export_code_refuses_in_one_line_and_writes_nothing(tmp_path, args, message) -> None:
    from attnsim.cli import main

    argv = ["export-code", *(a.replace("{tmp}", str(tmp_path)) for a in args)]
    r = run_attnsim(*argv)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert list(tmp_path.iterdir()) == []
    assert main(argv) == 2  # the same in-process


def test_a_failed_write_leaves_no_half_file_and_keeps_the_old_one(tmp_path, monkeypatch, capsys):
    from attnsim.cli import main
    from attnsim.export import session

    out = tmp_path / "kept.ipynb"
    out.write_text("the previous export\n")

    def fail(src, dst):
        assert Path(src).read_text().startswith("{")  # the whole notebook was written first
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session.os, "replace", fail)
    assert main(["export-code", "--scenario", "river-bank", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"attnsim: error: {out}: No space left on device"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.ipynb"]
    assert out.read_text() == "the previous export\n"
