"""``judge calibrate plan``: how many more labelled items each dimension needs, and which items
to give the experts (from the database here, or a server with ``--url``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import click

from judge.cli._output import FORMAT_OPTION, console, fail, print_json, wrapping_table
from judge.cli._run_reads import (
    KEY_OPTION,
    URL_OPTION,
    fmt_interval,
    read_here,
    read_remote,
    simulated_banner,
)
from judge.domain.principal import OPERATOR
from judge.errors import JudgeError


def _need(plan: dict[str, Any]) -> str:
    more = plan.get("additional_items")
    if plan["status"] == "unreachable_at_assurance":
        return f"unreachable at {plan['assurance']:.0%}"
    if plan["status"] == "coverage_below_minimum":
        return "coverage first"
    if more is None:
        return "-"
    if plan["status"] == "cleared":
        return "0 (cleared)"
    total = plan.get("items_total")
    at = plan.get("planning_kappa")
    return (
        f"+{more}"
        + (f" (total {total})" if total is not None else "")
        + (f" if kappa >= {at:.2f}" if at is not None else "")
    )


def print_plan(data: dict[str, Any]) -> None:
    out = console()
    out.print(
        f"[bold]Calibration plan[/bold]{simulated_banner(data)}: {data['rubric']['id']} "
        f"v{data['rubric']['version']}, panel {data['panel']}, CI lower bound to reach "
        f"{data['target_ci_lower']} with probability {data['assurance']} if the true kappa is "
        f"at least the calibration's one-sided {data['assurance']:.0%} lower bound (evidence "
        f"gate: floor {data['floor']}, {data['min_items']} items, coverage "
        f"{data['min_coverage']})"
    )
    table = wrapping_table(
        "dimension", "n (units)", "agreement [95% CI]", "status", "items", "gate needs"
    )
    for dim_id, plan in data["dimensions"].items():
        gate = plan.get("evidence_gate")
        table.add_row(
            dim_id,
            f"{plan['n']} ({plan['units']})" if "n" in plan else "-",
            fmt_interval({"agreement": plan.get("estimate"), "ci95": plan.get("ci95")}),
            plan["status"],
            _need(plan) if "n" in plan else f"+{plan['additional_items']}",
            _need(gate) if gate else "-",
        )
    out.print(table)
    out.print(data["assumption"])
    proposal = data.get("proposal")
    if not proposal:
        return
    out.print(
        f"[bold]Proposal[/bold]: {len(proposal['items'])} of {proposal['pool_size']} pool items, "
        f"stratified on {', '.join(proposal['stratified_on'])} (seed {proposal['seed']})"
    )
    mix = wrapping_table("dimension", "predicted level", "pool", "proposal")
    for dim_id, both in proposal["mix"].items():
        for level in sorted(set(both["pool"]) | set(both["proposal"])):
            pool = both["pool"].get(level, {"count": 0, "share": 0.0})
            chosen = both["proposal"].get(level, {"count": 0, "share": 0.0})
            mix.add_row(
                dim_id,
                level,
                f"{pool['count']} ({pool['share']:.0%})",
                f"{chosen['count']} ({chosen['share']:.0%})",
            )
    out.print(mix)
    out.print("ids: " + ", ".join(str(item["id"]) for item in proposal["items"]))


def _read_pool(path: Path) -> list[Any]:
    from judge.labels.label_files import read_jsonl

    return read_jsonl(path)


@click.command("plan")
@click.option("--rubric", "rubric_id", required=True)
@click.option("--panel", default=None, help="configured panel (default: the default panel)")
@click.option(
    "--target-ci-lower",
    type=click.FloatRange(-1, 1),
    default=None,
    help="the line the CI's lower bound must reach (default: the rubric's line)",
)
@click.option(
    "--assurance",
    type=click.FloatRange(0.5, 0.99),
    default=0.8,
    show_default=True,
    help="the probability that the planned calibration reaches the target, if the true kappa "
    "is at least the calibration's lower bound at this confidence",
)
@click.option("--dimension", "dimensions", multiple=True, help="plan these only (repeatable)")
@click.option(
    "--pool",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="JSON Lines of score results of unlabelled items (judge score --format json, "
    "judge batch results)",
)
@click.option("--budget", type=click.IntRange(min=1), default=None, help="items to propose")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="write the proposed pool lines here (JSON Lines)",
)
@URL_OPTION
@KEY_OPTION
@FORMAT_OPTION
def plan(
    rubric_id: str,
    panel: str | None,
    target_ci_lower: float | None,
    assurance: float,
    dimensions: tuple[str, ...],
    pool: Path | None,
    budget: int | None,
    seed: int,
    out: Path | None,
    url: str | None,
    key: str | None,
    fmt: str,
) -> None:
    """The labelled items each dimension needs for its CI lower bound to reach the line with
    probability --assurance (simulated); with --pool and --budget, propose items for the
    experts, stratified over the panel's predicted levels."""
    if (pool is None) != (budget is None):
        fail("--pool and --budget go together")
        return
    try:
        lines = _read_pool(pool) if pool else None
        if url:
            body = {
                "rubric": rubric_id,
                "panel": panel,
                "target_ci_lower": target_ci_lower,
                "assurance": assurance,
                "dimensions": list(dimensions),
                "pool": lines,
                "budget": budget,
                "seed": seed,
            }
            data = read_remote(url, key, lambda c: c.plan_calibration(body))
        else:
            data = asyncio.run(
                read_here(
                    lambda rt: rt.insights.plan(
                        OPERATOR,
                        rubric_id=rubric_id,
                        panel_name=panel,
                        target=target_ci_lower,
                        assurance=assurance,
                        dimensions=list(dimensions),
                        pool=lines,
                        budget=budget,
                        seed=seed,
                    )
                )
            )
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", None) or str(exc))
        return
    if out is not None and lines is not None and data.get("proposal"):
        chosen = [lines[item["pool_index"]] for item in data["proposal"]["items"]]
        out.write_text(
            "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in chosen),
            encoding="utf-8",
        )
    if fmt == "json":
        print_json(data)
    else:
        print_plan(data)
        if out is not None:
            click.echo(f"proposed items written to {out}")
