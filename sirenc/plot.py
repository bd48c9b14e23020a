"""Pictures of a run: the estimate step by step, the effective sample size and the log evidence.

    import sirenc, sirenc.plot
    f = sirenc.compile("walk.si").filter(particles=1000)
    history = sirenc.plot.record(f)              # runs the filter, keeping each step's numbers
    sirenc.plot.save(history, "walk.png")        # needs matplotlib: pip install 'sirenc[plot]'

``record`` runs a streamable model row by row (``Filter.step``; the answers are those of
``Filter.run``) and takes the posterior after each row (``Filter.summary``: the mean, drawn as a
line, and the 5% and 95% quantiles, drawn as a 90% credible band); other models run whole, and
only their final estimate is known. For every resampling step the filter's history
(``Filter.history``) has the ESS of the weights it resampled and the log evidence after it.
"""

from __future__ import annotations

import io
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from sirenc.diagnostics import SirenUsageError

INSTALL_HINT = "pip install 'sirenc[plot]' (or pip install matplotlib)"


@dataclass
class History:
    """What ``record`` kept of a run."""

    particles: int
    final: Any                                   # the final estimate (Filter.estimate())
    seconds: float                               # the run's time, estimates included
    ess: np.ndarray = field(default_factory=lambda: np.empty(0))        # per resampling step
    log_evidence: np.ndarray = field(default_factory=lambda: np.empty(0))  # per resampling step
    estimate: np.ndarray | None = None           # rows x components, per data row (streamable)
    sd: np.ndarray | None = None                 # the posterior sd of each, per data row
    lower: np.ndarray | None = None              # the 5% quantile of each, per data row
    upper: np.ndarray | None = None              # the 95% quantile of each, per data row
    labels: list[str] = field(default_factory=list)   # one per component of `estimate`
    row_ess: np.ndarray | None = None            # the ESS after each data row (streamable)
    row_log_evidence: np.ndarray | None = None   # the log evidence after each data row (streamable)


def components(value: Any, name: str = "result") -> list[tuple[str, float]]:
    """The numbers of an estimate worth a line each: a float, the floats of a tuple, the last
    element of a list of floats (the newest, for a program that returns its trajectory)."""
    if value is None:
        return []
    if isinstance(value, float):
        return [(name, value)]
    if isinstance(value, tuple):
        return components(value[0], f"{name}.0") + components(value[1], f"{name}.1")
    if isinstance(value, np.ndarray) and value.ndim == 1:
        return [(f"{name}[-1]", float(value[-1]) if len(value) else float("nan"))]
    return []


def summary_components(summary: Any, name: str = "result") -> list[tuple[str, Any]]:
    """``components`` of a ``Filter.summary()``: the same numbers, each with its Summary."""
    from sirenc.summary import Summary

    if isinstance(summary, Summary):
        return [(name, summary)]
    if isinstance(summary, tuple):
        return summary_components(summary[0], f"{name}.0") + summary_components(summary[1], f"{name}.1")
    if isinstance(summary, list) and summary and isinstance(summary[-1], Summary):
        return [(f"{name}[-1]", summary[-1])]
    return []


def record(f, rows: Any = None, progress: Callable | None = None) -> History:
    """Run filter ``f`` (``rows`` replace its data as in ``Filter.run``), keeping each step's
    ESS and log evidence (``Filter.history``), and for a streamable model the estimate after each
    data row. ``progress`` gets the reports as in ``Filter.run(progress=..., progress_interval=0)``;
    a streamable model's steps are its rows."""
    from sirenc.streaming import feed, rows_to_feed

    start = time.perf_counter()
    if not f.model.info["streamable"]:
        f.run(rows, progress=progress, progress_interval=0)
        history = History(f.n_particles, f.estimate(), time.perf_counter() - start)
    else:
        per_row: list[list[float]] = []
        sds: list[list[float]] = []
        bands: list[list[tuple[float, float]]] = []
        labels: list[str] = []
        row_ess: list[float] = []
        row_log_evidence: list[float] = []

        def after_row() -> None:
            nonlocal labels
            parts = summary_components(f.summary(quantiles=(0.05, 0.95)))
            labels = [name for name, _ in parts]
            per_row.append([s.mean for _, s in parts])
            sds.append([s.sd for _, s in parts])
            bands.append([(s.quantiles[0.05], s.quantiles[0.95]) for _, s in parts])
            row_ess.append(f.ess)
            row_log_evidence.append(f.log_evidence)

        feed(f, rows_to_feed(f.model, rows), progress, after_row, interval=0)
        final = f.estimate()
        widths = {len(r) for r in per_row}
        estimate = np.array(per_row, dtype=np.float64) if per_row and len(widths) == 1 and labels else None
        band = np.array(bands, dtype=np.float64) if estimate is not None else None
        history = History(f.n_particles, final, time.perf_counter() - start, estimate=estimate,
                          sd=np.array(sds, dtype=np.float64) if estimate is not None else None,
                          lower=band[:, :, 0] if band is not None else None,
                          upper=band[:, :, 1] if band is not None else None,
                          labels=labels if estimate is not None else [],
                          row_ess=np.asarray(row_ess), row_log_evidence=np.asarray(row_log_evidence))
    steps = f.history()
    history.ess, history.log_evidence = steps["ess"], steps["log_evidence"]
    return history


def require_matplotlib():
    """``matplotlib.pyplot`` on the file-only Agg back end, or a ``SirenUsageError`` saying how to
    install it."""
    try:
        import matplotlib
    except ImportError:
        raise SirenUsageError(f"plotting needs matplotlib, which is not installed: {INSTALL_HINT}") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    return plt


def figure(history: History, title: str | None = None):
    """A matplotlib figure of ``history``: the estimate per data row, the ESS before each
    resampling (out of the particle count) and the log evidence."""
    plt = require_matplotlib()
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(8, 8), sharex=False,
                                              constrained_layout=True)
    if title:
        fig.suptitle(title)
    if history.estimate is not None and len(history.estimate):
        steps = np.arange(1, len(history.estimate) + 1)
        for k, label in enumerate(history.labels):
            top.plot(steps, history.estimate[:, k], label=f"posterior mean of {label}", color=f"C{k}",
                     **_marks(steps))
            if history.lower is not None:
                top.fill_between(steps, history.lower[:, k], history.upper[:, k], color=f"C{k}", alpha=0.2,
                                 linewidth=0, label="90% credible band" if k == 0 else None)
        top.set_xlabel("data row")
        top.legend(loc="best", fontsize="small")
    else:
        finals = components(history.final)
        for k, (name, value) in enumerate(finals):
            top.axhline(value, label=f"final posterior mean of {name}", color=f"C{k}")
        top.set_xticks([])
        if finals:
            top.legend(loc="best", fontsize="small")
    top.set_title("estimate" if history.estimate is not None and len(history.estimate) else
                  "final estimate (an estimate per data row needs a streamable program)")
    steps = np.arange(1, len(history.ess) + 1)
    middle.plot(steps, history.ess, color="C1", **_marks(steps))
    middle.axhline(history.particles, color="0.6", linestyle="--", linewidth=1,
                   label=f"{history.particles} particles")
    middle.set_ylim(0, history.particles * 1.05)
    middle.set_title("effective sample size before resampling")
    middle.set_xlabel("resampling step")
    middle.legend(loc="best", fontsize="small")
    bottom.plot(steps, history.log_evidence, color="C2", **_marks(steps))
    bottom.set_title("log evidence")
    bottom.set_xlabel("resampling step")
    return fig


def _marks(steps: np.ndarray) -> dict:
    """Few points are drawn as dots too: a single one would not show as a line."""
    return {"marker": "o", "markersize": 3} if len(steps) <= 50 else {}


def save(history: History, path: str | os.PathLike, title: str | None = None) -> None:
    """Draw ``history`` (``figure``) into a PNG file at ``path``, written atomically."""
    from sirenc.backend.link import check_output, write_atomically

    plt = require_matplotlib()
    check_output(path)
    fig = figure(history, title)
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=100)
    finally:
        plt.close(fig)
    write_atomically(path, buf.getvalue())
