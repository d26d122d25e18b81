"""``judge calibrate``: measure a panel against expert labels and print the reliability report.
``judge calibrate plan`` (:mod:`judge.cli.calibrate_plan`) plans further labelling and
``judge calibrate compare-aggregation`` (:mod:`judge.cli.compare_aggregation`) compares equal
with reliability-weighted aggregation.

Without ``--url`` it runs here, on the configured database (so later scores on that
database use the result); with ``--url`` it submits to a running server. ``--rescue FILE``
builds the labelled items from a RESCUE-BENCH JSON Lines file instead of label files (see
:mod:`judge.labels.rescue` for the checkpoint convention).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from judge.calibration import render_report_html
from judge.cli._guarantee_render import print_guarantees
from judge.cli._output import console, fail, print_json, wrapping_table
from judge.cli._remote import remote
from judge.domain.calibration_report import CalibrationReport, DimensionReport
from judge.domain.principal import OPERATOR
from judge.domain.rater_report import RaterStats
from judge.domain.rubric import Rubric
from judge.domain.wire import wire_json
from judge.errors import JudgeError, LabelFileError
from judge.labels.label_files import read_label_files
from judge.labels.rescue import load_rescue_items
from judge.labels.tasks import round_is_blind, round_labels, round_rubric_id
from judge.rubrics import RubricRegistry
from judge.settings import Settings, load_settings


async def run_here(
    rubric_id: str,
    panel: str | None,
    items: list[Any],
    label: str | None,
    settings: Settings | None = None,
) -> dict[str, Any]:
    """Calibrate on the configured database (or ``settings``' one), in this process."""
    from judge.cli._runtime import service_runtime
    from judge.services.panels import check_credentials, default_panel_name, panel_spec

    settings = settings or load_settings()
    check_credentials(settings, [panel or default_panel_name(settings)])
    async with service_runtime(settings, panels=[panel_spec(settings, panel)[1]]) as runtime:
        run, job_ids = await runtime.calibrations.submit(
            rubric_id=rubric_id, panel_name=panel, items=items, label=label
        )
        await runtime.jobs.run_all(job_ids)
        # the last job's follower has stored the report; if it failed (logged), store it now
        await runtime.calibrations.finalize(run.id)
        return wire_json(await runtime.calibrations.view(OPERATOR, run.id))


#: ``judge calibrate --url`` waits this long for the run (a large set on a slow panel)
REMOTE_WAIT_S = 24 * 3600.0


def _run_remote(
    url: str,
    key: str | None,
    rubric_id: str,
    panel: str | None,
    items: list[Any],
    label: str | None,
) -> dict[str, Any]:
    with remote(url, key) as client:
        view = client.calibrate(rubric_id, items, panel=panel, label=label, wait=REMOTE_WAIT_S)
    if view.status != "completed" or view.report is None:
        raise JudgeError(f"calibration {view.id} {view.status} without a report")
    return view.model_dump(mode="json")


def _round_items(round_dir: Path, rubric: Rubric) -> list[dict[str, Any]]:
    """The labelled items of a round; a bad cell stops the run (``judge labels import`` lists
    them all and can leave them out)."""
    if round_rubric_id(round_dir) != rubric.id:
        raise LabelFileError(f"{round_dir} is a round for {round_rubric_id(round_dir)!r}")
    imported = round_labels(round_dir, rubric)
    if imported.problems:
        raise LabelFileError(
            f"{len(imported.problems)} bad cells, the first: {imported.problems[0]} "
            f"(`judge labels import {round_dir}` lists them)"
        )
    if not imported.items:
        raise LabelFileError(f"{round_dir}: no labels yet")
    return imported.items


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


_RATES = ("accuracy", "f1", "recall_at_1", "mrr")


def _panel_cell(dim: DimensionReport, panel: RaterStats) -> str:
    """The panel's deciding statistic, then its rates (answered / abstention = miss)."""
    text = _fmt(panel.agreement)
    if dim.metric == "chance_corrected_recall_at_1":
        text += f" (chance {_fmt(panel.chance_recall_at_1)})"
    rates = [
        f"{rate.name} {_fmt(rate.value)}/{_fmt(rate.abstain_as_miss)}"
        for rate in panel.rates()
        if rate.name in _RATES and (rate.name != "accuracy" or dim.scale != "ordinal")
    ]
    if panel.ac1 is not None:
        rates.insert(0, f"AC1 {_fmt(panel.ac1)}")
    balanced = dim.balanced.raters.get("panel") if dim.balanced else None
    if balanced:
        rates.append(f"balanced f1 {_fmt(balanced.f1)} (always-yes {_fmt(balanced.always_yes.f1)})")
    return text + (f" [{', '.join(rates)}]" if rates else "")


def print_report(report: CalibrationReport) -> None:
    out = console()
    rubric = report.rubric
    simulated = " [bold red]SIMULATED JUDGES[/bold red]" if report.simulated else ""
    out.print(
        f"[bold]Calibration {report.run_id}[/bold]{simulated}: {rubric.id} "
        f"v{rubric.version}, {report.n_items} items ({_fmt(report.units)} independent units), "
        f"experts {', '.join(report.experts)}, "
        f"line κ={report.threshold}, floor κ={report.floor}, "
        f"min_items {report.min_items}, min_coverage {report.min_coverage}"
    )
    table = wrapping_table(
        "dimension",
        "experts κ",
        *[j.split("/")[-1] for j in report.judges],
        "panel",
        "95% CI (panel)",
        "n/units (coverage)",
        "flag",
    )
    for dim_id, dim in report.dimensions.items():
        panel = dim.rater("panel")
        if panel is None or dim.flag is None:
            table.add_row(dim_id, "-", *["-"] * len(report.judges), "-", "-", "-", "not calibrated")
            continue
        flag = dim.flag
        table.add_row(
            dim_id,
            _fmt(flag.expert_kappa),
            *[_fmt(_agreement(dim, j)) for j in report.judges],
            _panel_cell(dim, panel),
            f"[{_fmt(panel.ci95[0])}, {_fmt(panel.ci95[1])}]",
            f"{panel.n}/{_fmt(flag.units)} ({_fmt(panel.coverage)})",
            f"{flag.level}: {', '.join(flag.reasons) or '-'}",
        )
    out.print(table)
    out.print(
        "Ordinal κ: quadratic weights over every level of the scale. Rates: answered / "
        "abstention counted as a miss. Experts κ: the mean over pairs of distinct experts "
        "(calibration, or the rubric's prior when too few experts or items)."
    )
    _print_trust_tests(report)
    for dim_id, dim in report.dimensions.items():
        given = dim.given
        if given:
            panel = next(r for r in given.raters if r.rater == "panel")
            out.print(
                f"{dim_id} given {', '.join(given.told)} (the benchmark's setting, "
                f"n={panel.n}): "
                + ", ".join(
                    f"{rate.name} {_fmt(rate.value)}"
                    for rate in panel.rates()
                    if rate.name in ("recall_at_1", "mrr")
                )
                + "; end to end (the judges' own choice) is the row above."
            )
    print_guarantees(out, report)
    _print_stability(report)


def _print_trust_tests(report: CalibrationReport) -> None:
    """Per dimension, the bound that decides ``trusted`` and its Monte Carlo error."""
    lines = []
    for dim_id, dim in report.dimensions.items():
        like = dim.like_for_like
        if like is None or like.lower is None:
            continue
        mc = like.lower_mc
        error = (
            f" ±{(mc[1] - mc[0]) / 2:.3f}" if mc and None not in mc else ""  # type: ignore[operator]
        )
        lines.append(
            f"  {dim_id}: {like.coefficient} "
            f"lower {like.lower:.3f}{error} vs line {like.line} ({like.units} units)"
        )
    if lines:
        console().print(
            f"Trust test (one-sided 95% lower bound of the panel vs single experts, "
            f"{report.resamples:,} resamples; ± its Monte Carlo error):\n" + "\n".join(lines)
        )


def _agreement(dim: DimensionReport, judge: str) -> float | None:
    rater = dim.rater(judge)
    return rater.agreement if rater else None


def _print_stability(report: CalibrationReport) -> None:
    """Calls per item and, for judges sampled k > 1 times, their intra-judge stability."""
    out = console()
    cost = report.cost
    if cost:
        out.print(
            f"Calls per item: {cost.calls_per_item} (samples x judges; measured "
            f"{_fmt(cost.measured_calls_per_item)})"
        )
    for dim_id, judges in (report.stability or {}).items():
        for model, entry in judges.items():
            low, high = entry.alpha_ci95 or (None, None)
            out.print(
                f"Stability {dim_id} {model}: {entry.samples} samples, n={entry.n_items}, "
                f"identical {_fmt(entry.share_identical)}, alpha {_fmt(entry.alpha)} "
                f"[{_fmt(low)}, {_fmt(high)}]"
            )


@click.command("run")
@click.option("--rubric", "rubric_id", default=None, help="required unless --from-labels")
@click.option("--panel", default=None, help="configured panel (default: the default panel)")
@click.option("--label", default=None, help="a name for this run")
@click.option("--id", "id_cols", default="", help="id column(s) of CSV files, comma-separated")
@click.option(
    "--text",
    "text_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="CSV carrying the conversation text",
)
@click.option(
    "--url", envvar="JUDGE_URL", default=None, help="submit to this server instead of running here"
)
@click.option("--key", envvar="JUDGE_API_KEY", default=None)
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="also write the HTML report here",
)
@click.option(
    "--rescue",
    "rescue_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="build the items from a RESCUE-BENCH JSON Lines file (rescue-couple/rescue-family)",
)
@click.option(
    "--from-labels",
    "round_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    default=None,
    help="a labelling round (`judge labels export`) with its filled files or pulled labels",
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.argument(
    "labels", nargs=-1, required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
def run_calibration(
    rubric_id: str | None,
    panel: str | None,
    label: str | None,
    id_cols: str,
    text_file: Path | None,
    url: str | None,
    key: str | None,
    report_path: Path | None,
    rescue_file: Path | None,
    round_dir: Path | None,
    fmt: str,
    labels: tuple[Path, ...],
) -> None:
    """Score expert-labelled items (LABELS: JSON Lines or CSV files, --rescue FILE, or
    --from-labels ROUND) and report agreement."""
    if bool(labels) + bool(rescue_file) + bool(round_dir) != 1:
        fail("give one of LABELS files, --rescue FILE or --from-labels ROUND")
        return
    try:
        settings = load_settings()
        if round_dir is not None:
            rubric_id = rubric_id or round_rubric_id(round_dir)
        if rubric_id is None:
            fail("--rubric is required (except with --from-labels)")
            return
        rubric = RubricRegistry.from_directory(settings.rubrics_dir).get(rubric_id)
        if round_dir is not None:
            items = _round_items(round_dir, rubric)
            if not round_is_blind(round_dir):
                label = f"{label or round_dir.name} (adjudicated: panel shown to the experts)"
                click.echo(
                    "warning: the experts saw the panel's answers in this round; its agreement "
                    "with them is inflated (an adjudication, not a blind calibration)",
                    err=True,
                )
        elif rescue_file is not None:
            items = load_rescue_items(rescue_file, rubric)
        else:
            ids = [c.strip() for c in id_cols.split(",") if c.strip()]
            items = read_label_files(list(labels), rubric, id_cols=ids, text_file=text_file)
        if url:
            view = _run_remote(url, key, rubric.id, panel, items, label)
        else:
            view = asyncio.run(run_here(rubric.id, panel, items, label))
    except (JudgeError, OSError) as exc:
        fail(getattr(exc, "message", None) or str(exc))
        return
    report = CalibrationReport.model_validate(view["report"])
    if report_path:
        report_path.write_text(render_report_html(report), encoding="utf-8")
    if fmt == "json":
        print_json(view)
    else:
        print_report(report)
        if report_path:
            click.echo(f"HTML report: {report_path}")


class _RunByDefault(click.Group):
    """``judge calibrate [run] --rubric ...`` runs a calibration, as it always has; other
    subcommands are named. Written here rather than taken from click-default-group: it is
    these few lines, and a dependency (plus its type stubs) would change the shared lock."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h")):
            args.insert(0, "run")
        return super().parse_args(ctx, args)


@click.group("calibrate", cls=_RunByDefault)
def calibrate() -> None:
    """Calibrate a panel against expert labels (``judge calibrate [run] --rubric ID FILES``),
    plan further labelling, compare equal with reliability-weighted aggregation, share a run
    with every API key."""


def _register() -> None:
    from judge.cli.calibrate_plan import plan
    from judge.cli.calibrate_share import share
    from judge.cli.compare_aggregation import compare_aggregation

    calibrate.add_command(run_calibration)
    calibrate.add_command(plan)
    calibrate.add_command(compare_aggregation)
    calibrate.add_command(share)


_register()
