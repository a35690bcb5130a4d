"""The three-fields lab (see :mod:`.panel`); its figures are sub-views with ``refresh(data)``."""

from attnsim.viewmodels.fields_lab import fit_points, place_label, stacked_segments

from .panel import FieldsLabPanel

__all__ = ["FieldsLabPanel", "fit_points", "place_label", "stacked_segments"]
