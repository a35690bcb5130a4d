"""What both models' forwards take alike: hooks on a layer's per-head arrays, and a head mask
that ablates heads (a multiplier per head, or ``{(layer, head): "zero" | "mean"}``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["HOOK_POINTS", "MODES", "Array", "Hook", "LayerArrays", "checked_hooks",
           "head_mask_parts", "replacement"]  # fmt: skip

Array = NDArray[np.float32]
# f(layer, array) -> a replacement of the same shape, or None to keep the array
Hook = Callable[[int, Array], Array | None]
HOOK_POINTS = ("q", "k", "v", "scores", "weights", "z")
MODES = ("zero", "mean")


@dataclass(frozen=True)
class LayerArrays:
    """What a forward records at every layer, per head: ``weights`` (layers, heads, n, n);
    ``q``, ``k``, ``v`` and ``z`` (layers, heads, n, d_head), ``z`` after any ablation or
    hook; ``resid`` (layers + 1, n, d_model), ``resid[l]`` the stream entering layer l."""

    weights: Array
    q: Array
    k: Array
    v: Array
    z: Array
    resid: Array


def checked_hooks(hooks: Mapping[str, Hook] | None) -> dict[str, Hook]:
    """``hooks`` as a dict, or ValueError naming a point that is not a hook point or a hook
    that is not callable."""
    out = dict(hooks or {})
    bad = sorted(set(out) - set(HOOK_POINTS))
    if bad:
        raise ValueError(f"hooks must name points among {HOOK_POINTS}, got {bad}")
    for point, f in out.items():
        if not callable(f):
            raise ValueError(f"hooks[{point!r}] must be callable, got {f!r}")
    return out


def run_hook(hooks: dict[str, Hook], point: str, layer: int, arr: Array) -> None:
    """Give the hook at ``point`` (if any) a copy of ``arr``, to keep or to edit in place, and
    write back into ``arr`` what it returns (or its edited copy when it returns None)."""
    f = hooks.get(point)
    if f is None:
        return
    mine = arr.copy()
    new = f(layer, mine)
    arr[...] = mine if new is None else replacement(point, arr, new)


def replacement(point: str, arr: Array, new: Any) -> Array:
    """What a hook at ``point`` returned for ``arr``, as float32 of ``arr``'s shape."""
    new = np.asarray(new, dtype=np.float32)
    if new.shape != arr.shape:
        raise ValueError(f"hook {point!r} must return shape {arr.shape}, got {new.shape}")
    return new


def head_mask_parts(
    head_mask: Any, n_layers: int, n_heads: int
) -> tuple[Array | None, dict[tuple[int, int], str]]:
    """A forward's ``head_mask`` as (multiplier of each head's z, (layers, heads), or None;
    the mode of each head a mapping names). Raises ValueError naming what is wrong."""
    if head_mask is None:
        return None, {}
    if isinstance(head_mask, Mapping):
        modes: dict[tuple[int, int], str] = {}
        for key, mode in head_mask.items():
            try:
                layer, head = (int(i) for i in key)
            except (TypeError, ValueError):
                raise ValueError(f"head_mask key must be (layer, head), got {key!r}") from None
            if not (0 <= layer < n_layers and 0 <= head < n_heads):
                raise ValueError(
                    f"head_mask key {key!r} is outside {n_layers} layers x {n_heads} heads"
                )
            if mode not in MODES:
                raise ValueError(f"head_mask mode must be 'zero' or 'mean', got {mode!r}")
            modes[layer, head] = mode
        return None, modes
    scale = np.asarray(head_mask, dtype=np.float32)
    if scale.shape != (n_layers, n_heads) or not np.isfinite(scale).all():
        raise ValueError(
            f"head_mask must be finite of shape ({n_layers}, {n_heads}) or a "
            f"{{(layer, head): 'zero' | 'mean'}} mapping, got shape {scale.shape}"
        )
    return scale, {}
