"""Matrices in and out: CSV and .npz export of a computation, CSV / .npy import of X or a W.

Pure NumPy; the app adds the dialogs.
"""

from __future__ import annotations

import csv
import io
import re
import zipfile
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from .scenario import (
    MAX_DIM,
    MAX_TOKENS,
    Scenario,
    ScenarioError,
    ScenarioResult,
    _frozen,
    out_of_range,
    parse_json,
    value_problem,
)
from .scenario.files import read_bytes

# A matrix file may be as large as a scenario file could be before the scenario limit grew to fit
# the largest scenario as saved: a matrix is one part of a scenario, and its text is parsed
# cell by cell, so a larger limit would only make a wrong file cost more memory to refuse.
MAX_MATRIX_FILE_BYTES = 64 * 1024 * 1024

__all__ = [
    "MAX_CONTRIBUTION_BYTES",
    "contribution_bytes",
    "contributions_left_out",
    "fmt_bytes",
    "importable_targets",
    "load_matrix",
    "parse_target",
    "result_arrays",
    "save_csv_folder",
    "save_npz",
    "target_shape",
]


# The per-pair contributions w_ij v_j are an (n_q, n_k, d_v) tensor per head: 128 GiB at the
# size limits. The .npz streams them (a block of queries at a time) up to this many bytes over
# all heads and leaves them out, saying so, beyond it.
MAX_CONTRIBUTION_BYTES = 2**30
CHUNK_BYTES = 16 * 2**20  # the largest block of contributions held while writing


def fmt_bytes(n: float) -> str:
    """Bytes in binary units, three significant digits: ``512 B``, ``1.50 KiB``, ``128 GiB``."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" or n >= 100 else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def contribution_bytes(result: ScenarioResult) -> int:
    """Bytes of every head's contributions tensor (n_q, n_k, d_v) in float64, from the shapes
    alone (nothing is computed)."""
    return sum(tr.weights.size * tr.V.shape[1] * 8 for tr in result.heads)


def contributions_left_out(result: ScenarioResult) -> str:
    """Why the .npz export leaves out the contributions ("" when it writes them)."""
    size = contribution_bytes(result)
    if size <= MAX_CONTRIBUTION_BYTES:
        return ""
    tr = result.heads[0]
    (n_q, n_k), d_v = tr.weights.shape, tr.V.shape[1]
    heads = f" for each of {len(result.heads)} heads" if len(result.heads) > 1 else ""
    return (
        f"The per-pair contributions w_ij v_j were left out: at {n_q:,} queries × {n_k:,} keys "
        f"× d_v = {d_v:,}{heads} they would take {fmt_bytes(size)}, more than the "
        f"{fmt_bytes(MAX_CONTRIBUTION_BYTES)} this export writes. The file holds the weights "
        "and V, whose products they are."
    )


def result_arrays(result: ScenarioResult, scenario: Scenario) -> dict[str, NDArray]:
    """Every 2-D (or 1-D) matrix of the computation by name; per-head names get a ``_h{n}``
    suffix. The 3-D contributions are not among them (see :func:`save_npz`)."""
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
    if result.block is not None and multi:
        out["concat"] = result.block.concat
        out["Wo"] = result.block.Wo
        out["delta"] = result.block.delta
        out["Y"] = result.block.Y
    return out


def _write_contributions(fh, weights: NDArray, V: NDArray) -> None:
    """``weights[:, :, None] * V[None]`` as a .npy stream, a block of query rows at a time: the
    same numbers as the trace's ``contributions`` without holding the whole tensor."""
    n_q, n_k = weights.shape
    d_v = V.shape[1]
    header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float64)),
              "fortran_order": False, "shape": (n_q, n_k, d_v)}  # fmt: skip
    np.lib.format.write_array_header_2_0(fh, header)
    rows = max(1, CHUNK_BYTES // max(1, n_k * d_v * 8))
    for a in range(0, n_q, rows):
        block = weights[a : a + rows, :, None] * V[None, :, :]
        fh.write(memoryview(block).cast("B"))


def save_npz(result: ScenarioResult, path: Path, scenario: Scenario) -> Path:
    """Every matrix of :func:`result_arrays`, the tokens and (within
    :data:`MAX_CONTRIBUTION_BYTES`, see :func:`contributions_left_out`) each head's
    contributions, as an uncompressed .npz that ``np.load`` reads."""
    arrays = result_arrays(result, scenario)
    arrays["tokens"] = np.array(scenario.tokens)
    multi = len(result.heads) > 1
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, arr in arrays.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array(fh, np.asanyarray(arr), allow_pickle=False)
        if not contributions_left_out(result):
            for h, tr in enumerate(result.heads):
                name = f"contributions_h{h + 1}" if multi else "contributions"
                with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                    _write_contributions(fh, tr.weights, tr.V)
    return path


def save_csv_folder(result: ScenarioResult, folder: Path, scenario: Scenario) -> list[Path]:
    """One CSV per matrix; n×n matrices get token labels on rows and columns."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, arr in result_arrays(result, scenario).items():
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
    """Read a 2-D float matrix from CSV (commas, optional header row / label column), .npy,
    .npz (its only array, or the one called ``name``) or JSON (a list of rows, or an object
    holding one under ``name``).

    Refuses, naming the file and the problem: unreadable, empty or truncated files, pickled or
    non-numeric arrays, non-numbers (with their position), ragged rows, another separator than
    the comma, values that are not finite or beyond ±MAX_ABS_VALUE, and a shape other than
    ``expected_shape``.
    """
    p = Path(path)
    file = str(p)
    suffix = p.suffix.lower()
    data = read_bytes(p, name, MAX_MATRIX_FILE_BYTES)
    if not data:
        raise ScenarioError(name, "is empty (the file has no bytes)", file)
    if suffix == ".npy":
        arr = _load_npy(data, file, name)
    elif suffix == ".npz":
        arr = _load_npz(data, file, name)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ScenarioError(name, "is not UTF-8 text", file) from None
        if suffix == ".json":
            arr = _parse_json_matrix(text, file, name)
        else:
            arr = _parse_csv(text, file, name)
    if arr.dtype.kind not in "iuf":
        what = "booleans" if arr.dtype.kind == "b" else f"values of type {arr.dtype}"
        raise ScenarioError(name, f"holds {what}, not real numbers", file)
    arr = np.asarray(arr, dtype=float)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ScenarioError(name, f"must be a 2-D matrix, got shape {arr.shape}", file)
    if arr.size == 0:
        raise ScenarioError(name, f"is empty (shape {arr.shape})", file)
    bad = out_of_range(arr)
    if bad is not None:
        raise ScenarioError(
            name,
            f"holds {arr[bad]} at row {bad[0] + 1}, column {bad[1] + 1}: "
            f"{value_problem(float(arr[bad]))}",
            file,
        )
    if expected_shape is not None and arr.shape != tuple(expected_shape):
        raise ScenarioError(name, f"has shape {arr.shape} but {expected_shape} is needed", file)
    return arr


def _load_npy(data: bytes, file: str, name: str) -> NDArray:
    fh = io.BytesIO(data)
    try:
        # Read the header first: an empty, truncated or pickled file says so, and a huge
        # shape is refused before any memory is taken.
        version = np.lib.format.read_magic(fh)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(fh)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(fh)
        _check_header(shape, dtype, file, name)
        fh.seek(0)
        arr = np.load(fh, allow_pickle=False)
    except ScenarioError:
        raise
    except EOFError:
        raise ScenarioError(
            name, "cannot read .npy: the file is empty or truncated", file
        ) from None
    except (OSError, ValueError) as exc:
        raise ScenarioError(name, f"cannot read .npy: {_one_line(exc)}", file) from None
    return arr


def _check_header(shape: tuple[int, ...], dtype: np.dtype, file: str, name: str) -> None:
    if dtype.hasobject or dtype.kind not in "biuf":
        raise ScenarioError(name, f"holds values of type {dtype}, not real numbers", file)
    if any(s > max(MAX_TOKENS, MAX_DIM) for s in shape):
        raise ScenarioError(name, f"shape {shape} is too large", file)


def _load_npz(data: bytes, file: str, name: str) -> NDArray:
    key_names = [name, name.split(" ")[0]]
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            keys = list(archive.files)
            if not keys:
                raise ScenarioError(name, "the .npz archive holds no arrays", file)
            key = next((k for k in key_names if k in keys), keys[0] if len(keys) == 1 else None)
            if key is None:
                raise ScenarioError(
                    name,
                    f"the .npz archive has no array named {key_names[-1]!r} "
                    f"(it holds {', '.join(sorted(keys)[:8])})",
                    file,
                )
            return archive[key]
    except ScenarioError:
        raise
    except EOFError:
        raise ScenarioError(
            name, "cannot read .npz: the file is empty or truncated", file
        ) from None
    except (OSError, ValueError, zipfile.BadZipFile) as exc:
        raise ScenarioError(name, f"cannot read .npz: {_one_line(exc)}", file) from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _parse_json_matrix(text: str, file: str, name: str) -> NDArray:
    data = parse_json(text, file)
    if isinstance(data, dict):
        key = next((k for k in (name, name.split(" ")[0]) if k in data), None)
        if key is None:
            raise ScenarioError(name, f"the JSON object has no matrix named {name!r}", file)
        data = data[key]
    if not isinstance(data, list) or not data:
        raise ScenarioError(name, "must be a JSON list of rows of numbers", file)
    if not any(isinstance(r, list) for r in data):
        data = [data]
    try:
        return _frozen(data, name)
    except ScenarioError as exc:
        raise exc.in_file(file) from None


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

    # "1;2;3" (or "1,5;2,5" with decimal commas) reads as one odd cell per row: name the cause.
    for sep, label in ((";", "';'"), ("\t", "a tab")):
        if any(sep in c and not is_number(c) for r in rows[:50] for c in r):
            raise ScenarioError(
                name, f"uses {label} as separator; attnsim reads comma-separated values", file
            )

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
