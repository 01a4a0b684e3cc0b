"""Small inline SVG charts for the HTML report, dependency-free and deterministic.

Every coordinate is printed with a fixed number of decimals and every label is escaped,
so the same report renders to the same bytes and taxonomy text cannot break the markup.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from benchmark.metrics import ReliabilityBin

LIKED_COLOUR = "#2e7d32"
DISLIKED_COLOUR = "#c62828"
NEUTRAL_COLOUR = "#1f5fa8"
_GRID = "#e3e6ea"
_INK = "#2b2f33"
_MUTED = "#6b7280"
_NICE_TOPS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0)
_FONT = "font-family='system-ui,-apple-system,Segoe UI,sans-serif'"


def _f(value: float) -> str:
    return f"{value:.1f}"


def _text(
    x: float,
    y: float,
    body: str,
    *,
    anchor: str = "start",
    size: int = 11,
    colour: str = _INK,
    weight: str = "normal",
    halo: bool = False,
) -> str:
    # A halo (a white outline painted under the glyphs) keeps a label readable where a
    # line crosses it.
    outline = " stroke='white' stroke-width='3' paint-order='stroke'" if halo else ""
    return (
        f"<text x='{_f(x)}' y='{_f(y)}' font-size='{size}' fill='{colour}' "
        f"text-anchor='{anchor}' font-weight='{weight}'{outline}>{escape(body)}</text>"
    )


def _svg(width: int, height: int, label: str, body: Sequence[str]) -> str:
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {width} {height}' "
        f"width='100%' role='img' aria-label='{escape(label)}' {_FONT}>" + "".join(body) + "</svg>"
    )


@dataclass(frozen=True, slots=True)
class _Frame:
    """A unit square [0, 1]² mapped onto a pixel rectangle, with gridlines and axes."""

    left: float
    top: float
    width: float
    height: float

    def x(self, value: float) -> float:
        return self.left + value * self.width

    def y(self, value: float) -> float:
        return self.top + (1 - value) * self.height

    def axes(
        self, x_label: str, y_label: str, y_max: float = 1.0, y_pct: bool = False
    ) -> list[str]:
        out = []
        for i in range(6):
            v = i / 5
            out.append(
                f"<line x1='{_f(self.x(0))}' y1='{_f(self.y(v))}' x2='{_f(self.x(1))}' "
                f"y2='{_f(self.y(v))}' stroke='{_GRID}'/>"
            )
            tick = f"{v * y_max * 100:.0f}%" if y_pct else f"{v * y_max:.1f}"
            out.append(
                _text(self.x(0) - 6, self.y(v) + 4, tick, anchor="end", size=10, colour=_MUTED)
            )
            out.append(
                _text(
                    self.x(v), self.y(0) + 15, f"{v:.1f}", anchor="middle", size=10, colour=_MUTED
                )
            )
        out.append(
            f"<rect x='{_f(self.left)}' y='{_f(self.top)}' width='{_f(self.width)}' "
            f"height='{_f(self.height)}' fill='none' stroke='#c4c9cf'/>"
        )
        out.append(_text(self.x(0.5), self.y(0) + 32, x_label, anchor="middle", colour=_MUTED))
        mid = self.y(0.5)
        out.append(
            f"<text x='14' y='{_f(mid)}' font-size='11' fill='{_MUTED}' text-anchor='middle' "
            f"transform='rotate(-90 14 {_f(mid)})'>{escape(y_label)}</text>"
        )
        return out


def reliability_diagram(bins: Sequence[ReliabilityBin]) -> str:
    """Share of liked turns against mean predicted P(satisfied) per bin; the diagonal is
    perfect calibration, bars show each bin's share, dot area its number of items."""
    frame = _Frame(52, 16, 400, 280)
    body = frame.axes("predicted P(satisfied)", "share of turns liked")
    body.append(
        f"<line x1='{_f(frame.x(0))}' y1='{_f(frame.y(0))}' x2='{_f(frame.x(1))}' "
        f"y2='{_f(frame.y(1))}' stroke='{_MUTED}' stroke-dasharray='4 4'/>"
    )
    largest = max((b.count for b in bins), default=0)
    for b in bins:
        if not b.count or math.isnan(b.frac_liked):
            continue
        x0, x1 = frame.x(b.low), frame.x(b.high)
        y = frame.y(b.frac_liked)
        body.append(
            f"<rect x='{_f(x0 + 1)}' y='{_f(y)}' width='{_f(x1 - x0 - 2)}' "
            f"height='{_f(frame.y(0) - y)}' fill='{NEUTRAL_COLOUR}' fill-opacity='0.18'>"
            f"<title>{escape(_bin_title(b))}</title></rect>"
        )
    for b in bins:
        if not b.count or math.isnan(b.frac_liked):
            continue
        radius = 3 + 9 * math.sqrt(b.count / largest)
        body.append(
            f"<circle cx='{_f(frame.x(b.mean_score))}' cy='{_f(frame.y(b.frac_liked))}' "
            f"r='{_f(radius)}' fill='{NEUTRAL_COLOUR}' fill-opacity='0.8' stroke='white'>"
            f"<title>{escape(_bin_title(b))}</title></circle>"
        )
    return _svg(470, 340, "reliability diagram", body)


def _bin_title(b: ReliabilityBin) -> str:
    return (
        f"{b.low:.1f}–{b.high:.1f}: {b.count} items, mean score {b.mean_score:.3f}, "
        f"liked {b.frac_liked * 100:.1f}%"
    )


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: float  # in [0, 1]; NaN draws no bar
    n: int
    colour: str = NEUTRAL_COLOUR


def bars(rows: Sequence[Bar], *, reference: float | None = None) -> str:
    """Horizontal bars in [0, 1] with the value and n at the end of each; `reference`
    (e.g. the overall rate) is a dashed vertical line."""
    label_w, bar_w, row_h, top = 230, 300, 22, 8
    height = top + row_h * len(rows) + 22
    body: list[str] = []
    for i in range(6):
        x = label_w + bar_w * i / 5
        body.append(
            f"<line x1='{_f(x)}' y1='{top}' x2='{_f(x)}' y2='{_f(height - 20)}' stroke='{_GRID}'/>"
        )
        body.append(_text(x, height - 6, f"{i * 20}%", anchor="middle", size=10, colour=_MUTED))
    if reference is not None and not math.isnan(reference):  # under the bars and labels
        x = label_w + bar_w * reference
        body.append(
            f"<line x1='{_f(x)}' y1='{top - 4}' x2='{_f(x)}' y2='{_f(height - 20)}' "
            f"stroke='{_INK}' stroke-dasharray='3 3'/>"
        )
    for row_index, row in enumerate(rows):
        y = top + row_index * row_h
        label = row.label if len(row.label) <= 34 else row.label[:33] + "…"
        body.append(_text(label_w - 8, y + 15, label, anchor="end"))
        shown = "n/a" if math.isnan(row.value) else f"{row.value * 100:.1f}%"
        if not math.isnan(row.value):
            body.append(
                f"<rect x='{label_w}' y='{_f(y + 4)}' width='{_f(bar_w * row.value)}' "
                f"height='{row_h - 8}' rx='2' fill='{row.colour}'>"
                f"<title>{escape(f'{row.label}: {shown} of {row.n}')}</title></rect>"
            )
        end = label_w + bar_w * (0 if math.isnan(row.value) else row.value)
        body.append(
            _text(end + 6, y + 15, f"{shown} · n={row.n}", size=10, colour=_MUTED, halo=True)
        )
    return _svg(label_w + bar_w + 110, height, "bar chart", body)


def histogram(series: Mapping[str, tuple[Sequence[float], str]], n_bins: int = 20) -> str:
    """Histograms of scores in [0, 1], each as a share of its own series so that classes of
    different sizes compare, side by side within each bin (overlaid translucent bars blend
    into a third colour); a dashed line marks 0.5."""
    shares: dict[str, list[float]] = {}
    for name, (values, _) in series.items():
        counts = [0] * n_bins
        for v in values:
            counts[min(int(v * n_bins), n_bins - 1)] += 1
        total = len(values)
        shares[name] = [c / total if total else 0.0 for c in counts]
    peak = max((s for row in shares.values() for s in row), default=0.0)
    y_max = next(top for top in _NICE_TOPS if top >= peak)  # five ticks at round values
    frame = _Frame(52, 44, 400, 250)  # the legend sits above the plot
    body = frame.axes("P(satisfied)", "share of the series' items", y_max, y_pct=True)
    slots = max(len(series), 1)
    for slot, (name, (_, colour)) in enumerate(series.items()):
        for i, share in enumerate(shares[name]):
            if not share:
                continue
            x0, x1 = frame.x(i / n_bins), frame.x((i + 1) / n_bins)
            width = (x1 - x0 - 1) / slots
            y = frame.y(share / y_max)
            body.append(
                f"<rect x='{_f(x0 + 0.5 + slot * width)}' y='{_f(y)}' width='{_f(width)}' "
                f"height='{_f(frame.y(0) - y)}' fill='{colour}' fill-opacity='0.85'>"
                f"<title>{escape(f'{name}: {share * 100:.1f}%')}</title></rect>"
            )
    body.append(
        f"<line x1='{_f(frame.x(0.5))}' y1='{_f(frame.y(1))}' x2='{_f(frame.x(0.5))}' "
        f"y2='{_f(frame.y(0))}' stroke='{_INK}' stroke-dasharray='3 3'/>"
    )
    for i, (name, (values, colour)) in enumerate(series.items()):
        y = 14 + 15 * i
        body.append(f"<rect x='300' y='{y - 9}' width='10' height='10' fill='{colour}'/>")
        body.append(_text(315, y, f"{name} (n={len(values)})", size=10))
    return _svg(470, 336, "score histogram", body)
