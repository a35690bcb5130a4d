"""Packaging: the built wheel carries the resources; the dependency pins avoid the crash."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_installs_in_a_fresh_venv_and_lists_the_scenarios(tmp_path):
    dist = tmp_path / "dist"
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    wheel = next(dist.glob("attnsim-*.whl"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = Path(
        subprocess.check_output(
            [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], text=True
        ).strip()
    )
    # The wheel goes into the new venv; its dependencies (numpy, Qt) come from this environment
    # through a path entry placed after the venv's own site-packages.
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-compile", "--target", str(site), str(wheel)],
        check=True, capture_output=True,
    )  # fmt: skip
    (site / "zz_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    env["QT_QPA_PLATFORM"] = "offscreen"
    where = subprocess.check_output(
        [str(py), "-c", "import attnsim; print(attnsim.__file__)"], text=True, env=env, cwd=tmp_path
    )
    assert where.strip().startswith(str(site))
    out = subprocess.run(
        [str(py), "-m", "attnsim", "scenarios"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    names = [ln.split("\t")[0] for ln in out.stdout.splitlines()]
    assert "river-bank" in names and "routing-lab" in names and len(names) >= 14
    assert (site / "attnsim" / "resources" / "style.qss").is_file()
    assert (site / "attnsim" / "resources" / "icons" / "attnsim.svg").is_file()
    helps = sorted(p.stem for p in (site / "attnsim" / "resources" / "help").glob("*.md"))
    assert len(helps) == 21 and "heatmap" in helps  # every panel's help text ships
    lessons = sorted(p.name for p in (site / "attnsim" / "resources" / "lessons").glob("*.toml"))
    assert "01-mixing.toml" in lessons  # the shipped lessons too


def test_dependency_pins_exclude_pyside_6_12_0_on_python_3_11():
    import tomllib

    from packaging.markers import Marker
    from packaging.requirements import Requirement

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for py in ("3.11", "3.12", "3.13"):
        env = {"python_version": py, "python_full_version": py + ".0"}
        active = [
            Requirement(d) for d in deps if Requirement(d).name.lower() == "pyside6-essentials"
        ]
        active = [r for r in active if r.marker is None or Marker(str(r.marker)).evaluate(env)]
        assert len(active) == 1, (py, active)
        allows_bad = active[0].specifier.contains("6.12.0")
        assert allows_bad == (py != "3.11"), (py, str(active[0]))
        assert active[0].specifier.contains("6.11.3")


def test_twenty_thousand_void_qt_calls_do_not_crash():
    # PySide6 6.12.0 on Python 3.11 dropped a reference to None on every void-returning call and
    # aborted after a few thousand ("Fatal Python error: none_dealloc").
    code = textwrap.dedent(
        """
        import sys
        from PySide6.QtCore import QObject, QTimer
        from PySide6.QtWidgets import QApplication, QWidget
        app = QApplication([])
        w = QWidget(); t = QTimer(); o = QObject()
        before = sys.getrefcount(None)
        for i in range(5000):
            w.setMinimumWidth(i % 50); w.setWindowTitle("x"); t.setInterval(i); o.setObjectName("o")
        w.update(); app.processEvents()
        print("ok", sys.getrefcount(None) - before)
        """
    )
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith("ok")
