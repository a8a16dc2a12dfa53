"""Inline SVG charts for the ablation report: line charts with 95% bands, and grouped bar charts. No JS, no network."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

WIDTH, HEIGHT = 560, 320
LEFT, RIGHT, TOP, BOTTOM = 64, 130, 36, 48
PALETTE = {"A0": "#7f7f7f", "A1": "#1f77b4", "A2": "#2ca02c", "A3": "#9467bd", "A4": "#d62728"}
_EXTRA = ("#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
_SHADES = (1.0, 0.45, 0.2)  # fill opacity of a group's 1st, 2nd, 3rd measure
DODGE = 3.0  # pixels between the series of a line chart at one x, so equal values stay visible side by side


@dataclass(frozen=True)
class Series:
    """One line: a name and points (x, y, low, high); low/high may equal y (no interval)."""

    name: str
    points: tuple[tuple[float, float, float, float], ...]


def color(name: str, index: int = 0) -> str:
    """The condition's colour (A0..A4 fixed), else one from a fallback palette."""
    return PALETTE.get(name, _EXTRA[index % len(_EXTRA)])


def nice_ticks(low: float, high: float, count: int = 5, integer: bool = False) -> list[float]:
    """About `count` round tick values covering [low, high] (whole numbers only when `integer`)."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if raw <= m * step)
    if integer:
        step = max(1, math.ceil(step))
    start = math.floor(low / step) * step
    return [round(start + i * step, 10) for i in range(int(math.ceil((high - start) / step)) + 1)]


def _fmt(v: float) -> str:
    """A tick label: integers without decimals, large numbers with k."""
    if abs(v) >= 10_000:
        return f"{v / 1000:g}k"
    return f"{v:g}" if v != int(v) else str(int(v))


class _Frame:
    """Axes mapping data coordinates onto the plot area."""

    def __init__(self, xs: list[float], ys: list[float], integer_x: bool = False):
        self.xt = nice_ticks(min(xs), max(xs), integer=integer_x)
        self.yt = nice_ticks(min(0.0, min(ys)), max(ys))
        self.w, self.h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(self, v: float) -> float:
        """Pixel x of a data x."""
        return LEFT + (v - self.xt[0]) / (self.xt[-1] - self.xt[0]) * self.w

    def y(self, v: float) -> float:
        """Pixel y of a data y."""
        return TOP + self.h - (v - self.yt[0]) / (self.yt[-1] - self.yt[0]) * self.h


def _open(chart_id: str, title: str) -> list[str]:
    """The svg element and its title."""
    return [f'<svg id="{escape(chart_id)}" class="plot" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" '
            f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
            f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>',
            f'<text x="{LEFT}" y="20" font-size="14" font-weight="bold">{escape(title)}</text>']


def _y_axis(f: _Frame, label: str, ticks: list[float]) -> list[str]:
    """Horizontal grid lines with y tick labels and the y label."""
    out = []
    for t in ticks:
        y = f.y(t)
        out.append(f'<line x1="{LEFT}" x2="{LEFT + f.w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{_fmt(t)}</text>')
    out.append(f'<text transform="translate(14 {TOP + f.h / 2}) rotate(-90)" font-size="12" '
               f'text-anchor="middle">{escape(label)}</text>')
    out.append(f'<line x1="{LEFT}" x2="{LEFT}" y1="{TOP}" y2="{TOP + f.h}" stroke="#333"/>')
    return out + [f'<line x1="{LEFT}" x2="{LEFT + f.w}" y1="{TOP + f.h}" y2="{TOP + f.h}" stroke="#333"/>']


def _legend(names: list[str]) -> list[str]:
    """A legend to the right of the plot area."""
    out, x = [], WIDTH - RIGHT + 14
    for i, n in enumerate(names):
        y = TOP + 8 + 18 * i
        out.append(f'<rect x="{x}" y="{y - 9}" width="12" height="12" fill="{color(n, i)}"/>')
        out.append(f'<text x="{x + 18}" y="{y + 1}" font-size="12">{escape(n)}</text>')
    return out


def line_chart(chart_id: str, title: str, series: list[Series], x_label: str, y_label: str,
               y_max: float | None = None, integer_x: bool = False) -> str:
    """Lines with markers, 95% bars and shaded bands, one per series; series are dodged DODGE pixels apart in x
    (data values unchanged, in each marker's title), and earlier lines are drawn wider, so conditions with equal
    values do not hide each other. `integer_x`: x counts things (tasks, items), so its ticks are whole numbers."""
    pts = [p for s in series for p in s.points] or [(0, 0, 0, 0)]
    f = _Frame([p[0] for p in pts], [p[3] for p in pts] + ([y_max] if y_max is not None else []), integer_x)
    out = _open(chart_id, title) + _y_axis(f, y_label, f.yt)
    for t in f.xt:
        out.append(f'<text x="{f.x(t):.1f}" y="{TOP + f.h + 16}" font-size="11" text-anchor="middle">{_fmt(t)}</text>')
    out.append(f'<text x="{LEFT + f.w / 2}" y="{HEIGHT - 8}" font-size="12" text-anchor="middle">'
               f'{escape(x_label)}</text>')
    for i, s in enumerate(series):
        c, p, dx = color(s.name, i), sorted(s.points), (i - (len(series) - 1) / 2) * DODGE
        width = 2.5 + min(1.5, 6 / max(1, len(series) - 1)) * (len(series) - 1 - i)
        if len(p) > 1 and any(q[2] != q[3] for q in p):
            band = [f"{f.x(q[0]) + dx:.1f},{f.y(q[3]):.1f}" for q in p] + \
                   [f"{f.x(q[0]) + dx:.1f},{f.y(q[2]):.1f}" for q in reversed(p)]
            out.append(f'<polygon points="{" ".join(band)}" fill="{c}" fill-opacity="0.08" stroke="none"/>')
        line = " ".join(f"{f.x(q[0]) + dx:.1f},{f.y(q[1]):.1f}" for q in p)
        out.append(f'<polyline points="{line}" fill="none" stroke="{c}" stroke-width="{width:g}"/>')
        for q in p:
            x = f.x(q[0]) + dx
            out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{f.y(q[2]):.1f}" y2="{f.y(q[3]):.1f}" '
                       f'stroke="{c}" stroke-width="1.5"/>')
            out.append(f'<circle cx="{x:.1f}" cy="{f.y(q[1]):.1f}" r="4" fill="{c}">'
                       f'<title>{escape(s.name)}: {_fmt(q[0])} → {_interval(q)}</title></circle>')
    return "\n".join(out + _legend([s.name for s in series]) + ["</svg>"])


def _interval(q: tuple) -> str:
    """A point's value, with its 95% interval when it has one: 0.5 [0.24–0.76]."""
    return f"{q[1]:.2g}" if q[2] == q[3] else f"{q[1]:.2g} [95%: {q[2]:.2g}–{q[3]:.2g}]"


def standalone(svg: str) -> str:
    """An inline chart as an SVG file of its own (XML declaration, nothing outside it)."""
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + svg + "\n"


def bar_chart(chart_id: str, title: str, groups: list[str], bars: dict[str, list[float]], y_label: str) -> str:
    """Grouped bars: one group per condition (its colour), one bar per measure in `bars` (a shade, in the legend)."""
    values = [v for vs in bars.values() for v in vs] or [0.0]
    f = _Frame([0, 1], [0.0, max(values) or 1.0])
    out = _open(chart_id, title) + _y_axis(f, y_label, f.yt)
    gw = f.w / max(1, len(groups))
    bw = gw * 0.7 / max(1, len(bars))
    for gi, g in enumerate(groups):
        x0 = LEFT + gi * gw + gw * 0.15
        out.append(f'<text x="{LEFT + gi * gw + gw / 2:.1f}" y="{TOP + f.h + 16}" font-size="12" '
                   f'text-anchor="middle">{escape(g)}</text>')
        for bi, (name, vs) in enumerate(bars.items()):
            v = vs[gi]
            y = f.y(v)
            out.append(f'<rect x="{x0 + bi * bw:.1f}" y="{y:.1f}" width="{bw - 2:.1f}" height="{TOP + f.h - y:.1f}" '
                       f'fill="{color(g, gi)}" fill-opacity="{_SHADES[bi % len(_SHADES)]}">'
                       f'<title>{escape(g)} {escape(name)}: {v:g}</title></rect>')
            out.append(f'<text x="{x0 + bi * bw + bw / 2 - 1:.1f}" y="{y - 4:.1f}" font-size="10" '
                       f'text-anchor="middle">{_fmt(round(v, 1)) if abs(v) >= 10 else f"{v:.3g}"}</text>')
    legend = [] if len(bars) == 1 else [
        s for i, n in enumerate(bars) for s in (
            f'<rect x="{WIDTH - RIGHT + 14}" y="{TOP - 1 + 18 * i}" width="12" height="12" fill="#555" '
            f'fill-opacity="{_SHADES[i % len(_SHADES)]}"/>',
            f'<text x="{WIDTH - RIGHT + 32}" y="{TOP + 9 + 18 * i}" font-size="12">{escape(n)}</text>')]
    return "\n".join(out + legend + ["</svg>"])
