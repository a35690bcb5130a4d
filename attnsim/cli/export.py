"""``attnsim export --scenario`` (one figure per panel) and ``attnsim screenshot`` (the whole
window): the main window drawn offscreen. ``export --model`` is in :mod:`attnsim.cli.real_models`.
"""

from __future__ import annotations

import argparse
import sys

from .headless import headless
from .options import UsageError, load_scenario

__all__ = ["cmd_export", "cmd_screenshot", "export_scenario", "window"]


def window(scenario, size: tuple[int, int]):
    """The main window on ``scenario`` (a name, a path or a Scenario), shown offscreen."""
    from attnsim.app import MainWindow, create_app
    from attnsim.model.workbench import Workbench

    sc = load_scenario(scenario) if isinstance(scenario, str) else scenario
    app = create_app()
    win = MainWindow(Workbench(sc), ask=lambda *_: False, restore_layout=False)
    win.resize(*size)
    win.show()
    for _ in range(5):
        app.processEvents()
    for panel in win.panels.built().values():  # export makes the others as it needs them
        panel.flush()
    app.processEvents()
    return app, win


def export_scenario(args: argparse.Namespace, command: str = "export"):
    """The scenario with the command's --mask, --temperature and --receiving (each where the
    command has it), validated; refusals name ``attnsim <command>``."""
    from attnsim.engine.scenario import ScenarioError

    sc = load_scenario(args.scenario)
    changes: dict[str, object] = {}
    if getattr(args, "mask", None) is not None:
        changes["mask"] = args.mask
    if getattr(args, "temperature", None) is not None:
        changes["temperature"] = args.temperature
    if getattr(args, "receiving", None) is not None:
        labels = sc.query_labels
        r = args.receiving
        if r in labels:
            changes["receiving"] = r
        elif r.strip().lstrip("+-").isdigit():
            i = int(r)
            if not 1 <= i <= len(labels):
                raise UsageError(
                    f"attnsim {command}: --receiving {r} is out of range: the queries are "
                    f"1 to {len(labels)} ({', '.join(labels)})"
                )
            changes["receiving"] = i - 1
        else:
            raise UsageError(
                f"attnsim {command}: --receiving {r!r} is not a query token of {sc.name} "
                f"({', '.join(labels)}) nor a position"
            )
    try:
        sc = sc.replace(**changes)
    except ScenarioError as exc:
        raise UsageError(f"attnsim {command}: {exc}") from None
    if getattr(args, "head", None) is not None:
        n = len(sc.heads) if sc.mode == "tokens" else 1
        if not 1 <= args.head <= n:
            raise UsageError(
                f"attnsim export: --head {args.head} is out of range: {sc.name} has "
                f"{n} head{'s' if n != 1 else ''} (1 to {n})"
            )
    return sc


def cmd_export(args: argparse.Namespace) -> int:
    sc = export_scenario(args)
    headless(args.size)
    _, win = window(sc, args.size)
    if args.head is not None:
        win.wb.set_focused_head(args.head - 1)
    # Panels with nothing to show for this scenario are skipped with one note each, also
    # when --panels names them (the whole panel, --panel, still has them).
    skipped: dict[str, str] = {}
    files = win.export_all(args.out, args.format, args.scale, mode=args.mode,
                           panels=args.panels, titles=args.titles, skipped=skipped)  # fmt: skip
    win.wb.undo_stack.setClean()
    for pid, why in skipped.items():
        print(f"attnsim export: skipped {pid}: {why}", file=sys.stderr)
    for f in files:
        print(f)
    return 0


def cmd_screenshot(args: argparse.Namespace) -> int:
    headless(args.size)
    from attnsim.export import grab_image

    _, win = window(args.scenario, args.size)
    image = grab_image(win, 1.0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(args.out), "PNG"):
        raise UsageError(f"could not write {args.out}")
    print(args.out)
    return 0
