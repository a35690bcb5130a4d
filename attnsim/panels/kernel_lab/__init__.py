"""The "Kernel stepper" lab (see :mod:`.panel`)."""

from attnsim.viewmodels.kernel_lab import KernelLabState

from .panel import SCALING, KernelLabPanel, scaling_job

__all__ = ["SCALING", "KernelLabPanel", "KernelLabState", "scaling_job"]
