"""Item-level guarantees in the CLI's tables (80 columns): the interval or prediction set
under a result's score, the reasons below the table, a calibration report's guarantee table
and a batch's escalations."""

from __future__ import annotations

from collections.abc import Iterable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from judge.domain.calibration_report import CalibrationReport
from judge.domain.escalations import EscalationsView
from judge.domain.result import DimensionResult, ScoreResult
from judge.domain.wire import CompletedLine, JobStatusLine

#: the short form of each reason in a score cell (the full one is printed below the table)
_SHORT = {
    "below_confidence_threshold": "low confidence",
    "no_guarantee_available": "none available",
    "not_calibrated": "not calibrated",
    "policy_changed": "policy changed",
    "evidence_gate": "evidence gate",
    "no_score": "no score",
}


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def _two(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def score_cell_lines(dim: DimensionResult) -> list[str]:
    """What goes under the score: ``[low-high] 90%`` (or the label set) and the guarantee."""
    lines = []
    if dim.interval is not None:
        iv = dim.interval
        lines.append(f"[{_num(iv.low)}-{_num(iv.high)}] {iv.level:.0%}")
    if dim.prediction_set is not None:
        ps = dim.prediction_set
        labels = ",".join(str(label) for label in ps.labels) or "{}"
        lines.append(f"{{{escape(labels)}}} {ps.level:.0%}")
    g = dim.guarantee
    if g is not None:
        if g.guaranteed:
            lines.append("[green]guaranteed[/green]")
        else:
            lines.append(f"[yellow]{_SHORT.get(g.reason or '', g.reason or '?')}[/yellow]")
    return lines


def print_guarantee_notes(console: Console, result: ScoreResult) -> None:
    """One line on the policy and, when a person must look, which dimensions and why."""
    given = {k: d.guarantee for k, d in result.dimensions.items() if d.guarantee is not None}
    if not given:
        return
    first = next(iter(given.values()))
    sim = " [magenta](simulated calibration)[/magenta]" if first.simulated else ""
    console.print(
        f"guarantee: agreement >= {first.agreement:g} with the experts' consensus (within "
        f"{first.agree_within} levels) with probability >= {first.probability:g}; "
        f"calibration {escape(first.calibration_id or 'none')}{sim}"
    )
    missing = {k: g for k, g in given.items() if not g.guaranteed}
    if result.escalate == "human" and missing:
        parts = []
        for dim_id, g in missing.items():
            why = (g.reason or "?").replace("_", " ")
            if g.reason == "below_confidence_threshold":
                why += f" {_num(g.confidence)} < {_num(g.threshold)}"
            elif g.reason == "no_guarantee_available":
                why += f" ({g.status.replace('_', ' ')})"
            parts.append(f"{escape(dim_id)}: {why}")
        console.print("[yellow]escalate: human[/yellow] - " + "; ".join(parts))


def guarantee_table(report: CalibrationReport) -> Table | None:
    """Per dimension: the conformal threshold and its coverage on the calibration items, and
    the selective threshold with the share of items it guarantees and their agreement."""
    rows = {k: d.guarantee for k, d in report.dimensions.items() if d.guarantee is not None}
    if not rows:
        return None
    table = Table()
    table.add_column("dimension", no_wrap=True)
    for name in ("n", "q", "covered", "status", "conf >=", "kept", "agree"):
        table.add_column(name)
    for dim_id, g in rows.items():
        c, s = g.conformal, g.selective
        status = {
            "guaranteed": "[green]guaranteed[/green]",
            "too_few_calibration_units": f"[yellow]few <{s.min_units}[/yellow]",
            "no_threshold_passes": "[yellow]no pass[/yellow]",
        }[s.status]
        table.add_row(
            escape(dim_id),
            str(g.n) if g.units == g.n else f"{g.n} ({g.units}u)",
            "all" if c.quantile is None else f"{c.quantile:g}",
            _two(c.coverage),
            status,
            _two(s.threshold),
            _two(s.coverage),
            _two(s.agreement),
        )
    return table


def print_guarantees(console: Console, report: CalibrationReport) -> None:
    table = guarantee_table(report)
    if table is None:
        return
    policy = next(g.policy for d in report.dimensions.values() if (g := d.guarantee))
    console.print(
        f"[bold]Guarantees[/bold]: interval level {policy.level:g}; agreement >= "
        f"{policy.agreement:g} with the experts' consensus (within {policy.agree_within} "
        f"levels) with probability >= {policy.confidence:g}"
    )
    console.print(table)
    console.print(
        "q: conformal threshold on the nonconformity score (all: too few items, the whole "
        "scale); covered: share of calibration items inside their interval. status: "
        "guaranteed, no pass (no threshold keeps the agreement), few <m (fewer than m "
        "items). conf >=: the confidence threshold chosen by fixed-sequence testing; kept: "
        "share of calibration items it guarantees; agree: their agreement with the experts."
    )


def escalations_table(view: EscalationsView) -> Table:
    table = Table("line", "item", "dimension", "score", "why")
    for entry in view.items:
        first = True
        for dim_id, why in entry.dimensions.items():
            reason = (why.reason or "?").replace("_", " ")
            if why.reason == "below_confidence_threshold":
                reason += f" {_num(why.confidence)} < {_num(why.threshold)}"
            table.add_row(
                str(entry.line or "-") if first else "",
                escape(entry.id or entry.job_id) if first else "",
                escape(dim_id),
                escape(str(why.score)),
                reason,
            )
            first = False
    return table


def results_table(lines: Iterable[CompletedLine | JobStatusLine]) -> Table:
    """A batch's results, one row per item and dimension: the score, its interval or
    prediction set, and the guarantee (``escalate`` marks the items a person must see)."""
    table = Table("line", "item", "dimension", "score", "interval", "guarantee")
    for line in lines:
        if not isinstance(line, CompletedLine):
            shown = escape(line.item_id or line.id)
            table.add_row(str(line.line), shown, "", escape(line.status), "", "")
            continue
        first = True
        for dim_id, dim in line.dimensions.items():
            cell = score_cell_lines(dim)
            guarantee = cell.pop() if dim.guarantee is not None else "-"
            table.add_row(
                str(line.line) if first else "",
                escape(line.item_id or line.id) if first else "",
                escape(dim_id),
                escape(str(dim.score)),
                " ".join(cell) or "-",
                guarantee,
            )
            first = False
        if line.escalate == "human":
            table.add_row("", "", "", "", "", "[yellow]escalate: human[/yellow]")
    return table
