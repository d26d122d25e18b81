"""``judge calibrate compare-aggregation RUN_ID``: equal vs reliability-weighted aggregation on a
finished run's items, cross-validated (from the database here, or a server with ``--url``)."""

from __future__ import annotations

import asyncio
from typing import Any

import click

from judge.calibration import DEFAULT_REPEATS, REFIT_RESAMPLES
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


def print_comparison(data: dict[str, Any]) -> None:
    out = console()
    first: dict[str, Any] = next(iter(data["dimensions"].values()), {})
    out.print(
        f"[bold]Equal vs reliability-weighted aggregation[/bold]{simulated_banner(data)}: "
        f"calibration {data['run_id']}, {data['rubric']['id']} v{data['rubric']['version']}, "
        f"panel {data['panel']['name']}; {first.get('folds')}-fold cross-validation, "
        f"{first.get('resamples')} resamples refitting the weights, weights "
        f"{first.get('weight_method')}"
    )
    table = wrapping_table(
        "dimension",
        "n (units)",
        "equal",
        "weighted (held out)",
        "weighted - equal [CI]",
        "p (Holm)",
        "weights (all items)",
        "auto uses",
    )
    for dim_id, dim in data["dimensions"].items():
        weights = dim.get("weights") or {}
        shown = ", ".join(f"{m.split('/')[-1]} {w:.2f}" for m, w in weights.items()) or "-"
        auto = dim.get("auto") or {}
        if not dim.get("evaluated"):
            row = ["-", "-", f"not evaluated: {dim.get('why')}", "-"]
        else:
            holm = dim.get("holm")
            row = [
                fmt_interval(dim["equal"]),
                fmt_interval(dim["weighted"]),
                fmt_interval(dim["difference"], "estimate")
                + (" gain" if dim["weighting_helps"] else ""),
                "-"
                if dim.get("p_value") is None
                else f"{dim['p_value']:.4f}"
                + (
                    f" ({'<=' if holm['rejected'] else 'vs'} {holm['threshold']:.4f})"
                    if holm
                    else ""
                ),
            ]
        auto_text = f"{auto.get('method')} ({auto.get('reason')})" if auto else "-"
        table.add_row(dim_id, f"{dim['n']} ({dim['units']})", *row, shown, auto_text)
    out.print(table)
    out.print(
        "Agreement is measured only on items the weights were not fit on; the bootstrap refits "
        "the weights in every resample, and a tied vote is split evenly. A gain counts only "
        "when the one-sided p-value passes Holm's correction across the rubric's dimensions "
        "(2.5% family-wise); ranked scales score the weighted Borda first choice. "
        "`aggregation: auto` switches a "
        "dimension to weighted only then, and only once its calibration passes the evidence gate."
    )


@click.command("compare-aggregation")
@click.argument("run_id")
@click.option("--folds", type=click.IntRange(2, 10), default=2, show_default=True)
@click.option(
    "--repeats",
    type=click.IntRange(1, 200),
    default=DEFAULT_REPEATS,
    show_default=True,
    help="random splits per bootstrap resample (the estimate averages at least 10)",
)
@click.option("--seed", type=int, default=17, show_default=True)
@click.option(
    "--resamples", type=click.IntRange(100, 20_000), default=REFIT_RESAMPLES, show_default=True
)
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
            data = read_remote(url, key, lambda c: c.compare_aggregation(run_id, **options))
        else:
            data = asyncio.run(
                read_here(lambda rt: rt.insights.compare_aggregation(OPERATOR, run_id, **options))
            )
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", None) or str(exc))
        return
    if fmt == "json":
        print_json(data)
    else:
        print_comparison(data)
