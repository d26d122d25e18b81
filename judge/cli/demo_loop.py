"""``judge demo --loop``: the expert loop end to end, offline, with everyone simulated.

1. items: synthetic seeker/supporter exchanges (:mod:`judge.bench.workload`) for EPITOME;
2. a blind labelling round (``judge labels export``);
3. two SIMULATED experts fill the round's template (:mod:`judge.simulator.experts`);
4. the filled files are imported and the panel calibrated on them
   (``judge calibrate --from-labels``);
5. new items are scored and their flags printed with the calibration behind them;
6. the plan for the next round, with those scores as its pool.

Everything goes to ``--dir`` (default ``./expert-loop``), with a database of its own there, so
a SIMULATED calibration never reaches the database real work uses.
"""

from __future__ import annotations

import asyncio
import csv
import shutil
from pathlib import Path
from typing import Any

import click

from judge.bench.workload import synthetic_items, to_jsonl
from judge.cli._output import console, fail
from judge.cli._render import print_result
from judge.cli._runtime import service_runtime
from judge.cli.calibrate import print_report, run_here
from judge.cli.calibrate_plan import print_plan
from judge.cli.demo import score_in_process
from judge.domain.calibration_report import CalibrationReport
from judge.domain.principal import OPERATOR
from judge.domain.result import ScoreResult
from judge.domain.rubric import Rubric
from judge.errors import JudgeError
from judge.labels.tasks import (
    LABELS_DIR,
    ROUND_FILE,
    TASK_COLUMNS,
    LabellingTask,
    round_labels,
    tasks_from_file,
    write_round,
)
from judge.rubrics import RubricRegistry
from judge.services import schema
from judge.settings import Settings, load_settings
from judge.simulator.experts import SIMULATED_EXPERT_PREFIX, simulated_expert_labels

RUBRIC = "epitome"
#: more than the evidence gate's default min_items (50), so the calibration can vouch
LOOP_ITEMS = 80
SCORED_ITEMS = 4
NEXT_BUDGET = 2
EXPERTS = 2
BANNER = (
    "[bold magenta]SIMULATED expert loop: the experts and the judges below are simulated "
    "(no person, no real model); it shows the steps, not evidence about any real panel."
    "[/bold magenta]"
)


def _fresh(directory: Path) -> None:
    """Clear what an earlier loop wrote there (only that); refuse a directory of other use."""
    if directory.exists() and any(directory.iterdir()):
        if not (directory / "round" / ROUND_FILE).exists():
            raise JudgeError(f"{directory} exists and is not an expert loop; give --dir")
        shutil.rmtree(directory / "round")
        for name in ("items.jsonl", "new-items.jsonl", "loop.db"):
            (directory / name).unlink(missing_ok=True)
    directory.mkdir(parents=True, exist_ok=True)


def _fill(path: Path, rubric: Rubric, tasks: list[LabellingTask], expert: str) -> None:
    dims = [d.id for d in rubric.dimensions]
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow([*TASK_COLUMNS, *dims])
        for task in tasks:
            labels = simulated_expert_labels(rubric, task.conversation, expert)
            writer.writerow([task.task_id, expert, *(labels.get(d, "") for d in dims)])


async def _calibrate_score_plan(
    settings: Settings, items: list[dict[str, Any]], new_items: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[tuple[str, ScoreResult]], dict[str, Any]]:
    """Calibrate, score the new items with that calibration, and plan the next round with
    the new scores as the pool (the loop's next turn)."""
    await schema.upgrade(settings.database_url)
    view = await run_here(RUBRIC, None, items, "demo expert loop (SIMULATED)", settings)
    async with service_runtime(settings) as runtime:
        submissions = [(f"new item {raw['id']}", RUBRIC, raw) for raw in new_items]
        scored = await score_in_process(runtime, settings, submissions, None)
        pool = [result.model_dump(mode="json") for _, result in scored]
        plan = await runtime.insights.plan(
            OPERATOR, rubric_id=RUBRIC, panel_name=None, pool=pool, budget=NEXT_BUDGET
        )
    return view, scored, plan


def run_loop(directory: Path, panel_name: str | None) -> None:
    out = console()
    if panel_name is not None:
        fail("--loop runs on the default (simulated) panel; leave out --panel")
        return
    try:
        _fresh(directory)
        settings = load_settings()
        rubric = RubricRegistry.from_directory(settings.rubrics_dir).get(RUBRIC)
        settings = settings.model_copy(
            update={"database_url": f"sqlite+aiosqlite:///{directory.resolve() / 'loop.db'}"}
        )
        out.print(BANNER)
        items_file = directory / "items.jsonl"
        items_file.write_bytes(to_jsonl(synthetic_items(LOOP_ITEMS, tag="loop")))
        click.echo(f"1. items: {LOOP_ITEMS} unlabelled {RUBRIC} exchanges -> {items_file}")
        round_dir = directory / "round"
        tasks = tasks_from_file(items_file, rubric)
        write_round(round_dir, rubric, tasks)
        click.echo(f"2. tasks: a blind round in {round_dir}/ (no judge output in it)")
        experts = [f"{SIMULATED_EXPERT_PREFIX}{i}" for i in range(1, EXPERTS + 1)]
        for expert in experts:
            _fill(round_dir / LABELS_DIR / f"{expert}.csv", rubric, tasks, expert)
        click.echo(f"3. labels: {', '.join(experts)} filled {round_dir / LABELS_DIR}/")
        imported = round_labels(round_dir, rubric)
        if imported.problems:
            raise JudgeError(f"simulated labels rejected: {imported.problems[0]}")
        click.echo(f"4. calibration on {len(imported.items)} labelled items (simulator panel):")
        new_items = synthetic_items(SCORED_ITEMS, tag="new")
        (directory / "new-items.jsonl").write_bytes(to_jsonl(new_items))
        view, scored, plan = asyncio.run(_calibrate_score_plan(settings, imported.items, new_items))
    except JudgeError as exc:
        fail(exc.message)
        return
    report = CalibrationReport.model_validate(view["report"])
    print_report(report)
    click.echo(f"5. {SCORED_ITEMS} new items scored with that calibration:")
    for label, result in scored:
        print_result(out, result, label)
    click.echo("6. plan: the next round, with these scores as the pool:")
    print_plan(plan)
    trusted = sorted(
        {
            d
            for _, r in scored
            for d, dim in r.dimensions.items()
            if dim.reliability.level == "trusted"
        }
    )
    click.echo(
        f"Trusted (SIMULATED) dimensions: {', '.join(trusted) or 'none'};\n"
        f"evidence: calibration {report.run_id} (n and 95% CI above).\n"
        f"Files: {directory}/, database: {directory / 'loop.db'}.\n"
        "With real experts: `judge labels export`, fill the template or\n"
        "`judge labels push` / `pull`, then `judge calibrate --from-labels ROUND`\n"
        "(README: Getting expert labels)."
    )
