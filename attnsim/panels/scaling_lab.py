"""Why divide by sqrt(d_k), and what saturation does to the softmax's derivatives.

Left: the entropy experiment (attention entropy over n random keys vs d_k, with and without
the 1/sqrt(d_k) divisor, and the spread of the raw scores next to sqrt(d_k)). It runs on the
workbench's background runner, with progress, so the window never freezes; its settings are
undoable sandbox state (the lab state :class:`ScalingLabState`).

Right: the softmax Jacobian of the workbench's receiving row and how its size collapses as the
row's logits are multiplied by a growing factor (a sharper, saturating row).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QSizePolicy,
    QTableWidget,
    QTableWidgetItem,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from attnsim.model.runner import Job
from attnsim.model.workbench import LabChange, Workbench
from attnsim.views.scaling_lab import (
    MAX_JACOBIAN_KEYS,
    SaturationCurve,
    entropy_vs_dk_steps,
    jacobian_sizes,
    row_jacobian,
    saturation_curve,
    softmax_keys,
)

from .base import Panel, content_parts
from .kit.colour_bar import paint_colour_bar
from .kit.plot_labels import PlotLabels
from .style import KEY, QUERY, fmt, score_cmap
from .widgets import AdaptiveSplit, FlowLayout, WholeNumberBox, column, group


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
# The saturation curve: logits multiplied by 2^-2 ... 2^4.
FACTORS = np.exp2(np.linspace(-2.0, 4.0, 121))
TABLE_ROWS = ("d_k", "entropy, no 1/√d_k", "entropy, with 1/√d_k", "SD of q·k", "√d_k")

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


def size_text(x: float) -> str:
    """A Jacobian size: 4 decimals, or 3 significant digits when a saturated row makes it tiny."""
    return fmt(x, 4) if x == 0 or x >= 1e-3 else f"{x:.3g}".replace("-", "−")


def _experiment(key: tuple):
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


class _TickAxis(pg.AxisItem):
    """An axis whose ticks are set explicitly (values are log2 of what the labels say)."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self.enableAutoSIPrefix(False)
        # The last tick sits near the edge; pyqtgraph would hide its label otherwise.
        self.setStyle(hideOverlappingLabels=False)


def _log2_plot(title: str, xlabel: str, ylabel: str) -> pg.PlotWidget:
    w = pg.PlotWidget(axisItems={"bottom": _TickAxis("bottom"), "left": _TickAxis("left")})
    w.setMenuEnabled(False)
    w.setMouseEnabled(False, False)
    w.hideButtons()
    w.setTitle(title, size="9pt")
    w.setLabel("bottom", xlabel)
    w.setLabel("left", ylabel)
    w.setMinimumSize(150, 120)
    return w


class JacobianMap(QWidget):
    """A small heatmap of a signed matrix: cells with numbers, labels and a colour bar."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.matrix = np.zeros((0, 0))
        self.labels: list[str] = []
        self.cmap = score_cmap()
        self._geometry: tuple[float, float, float, int] | None = None
        self.setMinimumSize(180, 120)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def sizeHint(self) -> QSize:
        return QSize(280, 220)

    def set_matrix(self, matrix: np.ndarray, labels: list[str]) -> None:
        self.matrix = np.asarray(matrix, dtype=float)
        self.labels = labels
        self.update()

    def colour_limit(self) -> float:
        return max(float(np.max(np.abs(self.matrix))) if self.matrix.size else 0.0, 1e-12)

    def cell_text(self, value: float, digits: int) -> str:
        return fmt(float(value), digits)

    def cell_at(self, x: float, y: float) -> tuple[int, int] | None:
        """The (row, column) under a widget point, or None."""
        g = self._geometry
        if g is None:
            return None
        x0, y0, cell, n = g
        i, j = math.floor((y - y0) / cell), math.floor((x - x0) / cell)
        return (i, j) if 0 <= i < n and 0 <= j < n else None

    def event(self, ev: QEvent) -> bool:
        if ev.type() == QEvent.Type.ToolTip:
            hit = self.cell_at(ev.pos().x(), ev.pos().y())
            if hit is not None:
                i, j = hit
                QToolTip.showText(
                    ev.globalPos(),
                    f"∂w[{self.labels[i]}] / ∂z[{self.labels[j]}] = {self.matrix[i, j]!r}",
                    self,
                )
                return True
        return super().event(ev)

    def paintEvent(self, event) -> None:
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.fillRect(self.rect(), QColor("white"))
        n = self.matrix.shape[0]
        if n == 0:
            p.end()
            return
        font = QFont(self.font())
        font.setPointSizeF(8.0)
        p.setFont(font)
        fm = QFontMetrics(font)
        label_w = min(80, max(fm.horizontalAdvance(s) for s in self.labels) + 6)
        bar_w, bar_gap = 12, 42
        top = fm.height() + 4
        avail_w = self.width() - label_w - bar_w - bar_gap - 8
        avail_h = self.height() - top - 4
        cell = max(4.0, min(avail_w / n, avail_h / n, 64.0))
        x0, y0 = float(label_w), float(top)
        self._geometry = (x0, y0, cell, n)
        vmax = self.colour_limit()
        colours = self.cmap.map(
            np.clip(0.5 + 0.5 * self.matrix.ravel() / vmax, 0, 1), mode="qcolor"
        )
        digits = 3 if cell >= 44 else 2
        show_numbers = cell >= fm.horizontalAdvance("−0.00") + 4
        for i in range(n):
            for j in range(n):
                rect = QRectF(x0 + j * cell, y0 + i * cell, cell, cell)
                c = colours[i * n + j]
                p.fillRect(rect, c)
                if show_numbers:
                    lum = 0.299 * c.redF() + 0.587 * c.greenF() + 0.114 * c.blueF()
                    p.setPen(QColor("black") if lum > 0.5 else QColor("white"))
                    p.drawText(
                        rect,
                        Qt.AlignmentFlag.AlignCenter,
                        self.cell_text(self.matrix[i, j], digits),
                    )
        p.setPen(QColor("#222222"))
        numbered = any(fm.horizontalAdvance(s) > cell - 2 for s in self.labels)
        for i, name in enumerate(self.labels):
            text = f"{i + 1} {name}" if numbered else name
            short = fm.elidedText(text, Qt.TextElideMode.ElideRight, label_w - 4)
            p.drawText(
                QRectF(0, y0 + i * cell, label_w - 4, cell),
                Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                short,
            )
            # Column headers: the name if it fits, else the key's number.
            head = name if fm.horizontalAdvance(name) <= cell - 2 else str(i + 1)
            if fm.horizontalAdvance(head) <= cell:
                p.drawText(QRectF(x0 + i * cell, 0, cell, top), Qt.AlignmentFlag.AlignCenter, head)
        # Colour bar: -vmax (bottom) .. +vmax (top), centred at 0.
        bx = x0 + n * cell + 8
        bh = n * cell
        paint_colour_bar(
            p,
            QRectF(bx, y0, bar_w, bh),
            list(self.cmap.map(np.linspace(0, 1, 17), mode="qcolor")),
            vertical=True,
            labels=[(1.0, fmt(vmax, 2)), (0.5, fmt(0.0, 2)), (0.0, fmt(-vmax, 2))],
            fm=fm,
            ink=QColor("#222222"),
        )
        p.end()


class ScalingLabPanel(Panel):
    """The entropy-vs-d_k experiment and the softmax Jacobian of the receiving row."""

    panel_id = "scaling_lab"
    title = "Scaling and temperature"

    def __init__(self, workbench: Workbench, parent: QWidget | None = None) -> None:
        super().__init__(workbench, parent)
        self._job: Job | None = None
        self._job_key: tuple | None = None
        self._shown_key: tuple | None = None
        self._shown_error: str | None = None
        self.result: dict | None = None  # the experiment now on screen (the engine's dict)
        self.progress_updates = 0
        self.jacobian_keys = np.zeros(0, dtype=int)
        self.jacobian = np.zeros((0, 0))  # empty when the row is too long to draw J
        self.jacobian_sizes = (0.0, 0.0)  # (‖J‖_F, max |J|) of the receiving row
        self.curve: SaturationCurve | None = None
        self._deferred: dict[str, object] | None = None
        self._defer_timer = QTimer(self)
        self._defer_timer.setSingleShot(True)
        self._defer_timer.setInterval(FIRST_RUN_DELAY_MS)
        self._defer_timer.timeout.connect(self._start_deferred)
        workbench.lab_changed.connect(self._on_lab)
        # A closed panel's run is of no use to anyone; the workbench's runner outlives it.
        self.destroyed.connect(lambda *_, r=workbench.runner: r.cancel(EXPERIMENT))

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        # Side by side in a wide dock (the experiment keeps 58 % of the width until the user
        # drags the handle), stacked in a tall narrow one, on two tabs in a small one.
        self.split = AdaptiveSplit(
            self._build_experiment(),
            self._build_jacobian(),
            ("Entropy vs d_k", "Softmax Jacobian"),
            ratio=0.58,
            side_width=640,
            stack_height=640,
        )
        layout.addWidget(self.split)
        self.splitter = self.split.splitter
        self.schedule_refresh()

    # ---- construction -------------------------------------------------------------------------
    def _build_experiment(self) -> QWidget:
        box, v = column(spacing=3)
        row = FlowLayout(h_spacing=4, v_spacing=3)

        def spin(lo: int, hi: int, tip: str, width: int = 64) -> WholeNumberBox:
            s = WholeNumberBox(lo, hi)  # typed numbers commit once, on Enter or focus out
            s.refused.connect(lambda why: self.refuse(ValueError(why)))
            s.setToolTip(tip)
            s.valueChanged.connect(self._controls_edited)
            s.setMaximumWidth(width)
            return s

        self.keys_spin = spin(2, 256, "Number of random keys per trial (maximum entropy log2 n)")
        self.trials_spin = spin(1, 5000, "Random query + key sets averaged for each d_k")
        self.seed_spin = spin(0, 2_147_483_647, "Seed of the random generator", 96)
        self.rng_combo = QComboBox()
        self.rng_combo.addItems(GENERATORS)
        self.rng_combo.setToolTip(
            "reference: replays the reference program's Python random stream (its printed "
            "table, about 2 s); numpy: a fast seeded NumPy generator (same findings, other digits)"
        )
        self.rng_combo.currentIndexChanged.connect(self._controls_edited)
        for label, w in (
            ("keys", self.keys_spin),
            ("trials", self.trials_spin),
            ("seed", self.seed_spin),
        ):
            row.addWidget(group(QLabel(label), w))
        row.addWidget(self.rng_combo)
        v.addLayout(row)
        row2 = FlowLayout(h_spacing=4, v_spacing=3)
        self.dk_checks: dict[int, QCheckBox] = {}
        add_dk = [QLabel("add d_k")]
        for d in OPTIONAL_DKS:
            c = QCheckBox(str(d))
            c.setToolTip(
                "Add this d_k to the experiment. Adding d_k 4 draws first from the stream, so "
                "the reference numbers after it change."
                if d < 16
                else "Add this d_k to the experiment (the largest run: slower)"
            )
            c.toggled.connect(self._controls_edited)
            self.dk_checks[d] = c
            add_dk.append(c)
        row2.addWidget(group(*add_dk))
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setMaximumHeight(16)
        self.progress.setTextVisible(True)
        self.progress.setFixedWidth(150)
        self.status = QLabel()
        self.status.setMinimumWidth(70)
        row2.addWidget(group(self.progress, self.status))
        v.addLayout(row2)

        self.table = QTableWidget(len(TABLE_ROWS) - 1, 4)
        self.table.setVerticalHeaderLabels(list(TABLE_ROWS[1:]))
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(19)
        self.table.horizontalHeader().setFixedHeight(20)
        self.table.setFixedHeight(20 + 4 * 19 + 4)
        self.table.setToolTip("The engine's numbers (mean over the trials)")
        v.addWidget(self.table)

        plots = QHBoxLayout()
        plots.setSpacing(2)
        self.entropy_plot = _log2_plot("Attention entropy", "d_k", "entropy (bits)")
        legend = self.entropy_plot.addLegend(labelTextSize="8pt")
        # Between the two curves (around 2.5 bits) the plot is empty: the legend goes there.
        legend.anchor(itemPos=(1, 0.5), parentPos=(1, 0.5), offset=(-4, 0))

        def entropy_curve(colour: QColor, symbol: str, name: str) -> pg.PlotDataItem:
            return self.entropy_plot.plot(
                pen=pg.mkPen(colour, width=2),
                symbol=symbol,
                symbolSize=6,
                symbolBrush=colour,
                symbolPen=None,
                name=name,
            )

        self.unscaled_curve = entropy_curve(QUERY, "o", "q·k")
        self.scaled_curve = entropy_curve(KEY, "s", "q·k / √d_k")
        self.max_line = pg.InfiniteLine(
            angle=0, pen=pg.mkPen("#555555", width=1.2, style=Qt.PenStyle.DashLine)
        )
        self.entropy_plot.addItem(self.max_line)
        self.max_text = pg.TextItem(color="#333333", anchor=(0, 1))
        self.max_text.setFont(QFont(self.font().family(), 8))
        self.entropy_plot.addItem(self.max_text)
        self.point_labels: list[pg.TextItem] = []
        self.entropy_texts = PlotLabels(self.entropy_plot, avoid=(legend,))
        plots.addWidget(self.entropy_plot, 3)

        self.sd_plot = _log2_plot("Spread of q·k", "d_k", "SD of q·k")
        self.sd_plot.addLegend(offset=(4, 4), labelTextSize="8pt")
        self.sqrt_curve = self.sd_plot.plot(
            pen=pg.mkPen("#555555", width=1.5, style=Qt.PenStyle.DashLine), name="√d_k"
        )
        self.sd_curve = self.sd_plot.plot(
            pen=None, symbol="o", symbolSize=7, symbolBrush=QUERY, symbolPen=None, name="measured"
        )
        plots.addWidget(self.sd_plot, 2)
        v.addLayout(plots, 1)
        return box

    def _build_jacobian(self) -> QWidget:
        box, v = column(spacing=2)
        self.jac_title = QLabel()
        self.jac_title.setWordWrap(True)
        self.jac_title.setTextFormat(Qt.TextFormat.RichText)
        v.addWidget(self.jac_title)
        self.jac_map = JacobianMap()
        self.jac_map.setToolTip(
            "J[i, j] = ∂w_i/∂z_j = (1/T) w_i (δ_ij − w_j): how the weight of key i moves when "
            "the scaled score z_j of key j moves (z = q·k / √d_k, before the temperature)"
        )
        v.addWidget(self.jac_map, 3)
        self.jac_stats = QLabel()
        self.jac_stats.setWordWrap(True)
        v.addWidget(self.jac_stats)
        self.sat_plot = _log2_plot("J as the logits grow", "logits × c", "size of J")
        sat_legend = self.sat_plot.addLegend(offset=(-4, 4), labelTextSize="8pt")
        self.frob_curve = self.sat_plot.plot(pen=pg.mkPen(KEY, width=2), name="‖J‖_F")
        self.max_curve = self.sat_plot.plot(
            pen=pg.mkPen(QUERY, width=2, style=Qt.PenStyle.DashLine), name="max |J|"
        )
        self.now_marker = self.sat_plot.plot(
            pen=None, symbol="o", symbolSize=8, symbolBrush="#222222", symbolPen=None
        )
        self.now_line = pg.InfiniteLine(angle=90, pen=pg.mkPen("#222222", width=1))
        self.sat_plot.addItem(self.now_line)
        self.now_text = pg.TextItem("now", color="#222222", anchor=(1, 1))
        self.sat_plot.addItem(self.now_text)
        self.unscaled_line = pg.InfiniteLine(
            angle=90, pen=pg.mkPen("#777777", width=1, style=Qt.PenStyle.DotLine)
        )
        self.sat_plot.addItem(self.unscaled_line)
        self.unscaled_text = pg.TextItem("without 1/√d_k", color="#555555", anchor=(0, 1))
        self.sat_plot.addItem(self.unscaled_text)
        self.sat_texts = PlotLabels(self.sat_plot, avoid=(sat_legend,))
        ticks = [(k, f"×{2.0**k:g}") for k in range(-2, 5)]
        self.sat_plot.getAxis("bottom").setTicks([ticks])
        self.sat_plot.setXRange(-2.1, 4.35, padding=0)
        v.addWidget(self.sat_plot, 3)
        return box

    # ---- state --------------------------------------------------------------------------------
    def params(self) -> dict[str, object]:
        """The experiment settings (the workbench's ScalingLabState, as a dict)."""
        return asdict(self.wb.lab_state(ScalingLabState))

    def _controls_edited(self, *_: object) -> None:
        if self.is_updating:
            return
        old = self.params()
        dks = set(int(d) for d in DEFAULT_PARAMS["dks"])  # type: ignore[attr-defined]
        dks.update(d for d, c in self.dk_checks.items() if c.isChecked())
        new = {
            "n_keys": self.keys_spin.value(),
            "trials": self.trials_spin.value(),
            "seed": self.seed_spin.value(),
            "rng": self.rng_combo.currentText(),
            "dks": tuple(sorted(dks)),
        }
        changed = [k for k in new if new[k] != old.get(k)]
        if not changed:
            return
        what = ", ".join(f"{k} {old.get(k)} → {new[k]}" for k in changed if k != "dks")
        if "dks" in changed:
            what = (what + ", " if what else "") + "d_k " + " ".join(map(str, new["dks"]))
        self.wb.set_lab_state(ScalingLabState(**new), f"Entropy experiment: {what}")  # type: ignore[arg-type]

    def _on_lab(self, change: LabChange) -> None:
        if change.kind is ScalingLabState:
            self.schedule_refresh()

    # ---- the experiment job -------------------------------------------------------------------
    def is_computing(self) -> bool:
        """True while a run is waiting to start or running."""
        return self._deferred is not None or (self._job is not None and not self._job.done)

    def _ensure_job(self, params: dict[str, object], *, now: bool = False) -> None:
        key = params_key(params)
        if self._job is not None and self._job_key == key:
            return
        if self._job is None and not now:
            # The very first run waits a moment: a worker thread holding the GIL while the
            # main window paints its first frame would slow the start-up.
            self._deferred = params
            self._defer_timer.start()
            return
        self._deferred = None
        self._defer_timer.stop()
        job = self.wb.run(_experiment(key), key=EXPERIMENT, memo=key)  # cancels the older run
        self._job, self._job_key = job, key
        job.progress.connect(self._job_progressed)
        job.finished.connect(self._job_ended)
        job.failed.connect(self._job_ended)

    def _start_deferred(self) -> None:
        if self._deferred is not None:
            params, self._deferred = self._deferred, None
            self._ensure_job(params, now=True)

    def _job_progressed(self, fraction: float) -> None:
        self.progress_updates += 1
        self.progress.setValue(round(100 * fraction))
        self.status.setText(f"running {fraction:.0%}")

    def _job_ended(self, *_: object) -> None:
        self.status.setText("")
        self.schedule_refresh()

    def wait_for_experiment(self, timeout_s: float = 60.0) -> None:
        """Block until the running experiment is done (export uses it; the GUI never does)."""
        self._start_deferred()
        job = self._job
        if job is not None and not job.done and job.wait(timeout_s):
            job.deliver()
        self.flush()

    def figure_widget(self) -> QWidget:
        self.flush()
        self.wait_for_experiment()
        return self

    # ---- drawing ------------------------------------------------------------------------------
    def figure_widgets(self) -> list[QWidget]:
        self.figure_widget()  # the experiment's numbers first
        return content_parts(
            self, self.table, self.entropy_plot, self.sd_plot,
            self.jac_title, self.jac_map, self.jac_stats, self.sat_plot,
        )  # fmt: skip

    def refresh(self) -> None:
        params = self.params()
        self._sync_controls(params)
        self._refresh_experiment(params)
        self._refresh_jacobian()

    def _sync_controls(self, params: dict[str, object]) -> None:
        with self.updating():
            # Only write what differs: a spin box being typed into keeps its text otherwise.
            for spin, name in (
                (self.keys_spin, "n_keys"),
                (self.trials_spin, "trials"),
                (self.seed_spin, "seed"),
            ):
                if spin.value() != int(params[name]):  # type: ignore[call-overload]
                    spin.setValue(int(params[name]))  # type: ignore[call-overload]
            if self.rng_combo.currentText() != str(params["rng"]):
                self.rng_combo.setCurrentText(str(params["rng"]))
            for d, c in self.dk_checks.items():
                c.setChecked(d in params["dks"])  # type: ignore[operator]

    def _refresh_experiment(self, params: dict[str, object]) -> None:
        key = params_key(params)
        result = self.wb.runner.recall(EXPERIMENT, key)
        error = None
        job = self._job
        if result is None and job is not None and self._job_key == key and job.done:
            error = job.error
        if result is None and error is None:
            self._ensure_job(params)
        if result is not None:
            # Nothing to compute for these settings: drop a pending or stale run.
            self._deferred = None
            self._defer_timer.stop()
            if job is not None and self._job_key != key and not job.done:
                job.cancel()
            took = f"done in {job.elapsed:.1f} s" if job and self._job_key == key else "done"
            self.progress.setValue(100)
            self.status.setText(took)
        elif error is not None:
            self.status.setText("failed")
        if key == self._shown_key and result is self.result and error == self._shown_error:
            return
        self._shown_key, self._shown_error = key, error
        self.result = result
        self._draw_experiment(result, params, error)

    def _draw_experiment(
        self, r: dict | None, params: dict[str, object], error: str | None
    ) -> None:
        for item in self.point_labels:
            self.entropy_plot.removeItem(item)
            self.entropy_texts.forget(item)
        self.point_labels = []
        n_keys = int(params["n_keys"])  # type: ignore[call-overload]
        max_bits = math.log2(n_keys)
        dks = [int(d) for d in params["dks"]]  # type: ignore[attr-defined]
        xs = np.log2(np.array(dks, dtype=float))
        ticks = [[(float(x), str(d)) for x, d in zip(xs, dks, strict=True)]]
        self.entropy_plot.getAxis("bottom").setTicks(ticks)
        self.sd_plot.getAxis("bottom").setTicks(ticks)
        self.max_line.setPos(max_bits)
        self.max_text.setText(f"maximum log2 {n_keys} = {fmt(max_bits, 2)} bits")
        self.entropy_texts.want(
            self.max_text, float(xs[0]), max_bits, (0, 1), short=f"max {fmt(max_bits, 2)} bits"
        )
        self.entropy_plot.setXRange(float(xs[0]) - 0.6, float(xs[-1]) + 0.6, padding=0)
        self.entropy_plot.setYRange(0, max_bits * 1.12, padding=0)
        self.table.setColumnCount(len(dks))
        self.table.setHorizontalHeaderLabels([f"d_k {d}" for d in dks])
        gen = str(params["rng"])
        self.entropy_plot.setTitle(f"Entropy over {n_keys} random keys", size="9pt")
        self.entropy_plot.setToolTip(
            f"Mean over {params['trials']} trials, seed {params['seed']}, generator {gen}"
        )
        if r is None:
            self.unscaled_curve.setData([], [])
            self.scaled_curve.setData([], [])
            self.sd_curve.setData([], [])
            self.sqrt_curve.setData([], [])
            for c in range(len(dks)):
                for row in range(4):
                    self.table.setItem(row, c, QTableWidgetItem("…" if error is None else ""))
            if error is not None:
                self.wb.say(f"Entropy experiment failed: {error}")
                self.status.setText("failed")
                self.status.setToolTip(error)
            else:
                self.progress.setValue(round(100 * (self._job.fraction if self._job else 0)))
                self.status.setText("running…")
            self.entropy_texts.place()
            return
        self.status.setToolTip("")
        un = np.array(r["entropy_unscaled"])
        sc = np.array(r["entropy_scaled"])
        sd = np.array(r["score_sd"])
        root = np.array(r["sqrt_d_k"])
        self.unscaled_curve.setData(xs, un)
        self.scaled_curve.setData(xs, sc)
        for x, y in zip(xs, un, strict=True):
            self._label(x, y, QUERY, (0.5, 1.15))
        for x, y in zip(xs, sc, strict=True):
            self._label(x, y, KEY, (0.5, 1.15))
        # log2-log2 axes: sqrt(d_k) is a straight line of slope 1/2.
        self.sqrt_curve.setData(xs, np.log2(root))
        self.sd_curve.setData(xs, np.log2(sd))
        lo, hi = (
            math.floor(float(np.log2(min(sd.min(), root.min())))),
            math.ceil(float(np.log2(max(sd.max(), root.max())))),
        )
        self.sd_plot.getAxis("left").setTicks([[(k, f"{2.0**k:g}") for k in range(lo, hi + 1)]])
        self.sd_plot.setXRange(float(xs[0]) - 0.6, float(xs[-1]) + 0.6, padding=0)
        self.sd_plot.setYRange(lo - 0.3, hi + 0.3, padding=0)
        self.entropy_texts.place()
        cols = (un, sc, sd, root)
        for c in range(len(dks)):
            for row, values in enumerate(cols):
                item = QTableWidgetItem(fmt(float(values[c]), 2))
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(repr(float(values[c])))
                self.table.setItem(row, c, item)

    def _label(self, x: float, y: float, colour: QColor, anchor: tuple[float, float]) -> None:
        t = pg.TextItem(fmt(float(y), 2), color=colour, anchor=anchor)
        t.setFont(QFont(self.font().family(), 8))
        self.entropy_plot.addItem(t)
        self.entropy_texts.want(t, float(x), float(y), anchor)
        self.point_labels.append(t)

    def table_text(self) -> list[list[str]]:
        """The numbers the table shows, row by row (for tests and copy)."""
        return [
            [
                self.table.item(r, c).text() if self.table.item(r, c) else ""
                for c in range(self.table.columnCount())
            ]
            for r in range(self.table.rowCount())
        ]

    def _refresh_jacobian(self) -> None:
        wb = self.wb
        tr = wb.trace
        i = wb.receiving
        temp = tr.temperature
        keys = softmax_keys(tr.mask[i], tr.mask_value)
        # The sizes come from closed forms (O(k)); the (k, k) matrix only for a short row.
        frob, biggest = jacobian_sizes(tr.weights[i][keys], temp)
        drawn = keys.size <= MAX_JACOBIAN_KEYS
        J = row_jacobian(tr.masked_logits[i], tr.weights[i], temp, keys)[1] if drawn else None
        self.jacobian_keys = keys
        self.jacobian = J if J is not None else np.zeros((0, 0))
        self.jacobian_sizes = (frob, biggest)
        tokens = list(wb.scenario.tokens)
        self.jac_map.set_matrix(self.jacobian, [tokens[k] for k in keys] if drawn else [])
        self.jac_map.setVisible(drawn)
        qname = wb.scenario.query_labels[i]
        self.jac_title.setText(
            f"<b>Softmax Jacobian</b> of <b>{qname}</b>'s weights, T = {temp:g}: "
            "J = (1/T) w<sub>i</sub>(δ<sub>ij</sub> − w<sub>j</sub>)"
        )
        note = ""
        if keys.size == 1:
            note = " · one legal key: its weight is 1 whatever the scores, so J = 0"
        forbidden = int(np.count_nonzero(~tr.mask[i][keys]))
        if forbidden:
            note += (
                f" · {forbidden} forbidden key{'s take' if forbidden > 1 else ' takes'} part "
                "(mask value 0 holds its logit at 0)"
            )
        if not drawn:
            note += (
                f" · {keys.size} keys: J ({keys.size}×{keys.size}) is too large to draw "
                f"(shown up to {MAX_JACOBIAN_KEYS} keys); its sizes come from closed forms"
            )
        self.jac_stats.setText(
            f"max |J| = {size_text(biggest)} · ‖J‖_F = {size_text(frob)} · "
            f"top weight {fmt(float(tr.weights[i].max()), 3)}{note}"
        )
        logits = np.asarray(tr.masked_logits[i], dtype=float)[keys]
        curve = saturation_curve(logits, temp, FACTORS)
        self.curve = curve
        lx = np.log2(curve.factor)
        self.frob_curve.setData(lx, curve.frobenius)
        self.max_curve.setData(lx, curve.max_abs)
        self.now_marker.setData([0.0, 0.0], [frob, biggest])
        self.now_line.setPos(0.0)
        top = max(float(curve.frobenius.max()), float(curve.max_abs.max()), 1e-6)
        self.sat_plot.setYRange(0, top * 1.1, padding=0)
        self.sat_texts.want(self.now_text, -0.03, 0.0, (1, 1))
        # With the 1/sqrt(d_k) divisor on, dropping it multiplies these logits by sqrt(d_k).
        lx_unscaled = math.log2(math.sqrt(tr.d_k)) if tr.scale else None
        show = lx_unscaled is not None and 0.0 < lx_unscaled <= 4.0
        self.unscaled_line.setVisible(show)
        self.unscaled_text.setVisible(show)
        if show:
            self.unscaled_line.setPos(lx_unscaled)
            self.sat_texts.want(self.unscaled_text, lx_unscaled + 0.03, 0.0, (0, 1))
        self.sat_texts.place()
