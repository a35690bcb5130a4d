"""Data behind the training stepper: one sentence's pass from lookup to update, as arrays.

Pure NumPy on top of :mod:`attnsim.engine.training`:

- ``snapshot``: :class:`StepSnapshot` freezes one forward pass, its gradients and the
  optimizer's update (previewed on copies, so the live parameters do not change until the
  update is applied);
- ``plane``: :func:`stage_arrows`, the 2-D arrows the stepper draws at each stage;
- ``stages``: :func:`build_stage`, each stage's captions and blocks of numbers;
- ``status``: :func:`controls_state`, what the controls say about the run;
- ``dataset``: :func:`parse_dataset` reads the dataset editor's text ("the river bank =
  water", one sentence per line); :func:`trained_scenario` turns trained parameters into a
  token scenario for the workbench.
"""

from __future__ import annotations

from .dataset import (
    MAX_CLASSES,
    MAX_SENTENCES,
    MAX_TOKENS,
    MAX_VOCAB,
    DatasetError,
    dataset_text,
    parse_dataset,
    spec_with_dataset,
    trained_scenario,
)
from .plane import Arrow, arrow_extent, nice_extent, plane_basis, stage_arrows
from .snapshot import N_STAGES, STAGES, StepSnapshot, absent_words, make_snapshot
from .stages import Block, CellFormat, StageContent, build_stage
from .status import ControlsState, controls_state

__all__ = [
    "MAX_CLASSES",
    "MAX_SENTENCES",
    "MAX_TOKENS",
    "MAX_VOCAB",
    "N_STAGES",
    "STAGES",
    "Arrow",
    "Block",
    "CellFormat",
    "ControlsState",
    "DatasetError",
    "StageContent",
    "StepSnapshot",
    "absent_words",
    "arrow_extent",
    "build_stage",
    "controls_state",
    "dataset_text",
    "make_snapshot",
    "nice_extent",
    "parse_dataset",
    "plane_basis",
    "spec_with_dataset",
    "stage_arrows",
    "trained_scenario",
]
