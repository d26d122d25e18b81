"""``judge labels``: the expert loop's files. ``export`` writes a blind labelling round
(tasks, a fill-in template, a guide, a Label Studio config and tasks: see
:mod:`judge.labels.tasks`); ``push``/``pull`` move it through a Label Studio server;
``import`` checks filled files. ``judge calibrate --from-labels ROUND`` calibrates on it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from judge.cli._output import console, fail
from judge.domain.rubric import Rubric
from judge.errors import JudgeError, LabelFileError
from judge.labels.label_studio import (
    labelling_config,
    pseudonym,
    read_annotations,
    studio_tasks,
)
from judge.labels.label_studio_api import LabelStudio
from judge.labels.tasks import (
    LABELS_DIR,
    TASKS_FILE,
    ImportedLabels,
    LabellingTask,
    LabelSink,
    label_lines,
    read_tasks,
    round_labels,
    round_rubric_id,
    select_tasks,
    tasks_from_file,
    with_panel_answers,
    write_round,
)
from judge.rubrics import RubricRegistry
from judge.settings import load_settings

IN_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
ROUND = click.argument(
    "round_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), metavar="ROUND"
)
TOKEN = click.option(
    "--token",
    envvar="LABEL_STUDIO_TOKEN",
    required=True,
    help="Label Studio API token (env LABEL_STUDIO_TOKEN)",
)
PROJECT_FILE = Path("label-studio") / "project.json"


def _rubric(rubric_id: str) -> Rubric:
    return RubricRegistry.from_directory(load_settings().rubrics_dir).get(rubric_id)


def _round_rubric(directory: Path) -> Rubric:
    return _rubric(round_rubric_id(directory))


@click.group("labels")
def labels() -> None:
    """Blind labelling rounds for experts: export, push/pull (Label Studio), import."""


@labels.command("export")
@click.option("--rubric", "rubric_id", required=True)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="directory of the round (created)",
)
@click.option(
    "--show-panel",
    "results",
    type=IN_FILE,
    default=None,
    help="an adjudication round: show the panel's scores from this results file "
    "(recorded in round.json; its calibrations are labelled as such)",
)
@click.option(
    "--only-in",
    "selection",
    type=IN_FILE,
    default=None,
    help="only the items with a line in these score results (a plan's --out proposal, a "
    "batch's results); they choose, nothing of them is shown",
)
@click.option(
    "--not-trusted",
    is_flag=True,
    help="with --only-in: only items with a dimension whose flag is not trusted",
)
@click.argument("items", nargs=-1, required=True, type=IN_FILE)
def export(
    rubric_id: str,
    out_dir: Path,
    results: Path | None,
    selection: Path | None,
    not_trusted: bool,
    items: tuple[Path, ...],
) -> None:
    """Write a blind labelling round for ITEMS (JSON Lines of items or labelled items): no
    judge output and no item metadata reach the task files (unless --show-panel)."""
    try:
        rubric = _rubric(rubric_id)
        tasks = [task for path in items for task in tasks_from_file(path, rubric)]
        ids = [t.task_id for t in tasks]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise LabelFileError(f"task id {dupes[0]!r} appears in more than one file")
        if selection is not None:
            tasks = select_tasks(tasks, selection, not_trusted=not_trusted)
        elif not_trusted:
            raise LabelFileError("--not-trusted needs --only-in RESULTS")
        if not tasks:
            raise LabelFileError("no item left to label")
        if results is not None:
            tasks = with_panel_answers(tasks, results)
        if (out_dir / TASKS_FILE).exists():
            raise LabelFileError(f"{out_dir}: already holds a round; choose another --out")
        out_dir.mkdir(parents=True, exist_ok=True)
        written = write_round(out_dir, rubric, tasks)
    except JudgeError as exc:
        fail(exc.message)
        return
    out = console()
    kind = "blind" if results is None else "adjudication (panel shown)"
    out.print(f"{len(tasks)} {kind} tasks for {rubric.id} v{rubric.version} in {out_dir}/:")
    for path in written:
        out.print(f"  {path.relative_to(out_dir)}")
    click.echo(
        f"Next: each expert fills a copy of template.csv as {LABELS_DIR}/<name>.csv\n"
        "(guide.md lists the values), or labels in Label Studio:\n"
        f"  judge labels push {out_dir} --to URL   then   judge labels pull {out_dir}\n"
        f"  judge labels import {out_dir}\n"
        f"  judge calibrate --from-labels {out_dir}"
    )


def _print_import(rubric: Rubric, imported: ImportedLabels) -> None:
    """Bad cells on stderr; counts, annotators and their agreement per dimension and pair."""
    from judge.calibration import annotator_agreement

    for problem in imported.problems:
        click.echo(f"error: {problem}", err=True)
    annotators = sorted({a for item in imported.items for a in item["labels"]})
    click.echo(
        f"{len(imported.items)} labelled tasks, {len(imported.problems)} bad cells; "
        f"{len(annotators)} annotators: {', '.join(annotators) or 'none'}"
    )
    pairs = annotator_agreement(rubric, imported.items)
    if pairs:
        click.echo("Agreement between annotators (kappa, 95% bootstrap CI over units):")
    for pair in pairs:
        low, high = pair.ci95
        click.echo(
            f"  {pair.dimension} {pair.a} ~ {pair.b}: {_num(pair.kappa)} "
            f"[{_num(low)}, {_num(high)}], n={pair.n}, units={pair.units}"
        )


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


@labels.command("import")
@ROUND
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--out",
    "out_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="write the labelled items (the JSON Lines `judge calibrate` reads)",
)
@click.option("--skip-bad", is_flag=True, help="use the good cells even when some are bad")
def import_labels(
    round_dir: Path, files: tuple[Path, ...], out_file: Path | None, skip_bad: bool
) -> None:
    """Check the filled files of ROUND (default: every file in ROUND/labels/) against the
    rubric; every bad cell is reported as file:line:column."""
    try:
        rubric = _round_rubric(round_dir)
        imported = round_labels(round_dir, rubric, files)
    except JudgeError as exc:
        fail(exc.message)
        return
    _print_import(rubric, imported)
    if imported.problems and not skip_bad:
        fail(f"{len(imported.problems)} bad cells (fix them, or --skip-bad to leave them out)")
    if out_file:
        out_file.write_text(
            "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in imported.items),
            encoding="utf-8",
        )


@labels.command("push")
@ROUND
@click.option("--to", "url", required=True, help="Label Studio URL, e.g. http://127.0.0.1:8080")
@TOKEN
@click.option(
    "--title", default=None, help='project title (default: "<rubric> round <directory name>")'
)
def push(round_dir: Path, url: str, token: str, title: str | None) -> None:
    """Create (or update) a Label Studio project for ROUND and import its tasks."""
    try:
        rubric = _round_rubric(round_dir)
        tasks = read_tasks(round_dir / TASKS_FILE)
        name = title or f"{rubric.id} round {round_dir.resolve().name}"
        with LabelStudio(url, token) as studio:
            pushed = studio.push(
                name,
                labelling_config(rubric),
                studio_tasks(rubric, tasks),
                description=f"blind labelling round for {rubric.id} v{rubric.version}",
            )
    except JudgeError as exc:
        fail(exc.message)
        return
    (round_dir / PROJECT_FILE).write_text(
        json.dumps({"url": url, "project": pushed.id, "title": name}) + "\n", encoding="utf-8"
    )
    verb = "created" if pushed.created else "updated"
    console().print(
        f"Label Studio project {pushed.id} {verb}: {pushed.imported} tasks imported, "
        f"{pushed.already_there} already there.\n{url.rstrip('/')}/projects/{pushed.id}"
    )


@labels.command("pull")
@ROUND
@click.option("--from", "url", default=None, help="Label Studio URL (default: the one pushed to)")
@TOKEN
@click.option("--project", "project_id", type=int, default=None, help="default: the pushed one")
@click.option(
    "--pseudonymise",
    is_flag=True,
    help="name annotators expert-<hash of the email> instead of by email",
)
@click.option(
    "--follow",
    "follow_s",
    type=click.FloatRange(min=1),
    default=None,
    help="keep pulling every SECONDS (a long labelling round) until interrupted",
)
def pull(
    round_dir: Path,
    url: str | None,
    token: str,
    project_id: int | None,
    pseudonymise: bool,
    follow_s: float | None,
) -> None:
    """Read ROUND's annotations from Label Studio into ROUND/labels/label-studio.jsonl (one
    annotator per Label Studio user, by email)."""
    target = round_dir / LABELS_DIR / "label-studio.jsonl"
    try:
        rubric = _round_rubric(round_dir)
        pushed = _pushed(round_dir)
        url = url or str(pushed.get("url") or "") or None
        project_id = project_id or int(str(pushed.get("project") or 0)) or None
        if not url or not project_id:
            raise LabelFileError(f"{round_dir}: not pushed yet; give --from URL and --project ID")
        tasks = read_tasks(round_dir / TASKS_FILE)
        with LabelStudio(url, token) as studio:
            last = None
            while True:
                imported = _pull_once(studio, project_id, rubric, tasks, pseudonymise)
                lines = label_lines(imported)
                if lines != last:
                    target.parent.mkdir(exist_ok=True)
                    target.write_text(lines, encoding="utf-8")
                    _print_import(rubric, imported)
                    click.echo(f"Wrote {target}")
                    last = lines
                if follow_s is None:
                    return
                time.sleep(follow_s)
    except JudgeError as exc:
        fail(exc.message)
    except KeyboardInterrupt:
        click.echo("stopped following", err=True)


def _pull_once(
    studio: LabelStudio,
    project_id: int,
    rubric: Rubric,
    tasks: list[LabellingTask],
    pseudonymise: bool,
) -> ImportedLabels:
    exported, users = studio.export(project_id), studio.users()
    if pseudonymise:
        users = {uid: pseudonym(email) for uid, email in users.items()}
    sink = LabelSink(rubric, {t.task_id: t for t in tasks})
    read_annotations(exported, rubric, sink, f"label-studio project {project_id}", users)
    return sink.result(tasks)


def _pushed(round_dir: Path) -> dict[str, object]:
    path = round_dir / PROJECT_FILE
    if not path.exists():
        return {}
    value = json.loads(path.read_text(encoding="utf-8"))
    return value if isinstance(value, dict) else {}
