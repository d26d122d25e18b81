"""Inline SVG charts of the viewer, drawn on the server (the pages run no script): the canary
kappa of each judge over time with the floor and the line, and a bar per score level. Only
presentation attributes are used (no CSS), and every text is escaped by Markup."""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

#: colour-blind-safe series colours (Okabe-Ito)
COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000")
WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 640, 240, 44, 80, 14, 30
#: the legend below the plot: entries per row, and the height of a row
LEGEND_COLUMNS, LEGEND_ROW = 3, 16


def _y(value: float, low: float, high: float) -> float:
    return TOP + (high - value) / (high - low) * (HEIGHT - TOP - BOTTOM)


def _x(index: int, count: int) -> float:
    span = WIDTH - LEFT - RIGHT
    return LEFT + (span / 2 if count == 1 else index * span / (count - 1))


def kappa_chart(
    title: str,
    times: Sequence[str],
    series: dict[str, list[float | None]],
    *,
    floor: float,
    line: float,
) -> Markup:
    """One judge per series of kappas (one per run, None: not measured), the floor and the
    line dashed across; x: the runs in time order, labelled with their dates."""
    values = [v for vs in series.values() for v in vs if v is not None]
    low, high = min([-0.2, floor, *values]), 1.0
    rows = -(-len(series) // LEGEND_COLUMNS)
    total = HEIGHT + rows * LEGEND_ROW + 6
    parts = [
        f'<svg viewBox="0 0 {WIDTH} {total}" width="100%" role="img" '
        f'aria-label="{escape(title)}" class="chart">',
        f"<title>{escape(title)}</title>",
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}" stroke="#555"/>',
    ]
    for tick in (0.0, 0.5, 1.0):
        y = _y(tick, low, high)
        parts.append(
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" '
            f'fill="#222">{tick:.1f}</text>'
        )
    for name, value in (("floor", floor), ("line", line)):
        y = _y(value, low, high)
        parts.append(
            f'<line x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#444" '
            f'stroke-dasharray="5 4"><title>{name} {value:.2f}</title></line>'
            f'<text x="{WIDTH - RIGHT + 4}" y="{y + 4:.1f}" font-size="11" fill="#222">'
            f"{name} {value:.2f}</text>"
        )
    for i, when in enumerate(times):
        if len(times) <= 8 or i in (0, len(times) - 1):
            parts.append(
                f'<text x="{_x(i, len(times)):.1f}" y="{HEIGHT - 10}" text-anchor="middle" '
                f'font-size="10" fill="#222">{escape(when[:10])}</text>'
            )
    for n, (rater, kappas) in enumerate(series.items()):
        colour = COLOURS[n % len(COLOURS)]
        points = [
            (_x(i, len(times)), _y(v, low, high)) for i, v in enumerate(kappas) if v is not None
        ]
        if len(points) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
            parts.append(
                f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>'
            )
        for (x, y), v in zip(points, [v for v in kappas if v is not None], strict=True):
            parts.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour}">'
                f"<title>{escape(rater)}: {v:.3f}</title></circle>"
            )
        column, row = n % LEGEND_COLUMNS, n // LEGEND_COLUMNS
        x, y = LEFT + column * (WIDTH - LEFT) / LEGEND_COLUMNS, HEIGHT + 4 + row * LEGEND_ROW
        parts.append(
            f'<rect x="{x:.1f}" y="{y - 9}" width="14" height="4" fill="{colour}"/>'
            f'<text x="{x + 18:.1f}" y="{y}" font-size="11" fill="#222">'
            f"{escape(rater[:28])}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def distribution_bars(counts: dict[str, int], label: str) -> Markup:
    """A horizontal bar per score (its count beside it)."""
    total = max(sum(counts.values()), 1)
    row, width = 20, 300
    height = row * max(len(counts), 1) + 4
    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(label)}" class="bars"><title>{escape(label)}</title>'
    ]
    for i, (score, n) in enumerate(counts.items()):
        y = 2 + i * row
        bar = 180 * n / total
        parts.append(
            f'<text x="40" y="{y + 14}" text-anchor="end" font-size="12" fill="#222">'
            f"{escape(score)}</text>"
            f'<rect x="46" y="{y + 2}" width="{bar:.1f}" height="{row - 6}" fill="#0072B2"/>'
            f'<text x="{50 + bar:.1f}" y="{y + 14}" font-size="12" fill="#222">{n}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
