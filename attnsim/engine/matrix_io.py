"""Matrices in and out: CSV and .npz export of a computation, CSV / .npy import of X or a W.

Pure NumPy; the app adds the dialogs.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .scenario import Scenario, ScenarioError, ScenarioResult

__all__ = [
    "importable_targets",
    "load_matrix",
    "parse_target",
    "result_arrays",
    "save_csv_folder",
    "save_npz",
    "target_shape",
]


def result_arrays(result: ScenarioResult, scenario: Scenario) -> dict[str, NDArray]:
    """Every matrix of the computation by name; per-head names get a ``_h{n}`` suffix."""
    out: dict[str, NDArray] = {}
    multi = len(result.heads) > 1
    if scenario.X is not None:
        out["X"] = np.asarray(scenario.X)
    for h, tr in enumerate(result.heads):
        sfx = f"_h{h + 1}" if multi else ""
        out.update(
            {
                f"Q{sfx}": tr.Q,
                f"K{sfx}": tr.K,
                f"V{sfx}": tr.V,
                f"scores{sfx}": tr.scores,
                f"logits{sfx}": tr.logits,
                f"weights{sfx}": tr.weights,
                f"output{sfx}": tr.output,
                f"contribution_norms{sfx}": tr.contribution_norms,
                f"entropy_bits{sfx}": tr.entropy,
            }
        )
        if tr.contributions.size <= 4_000_000:
            out[f"contributions{sfx}"] = tr.contributions
    if result.block is not None and multi:
        out["concat"] = result.block.concat
        out["Wo"] = result.block.Wo
        out["delta"] = result.block.delta
        out["Y"] = result.block.Y
    return out


def save_npz(result: ScenarioResult, path: Path, scenario: Scenario) -> Path:
    arrays = result_arrays(result, scenario)
    arrays["tokens"] = np.array(scenario.tokens)
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return path


def save_csv_folder(result: ScenarioResult, folder: Path, scenario: Scenario) -> list[Path]:
    """One CSV per matrix; n×n matrices get token labels on rows and columns."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, arr in result_arrays(result, scenario).items():
        if arr.ndim > 2:
            continue  # contributions are 3-D; they go to the .npz only
        p = folder / f"{name}.csv"
        with p.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            a = np.atleast_2d(arr)
            square = a.shape == (scenario.n_queries, scenario.n_tokens)
            if square:
                w.writerow(["query \\ key", *scenario.tokens])
                for label, row in zip(scenario.query_labels, a, strict=True):
                    w.writerow([label, *(repr(float(x)) for x in row)])
            else:
                for row in a:
                    w.writerow([repr(float(x)) for x in row])
        written.append(p)
    return written


def load_matrix(
    path: Path, *, expected_shape: tuple[int, int] | None = None, name: str = "matrix"
) -> NDArray:
    """Read a 2-D float matrix from .npy or CSV (commas, optional header row / label column).

    Refuses, naming the file and the problem: unreadable files, non-numbers, ragged rows,
    NaN/inf, and a shape other than ``expected_shape``.
    """
    p = Path(path)
    if p.suffix.lower() == ".npy":
        try:
            arr = np.load(p, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ScenarioError(name, f"cannot read .npy: {exc}", str(p)) from None
    else:
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ScenarioError(name, f"cannot read: {exc}", str(p)) from None
        arr = _parse_csv(text, str(p), name)
    try:
        arr = np.asarray(arr, dtype=float)
    except (TypeError, ValueError):
        raise ScenarioError(name, "holds something other than numbers", str(p)) from None
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ScenarioError(name, f"must be a 2-D matrix, got shape {arr.shape}", str(p))
    if not np.isfinite(arr).all():
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ScenarioError(
            name, f"holds {arr[idx]} at row {idx[0] + 1}, column {idx[1] + 1}", str(p)
        )
    if expected_shape is not None and arr.shape != tuple(expected_shape):
        raise ScenarioError(name, f"has shape {arr.shape} but {expected_shape} is needed", str(p))
    return arr


def _parse_csv(text: str, file: str, name: str) -> NDArray:
    rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
    if not rows:
        raise ScenarioError(name, "is empty", file)

    def is_number(c: str) -> bool:
        try:
            float(c)
        except ValueError:
            return False
        return True

    if not all(is_number(c) for c in rows[0] if c.strip()):
        rows = rows[1:]  # a header row
    if rows and not is_number(rows[0][0]) and all(is_number(c) for c in rows[0][1:]):
        rows = [r[1:] for r in rows]  # a label column
    width = len(rows[0]) if rows else 0
    out = []
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ScenarioError(
                name, f"row {i + 1} has {len(r)} values, the first has {width}", file
            )
        try:
            out.append([float(c) for c in r])
        except ValueError:
            bad = next(c for c in r if not is_number(c))
            raise ScenarioError(
                name, f"row {i + 1} holds {bad!r}, which is not a number", file
            ) from None
    if not out:
        raise ScenarioError(name, "has no rows of numbers", file)
    return np.array(out)


def importable_targets(sc: Scenario) -> list[str]:
    if sc.mode == "direct":
        return ["Q", "K", "V"]
    out = ["X"]
    multi = len(sc.heads) > 1
    for h in range(len(sc.heads)):
        for m in ("Wq", "Wk", "Wv"):
            out.append(f"{m} (head {h + 1})" if multi else m)
    if sc.Wo is not None:
        out.append("Wo")
    return out


def parse_target(target: str) -> tuple[str, int]:
    m = re.fullmatch(r"(\w+)(?: \(head (\d+)\))?", target.strip())
    if not m:
        raise ValueError(f"not a matrix name: {target!r}")
    return m.group(1), int(m.group(2)) - 1 if m.group(2) else 0


def target_shape(sc: Scenario, name: str, head: int = 0) -> tuple[int, int]:
    if name in ("Wq", "Wk", "Wv"):
        if sc.mode != "tokens":
            raise ScenarioError(name, "direct scenarios have no projection matrices")
        return tuple(getattr(sc.heads[head], name).shape)  # type: ignore[return-value]
    arr = getattr(sc, name, None)
    if arr is None:
        raise ScenarioError(name, "this scenario has no such matrix")
    return tuple(arr.shape)  # type: ignore[return-value]
