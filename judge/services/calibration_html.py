"""A self-contained HTML page for a calibration report: a heatmap of agreement per dimension
and rater (experts' own baseline, each judge, the panel) with the high-agreement line marked,
and the numbers in a table. Plain HTML and inline SVG: no scripts, no external assets."""

from __future__ import annotations

from html import escape
from typing import Any

_CELL_W, _CELL_H, _LABEL_W, _HEAD_H = 112, 28, 230, 60


def _colour(kappa: float | None, line: float, floor: float) -> str:
    """Red below the floor, amber up to the line, green above; darker as agreement rises."""
    if kappa is None:
        return "#e5e7eb"
    k = max(-0.2, min(1.0, kappa))
    if k < floor:
        shade = int(120 + 100 * (k + 0.2) / (floor + 0.2))
        return f"rgb(239,{shade // 2 + 40},{shade // 2 + 30})"
    if k < line:
        return "rgb(251,191,36)"
    strength = (k - line) / max(1e-9, 1 - line)
    return (
        f"rgb({int(134 - 100 * strength)},{int(239 - 80 * strength)},{int(172 - 100 * strength)})"
    )


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _columns(report: dict[str, Any]) -> list[str]:
    return ["experts (median pair)", *report["judges"], "panel"]


def _cells(dim: dict[str, Any]) -> list[float | None]:
    baseline = dim.get("expert_expert") or {}
    by_rater = {r["rater"]: r["kappa"] for r in dim.get("raters", [])}
    return [
        baseline.get("median"),
        *(by_rater.get(j) for j in dim.get("_judges", [])),
        by_rater.get("panel"),
    ]


def heatmap_svg(report: dict[str, Any]) -> str:
    line, floor = report["threshold"], report["floor"]
    columns = _columns(report)
    dims = [
        (k, v | {"_judges": report["judges"]})
        for k, v in report["dimensions"].items()
        if v.get("raters")
    ]
    width = _LABEL_W + _CELL_W * len(columns) + 20
    height = _HEAD_H + _CELL_H * len(dims) + 70
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12" role="img" aria-label="agreement heatmap">'
    ]
    for c, name in enumerate(columns):
        x = _LABEL_W + c * _CELL_W + _CELL_W / 2
        parts.append(
            f'<text x="{x}" y="{_HEAD_H - 10}" text-anchor="middle">'
            f"{escape(name.split('/')[-1])}</text>"
        )
    for r, (dim_id, dim) in enumerate(dims):
        y = _HEAD_H + r * _CELL_H
        parts.append(
            f'<text x="{_LABEL_W - 8}" y="{y + 18}" text-anchor="end">{escape(dim_id)}</text>'
        )
        for c, kappa in enumerate(_cells(dim)):
            x = _LABEL_W + c * _CELL_W
            colour = _colour(kappa, line, floor)
            parts.append(
                f'<rect x="{x}" y="{y}" width="{_CELL_W - 2}" height="{_CELL_H - 2}" '
                f'fill="{colour}">'
                f"<title>{escape(dim_id)} / {escape(columns[c])}: {_fmt(kappa, 4)}</title></rect>"
            )
            parts.append(
                f'<text x="{x + _CELL_W / 2}" y="{y + 18}" text-anchor="middle">'
                f"{_fmt(kappa)}</text>"
            )
    # legend: the colour scale with the floor and the high-agreement line marked
    ly = _HEAD_H + len(dims) * _CELL_H + 20
    scale_w = 400
    for i in range(100):
        k = -0.2 + 1.2 * i / 99
        parts.append(
            f'<rect x="{_LABEL_W + i * scale_w / 100}" y="{ly}" '
            f'width="{scale_w / 100 + 0.5}" height="12" '
            f'fill="{_colour(k, line, floor)}"/>'
        )
    for value, name in ((floor, "floor"), (line, "line")):
        x = _LABEL_W + (value + 0.2) / 1.2 * scale_w
        parts.append(
            f'<line x1="{x}" y1="{ly - 4}" x2="{x}" y2="{ly + 16}" stroke="#111" stroke-width="2"/>'
        )
        parts.append(f'<text x="{x}" y="{ly + 30}" text-anchor="middle">{name} {value:.2f}</text>')
    parts.append(f'<text x="{_LABEL_W - 8}" y="{ly + 10}" text-anchor="end">κ −0.2 … 1.0</text>')
    parts.append("</svg>")
    return "".join(parts)


def _table(report: dict[str, Any]) -> str:
    rows = []
    for dim_id, dim in report["dimensions"].items():
        flag = dim.get("flag") or {}
        baseline = dim.get("expert_expert") or {}
        for r in dim.get("raters", []):
            extra = ", ".join(
                f"{k} {_fmt(r[k], 3)}"
                for k in ("accuracy", "precision", "recall", "f1", "recall_at_1", "mrr")
                if k in r
            )
            ci = r.get("ci95") or [None, None]
            is_panel = r["rater"] == "panel"
            reasons = ", ".join(flag.get("reasons", [])) if is_panel else ""
            rows.append(
                "<tr>"
                f"<td>{escape(dim_id)}</td><td>{escape(str(dim.get('metric')))}</td>"
                f"<td>{_fmt(baseline.get('median'), 3)}</td><td>{escape(r['rater'])}</td>"
                f"<td>{_fmt(r['kappa'], 3)}</td><td>[{_fmt(ci[0], 3)}, {_fmt(ci[1], 3)}]</td>"
                f"<td>{r['n']}</td><td>{r['abstained']}</td><td>{_fmt(r.get('alpha'), 3)}</td>"
                f"<td>{escape(extra)}</td>"
                f"<td>{escape(flag.get('level', '')) if r['rater'] == 'panel' else ''}</td>"
                f"<td>{escape(reasons)}</td>"
                "</tr>"
            )
    head = (
        "<tr><th>dimension</th><th>metric</th><th>experts κ</th><th>rater</th><th>κ vs experts</th>"
        "<th>95% CI</th><th>n</th><th>abstained</th><th>α</th><th>other</th><th>flag</th>"
        "<th>reasons</th></tr>"
    )
    return f"<table>{head}{''.join(rows)}</table>"


def render_report_html(report: dict[str, Any]) -> str:
    rubric = report["rubric"]
    title = f"Calibration {report['run_id']}: {rubric['id']} v{rubric['version']}"
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{escape(title)}</title><style>"
        "body{font-family:sans-serif;margin:24px;color:#111}"
        "table{border-collapse:collapse;font-size:13px}"
        "td,th{border:1px solid #ccc;padding:3px 6px;text-align:left}"
        "</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f"<p>Panel {escape(str(report.get('panel', {}).get('name', '')))}: "
        f"{escape(', '.join(report['judges']))}. {report['n_items']} items, experts "
        f"{escape(', '.join(report['experts']))}. Agreement with the experts' consensus "
        f"(median for ordinal scales); the line κ = {report['threshold']:.2f} is the median "
        "expert-expert weighted kappa of Kumar et al.; below the floor "
        f"κ = {report['floor']:.2f} a dimension is not reliably measurable.</p>"
        f"{heatmap_svg(report)}<h2>Numbers</h2>{_table(report)}</body></html>"
    )
