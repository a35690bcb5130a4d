"""The main window's package: every name callers import, and mixins that never shadow one
another (a method defined in two parts would silently depend on the order of the bases)."""

from __future__ import annotations

import inspect

import pytest

import attnsim.app as app
from attnsim.app.window import MainWindow


def test_the_package_exports_what_the_cli_bench_and_tests_import():
    for name in ("MainWindow", "create_app", "build_window", "settings", "recovery_dir",
                 "app_home", "DOCK_GROUPS", "scenario_path"):  # fmt: skip
        assert name in app.__all__ and getattr(app, name) is not None
    assert app.MainWindow is MainWindow


def test_each_window_part_owns_its_methods_alone():
    parts = [c for c in MainWindow.__mro__[1:] if c.__module__.startswith("attnsim.app.")]
    assert {c.__name__ for c in parts} == {
        "DocksMixin", "MenusMixin", "PresentationMixin", "StatusMixin", "DocumentsMixin",
        "FiguresMixin", "LessonsMixin",
    }  # fmt: skip
    owner: dict[str, str] = {}
    for cls in [MainWindow, *parts]:
        assert "__init__" not in vars(cls) or cls is MainWindow, cls
        for name, member in vars(cls).items():
            if inspect.isfunction(member) or isinstance(member, property):
                assert name not in owner, f"{name} in {owner.get(name)} and {cls.__name__}"
                owner[name] = cls.__name__
    assert owner["open_path"] == "DocumentsMixin" and owner["export_all"] == "FiguresMixin"


def test_each_part_is_a_small_module():
    for cls in [MainWindow, *MainWindow.__mro__[1:6]]:
        lines, _ = inspect.getsourcelines(cls)
        assert len(lines) < 300, (cls.__name__, len(lines))


def test_app_home_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNSIM_HOME", str(tmp_path / "h"))
    assert app.app_home() == tmp_path / "h" and (tmp_path / "h").is_dir()
    assert app.recovery_dir() == tmp_path / "h" / "recovery" and app.recovery_dir().is_dir()


@pytest.mark.parametrize("group", [g for g, _ in app.DOCK_GROUPS])
def test_dock_groups_name_a_column_and_a_row(group):
    column, row = group.split("_")
    assert column in ("left", "right") and row in ("top", "bottom")


@pytest.mark.parametrize(("width", "height", "count"), [
    (1600, 1000, 4), (860, 600, 4), (859, 800, 2), (1600, 599, 2), (800, 500, 1),
])  # fmt: skip
def test_small_screens_merge_the_dock_groups_and_keep_every_panel_once(width, height, count):
    groups = app.dock_groups(width, height)
    assert len(groups) == count
    everything = [pid for _, pids in app.DOCK_GROUPS for pid in pids]
    assert sorted(pid for _, pids in groups for pid in pids) == sorted(everything)
    assert groups[0][1][0] == "vectors"  # the first tab in front is the editor
    for name, _ in groups:
        column, row = name.split("_")
        assert column in ("left", "right") and row in ("top", "bottom")


def test_the_app_takes_the_interpreter_lock_back_from_background_work_quickly(qapp):
    # The window's thread lets go of the lock in every call into Qt; with Python's 5 ms (or
    # even 1 ms) a panel's first show beside a running lab waited 60-100 ms for it.
    import sys

    from attnsim.app import application

    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        application.create_app()
        assert sys.getswitchinterval() == pytest.approx(application.SWITCH_INTERVAL_S)
        assert application.SWITCH_INTERVAL_S <= 0.0005
    finally:
        sys.setswitchinterval(before)
