"""The checks of a whole scenario that depend on its mode: a token scenario's sentence, heads
and output projection, or a direct scenario's queries, keys and values. Each returns the
validated fields for the scenario's constructor to store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .checks import (
    MAX_DIM,
    MAX_HEADS,
    ScenarioError,
    _default_axes,
    _frozen,
    axes_or_default,
    check_attention_size,
    check_text,
    labels,
)
from .head import Head

if TYPE_CHECKING:
    from .model import Scenario


def token_fields(sc: Scenario, n: int) -> dict[str, Any]:
    """The validated fields of a token scenario (X, axes, heads, Wo, presets), by name."""
    out: dict[str, Any] = {}
    if sc.X is None:
        raise ScenarioError("X", "is required in a token scenario (one row per token)")
    X = _frozen(sc.X, "X")
    if X.shape[0] != n:
        raise ScenarioError("X", f"has {X.shape[0]} rows but there are {n} tokens")
    d = X.shape[1]
    if d == 0 or d > MAX_DIM:
        raise ScenarioError("X", f"width {d} is out of range (1 to {MAX_DIM})")
    out["X"] = X
    axes = labels(sc.axes, "axes") if sc.axes else _default_axes("x", d)
    if len(axes) != d:
        raise ScenarioError("axes", f"names {len(axes)} axes but X has {d} columns")
    out["axes"] = axes
    heads = tuple(sc.heads)
    if not heads:
        raise ScenarioError("heads", "needs at least one head (Wq, Wk, Wv)")
    if len(heads) > MAX_HEADS:
        raise ScenarioError("heads", f"{len(heads)} heads is too many (at most {MAX_HEADS})")
    d_k = d_v = None
    for h, head in enumerate(heads):
        if not isinstance(head, Head):
            raise ScenarioError(f"heads[{h}]", "must be a Head")
        for m in ("Wq", "Wk", "Wv"):
            W = getattr(head, m)
            if W.shape[0] != d:
                raise ScenarioError(
                    f"heads[{h}].{m}", f"has {W.shape[0]} rows but X has {d} columns"
                )
            if W.shape[1] == 0 or W.shape[1] > MAX_DIM:
                raise ScenarioError(f"heads[{h}].{m}", f"width {W.shape[1]} is out of range")
        if head.Wq.shape != head.Wk.shape:
            raise ScenarioError(
                f"heads[{h}].Wk",
                f"shape {head.Wk.shape} differs from Wq {head.Wq.shape}; "
                "queries and keys must have the same width",
            )
        if d_k is None:
            d_k, d_v = head.Wq.shape[1], head.Wv.shape[1]
        elif (head.Wq.shape[1], head.Wv.shape[1]) != (d_k, d_v):
            raise ScenarioError(f"heads[{h}]", f"all heads must share d_k = {d_k} and d_v = {d_v}")
    out["heads"] = heads
    assert d_k is not None and d_v is not None
    check_attention_size(n, len(heads), d, d_k, d_v)
    out["qk_axes"] = axes_or_default(sc.qk_axes, "qk_axes", d_k, "k")
    out["v_axes"] = axes_or_default(sc.v_axes, "v_axes", d_v, "v")
    if sc.Wo is not None:
        Wo = _frozen(sc.Wo, "Wo")
        if Wo.shape != (len(heads) * d_v, d):
            raise ScenarioError(
                "Wo", f"must have shape (h*d_v, d) = {(len(heads) * d_v, d)}, got {Wo.shape}"
            )
        out["Wo"] = Wo
    elif len(heads) * d_v != d and len(heads) > 1:
        raise ScenarioError(
            "Wo", f"is required when h*d_v ({len(heads) * d_v}) differs from d ({d})"
        )
    presets = {}
    for name, W in dict(sc.wq_presets).items():
        if isinstance(name, str):
            check_text(name, f"wq_presets[{name!r}]")
        Wp = _frozen(W, f"wq_presets[{name!r}]")
        if Wp.shape != heads[0].Wq.shape:
            raise ScenarioError(
                f"wq_presets[{name!r}]",
                f"must have Wq's shape {heads[0].Wq.shape}, got {Wp.shape}",
            )
        presets[str(name)] = Wp
    out["wq_presets"] = presets
    absent = {}
    for tok, vec in dict(sc.absent).items():
        if isinstance(tok, str):
            check_text(tok, f"absent[{tok!r}]")
        v = _frozen(vec, f"absent[{tok!r}]", ndim=1)
        if v.shape != (d,):
            raise ScenarioError(f"absent[{tok!r}]", f"must have {d} numbers, got {v.shape[0]}")
        absent[str(tok)] = v
    out["absent"] = absent
    if sc.query_tokens and tuple(sc.query_tokens) != sc.tokens:
        raise ScenarioError("query_tokens", "only direct scenarios name queries separately")
    out["query_tokens"] = ()
    for m in ("Q", "K", "V"):
        if getattr(sc, m) is not None:
            raise ScenarioError(m, "belongs to direct scenarios; token scenarios use X and heads")
    return out


def direct_fields(sc: Scenario, n: int) -> dict[str, Any]:
    """The validated fields of a direct scenario (Q, K, V, their labels and axes), by name."""
    out: dict[str, Any] = {}
    for m in ("Q", "K", "V"):
        if getattr(sc, m) is None:
            raise ScenarioError(m, "is required in a direct scenario")
        out[m] = _frozen(getattr(sc, m), m)
    Q, K, V = out["Q"], out["K"], out["V"]
    if K.shape[0] != n:
        raise ScenarioError("K", f"has {K.shape[0]} rows but there are {n} key tokens")
    if V.shape[0] != n:
        raise ScenarioError("V", f"has {V.shape[0]} rows but there are {n} key tokens")
    if Q.shape[1] != K.shape[1]:
        raise ScenarioError("Q", f"width {Q.shape[1]} differs from the key width {K.shape[1]}")
    for m, arr in (("Q", Q), ("K", K), ("V", V)):
        if arr.shape[1] == 0 or arr.shape[1] > MAX_DIM:
            raise ScenarioError(m, f"width {arr.shape[1]} is out of range (1 to {MAX_DIM})")
    q_tokens = (
        labels(sc.query_tokens, "query_tokens")
        if sc.query_tokens
        else _default_axes("q", Q.shape[0])
    )
    if len(q_tokens) != Q.shape[0]:
        raise ScenarioError(
            "query_tokens", f"names {len(q_tokens)} queries but Q has {Q.shape[0]} rows"
        )
    if Q.shape[0] == 0:
        raise ScenarioError("Q", "needs at least one query")
    out["query_tokens"] = q_tokens
    out["qk_axes"] = axes_or_default(sc.qk_axes or sc.axes, "qk_axes", Q.shape[1], "k")
    out["axes"] = out["qk_axes"]
    out["v_axes"] = axes_or_default(sc.v_axes, "v_axes", V.shape[1], "v")
    for m in ("X", "Wo"):
        if getattr(sc, m) is not None:
            raise ScenarioError(m, "belongs to token scenarios; direct scenarios use Q, K, V")
    if sc.heads:
        raise ScenarioError("heads", "belongs to token scenarios; direct scenarios use Q, K, V")
    if sc.wq_presets or sc.absent:
        raise ScenarioError("wq_presets", "belongs to token scenarios")
    return out
