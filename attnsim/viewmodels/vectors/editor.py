"""What the vector editor shows and how its choices work: which matrix is edited (X, or the
Q, K or V of a direct scenario), the table side's data, the plane the user chose, and the
picture of arrows drawn in it. Frozen dataclasses for the panel's sub-views, no Qt."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from attnsim.engine import edits
from attnsim.engine.scenario import Scenario, ScenarioError

from .plane import (
    SNAP_STEP,
    Array,
    Plane,
    axis_plane,
    direction_label,
    fitted_plane,
    fraction_in_plane,
    project,
)
from .projection import Projection

# What a direct scenario's selector offers (a token scenario always edits X).
KINDS = {"q": "Q (queries)", "k": "K (keys)", "v": "V (values)"}
AXES_MODE = "axes"
BEST_MODE = "best"

__all__ = [
    "AXES_MODE",
    "BEST_MODE",
    "KINDS",
    "EditorData",
    "PlaneChoice",
    "PlaneControlsData",
    "PlanePicture",
    "Target",
    "checked_axes",
    "choose_plane",
    "editor_data",
    "named_refusal",
    "picked_axis",
    "plane_controls",
    "plane_hint",
    "plane_info",
    "plane_picture",
    "reference_note",
    "renamed",
    "target",
    "tip_text",
    "unique_name",
]


def unique_name(existing: tuple[str, ...], base: str = "new") -> str:
    """``base``, or ``base2``, ``base3``... : the first that is not in ``existing``."""
    if base not in existing:
        return base
    k = 2
    while f"{base}{k}" in existing:
        k += 1
    return f"{base}{k}"


def named_refusal(exc: Exception, where: str) -> ValueError:
    """The refusal with the cell it concerns in front."""
    text = exc.problem if isinstance(exc, ScenarioError) else str(exc)
    return ValueError(f"{where}: {text}")


@dataclass(frozen=True, eq=False)
class Target:
    """The matrix the editor edits: X in a token scenario, else the chosen Q, K or V.

    ``rows`` names its rows, ``axes`` its columns; ``highlight`` is the row drawn in bold (the
    receiving token or query, or in the K and V views the focused key)."""

    kind: str  # 'x', 'q', 'k' or 'v'
    matrix: Array
    rows: tuple[str, ...]
    axes: tuple[str, ...]
    highlight: int | None

    @property
    def what(self) -> str:
        return self.kind.upper()

    @property
    def structural(self) -> bool:
        """Whether tokens may be added, removed or reordered here: queries are given one per
        row of Q, so the Q view of a direct scenario cannot."""
        return self.kind != "q"

    @property
    def header(self) -> tuple[str, ...]:
        return ("query" if self.kind == "q" else "token", *self.axes)


def target(sc: Scenario, choice: str, receiving: int, focused_key: int | None) -> Target:
    """What is edited in ``sc`` when the direct-scenario selector shows ``choice``."""
    direct_choice = choice if choice in KINDS else "q"
    kind = "x" if sc.mode == "tokens" else direct_choice
    matrix = np.asarray(getattr(sc, edits.vector_field(sc, kind)))  # type: ignore[arg-type]
    rows = tuple(sc.query_labels) if kind == "q" else tuple(sc.tokens)
    if sc.mode == "tokens":
        axes = tuple(sc.axes)
    else:
        axes = tuple(sc.v_axes) if kind == "v" else tuple(sc.qk_axes)
    highlight = receiving if kind in ("x", "q") else focused_key
    return Target(kind, matrix, rows, axes, highlight)


@dataclass(frozen=True, eq=False)
class EditorData:
    """What the table side shows: the selector, the receiving token and the table itself."""

    direct: bool
    kind: str  # the selector's choice: 'q', 'k' or 'v' (shown only in a direct scenario)
    receiving_labels: tuple[str, ...]
    receiving: int
    structural: bool
    values: Array
    names: tuple[str, ...]
    header: tuple[str, ...]
    bold_row: int | None
    refit_columns: bool = False  # another document: column widths are measured afresh
    # The rows whose values differ from the previous refresh's (None: unknown, compare all).
    changed: NDArray[np.int_] | None = None


@dataclass(frozen=True)
class PlaneControlsData:
    """The plane's choices: which mode, which two axes (of ``axes``)."""

    axes: tuple[str, ...]
    picked: tuple[int, int]
    best: bool

    @property
    def d(self) -> int:
        return len(self.axes)


def editor_data(
    sc: Scenario,
    t: Target,
    choice: str,
    receiving: int,
    refit_columns: bool = False,
    changed: NDArray[np.int_] | None = None,
) -> EditorData:
    """The table side for target ``t`` of ``sc`` (``choice``: the direct-scenario selector;
    ``changed``: the rows of ``t.matrix`` that differ from the previous refresh's, if known)."""
    return EditorData(
        direct=sc.mode == "direct",
        kind=choice if choice in KINDS else "q",
        receiving_labels=tuple(sc.query_labels),
        receiving=receiving,
        structural=t.structural,
        values=t.matrix,
        names=t.rows,
        header=t.header,
        bold_row=t.highlight,
        refit_columns=refit_columns,
        changed=changed,
    )


@dataclass(frozen=True, eq=False)
class PlaneChoice:
    """The plane the user chose: two axes or the best plane. ``fitted`` keeps the best plane
    while the vectors are edited (arrows do not jump) until a refit; ``shown`` identifies what
    the choice was made for (the document, the kind, the rows and axes)."""

    mode: str = AXES_MODE
    axes: tuple[int, int] = (0, 1)
    fitted: Plane | None = None
    shown: tuple | None = None


def choose_plane(choice: PlaneChoice, sc: Scenario, t: Target) -> tuple[PlaneChoice, Plane]:
    """The plane to draw ``t`` in, and the choice updated for it: a new document or a new
    shape resets the axes, anything else shown anew drops the fitted plane."""
    d = t.matrix.shape[1]
    shown = (sc.name, sc.mode, t.kind, t.rows, t.axes)
    if shown != choice.shown:
        old = choice.shown
        axes = choice.axes
        if old is None or old[:3] != shown[:3] or len(old[4]) != d:
            axes = (0, 1 if d > 1 else 0)
        choice = replace(choice, axes=axes, fitted=None, shown=shown)
    # With two axes or fewer the best plane is the whole space: show the axes themselves.
    if choice.mode == BEST_MODE and d > 2:
        if choice.fitted is None:
            choice = replace(choice, fitted=fitted_plane(t.matrix)[0])
        return choice, choice.fitted  # type: ignore[return-value]
    i, j = choice.axes
    return choice, axis_plane(d, i, j if d > 1 else None)


def picked_axis(axes: tuple[int, int], which: int, index: int) -> tuple[int, int]:
    """The axes after combo ``which`` (0: x, 1: y) picked axis ``index``; picking the other
    combo's axis swaps the two."""
    out = list(axes)
    other = 1 - which
    if out[other] == index:
        out[other] = out[which]
    out[which] = index
    return out[0], out[1]


def checked_axes(axes: tuple[int, int], d: int) -> tuple[int, int]:
    """``axes`` if they are two different axes of ``d`` (or axis 0 twice when d = 1)."""
    if not all(0 <= a < d for a in axes) or (d > 1 and axes[0] == axes[1]):
        raise ValueError(f"axes {axes} are not two different axes of {d}")
    return axes


def plane_controls(axes: tuple[str, ...], picked: tuple[int, int], mode: str) -> PlaneControlsData:
    # With two axes or fewer the best plane is the whole space: the axes themselves are shown.
    return PlaneControlsData(axes, picked, mode == BEST_MODE and len(axes) > 2)


@dataclass(frozen=True, eq=False)
class PlanePicture:
    """Everything the drag plane draws: editable tips (n, 2) with names, reference tips (dashed,
    not editable), the colour ``style`` (the edited kind), the axes' names and the caption."""

    tips: Array
    labels: tuple[str, ...]
    highlight: int | None
    ref_tips: Array | None
    ref_labels: tuple[str, ...]
    style: str
    x_label: str
    y_label: str
    info: str  # the caption: what the plane shows (a figure keeps it)
    hint: str = ""  # how to use it (on screen only)


def reference_note(t: Target) -> str:
    if t.kind == "q":
        return " Dashed: the keys."
    if t.kind == "k":
        return " Dashed: the receiving query."
    return ""


def plane_info(
    t: Target,
    plane: Plane,
    controls: PlaneControlsData,
    share: float | None = None,
    ideal: float | None = None,
) -> str:
    """The caption under the plane: how much of the vectors' squared length it shows
    (``share``: :func:`.fraction_in_plane` of them, if the caller has it) and, on a fitted
    plane, how much a refit would show (``ideal``: the best plane's share, if the caller has
    it; NaN: it is on its way)."""
    M = t.matrix
    name = f"‖{t.what}‖²"
    if share is None:
        share = fraction_in_plane(M, plane)
    if controls.best:
        text = f"plane explains {share:.0%} of {name}"
        if ideal is not None and math.isnan(ideal):
            text += " (refit: computing…)"
        else:
            if ideal is None:
                ideal = float(fitted_plane(M)[1].sum())
            if abs(ideal - share) > 0.005:
                text += f" (refit: {ideal:.0%})"
        return f"{text}.{reference_note(t)}"
    i, j = controls.picked
    shown = t.axes[i] if M.shape[1] == 1 else f"{t.axes[i]} × {t.axes[j]}"
    text = f"{shown} hold {share:.0%} of {name}"
    if M.shape[1] > 2:
        text += "; other coordinates are kept"
    return f"{text}.{reference_note(t)}"


def plane_hint(controls: PlaneControlsData) -> str:
    """How to edit in the plane (shown under the caption on screen, never in a figure)."""
    hint = f"Drag a tip to move it; Shift snaps to {SNAP_STEP:g}."
    return f"Drags move only within the plane. {hint}" if controls.best else hint


def plane_picture(
    sc: Scenario,
    t: Target,
    plane: Plane,
    controls: PlaneControlsData,
    receiving: int,
    projection: Projection | None = None,
    ideal: float | None = None,
) -> PlanePicture:
    """The arrows of ``t`` in ``plane``; in a direct scenario the Q view shows the keys and the
    K view the receiving query as references. ``projection``: ``t.matrix`` in ``plane``, if
    the caller keeps it (see :mod:`.projection`); ``ideal``: see :func:`plane_info`."""
    if projection is None or projection.matrix is not t.matrix or projection.plane is not plane:
        projection = Projection.of(t.matrix, plane)
    ref_tips, ref_labels = None, ()
    if t.kind == "q":
        ref_tips, ref_labels = project(np.asarray(sc.K), plane), tuple(sc.tokens)
    elif t.kind == "k":
        ref_tips = project(np.asarray(sc.Q)[[receiving]], plane)
        ref_labels = (sc.query_labels[receiving],)
    axes = t.axes
    if controls.best:
        x = f"PC1 ≈ {direction_label(plane.basis[:, 0], axes)}"
        y = f"PC2 ≈ {direction_label(plane.basis[:, 1], axes)}"
    else:
        i, j = controls.picked
        x, y = axes[i], axes[j] if len(axes) > 1 else ""
    return PlanePicture(
        projection.tips,
        t.rows,
        t.highlight,
        ref_tips,
        ref_labels,
        t.kind,
        x,
        y,
        plane_info(t, plane, controls, projection.share, ideal),
        plane_hint(controls),
    )


def renamed(sc: Scenario, t: Target, row: int, name: str) -> Scenario:
    """``sc`` with row ``row`` of ``t`` named ``name`` (a query in the Q view of a direct
    scenario, else a token)."""
    if not name:
        raise ValueError("a token needs a name (empty is not allowed)")
    if t.kind == "q":
        names = list(sc.query_tokens)
        names[row] = name
        return sc.replace(query_tokens=tuple(names))
    return edits.rename_token(sc, row, name)


def tip_text(t: Target, row: int, number: Callable[[float], str]) -> str:
    """The tooltip of arrow ``row``: its name and every coordinate written by ``number``
    ('' for no such row)."""
    if not 0 <= row < len(t.rows):
        return ""
    lines = [f"{t.rows[row]}  ({t.what} row {row + 1})"]
    lines += [f"{a} = {number(float(v))}" for a, v in zip(t.axes, t.matrix[row], strict=True)]
    return "\n".join(lines)
