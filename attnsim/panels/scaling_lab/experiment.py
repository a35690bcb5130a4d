"""The entropy experiment's settings (a lab state) and its run, as a job for the workbench's
background runner: progress in whole percents, cancellation between steps."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from attnsim.viewmodels.scaling_lab import entropy_vs_dk_steps


@dataclass(frozen=True)
class ScalingLabState:
    """The entropy experiment's settings (a lab state: undoable, not saved with the scenario)."""

    n_keys: int = 16
    trials: int = 200
    seed: int = 1
    rng: str = "reference"
    dks: tuple[int, ...] = (16, 64, 256, 1024)


DEFAULT_PARAMS: dict[str, object] = asdict(ScalingLabState())
OPTIONAL_DKS = (4, 4096)
GENERATORS = ("reference", "numpy")
FIRST_RUN_DELAY_MS = 300

# The workbench runner's slot for the experiment: a new run supersedes the one before it.
EXPERIMENT = "scaling_lab.experiment"


def params_key(params: dict[str, object]) -> tuple:
    return (
        int(params["n_keys"]),  # type: ignore[call-overload]
        int(params["trials"]),  # type: ignore[call-overload]
        int(params["seed"]),  # type: ignore[call-overload]
        str(params["rng"]),
        tuple(int(d) for d in params["dks"]),  # type: ignore[attr-defined]
    )


def experiment_job(key: tuple):
    """The run for ``params_key`` settings, as a runner job function."""
    n_keys, trials, seed, rng, dks = key

    def work(progress, cancelled) -> dict | None:
        result, reported = None, -1.0
        for frac, res in entropy_vs_dk_steps(dks, n_keys=n_keys, trials=trials, seed=seed, rng=rng):
            if cancelled():
                return None
            # Whole percents only: the bar cannot show finer, and each one is a queued signal.
            if frac - reported >= 0.01 or res is not None:
                progress(frac)
                reported = frac
            if res is not None:
                result = res
        return result

    return work
