"""``judge calibrate plan`` and ``judge calibrate compare-aggregation``: what to do after a
calibration. Both read the configured database (no judge is called, no simulator started),
or ask a running server with ``--url``."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click
from rich.table import Table

from judge.cli._output import FORMAT_OPTION, console, fail, print_json
from judge.cli._remote import remote
from judge.client import JudgeClient
from judge.errors import JudgeError
from judge.services.runtime import ServiceRuntime
from judge.settings import load_settings

URL_OPTION = click.option(
    "--url", envvar="JUDGE_URL", default=None, help="ask this server instead of the database here"
)
KEY_OPTION = click.option("--key", envvar="JUDGE_API_KEY", default=None)


async def _here(call: Callable[[ServiceRuntime], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    from judge.cli._runtime import service_runtime

    async with service_runtime(load_settings(), runs_jobs=False) as runtime:
        return await call(runtime)


def _remote(
    url: str, key: str | None, ask: Callable[[JudgeClient], dict[str, Any]]
) -> dict[str, Any]:
    with remote(url, key) as client:
        return ask(client)


def _num(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


def _interval(block: dict[str, Any] | None, key: str = "agreement") -> str:
    if not block:
        return "-"
    low, high = block.get("ci95") or [None, None]
    return f"{_num(block.get(key))} [{_num(low)}, {_num(high)}]"


def _simulated_banner(data: dict[str, Any]) -> str:
    return " [bold red]SIMULATED JUDGES[/bold red]" if data.get("simulated") else ""


# -- compare-aggregation ---------------------------------------------------------------------
def print_comparison(data: dict[str, Any]) -> None:
    out = console()
    first: dict[str, Any] = next(iter(data["dimensions"].values()), {})
    out.print(
        f"[bold]Equal vs reliability-weighted aggregation[/bold]{_simulated_banner(data)}: "
        f"calibration {data['run_id']}, {data['rubric']['id']} v{data['rubric']['version']}, "
        f"panel {data['panel']['name']}; {first.get('folds')}-fold cross-validation x "
        f"{first.get('repeats')} repeats, weights {first.get('weight_method')}"
    )
    table = Table(
        "dimension",
        "n (units)",
        "equal",
        "weighted (held out)",
        "weighted - equal [paired CI]",
        "weights (all items)",
        "auto uses",
    )
    for dim_id, dim in data["dimensions"].items():
        weights = dim.get("weights") or {}
        shown = ", ".join(f"{m.split('/')[-1]} {w:.2f}" for m, w in weights.items()) or "-"
        auto = dim.get("auto") or {}
        if not dim.get("evaluated"):
            row = ["-", "-", f"not evaluated: {dim.get('why')}"]
        else:
            row = [
                _interval(dim["equal"]),
                _interval(dim["weighted"]),
                _interval(dim["difference"], "estimate")
                + (" gain" if dim["weighting_helps"] else ""),
            ]
        auto_text = f"{auto.get('method')} ({auto.get('reason')})" if auto else "-"
        table.add_row(dim_id, f"{dim['n']} ({dim['units']})", *row, shown, auto_text)
    out.print(table)
    out.print(
        "Agreement is measured only on items the weights were not fit on. A gain counts only "
        "when the paired CI of the difference lies above zero; `aggregation: auto` switches a "
        "dimension to weighted only then, and only once its calibration passes the evidence gate."
    )


@click.command("compare-aggregation")
@click.argument("run_id")
@click.option("--folds", type=click.IntRange(2, 10), default=2, show_default=True)
@click.option("--repeats", type=click.IntRange(1, 200), default=10, show_default=True)
@click.option("--seed", type=int, default=17, show_default=True)
@click.option("--resamples", type=click.IntRange(100, 20_000), default=1000, show_default=True)
@URL_OPTION
@KEY_OPTION
@FORMAT_OPTION
def compare_aggregation(
    run_id: str,
    folds: int,
    repeats: int,
    seed: int,
    resamples: int,
    url: str | None,
    key: str | None,
    fmt: str,
) -> None:
    """Cross-validate equal against reliability-weighted aggregation on the items of the
    completed calibration RUN_ID: weights fit on some folds, agreement measured on the other."""
    options = {"folds": folds, "repeats": repeats, "seed": seed, "resamples": resamples}
    try:
        if url:
            data = _remote(url, key, lambda c: c.compare_aggregation(run_id, **options))
        else:
            data = asyncio.run(_here(lambda rt: rt.insights.compare_aggregation(run_id, **options)))
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", None) or str(exc))
        return
    if fmt == "json":
        print_json(data)
    else:
        print_comparison(data)


# -- plan ------------------------------------------------------------------------------------
def _need(plan: dict[str, Any]) -> str:
    more = plan.get("additional_items")
    if plan["status"] == "unreachable_at_estimate":
        return "not at this estimate"
    if plan["status"] == "cleared":
        return "0 (cleared)"
    total = plan.get("items_total")
    return f"+{more}" + (f" (total {total})" if total is not None else "")


def print_plan(data: dict[str, Any]) -> None:
    out = console()
    out.print(
        f"[bold]Calibration plan[/bold]{_simulated_banner(data)}: {data['rubric']['id']} "
        f"v{data['rubric']['version']}, panel {data['panel']}, CI lower bound to reach "
        f"{data['target_ci_lower']} (evidence gate: floor {data['floor']}, "
        f"{data['min_items']} items)"
    )
    table = Table("dimension", "n (units)", "agreement [95% CI]", "status", "items", "gate needs")
    for dim_id, plan in data["dimensions"].items():
        gate = plan.get("evidence_gate")
        table.add_row(
            dim_id,
            f"{plan['n']} ({plan['units']})" if "n" in plan else "-",
            _interval({"agreement": plan.get("estimate"), "ci95": plan.get("ci95")}),
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
    mix = Table("dimension", "predicted level", "pool", "proposal")
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
    from judge.services.label_files import read_jsonl

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
    dimensions: tuple[str, ...],
    pool: Path | None,
    budget: int | None,
    seed: int,
    out: Path | None,
    url: str | None,
    key: str | None,
    fmt: str,
) -> None:
    """Project the labelled items each dimension needs for its CI lower bound to reach the
    line; with --pool and --budget, propose items for the experts, stratified over the
    panel's predicted levels."""
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
                "dimensions": list(dimensions),
                "pool": lines,
                "budget": budget,
                "seed": seed,
            }
            data = _remote(url, key, lambda c: c.plan_calibration(body))
        else:
            data = asyncio.run(
                _here(
                    lambda rt: rt.insights.plan(
                        rubric_id=rubric_id,
                        panel_name=panel,
                        target=target_ci_lower,
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
