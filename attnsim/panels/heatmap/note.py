"""The line under the heatmaps: what the rows and columns are, the receiving row's entropy,
which head is shown, and how much weight a "mask with 0" leaks to forbidden keys."""

from __future__ import annotations

import html

from attnsim.engine.attention import HeadTrace
from attnsim.engine.scenario import Scenario
from attnsim.viewmodels.heatmap import forbidden_summary

from ..kit.numbers import fmt_fixed


class _Escaped:
    """``labels[i]`` HTML-escaped on demand."""

    def __init__(self, labels: tuple[str, ...]) -> None:
        self._labels = labels

    def __getitem__(self, i: int) -> str:
        return html.escape(self._labels[i])


def heatmap_note(
    sc: Scenario, trace: HeadTrace, heads: tuple[HeadTrace, ...], receiving: int, focused: int,
    *, hints: bool = True,
) -> str:  # fmt: skip
    """The note as rich text (only the labels it names are escaped, not all n of them);
    without ``hints`` (a figure's), it says nothing about what to click."""
    i = receiving
    labels = _Escaped(sc.query_labels)
    ent = trace.entropy
    # The receiving row's ceiling: under a 0 mask forbidden keys take weight too.
    top = float(trace.max_entropy[i])
    parts = []
    if len(heads) > 1:
        name = sc.heads[focused].name if sc.mode == "tokens" else ""
        parts.append(
            f"Head {focused + 1} of {len(heads)}"
            + (f" ({name})" if name else "")
            + (" · click a thumbnail to focus another." if hints else ".")
        )
    parts.append(
        "Rows: the query that attends; columns: the key it attends to. "
        f"Receiving <b>{labels[i]}</b>: entropy {fmt_fixed(float(ent[i]), 3)} bits "
        f"(at most {fmt_fixed(top, 3)}). n = {sc.n_tokens} keys, mask: {sc.mask_kind}"
        + (" — click a cell to allow/forbid it." if sc.mask_kind == "custom" and hints else ".")
    )
    if trace.mask_value == 0.0:
        fs = forbidden_summary(trace)
        if fs.n_forbidden == 0:
            parts.append("Mask value 0 changes nothing here: no key is forbidden.")
        else:
            parts.append(
                "<span style='color:#b00020'><b>Masked with 0 instead of −∞:</b> "
                f"forbidden keys still receive weight: up to {fmt_fixed(fs.worst, 3)} of a "
                f"row's attention (row {labels[fs.worst_row]}), {fmt_fixed(fs.mean, 3)} per row "
                f"on average; {labels[i]}: {fmt_fixed(float(fs.per_row[i]), 3)}.</span>"
            )
    return " ".join(parts)
