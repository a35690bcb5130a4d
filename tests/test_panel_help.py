"""The panels' help texts: one per registered panel, four sections, things to try, plain words.

The texts are for a lecturer or a student, so none may carry what a docstring carries (Sphinx
roles, double back-quotes, code spans, "sub-view", refresh calls, module paths, attnsim's class
names); each names the reference text whose experiment its panel reproduces. They load by panel
id without Qt, for the lessons that build on them.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

import attnsim
from attnsim.panels import PANEL_SPECS
from attnsim.resources.panel_help import (
    SECTIONS,
    TRY_MAX,
    TRY_MIN,
    PanelHelp,
    has_help,
    help_ids,
    panel_help,
    parse_help,
)

ROOT = Path(attnsim.__file__).parent
IDS = [spec.panel_id for spec in PANEL_SPECS]
# The four reference texts (shared/seeds), by the titles a reader finds on their first pages.
REFERENCE_TITLES = (
    "The Geometry of Self-Attention",
    "How an attention head mixes information",
    "Attention from first principles",
    "The Geometry of Attention",
)
# What a docstring carries and help for people must not.
MARKUP = (":mod:", ":class:", ":func:", ":data:", ":meth:", "``", "`", "sub-view", "refresh(")
MODULE_PATH = re.compile(r"\battnsim[./]\w|\b\w+\.py\b|\b[a-z_]+\.[a-z_]+\.[a-z_]+\b|\w\(\)")
# Class names of attnsim that are also what the user sees on screen: the optimizers the
# training stepper names, and the two pretrained models of the Real model panel.
SHOWN_NAMES = {"Adam", "SGD", "MiniLM", "SmolLM2"}


@cache
def _class_names() -> frozenset[str]:
    """Every class defined under attnsim/ whose name reads as code: more than one capital, or
    a digit or underscore ("HeadTrace", "Panel2"). A one-word name ("Block", "Controls") is an
    English word a sentence may begin with, and cannot be told from prose."""
    names = set()
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                names.add(node.name)
    return frozenset(n for n in names if not re.fullmatch(r"[A-Z][a-z]+", n)) - SHOWN_NAMES


def _all_text(h: PanelHelp) -> str:
    return h.markdown()


def test_every_registered_panel_has_help_and_no_help_is_stale():
    assert help_ids() == sorted(IDS)
    assert len(IDS) == 21
    for spec in PANEL_SPECS:
        assert has_help(spec.panel_id)
        assert panel_help(spec.panel_id).title == spec.title, spec.panel_id
    assert not has_help("no_such_panel")
    with pytest.raises(KeyError, match="no_such_panel"):
        panel_help("no_such_panel")


@pytest.mark.parametrize("pid", IDS)
def test_each_help_has_its_four_sections_and_two_to_four_things_to_try(pid):
    h = panel_help(pid)
    assert [name for name, _ in h.sections()] == list(SECTIONS)
    assert TRY_MIN <= len(h.try_this) <= TRY_MAX
    for item in h.try_this:
        # a concrete action, said in a sentence: something to do and something to watch
        assert len(item.split()) >= 10, item
        assert item.endswith((".", ")", '"')), item
    for body in (h.shows, h.notice, h.reference):
        assert len(body.split()) >= 25, (pid, body)
    # the text on file is exactly what the loader gives back
    assert parse_help(pid, h.markdown()) == h


@pytest.mark.parametrize("pid", IDS)
def test_each_reference_names_the_text_it_reproduces(pid):
    ref = panel_help(pid).reference
    assert any(f'"{title}"' in ref for title in REFERENCE_TITLES), ref


def test_no_help_carries_docstring_markup_code_names_or_module_paths():
    classes = _class_names()
    assert {"HeadTrace", "PanelSpec", "Workbench"} & classes == {"HeadTrace", "PanelSpec"}
    found = []
    for pid in IDS:
        text = _all_text(panel_help(pid))
        found += [(pid, m) for m in MARKUP if m in text]
        found += [(pid, m.group()) for m in MODULE_PATH.finditer(text)]
        found += [(pid, c) for c in classes if re.search(rf"\b{re.escape(c)}\b", text)]
    assert found == []


def test_the_check_catches_what_the_old_help_showed():
    # the first paragraph of a panel package's docstring, as Help showed it before
    old = (
        "The three-fields lab (see :mod:`.panel`); its figures are sub-views with ``refresh(data)``"
    )
    assert [m for m in MARKUP if m in old] == [":mod:", "``", "`", "sub-view", "refresh("]
    assert MODULE_PATH.search("read attnsim.viewmodels.heatmap or views/heatmap.py")
    assert "RoutingLabState" in _class_names()


def _file(title="Vectors", sections=SECTIONS, tries=("Drag bank toward river and watch.",) * 2):
    parts = [f"# {title}"]
    for name in sections:
        body = "\n".join(f"- {t}" for t in tries) if name == "Try this" else f"About {name}."
        parts += [f"## {name}", body]
    return "\n\n".join(parts)


def test_a_malformed_help_file_is_refused_naming_the_problem():
    assert parse_help("vectors", _file()).try_this == ("Drag bank toward river and watch.",) * 2
    with pytest.raises(ValueError, match="must start with '# '"):
        parse_help("vectors", _file().replace("# Vectors", "Vectors", 1))
    with pytest.raises(ValueError, match="in this order"):
        parse_help("vectors", _file(sections=SECTIONS[:3]))
    with pytest.raises(ValueError, match="in this order"):
        parse_help("vectors", _file(sections=(SECTIONS[1], SECTIONS[0], *SECTIONS[2:])))
    with pytest.raises(ValueError, match="unknown or repeated section 'Notes'"):
        parse_help("vectors", _file(sections=(*SECTIONS, "Notes")))
    with pytest.raises(ValueError, match="a list of 2 to 4 things"):
        parse_help("vectors", _file(tries=("Only one.",)))
    with pytest.raises(ValueError, match="a list of 2 to 4 things"):
        parse_help("vectors", _file(tries=("One more.",) * 5))
    with pytest.raises(ValueError, match="a list of 2 to 4 things"):
        parse_help("vectors", _file().replace("- Drag", "Drag"))


def test_the_help_loads_by_panel_id_without_qt():
    code = (
        "import sys, json\n"
        "from attnsim.resources.panel_help import help_ids, panel_help\n"
        "texts = {i: panel_help(i).markdown() for i in help_ids()}\n"
        "qt = [m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))]\n"
        "print(json.dumps([len(texts), qt]))\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    count, qt = json.loads(r.stdout)
    assert count == 21 and qt == []


def test_the_numbers_the_help_quotes_are_the_engines():
    # The receiving-token help quotes bank's row of "the river bank"; the engine must agree.
    import numpy as np

    from attnsim.engine.scenario import compute
    from attnsim.resources import resolve_scenario

    sc = resolve_scenario("river-bank")
    trace = compute(sc).heads[0]
    bank = list(sc.tokens).index("bank")
    text = panel_help("readout").reference
    for quoted in ("0.26, 0.31 and 0.43", "[0.21, 0.52, 0.34, 0.41]"):
        assert quoted in text
    np.testing.assert_allclose(trace.weights[bank], [0.26, 0.31, 0.43], atol=0.005)
    np.testing.assert_allclose(trace.output[bank], [0.21, 0.52, 0.34, 0.41], atol=0.005)


@pytest.mark.parametrize(
    ("pid", "preset", "token", "quoted", "weights", "output"),
    [
        ("vectors", "money-bank", "bank", "[0.52, 0.21, 0.34, 0.41]", None,
         [0.52, 0.21, 0.34, 0.41]),
        ("projections", "eiffel-raw", "tower", "0.2483, 0.2483 and 0.5035",
         [0.2483, 0.2483, 0.5035], None),
        ("projections", "eiffel-swap-values", "tower", "[0.5035, 0.2483]",
         [0.2483, 0.5035, 0.2483], [0.5035, 0.2483]),
        ("space3d", "wq-find-water", "bank", "62.6% on river", [0.111, 0.626, 0.263], None),
    ],
)  # fmt: skip
def test_the_reference_numbers_of_the_presets_are_the_engines(
    pid, preset, token, quoted, weights, output
):
    import numpy as np

    from attnsim.engine.scenario import compute
    from attnsim.resources import resolve_scenario

    assert quoted in panel_help(pid).reference
    sc = resolve_scenario(preset)
    trace = compute(sc).heads[0]
    row = list(sc.tokens).index(token)
    if weights is not None:
        np.testing.assert_allclose(trace.weights[row], weights, atol=5e-4)
    if output is not None:
        np.testing.assert_allclose(trace.output[row], output, atol=5e-3)
