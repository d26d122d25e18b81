"""The calibration report page's section on item-level guarantees: per dimension the
conformal threshold and its coverage, the selective status, and the threshold curve of the
fixed-sequence test (strictest threshold first)."""

from __future__ import annotations

from html import escape

from judge.domain.calibration_report import CalibrationReport
from judge.domain.guarantees import DimensionGuarantee


def _num(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _curve(g: DimensionGuarantee) -> str:
    rows = "".join(
        f"<tr><td>{_num(p.threshold)}</td><td>{p.kept}</td><td>{p.errors}</td>"
        f"<td>{_num(p.agreement)}</td><td>{_num(p.coverage)}</td><td>{_num(p.p_value, 4)}</td>"
        f"<td>{'passed' if p.passed else 'failed' if p.tested else 'not tested'}</td></tr>"
        for p in g.selective.curve
    )
    return (
        "<table><tr><th>confidence &ge;</th><th>kept</th><th>disagree</th><th>agreement</th>"
        f"<th>coverage</th><th>p-value</th><th>test</th></tr>{rows}</table>"
    )


def guarantees_html(report: CalibrationReport) -> str:
    """The section (empty when the run stored no guarantees)."""
    found = {k: d.guarantee for k, d in report.dimensions.items() if d.guarantee is not None}
    if not found:
        return ""
    policy = next(iter(found.values())).policy
    rows = []
    details = []
    for dim_id, g in found.items():
        c, s = g.conformal, g.selective
        status = s.status.replace("_", " ")
        if s.status == "too_few_calibration_units":
            status += f" (at least {s.min_units})"
        rows.append(
            f"<tr><td>{escape(dim_id)}</td><td>{g.n} ({g.units} units)</td>"
            f"<td>{'whole scale' if c.quantile is None else _num(c.quantile)}</td>"
            f"<td>{_num(c.coverage)}</td><td>{_num(c.mean_width)}</td>"
            f"<td>{escape(status)}</td><td>{_num(s.threshold)}</td><td>{_num(s.coverage)}</td>"
            f"<td>{_num(s.agreement)}</td></tr>"
        )
        details.append(
            f"<details><summary>{escape(dim_id)}: threshold curve</summary>{_curve(g)}</details>"
        )
    return (
        "<h2>Item-level guarantees</h2>"
        f"<p>Conformal intervals at level {policy.level:g} (marginal coverage for items "
        f"exchangeable with these); selective trust: agreement with the experts' consensus "
        f"(within {policy.agree_within} levels) of at least {policy.agreement:g} on the items "
        f"kept, with probability at least {policy.confidence:g}, the confidence threshold "
        "chosen by fixed-sequence testing. Coverage and agreement are on the calibration "
        "items.</p><table><tr><th>dimension</th><th>n</th><th>conformal q</th>"
        "<th>covered</th><th>mean width</th><th>status</th><th>confidence &ge;</th>"
        f"<th>kept</th><th>agreement</th></tr>{''.join(rows)}</table>{''.join(details)}"
    )
