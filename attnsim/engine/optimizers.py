"""The optimizers the trainers share: plain SGD, and Adam in torch's arithmetic order.

Both update a dict of parameter arrays in place from a dict of gradients of the same keys.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

Array = NDArray[np.floating]
Params = dict[str, Array]

__all__ = ["SGD", "Adam", "make_optimizer"]


class SGD:
    """Plain gradient descent: ``p -= lr * g``, in place."""

    def __init__(self, lr: float) -> None:
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"learning rate must be positive and finite, got {lr!r}")
        self.lr = float(lr)
        self.t = 0

    def step(self, params: Params, grads: Params) -> None:
        for k, g in grads.items():
            params[k] -= self.lr * g
        self.t += 1

    def state_dict(self) -> dict[str, object]:
        return {"t": self.t}


class Adam:
    """Adam with bias correction, in the same arithmetic order as ``torch.optim.Adam``.

    Default betas (0.9, 0.999) and eps 1e-8 match PyTorch, so the same initial parameters
    follow the same trajectory (to rounding).
    """

    def __init__(
        self, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8
    ) -> None:
        if not (math.isfinite(lr) and lr > 0):
            raise ValueError(f"learning rate must be positive and finite, got {lr!r}")
        b1, b2 = betas
        if not (0 <= b1 < 1 and 0 <= b2 < 1):
            raise ValueError(f"betas must lie in [0, 1), got {betas!r}")
        if not eps > 0:
            raise ValueError(f"eps must be positive, got {eps!r}")
        self.lr, self.betas, self.eps = float(lr), (float(b1), float(b2)), float(eps)
        self.t = 0
        self.m: Params = {}
        self.v: Params = {}
        self._flat: _FlatState | None = None

    def step(self, params: Params, grads: Params) -> None:
        self.t += 1
        b1, b2 = self.betas
        bc = (1.0 - b1, 1.0 - b2, math.sqrt(1.0 - b2**self.t), self.lr / (1.0 - b1**self.t))
        if not self.m:
            self._flat = _FlatState.of(grads)
            if self._flat is not None:
                self.m, self.v = self._flat.views["m"], self._flat.views["v"]
        flat = self._flat
        if flat is not None and flat.fits(grads):
            # every parameter's moments in one buffer: a dozen ufunc calls in all, not a dozen
            # per parameter, which cost more than the arithmetic for a small model's tensors
            for view, g in zip(flat.views["g"].values(), grads.values(), strict=True):
                np.copyto(view, g)
            self._update(flat.m, flat.v, flat.g, flat.tmp, bc)
            for k, view in flat.views["tmp"].items():
                params[k] -= view
            return
        for k, g in grads.items():
            if k not in self.m:
                self.m[k] = np.zeros_like(g)
                self.v[k] = np.zeros_like(g)
            tmp = np.empty_like(g)
            self._update(self.m[k], self.v[k], g, tmp, bc)
            params[k] -= tmp

    def _update(
        self, m: Array, v: Array, g: Array, tmp: Array, bc: tuple[float, float, float, float]
    ) -> None:
        """Moments updated in place; the step to subtract from the parameters lands in
        ``tmp``. In place but in the order of the expressions in the comments (and torch's)."""
        one_b1, one_b2, bc2_sqrt, step_size = bc
        np.subtract(g, m, out=tmp)  # m += (1 - b1) * (g - m): torch's exp_avg.lerp_(g, 1 - b1)
        tmp *= one_b1
        m += tmp
        v *= self.betas[1]  # v = b2 * v + (1 - b2) * g * g
        np.multiply(g, one_b2, out=tmp)
        tmp *= g
        v += tmp
        np.sqrt(v, out=tmp)  # step = step_size * (m / (sqrt(v) / bc2_sqrt + eps))
        tmp /= bc2_sqrt
        tmp += self.eps
        np.divide(m, tmp, out=tmp)
        tmp *= step_size

    def state_dict(self) -> dict[str, object]:
        return {"t": self.t, "m": {k: v.copy() for k, v in self.m.items()}}

    def copy(self) -> Adam:
        """An independent Adam in the same state (its moments are views of one buffer, which
        a copy of the dicts alone would still share)."""
        out = Adam(self.lr, self.betas, self.eps)
        out.t = self.t
        if self._flat is not None:
            out._flat = self._flat.copy()
            out.m, out.v = out._flat.views["m"], out._flat.views["v"]
        else:
            out.m = {k: v.copy() for k, v in self.m.items()}
            out.v = {k: v.copy() for k, v in self.v.items()}
        return out

    def __deepcopy__(self, memo: dict[int, object]) -> Adam:
        # copy.deepcopy would copy each view of the flat buffers as an array of its own,
        # cut off from the buffers the step then reads
        return self.copy()


class _FlatState:
    """Adam's moments, gradient and step for parameters of one dtype: four flat buffers, each
    with a view per parameter, in the order of the gradients that made them."""

    def __init__(self, grads: Params, dtype: np.dtype) -> None:
        self.shapes = [(k, g.shape) for k, g in grads.items()]
        self.signature = [(k, g.shape, dtype) for k, g in grads.items()]
        size = sum(g.size for g in grads.values())
        self.m, self.v, self.g, self.tmp = (np.zeros(size, dtype) for _ in range(4))
        self._make_views()

    def _make_views(self) -> None:
        self.views: dict[str, Params] = {}
        for name in ("m", "v", "g", "tmp"):
            flat, start, views = getattr(self, name), 0, {}
            for k, shape in self.shapes:
                size = math.prod(shape)
                views[k] = flat[start : start + size].reshape(shape)
                start += size
            self.views[name] = views

    @classmethod
    def of(cls, grads: Params) -> _FlatState | None:
        dtypes = {g.dtype for g in grads.values()}
        return cls(grads, dtypes.pop()) if len(dtypes) == 1 else None

    def copy(self) -> _FlatState:
        out = _FlatState.__new__(_FlatState)
        out.shapes, out.signature = list(self.shapes), list(self.signature)
        out.m, out.v, out.g, out.tmp = (a.copy() for a in (self.m, self.v, self.g, self.tmp))
        out._make_views()
        return out

    def fits(self, grads: Params) -> bool:
        """Whether ``grads`` has the first step's keys, in its order, shapes and dtype."""
        return [(k, g.shape, g.dtype) for k, g in grads.items()] == self.signature


def make_optimizer(kind: str, lr: float) -> SGD | Adam:
    if kind == "sgd":
        return SGD(lr)
    if kind == "adam":
        return Adam(lr)
    raise ValueError(f"unknown optimizer {kind!r}; choose sgd or adam")
