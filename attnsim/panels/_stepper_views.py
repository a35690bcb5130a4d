"""What the training stepper draws at each stage: numbers (blocks) and arrows in a plane.

:func:`build_stage` turns a :class:`StepSnapshot` and a stage number into a
:class:`StageContent` (plain data: the texts and the arrays they were formatted from, so tests
compare them with the engine); :class:`StageView` paints one with QPainter (fast, and an SVG
export keeps every number as text).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from PySide6.QtCore import QEvent, QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPen
from PySide6.QtWidgets import QAbstractScrollArea, QSizePolicy, QToolTip, QWidget

from attnsim.engine.training import PARAM_NAMES
from attnsim.views.stepper import (
    N_STAGES,
    STAGES,
    Arrow,
    StepSnapshot,
    arrow_extent,
    nice_extent,
    stage_arrows,
)

from .kit.arrows import paint_arrow
from .kit.labels import leader_segment, place_labels, segment_marks
from .kit.numbers import fmt_cell_short
from .style import KEY, MUTED, OUTPUT, QUERY, TOKEN, VALUE

# Background tints of rows (light, so black numbers stay readable).
USED_BG = QColor("#FFF1C9")
READ_BG = QColor("#E3EEF9")
ABSENT_FG = QColor("#8A8A8A")
NOTE_FG = QColor("#B34700")
GRID = QColor("#DDDDDD")
# Alignment flags built once: combining Qt enums costs microseconds per call in PySide6.
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter

ROLE_COLOUR = {
    "x": TOKEN,
    "absent": MUTED,
    "q": QUERY,
    "k": KEY,
    "v": VALUE,
    "mix": OUTPUT,
    "class": QColor("#E69F00"),
    "step": QColor("#D55E00"),
    "old": QColor("#BBBBBB"),
    "new": TOKEN,
}
ROLE_WIDTH = {"mix": 2.6, "class": 2.2, "step": 1.6, "old": 1.2}

PARAM_TITLES = {
    "emb": "emb",
    "Wq": "Wq",
    "Wk": "Wk",
    "Wv": "Wv",
    "cls_W": "cls_W",
    "cls_b": "cls_b",
}


fmt_num = fmt_cell_short  # the stepper's cells (tests and tooltips parse them back)


def parse_num(text: str) -> float:
    """Inverse of :func:`fmt_num` (for tests and tooltips)."""
    return float(text.replace("−", "-").replace("∞", "inf"))


@dataclass
class Block:
    """A labelled matrix of numbers: ``values`` (r, c) and the texts shown for them."""

    title: str
    row_labels: list[str]
    col_labels: list[str]
    values: np.ndarray
    texts: list[list[str]] = field(default_factory=list)
    row_state: list[str] = field(default_factory=list)  # "", "used", "absent", "read"
    row_notes: list[str] = field(default_factory=list)
    key: str = ""  # a stable name for tests, e.g. "X", "grad:emb", "new:Wq"
    break_before: bool = False
    integer: bool = False

    def __post_init__(self) -> None:
        v = np.atleast_2d(np.asarray(self.values, dtype=np.float64))
        self.values = v
        if not self.texts:
            f = (lambda x: str(int(x))) if self.integer else fmt_num
            self.texts = [[f(x) for x in row] for row in v.tolist()]
        if not self.row_state:
            self.row_state = [""] * v.shape[0]
        if not self.row_notes:
            self.row_notes = [""] * v.shape[0]


@dataclass
class StageContent:
    """Everything one stage shows."""

    stage: int
    title: str
    lines: list[str]
    blocks: list[Block]
    arrows: list[Arrow]
    plane: str
    legend: str

    def block(self, key: str) -> Block:
        for b in self.blocks:
            if b.key == key:
                return b
        raise KeyError(f"stage {self.stage} shows no block {key!r}")


def _axes(d: int) -> list[str]:
    return [f"e{i + 1}" for i in range(d)]


def _param_blocks(
    snap: StepSnapshot, values: dict[str, np.ndarray], prefix: str, label: str, *,
    absent_zero: bool = False, break_each: bool = False,
) -> list[Block]:  # fmt: skip
    d = snap.d
    absent = set(snap.absent())
    out = []
    for name in PARAM_NAMES:
        v = values[name]
        if name == "emb":
            rows = list(snap.vocab)
            cols = _axes(d)
        elif name == "cls_W":
            rows, cols = _axes(v.shape[0]), list(snap.classes)
        elif name == "cls_b":
            rows, cols = [""], list(snap.classes)
        else:
            rows, cols = _axes(v.shape[0]), _axes(v.shape[1])
        b = Block(f"{label}{PARAM_TITLES[name]}", rows, cols, v, key=f"{prefix}:{name}",
                  break_before=break_each)  # fmt: skip
        if name == "emb":
            b.row_state = ["absent" if w in absent else "used" for w in snap.vocab]
            if absent_zero:
                for i, w in enumerate(snap.vocab):
                    if w in absent and not np.any(b.values[i]):
                        b.row_notes[i] = f"0 (absent: {w})"
        out.append(b)
    return out


def build_stage(snap: StepSnapshot, stage: int, plane_mode: str = "first") -> StageContent:
    """The blocks, captions and arrows of ``stage`` (1..8) for ``snap``."""
    if not 1 <= stage <= N_STAGES:
        raise ValueError(f"stage must be 1..{N_STAGES}, got {stage}")
    tr, p = snap.trace, snap.params
    tokens = list(snap.tokens)
    n, d = len(tokens), snap.d
    pos = tr.position
    reader = tokens[pos]
    target = snap.classes[snap.label]
    sentence = " ".join(tokens)
    opt = f"{'SGD' if snap.optimizer == 'sgd' else 'Adam'}, lr {snap.lr:g}"
    read_rows = ["read" if i == pos else "" for i in range(n)]
    absent = snap.absent()
    blocks: list[Block] = []
    lines: list[str] = []
    title = f"{stage}. {STAGES[stage - 1]} — “{sentence}” → {target}"
    if stage == 1:
        lines = [
            f"Target: {target} (class {snap.label}). The classifier reads only the mixture at "
            f"“{reader}” (position {pos + 1}); the target is used by the loss, not by attention.",
            f"Completed updates: {snap.step}. {opt}. The parameters start from seeded random "
            "numbers; nothing was trained beforehand.",
        ]
        blocks.append(Block("token ids", ["id"], tokens, tr.ids[None], key="ids", integer=True))
        onehot = np.eye(len(snap.classes))[snap.label][None]
        blocks.append(Block("target", ["one-hot"], list(snap.classes), onehot, key="target",
                            integer=True))  # fmt: skip
    elif stage == 2:
        lines = [
            "Lookup copies one row of the embedding table per token: X = emb[ids]. Used rows "
            "are highlighted" + (f"; {', '.join(absent)} not in this sentence." if absent else "."),
        ]
        b = Block(f"emb ({len(snap.vocab)}×{d}, stored)", list(snap.vocab), _axes(d), p["emb"],
                  key="emb")  # fmt: skip
        ids = tr.ids.tolist()
        b.row_state = ["used" if i in ids else "absent" for i in range(len(snap.vocab))]
        blocks.append(b)
        blocks.append(Block(f"X = emb[ids] ({n}×{d})", tokens, _axes(d), tr.X, key="X",
                            row_state=read_rows))  # fmt: skip
    elif stage == 3:
        lines = [
            "First the stored projections Wq, Wk, Wv (parameters); then the queries, keys "
            "and values computed from them: Q = X Wq, K = X Wk, V = X Wv.",
        ]
        for name in ("Wq", "Wk", "Wv"):
            blocks.append(Block(name, _axes(d), _axes(d), p[name], key=name,
                                break_before=name == "Wq" and d > 2))  # fmt: skip
        for i, (name, M) in enumerate((("Q", tr.Q), ("K", tr.K), ("V", tr.V))):
            blocks.append(Block(f"{name} = X W{name.lower()}", tokens, _axes(d), M, key=name,
                                break_before=i == 0))  # fmt: skip
    elif stage == 4:
        w = tr.weights[pos]
        lines = [
            f"Weights A = softmax(Q Kᵀ / √{d}) row by row. “{reader}” mixes the values: "
            + ", ".join(f"{t} {w[j]:.3f}" for j, t in enumerate(tokens))
            + f". Mixture h = Σ A[{reader}, j] vⱼ.",
        ]
        blocks.append(Block("scores Q Kᵀ", tokens, tokens, tr.scores, key="scores",
                            row_state=read_rows))  # fmt: skip
        blocks.append(Block("weights A", tokens, tokens, tr.weights, key="weights",
                            row_state=read_rows))  # fmt: skip
        blocks.append(Block("V", tokens, _axes(d), tr.V, key="V", break_before=True))
        blocks.append(Block(f"mixture h at {reader}", ["h"], _axes(d), tr.mixture[None],
                            key="mixture", row_state=["read"]))  # fmt: skip
    elif stage == 5:
        k = int(np.argmax(tr.class_logits))
        lines = [
            f"Logits z = h cls_W + cls_b; probabilities softmax(z). Prediction: "
            f"{snap.classes[k]} (p = {tr.probs[k]:.3f}); target {target}.",
        ]
        blocks.append(Block("cls_W", _axes(d), list(snap.classes), p["cls_W"], key="cls_W"))
        blocks.append(Block("cls_b", [""], list(snap.classes), p["cls_b"][None], key="cls_b"))
        blocks.append(Block("mixture h", ["h"], _axes(d), tr.mixture[None], key="mixture",
                            break_before=True))  # fmt: skip
        blocks.append(Block("logits z", ["z"], list(snap.classes), tr.class_logits[None],
                            key="logits"))  # fmt: skip
        blocks.append(Block("probabilities", ["p"], list(snap.classes), tr.probs[None],
                            key="probs"))  # fmt: skip
    elif stage == 6:
        pt = float(tr.probs[snap.label])
        lines = [
            f"Cross-entropy loss = −log p({target}) = −log {pt:.4f} = {snap.loss:.4f}. "
            "It is small when the target gets most of the probability.",
        ]
        blocks.append(Block("probabilities", ["p"], list(snap.classes), tr.probs[None],
                            key="probs"))  # fmt: skip
        blocks.append(Block("target", ["one-hot"], list(snap.classes),
                            np.eye(len(snap.classes))[snap.label][None], key="target",
                            integer=True))  # fmt: skip
        blocks.append(Block("loss", ["L"], ["value"], np.array([[snap.loss]]), key="loss",
                            texts=[[f"{snap.loss:.4f}"]]))  # fmt: skip
    elif stage == 7:
        lines = [
            "Gradients ∂L/∂θ of every parameter group. The parameters have not changed yet."
            + (
                f" The embedding rows of {', '.join(absent)} get exactly 0: "
                "those words are absent from this sentence."
                if absent
                else ""
            ),
        ]
        blocks += _param_blocks(snap, dict(snap.grads), "grad", "∂L/∂", absent_zero=True)
    else:
        if snap.applied:
            lines = [f"Update applied (step {snap.step + 1}, {opt}): the new parameters are live. "
                     "Next sentence continues with them."]  # fmt: skip
        else:
            lines = [f"Preview of the update ({opt}); the parameters have not changed yet. "
                     "Apply update takes this step."]  # fmt: skip
        rule = "new = old − lr · ∂L/∂θ" if snap.optimizer == "sgd" else "Adam: new = old − step"
        lines[0] += f" {rule}; Δ = new − old."
        olds = _param_blocks(snap, dict(snap.params), "old", "old ")
        news = _param_blocks(snap, dict(snap.new_params), "new", "new ")
        deltas = _param_blocks(snap, snap.delta, "delta", "Δ ", absent_zero=True)
        for o, nw, dl in zip(olds, news, deltas, strict=True):
            o.break_before = True
            blocks += [o, nw, dl]
    if snap.applied and stage < N_STAGES:
        lines.append(
            f"These are the numbers of the pass that led to update {snap.step + 1}, already "
            "applied; Next sentence continues with the new parameters."
        )
    arrows, plane = stage_arrows(snap, stage, plane_mode)
    legend = {
        1: "embedding rows (grey: words not in the sentence)",
        2: "embedding rows (grey: words not in the sentence)",
        3: "queries (vermillion), keys (blue), values (green)",
        4: "values (green) and the mixture (purple)",
        5: "mixture (purple) and each class's column of cls_W (orange)",
        6: "mixture (purple) and each class's column of cls_W (orange)",
        7: "embedding rows and the step −lr·∂L/∂emb (red)",
        8: "embedding rows: old (light grey) and new (black)",
    }[stage]
    if stage == 7 and snap.optimizer != "sgd":
        legend = "embedding rows and −lr·∂L/∂emb (red; Adam's real step differs)"
    return StageContent(stage, title, lines, blocks, arrows, plane, legend)


# ---- painting -----------------------------------------------------------------------------------
@dataclass
class _Placed:
    block: Block
    x: float
    y: float
    label_w: float
    cell_w: float
    note_w: float
    w: float
    h: float


class StageView(QWidget):
    """Paints a :class:`StageContent`: a title, captions, number blocks and an arrow plane."""

    MARGIN = 8.0
    GAP = 14.0
    BASE_SIZE = 8.5  # point size of the numbers; wide blocks shrink it down to MIN_SIZE
    MIN_SIZE = 6.5

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.content: StageContent | None = None
        self.label_rects: list[tuple[float, float, float, float]] = []  # plane names, as drawn
        self.title_font = QFont(self.font())
        self.title_font.setPointSizeF(10.5)
        self.title_font.setBold(True)
        self.text_font = QFont(self.font())
        self.text_font.setPointSizeF(8.5)
        self.num_font = QFont(self.font())
        self.num_font.setPointSizeF(8.5)
        self.head_font = QFont(self.num_font)
        self.head_font.setBold(True)
        self.small_font = QFont(self.font())
        self.small_font.setPointSizeF(7.5)
        self.extent = 1.0
        self.extents: dict[int, float] = {}
        self._placed: list[_Placed] = []
        self._plane = QRectF()
        self._header_h = 0.0
        self._content_h = 0.0
        self._content_w = 0.0
        self._layout_w = -1
        self._label_rects: list[QRectF] = []
        self._viewport: QWidget | None = None
        self._title_rect = QRectF()
        self._lines: list[tuple[QRectF, str]] = []
        self._box = QRectF()
        self.number_size = self.BASE_SIZE
        self._digit_tables: dict[float, dict[int, int]] = {}
        self._widths: dict[tuple[float, bool, str], int] = {}

    # ---- content ------------------------------------------------------------------------------
    def set_content(self, content: StageContent, *, rescale: bool = False) -> None:
        """Show ``content``; the plane keeps its scale unless the arrows outgrow it or shrink a
        lot (so arrows visibly move during training instead of the axes jumping)."""
        self.content = content
        m = arrow_extent(content.arrows)
        want = nice_extent(m * 1.08)
        # Each stage keeps its own scale, so stepping between stages of different magnitude
        # never shows a tiny bunch of arrows.
        current = self.extents.get(content.stage, 0.0)
        if rescale or want > current or want < current / 2:
            self.extents[content.stage] = want
        self.extent = self.extents[content.stage]
        self._layout_w = -1
        self._relayout()
        self.update()

    def reset_scale(self) -> None:
        """Fit the plane again at the next content (a new model or projection)."""
        self.extents.clear()

    def sizeHint(self) -> QSize:
        return QSize(480, 360)

    def fit_to(self, viewport: QWidget) -> None:
        """Lay out for ``viewport``'s width (a scroll area's viewport), not this widget's own:
        this widget may be wider than what is visible when a block needs the room."""
        self._viewport = viewport
        viewport.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if obj is self._viewport and event.type() == QEvent.Type.Resize:
            self._relayout()
            self.update()
        return False

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._relayout()

    def _available_width(self) -> int:
        vp = self._viewport
        if vp is None:
            return self.width()
        area = vp.parentWidget()
        if not isinstance(area, QAbstractScrollArea):
            return vp.width()
        # The width the viewport has with its vertical scroll bar shown, shown or not. Laid out
        # for the viewport's own width, a stage that needs the bar narrows the viewport, the
        # narrower layout may not need it, and the two alternate (once 2 s of relayouts).
        bar = area.verticalScrollBar()
        shown = bar.width() if bar.isVisible() else 0
        return vp.width() + shown - bar.sizeHint().width()

    def _relayout(self) -> None:
        w = self._available_width()
        if w == self._layout_w or self.content is None:
            return
        self._layout_w = w
        self._layout(float(w))
        # Let a scroll area know how tall (and wide) the content needs to be.
        mh = math.ceil(self._content_h)
        mw = math.ceil(self._content_w)
        if self.minimumHeight() != mh or self.minimumWidth() != mw:
            self.setMinimumSize(mw, mh)

    def _digit_table(self, fm: QFontMetrics) -> dict[int, int]:
        key = self.number_size
        table = self._digit_tables.get(key)
        if table is None:
            widest = max("0123456789", key=fm.horizontalAdvance)
            table = str.maketrans("0123456789", widest * 10)
            self._digit_tables[key] = table
        return table

    def _set_number_size(self, size: float) -> None:
        if size != self.number_size:
            self.number_size = size
            self.num_font.setPointSizeF(size)
            self.head_font.setPointSizeF(size)

    def _advance(self, fm: QFontMetrics, text: str, bold: bool = False) -> int:
        """Width of ``text`` in the number (or bold head) font, memoised: labels repeat."""
        key = (self.number_size, bold, text)
        w = self._widths.get(key)
        if w is None:
            if len(self._widths) > 20_000:
                self._widths.clear()
            w = self._widths[key] = fm.horizontalAdvance(text)
        return w

    def _block_size(self, b: Block) -> tuple[float, float, float, float, float]:
        fm = QFontMetrics(self.num_font)
        hm = QFontMetrics(self.head_font)
        adv = self._advance
        rh = fm.height() + 3
        label_w = max((adv(fm, s) for s in b.row_labels), default=0)
        label_w = label_w + 8 if label_w else 4
        # Measure each distinct *shape* of number once (every digit replaced by the font's
        # widest digit): measuring every cell of a big stage costs more than painting it.
        digits = self._digit_table(fm)
        shapes = {t.translate(digits) for row in b.texts for t in row}
        cell_w = max(
            max((adv(fm, t) for t in shapes), default=0),
            max((adv(fm, c) for c in b.col_labels), default=0),
        ) + 10  # fmt: skip
        note_w = max((adv(fm, s) for s in b.row_notes), default=0)
        note_w = note_w + 10 if note_w else 0
        w = label_w + cell_w * b.values.shape[1] + note_w
        w = max(w, adv(hm, b.title, True) + 2)
        h = hm.height() + 2 + rh * (b.values.shape[0] + 1)
        return label_w, cell_w, note_w, w, h

    def _layout(self, width: float) -> None:
        """Title on top; the plane top right with the captions wrapped to its left; then the
        blocks, flowing left to right beside the plane and below it."""
        c = self.content
        assert c is not None
        m, gap = self.MARGIN, self.GAP
        inner = max(width - 2 * m, 200.0)
        fm_t = QFontMetrics(self.title_font)
        fm = QFontMetrics(self.text_font)
        fm_s = QFontMetrics(self.small_font)
        # The title wraps in a narrow view instead of running past its right edge.
        title_r = fm_t.boundingRect(0, 0, int(inner), 1000, Qt.TextFlag.TextWordWrap, c.title)
        self._title_rect = QRectF(m, m, inner, max(title_r.height(), fm_t.height()))
        y0 = self._title_rect.bottom() + 4
        self._set_number_size(self.BASE_SIZE)
        sizes = [self._block_size(b) for b in c.blocks]
        widest = max((sz[3] for sz in sizes), default=0.0)
        if widest > inner:  # text width scales with the point size: one more pass fits it
            self._set_number_size(max(self.MIN_SIZE, self.BASE_SIZE * inner / widest * 0.97))
            sizes = [self._block_size(b) for b in c.blocks]
        beside = inner >= 380
        side = min(260.0, max(170.0, inner * 0.42)) if beside else min(inner, 260.0)
        caption = f"plane: {c.plane}. {c.legend}"
        cap_h = fm_s.boundingRect(0, 0, int(side), 1000, Qt.TextFlag.TextWordWrap, caption)
        plane_h = side + cap_h.height() + 4
        text_w = inner - side - gap if beside else inner
        self._lines: list[tuple[QRectF, str]] = []
        y = y0
        for line in c.lines:
            r = fm.boundingRect(0, 0, int(text_w), 10_000, Qt.TextFlag.TextWordWrap, line)
            self._lines.append((QRectF(m, y, text_w, r.height()), line))
            y += r.height() + 2
        y += 6
        if beside:
            self._plane = QRectF(m + inner - side, y0, side, plane_h)
            right_limit = self._plane.left() - gap
        else:
            self._plane = QRectF(m, y, side, plane_h)
            y = self._plane.bottom() + gap
            right_limit = m + inner
        self._header_h = y
        placed: list[_Placed] = []
        x, row_h = m, 0.0
        max_right = self._plane.right()
        for blk, (lw, cw, nw, bw, bh) in zip(c.blocks, sizes, strict=True):
            limit = right_limit if y < self._plane.bottom() else m + inner
            if x > m and (blk.break_before or x + bw > limit):
                y += row_h + gap
                x, row_h = m, 0.0
                limit = right_limit if y < self._plane.bottom() else m + inner
            if x == m and bw > limit - m and y < self._plane.bottom():
                y = self._plane.bottom() + gap  # does not fit beside the plane: go below it
            placed.append(_Placed(blk, x, y, lw, cw, nw, bw, bh))
            max_right = max(max_right, x + bw)
            x += bw + gap
            row_h = max(row_h, bh)
        self._placed = placed
        self._content_h = max(y + row_h, self._plane.bottom()) + m + 4
        self._content_w = max_right + m

    # ---- paint ------------------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        p = QPainter(self)
        exposed = QRectF(event.rect())
        p.fillRect(exposed, QColor("white"))
        if self.content is not None:
            self._relayout()
            self.paint_content(p, exposed)
        p.end()

    def paint_content(self, p: QPainter, exposed: QRectF | None = None) -> None:
        """Paint everything, or (in a scroll area) only the blocks meeting ``exposed``."""
        c = self.content
        assert c is not None
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        p.setPen(QColor("#111111"))
        p.setFont(self.title_font)
        p.drawText(self._title_rect, Qt.TextFlag.TextWordWrap, c.title)
        p.setFont(self.text_font)
        p.setPen(QColor("#333333"))
        for rect, line in self._lines:
            p.drawText(rect, Qt.TextFlag.TextWordWrap, line)
        for pl in self._placed:
            if exposed is None or exposed.intersects(QRectF(pl.x, pl.y, pl.w, pl.h)):
                self._paint_block(p, pl)
        if exposed is None or exposed.intersects(self._plane):
            self._paint_plane(p, self._plane)

    def _paint_block(self, p: QPainter, pl: _Placed) -> None:
        b = pl.block
        fm = QFontMetrics(self.num_font)
        hm = QFontMetrics(self.head_font)
        rh = fm.height() + 3
        p.setFont(self.head_font)
        p.setPen(QColor("#111111"))
        p.drawText(QPointF(pl.x, pl.y + hm.ascent()), b.title)
        top = pl.y + hm.height() + 2
        x0 = pl.x + pl.label_w
        r, cols = b.values.shape
        p.setFont(self.num_font)
        # column labels
        p.setPen(QColor("#666666"))
        for j, lab in enumerate(b.col_labels):
            rect = QRectF(x0 + j * pl.cell_w, top, pl.cell_w - 4, rh)
            p.drawText(rect, RIGHT, lab)
        grid_w = pl.cell_w * cols
        for i in range(r):
            y = top + rh * (i + 1)
            state = b.row_state[i]
            if state in ("used", "read"):
                p.fillRect(QRectF(pl.x, y, pl.label_w + grid_w, rh),
                           USED_BG if state == "used" else READ_BG)  # fmt: skip
            fg = ABSENT_FG if state == "absent" else QColor("#111111")
            p.setPen(QColor("#444444") if state != "absent" else ABSENT_FG)
            p.drawText(QRectF(pl.x, y, pl.label_w - 6, rh),
                       RIGHT,
                       b.row_labels[i])  # fmt: skip
            p.setPen(fg)
            for j in range(cols):
                rect = QRectF(x0 + j * pl.cell_w, y, pl.cell_w - 4, rh)
                p.drawText(rect, RIGHT,
                           b.texts[i][j])  # fmt: skip
            if b.row_notes[i]:
                p.setPen(NOTE_FG)
                p.drawText(QRectF(x0 + grid_w + 6, y, pl.note_w, rh),
                           LEFT,
                           b.row_notes[i])  # fmt: skip
        # a frame around the numbers, like matrix brackets
        p.setPen(QPen(GRID, 1.0))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(x0 - 2, top + rh, grid_w, rh * r))

    def _paint_plane(self, p: QPainter, rect: QRectF) -> None:
        c = self.content
        assert c is not None
        fm = QFontMetrics(self.small_font)
        p.setFont(self.small_font)
        side = rect.width()
        box = QRectF(rect.left(), rect.top(), side, side)
        caption_h = rect.height() - side
        self._box = box
        p.setPen(QPen(QColor("#BBBBBB"), 1))
        p.setBrush(QColor("#FCFCFC"))
        p.drawRect(box)
        e = self.extent
        cx, cy = box.center().x(), box.center().y()
        half = side / 2 - 14
        scale = half / e

        def to_px(v: tuple[float, float]) -> QPointF:
            return QPointF(cx + v[0] * scale, cy - v[1] * scale)

        # half-extent grid lines and axes through the origin
        p.setPen(QPen(QColor("#EEEEEE"), 1))
        for f in (-0.5, 0.5):
            p.drawLine(QPointF(cx + f * half, box.top()), QPointF(cx + f * half, box.bottom()))
            p.drawLine(QPointF(box.left(), cy - f * half), QPointF(box.right(), cy - f * half))
        p.setPen(QPen(QColor("#AAAAAA"), 1))
        p.drawLine(QPointF(box.left(), cy), QPointF(box.right(), cy))
        p.drawLine(QPointF(cx, box.top()), QPointF(cx, box.bottom()))
        p.setPen(QColor("#777777"))
        p.drawText(QPointF(cx + half - fm.horizontalAdvance(f"{e:g}") + 2, cy + fm.ascent() + 1),
                   f"{e:g}")  # fmt: skip
        p.drawText(QPointF(cx + 3, cy - half + fm.ascent() - 2), f"{e:g}")
        for a in c.arrows:
            self._paint_arrow(p, a, to_px)
        self._paint_labels(p, c.arrows, to_px)
        # caption: what the plane is and what the colours mean
        p.setPen(QColor("#555555"))
        cap = QRectF(rect.left(), box.bottom() + 2, rect.width(), caption_h)
        p.drawText(cap, Qt.TextFlag.TextWordWrap | Qt.AlignmentFlag.AlignHCenter,
                   f"plane: {c.plane}. {c.legend}")  # fmt: skip

    def _paint_arrow(self, p: QPainter, a: Arrow, to_px) -> None:
        colour = ROLE_COLOUR.get(a.role, TOKEN)
        width = ROLE_WIDTH.get(a.role, 1.8)
        dashed = a.role == "absent"
        paint_arrow(p, to_px(a.tail), to_px(a.head), colour, width, dashed=dashed, max_fraction=0.5)

    def _paint_labels(self, p: QPainter, arrows: list[Arrow], to_px) -> None:
        """Every arrow's name beyond its tip, on the side it points to, placed together so
        that none covers another (q, k and v of one token often end close together)."""
        fm = QFontMetrics(self.small_font)
        named = [a for a in arrows if a.label]
        anchors, sizes, dirs = [], [], []
        shafts = []
        for a in arrows:
            t, h = to_px(a.tail), to_px(a.head)
            shafts += segment_marks((t.x(), t.y()), (h.x(), h.y()))
        for a in named:
            t, h = to_px(a.tail), to_px(a.head)
            dx, dy = h.x() - t.x(), h.y() - t.y()
            n = math.hypot(dx, dy)
            anchors.append((h.x(), h.y()))
            sizes.append((float(fm.horizontalAdvance(a.label)), float(fm.height())))
            dirs.append((dx / n, dy / n) if n >= 0.5 else (0.7071, -0.7071))
        box = self._box
        placed = place_labels(
            anchors, sizes, directions=dirs, gap=3.0, obstacles=shafts,
            bounds=(box.left() + 1, box.top() + 1, box.width() - 2, box.height() - 2),
        )  # fmt: skip
        self.label_rects = [pl.rect for pl in placed]
        for a, pl in zip(named, placed, strict=True):
            colour = ROLE_COLOUR.get(a.role, TOKEN)
            fg = colour.darker(115) if a.role not in ("absent", "old") else ABSENT_FG
            if pl.leader:
                (x0, y0), (x1, y1) = leader_segment(pl)
                p.setPen(QPen(QColor("#AAAAAA"), 0.8))
                p.drawLine(QPointF(x0, y0), QPointF(x1, y1))
            p.setPen(fg)
            x, y, _, _ = pl.rect
            p.drawText(QPointF(x, y + fm.ascent()), a.label)

    # ---- exact values on hover ------------------------------------------------------------
    def cell_at(self, x: float, y: float) -> tuple[Block, int, int] | None:
        """The block cell under a widget point, or None."""
        fm = QFontMetrics(self.num_font)
        hm = QFontMetrics(self.head_font)
        rh = fm.height() + 3
        for pl in self._placed:
            top = pl.y + hm.height() + 2 + rh
            x0 = pl.x + pl.label_w
            r, cols = pl.block.values.shape
            if x0 <= x < x0 + cols * pl.cell_w and top <= y < top + r * rh:
                return pl.block, int((y - top) // rh), int((x - x0) // pl.cell_w)
        return None

    def event(self, ev) -> bool:
        if ev.type() == QEvent.Type.ToolTip:
            hit = self.cell_at(ev.pos().x(), ev.pos().y())
            if hit is not None:
                b, i, j = hit
                v = float(b.values[i, j])
                col = b.col_labels[j] if j < len(b.col_labels) else str(j)
                QToolTip.showText(ev.globalPos(),
                                  f"{b.title}[{b.row_labels[i]}, {col}] = {v!r}", self)  # fmt: skip
            else:
                QToolTip.hideText()
            return True
        return super().event(ev)
