"""Bar charts laid out in Python and drawn as inline SVG by the templates.

The layout functions return plain geometry (rectangles, ticks, labels); the templates turn it into
SVG elements, so every text label passes through the template's escaping. Charts carry axis
titles with units and a legend, and use patterns of lightness as well as hue so that a black and
white print still tells the series apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: Series colours (colour-blind safe, distinct in greyscale).
PALETTE = ("#1f5fa8", "#e08a1e", "#3a9a5b", "#8d4fb0", "#c23b3b", "#6b6b6b", "#1aa3b8", "#b8a21a")


@dataclass(frozen=True)
class Series:
    """One series of a grouped bar chart; `values[i]` belongs to category i (None: no bar)."""

    name: str
    values: tuple[float | None, ...]
    lows: tuple[float | None, ...] = ()
    highs: tuple[float | None, ...] = ()


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    color: str
    label: str
    value_text: str
    err_low: float | None = None
    err_high: float | None = None


@dataclass(frozen=True)
class Tick:
    pos: float
    text: str


@dataclass(frozen=True)
class LegendEntry:
    x: float
    y: float
    color: str
    text: str


@dataclass(frozen=True)
class CategoryLabel:
    x: float
    y: float
    text: str


@dataclass(frozen=True)
class ChartLayout:
    """A laid-out chart: draw in a `width` x `height` viewBox."""

    id: str
    title: str
    width: float
    height: float
    plot_x: float
    plot_y: float
    plot_w: float
    plot_h: float
    x_title: str
    y_title: str
    bars: tuple[Bar, ...]
    ticks: tuple[Tick, ...]
    categories: tuple[CategoryLabel, ...]
    legend: tuple[LegendEntry, ...]
    horizontal: bool = False


def nice_max(value: float) -> float:
    """The smallest 'round' number (1, 2, 2.5 or 5 × a power of ten) at or above `value`."""
    if value <= 0:
        return 1.0
    exp = math.floor(math.log10(value))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        cand = m * 10**exp
        if cand >= value - 1e-12:
            return cand
    return 10.0 ** (exp + 1)


def _fmt(v: float) -> str:
    return f"{v:.0f}" if abs(v) >= 10 or v == int(v) else f"{v:.2f}".rstrip("0").rstrip(".")


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _legend(names: Sequence[str], x0: float, width: float) -> tuple[LegendEntry, ...]:
    """Legend entries laid out left to right, wrapping onto a new row when the next would not fit."""
    out = []
    x, y = x0, 14.0
    for i, name in enumerate(names):
        text = _clip(name, 40)
        w = 22.0 + 6.6 * len(text)
        if x > x0 and x + w > x0 + width:
            x, y = x0, y + 18.0
        out.append(LegendEntry(x=x, y=y, color=PALETTE[i % len(PALETTE)], text=text))
        x += w + 12.0
    return tuple(out)


def grouped_bars(id: str, title: str, categories: Sequence[str], series: Sequence[Series], y_title: str,
                 x_title: str = "", y_max: float | None = None) -> ChartLayout | None:
    """A vertical grouped bar chart (one group per category, one bar per series), or None without data."""
    vals = [v for s in series for v in (*s.values, *s.highs) if v is not None]
    if not categories or not series or not vals:
        return None
    top = y_max if y_max is not None else nice_max(max(vals))
    width = max(420.0, 70.0 + len(categories) * (24.0 * len(series) + 30.0))
    legend = _legend([s.name for s in series], x0=64.0, width=width - 80.0)
    legend_rows = 1 + int(max(e.y for e in legend) - 14.0) // 18 if legend else 1
    plot_x, plot_y = 64.0, 30.0 + 18.0 * legend_rows
    plot_w, plot_h = width - plot_x - 16.0, 220.0
    height = plot_y + plot_h + 62.0
    group_w = plot_w / len(categories)
    bar_w = min(36.0, (group_w - 12.0) / len(series))
    bars: list[Bar] = []
    for ci, _cat in enumerate(categories):
        start = plot_x + ci * group_w + (group_w - bar_w * len(series)) / 2
        for si, s in enumerate(series):
            v = s.values[ci] if ci < len(s.values) else None
            if v is None:
                continue
            h = plot_h * max(0.0, min(v, top)) / top
            lo = s.lows[ci] if ci < len(s.lows) else None
            hi = s.highs[ci] if ci < len(s.highs) else None
            bars.append(Bar(x=start + si * bar_w, y=plot_y + plot_h - h, width=bar_w * 0.9, height=h,
                            color=PALETTE[si % len(PALETTE)], label=f"{s.name}: {_fmt(v)}", value_text=_fmt(v),
                            err_low=None if lo is None else plot_y + plot_h - plot_h * min(lo, top) / top,
                            err_high=None if hi is None else plot_y + plot_h - plot_h * min(hi, top) / top))
    ticks = tuple(Tick(pos=plot_y + plot_h - plot_h * i / 5, text=_fmt(top * i / 5)) for i in range(6))
    cats = tuple(CategoryLabel(x=plot_x + (ci + 0.5) * group_w, y=plot_y + plot_h + 16, text=_clip(c, 22))
                 for ci, c in enumerate(categories))
    return ChartLayout(id=id, title=title, width=width, height=height, plot_x=plot_x, plot_y=plot_y,
                       plot_w=plot_w, plot_h=plot_h, x_title=x_title, y_title=y_title, bars=tuple(bars),
                       ticks=ticks, categories=cats, legend=legend)


def ranked_bars(id: str, title: str, items: Sequence[tuple[str, float]], x_title: str,
                x_max: float | None = None, highlight_first: bool = True, digits: int = 3) -> ChartLayout | None:
    """A horizontal bar chart of (label, value), largest first (the calculus study's 'Important phrase … Impact …')."""
    items = sorted(((lbl, v) for lbl, v in items), key=lambda p: -p[1])
    if not items:
        return None
    top = x_max if x_max is not None else nice_max(max(v for _, v in items))
    plot_x, plot_y, row_h = 190.0, 12.0, 22.0
    width = 560.0
    plot_w, plot_h = width - plot_x - 50.0, row_h * len(items)
    height = plot_y + plot_h + 48.0
    bars = tuple(
        Bar(x=plot_x, y=plot_y + i * row_h + 3, width=plot_w * max(0.0, min(v, top)) / top, height=row_h - 6,
            color=PALETTE[4] if (i == 0 and highlight_first) else PALETTE[0], label=_clip(lbl, 30),
            value_text=f"{v:.{digits}f}")
        for i, (lbl, v) in enumerate(items))
    ticks = tuple(Tick(pos=plot_x + plot_w * i / 4, text=_fmt(top * i / 4)) for i in range(5))
    cats = tuple(CategoryLabel(x=plot_x - 6, y=plot_y + (i + 0.5) * row_h + 4, text=_clip(lbl, 30))
                 for i, (lbl, _) in enumerate(items))
    return ChartLayout(id=id, title=title, width=width, height=height, plot_x=plot_x, plot_y=plot_y,
                       plot_w=plot_w, plot_h=plot_h, x_title=x_title, y_title="", bars=bars, ticks=ticks,
                       categories=cats, legend=(), horizontal=True)
