"""Label placement and label shortening, as pure functions of sizes (no Qt).

Panels measure their texts with Qt's font metrics and pass widths in; these functions decide
where each label goes (never on top of another) and how a label is shortened (never into a
copy of its neighbour), so the rules are tested without a screen.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Rect = tuple[float, float, float, float]  # x, y, width, height; y grows downwards
ELLIPSIS = "…"


def rects_intersect(a: Rect, b: Rect, pad: float = 0.0) -> bool:
    """True if the rectangles overlap by more than touching (``pad`` widens both)."""
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return (
        ax - pad < bx + bw + pad
        and bx - pad < ax + aw + pad
        and ay - pad < by + bh + pad
        and by - pad < ay + ah + pad
    )


def any_overlap(rects: Sequence[Rect]) -> bool:
    """True if any two of ``rects`` intersect (tests use it on drawn label rectangles)."""
    return any(
        rects_intersect(rects[i], rects[j])
        for i in range(len(rects))
        for j in range(i + 1, len(rects))
    )


@dataclass(frozen=True)
class Placement:
    """Where one label went. ``leader`` is True when it was pushed away from its preferred
    spot far enough that a thin line should join it to its anchor. ``shown`` is False for a
    label that found no free place (with ``overflow="drop"``): leave it out."""

    rect: Rect
    anchor: tuple[float, float]
    leader: bool
    shown: bool = True

    @property
    def center(self) -> tuple[float, float]:
        x, y, w, h = self.rect
        return (x + w / 2, y + h / 2)


# Offsets of the label's top-left corner from the anchor, as fractions of (w, h), in order of
# preference: right, above-right, below-right, left, above, below, above-left, below-left.
_SPOTS = (
    (0.0, -0.5),
    (0.0, -1.0),
    (0.0, 0.0),
    (-1.0, -0.5),
    (-0.5, -1.0),
    (-0.5, 0.0),
    (-1.0, -1.0),
    (-1.0, 0.0),
)


def _candidates(
    ax: float, ay: float, w: float, h: float, gap: float, ring: int,
    direction: tuple[float, float] | None = None,
):  # fmt: skip
    """Rectangles around the anchor: the eight spots (those along ``direction`` first), then
    rings further out."""
    if ring == 0:
        spots = []
        for fx, fy in _SPOTS:
            dx = gap if fx == 0.0 else (-gap if fx == -1.0 else 0.0)
            dy = -gap if fy == -1.0 else (gap if fy == 0.0 and fx == -0.5 else 0.0)
            spots.append((ax + fx * w + dx, ay + fy * h + dy, w, h))
        if direction is not None and (direction[0] or direction[1]):
            ux, uy = direction

            def along(r: Rect) -> float:
                cx, cy = r[0] + r[2] / 2 - ax, r[1] + r[3] / 2 - ay
                return -(cx * ux + cy * uy) / max(math.hypot(cx, cy), 1e-9)

            spots.sort(key=along)
        yield from spots
        return
    r = ring * (h + gap)
    steps = 8 + 4 * ring
    for k in range(steps):
        t = 2 * math.pi * k / steps
        cx, cy = ax + math.cos(t) * (r + w / 2), ay - math.sin(t) * r
        yield (cx - w / 2, cy - h / 2, w, h)


class _Grid:
    """Rectangles bucketed by a coarse grid, so a candidate is checked only against its
    neighbours (a plane with 64 names and a thousand shaft marks stays a few ms)."""

    def __init__(self, cell: float) -> None:
        self.cell = max(cell, 1.0)
        self.buckets: dict[tuple[int, int], list[Rect]] = {}

    def _keys(self, r: Rect):
        c = self.cell
        x0, y0 = math.floor(r[0] / c), math.floor(r[1] / c)
        x1, y1 = math.floor((r[0] + r[2]) / c), math.floor((r[1] + r[3]) / c)
        if (x1 - x0 + 1) * (y1 - y0 + 1) > 4096:  # a huge rectangle: one shared bucket
            yield (None, None)
            return
        for i in range(x0, x1 + 1):
            for j in range(y0, y1 + 1):
                yield (i, j)

    def add(self, r: Rect) -> None:
        for k in self._keys(r):
            self.buckets.setdefault(k, []).append(r)  # type: ignore[arg-type]

    def hits(self, r: Rect) -> bool:
        for k in (*self._keys(r), (None, None)):
            for other in self.buckets.get(k, ()):  # type: ignore[call-overload]
                if rects_intersect(r, other):
                    return True
        return False


def _inside(rect: Rect, bounds: Rect | None) -> bool:
    if bounds is None:
        return True
    x, y, w, h = rect
    bx, by, bw, bh = bounds
    return x >= bx and y >= by and x + w <= bx + bw and y + h <= by + bh


def place_labels(
    anchors: Sequence[tuple[float, float]],
    sizes: Sequence[tuple[float, float]],
    *,
    obstacles: Sequence[Rect] = (),
    bounds: Rect | None = None,
    gap: float = 3.0,
    max_rings: int = 12,
    directions: Sequence[tuple[float, float]] | None = None,
    overflow: str = "stack",
) -> list[Placement]:
    """Rectangles for labels of ``sizes`` (w, h) near ``anchors`` (x, y), none overlapping.

    Earlier labels win the better spots (pass them in order of importance). Each label tries
    eight spots around its anchor, then rings further out; a label that had to leave the first
    ring gets ``leader=True``; ``directions`` (one (dx, dy) per label, e.g. where its arrow
    points) puts the spots on that side first. ``obstacles`` are avoided too, and with
    ``bounds`` every label stays inside it when any candidate does. When nothing is free within
    ``max_rings`` the label is stacked below the lowest label so far, still not overlapping
    (``overflow="stack"``), or marked not shown (``overflow="drop"``: a crowd of names in a
    small plot, where a hover tells the rest).
    """
    if overflow not in ("stack", "drop"):
        raise ValueError(f"overflow must be 'stack' or 'drop', not {overflow!r}")
    if len(anchors) != len(sizes):
        raise ValueError(f"{len(anchors)} anchors but {len(sizes)} sizes")
    taken: list[Rect] = list(obstacles)
    tall = max((h for _, h in sizes), default=10.0)
    grid = _Grid(2 * tall)
    for r in taken:
        grid.add(r)
    out: list[Placement] = []
    if directions is not None and len(directions) != len(anchors):
        raise ValueError(f"{len(anchors)} anchors but {len(directions)} directions")
    for k, ((ax, ay), (w, h)) in enumerate(zip(anchors, sizes, strict=True)):
        choice: Rect | None = None
        ring_used = 0
        direction = directions[k] if directions is not None else None
        for ring in range(max_rings + 1):
            for rect in _candidates(ax, ay, w, h, gap, ring, direction):
                if _inside(rect, bounds) and not grid.hits(rect):
                    choice, ring_used = rect, ring
                    break
            if choice is not None:
                break
        if choice is None and overflow == "drop":
            out.append(Placement((ax, ay, w, h), (ax, ay), False, shown=False))
            continue
        if choice is None:
            # Nowhere free near the anchor: a column under everything placed so far.
            low = max((r[1] + r[3] for r in taken), default=ay)
            choice, ring_used = (ax + gap, low + gap, w, h), max_rings + 1
        taken.append(choice)
        grid.add(choice)
        out.append(Placement(choice, (ax, ay), ring_used > 0))
    return out


def segment_marks(
    p0: tuple[float, float], p1: tuple[float, float], step: float = 8.0, size: float = 4.0,
    max_marks: int = 80,
) -> list[Rect]:  # fmt: skip
    """Small squares along a line (an arrow's shaft, ends left out), as obstacles for
    :func:`place_labels`: a label goes beside an arrow, not across it."""
    (x0, y0), (x1, y1) = p0, p1
    n = min(int(math.hypot(x1 - x0, y1 - y0) // step), max_marks)
    out = []
    for k in range(1, n):
        t = k / n
        x, y = x0 + t * (x1 - x0), y0 + t * (y1 - y0)
        out.append((x - size / 2, y - size / 2, size, size))
    return out


def leader_segment(p: Placement) -> tuple[tuple[float, float], tuple[float, float]]:
    """The line from a moved label's anchor to the nearest point of its rectangle."""
    x, y, w, h = p.rect
    ax, ay = p.anchor
    return (ax, ay), (min(max(ax, x), x + w), min(max(ay, y), y + h))


def _elide_right(text: str, keep: int) -> str:
    return text if keep >= len(text) else text[: max(keep, 0)].rstrip() + ELLIPSIS


def _elide_middle(text: str, keep: int) -> str:
    if keep >= len(text):
        return text
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head].rstrip() + ELLIPSIS + (text[len(text) - tail :].lstrip() if tail else "")


def _elide_left(text: str, keep: int) -> str:
    return text if keep >= len(text) else ELLIPSIS + text[len(text) - max(keep, 0) :].lstrip()


def distinct_elide(
    labels: Sequence[str], measure: Callable[[str], float], max_w: float
) -> list[str]:
    """Shorten each label to at most ``max_w`` (as ``measure`` counts) so distinct labels stay
    distinct: cut at the end ("control th…") while that keeps them apart, else in the middle
    ("contr…ory 1"), else keep the end ("…theory 1"). Labels that fit are left alone; equal
    inputs stay equal.
    """

    def fit(text: str, cut: Callable[[str, int], str]) -> str:
        if measure(text) <= max_w:
            return text
        keep = len(text) - 1
        while keep > 0 and measure(cut(text, keep)) > max_w:
            keep -= 1
        return cut(text, keep)

    def distinct(out: list[str]) -> bool:
        pairs: dict[str, str] = {}
        for src, short in zip(labels, out, strict=True):
            if pairs.setdefault(short, src) != src:
                return False
        return True

    tried: list[list[str]] = []
    for cut in (_elide_right, _elide_middle, _elide_left):
        out = [fit(t, cut) for t in labels]
        if distinct(out):
            return out
        tried.append(out)
    # Nothing keeps every label apart at this width: the end carries the most difference.
    return tried[-1]


def fit_parts(
    parts: Sequence[str], measure: Callable[[str], float], max_w: float, sep: str = "   "
) -> str:
    """Join as many whole ``parts`` as fit in ``max_w``, ending with " …" when some are left
    out: a line is cut between items, never inside a number."""
    out = ""
    for k, part in enumerate(parts):
        candidate = part if not out else out + sep + part
        more = k + 1 < len(parts)
        if measure(candidate + (" …" if more else "")) > max_w:
            return (out + " …") if out else ELLIPSIS
        out = candidate
    return out


__all__ = [
    "Placement",
    "Rect",
    "any_overlap",
    "distinct_elide",
    "fit_parts",
    "leader_segment",
    "place_labels",
    "rects_intersect",
    "segment_marks",
]
