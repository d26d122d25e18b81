"""Blind labelling tasks for experts, and the labels they send back.

A task is one conversation as the judges see it (:func:`judge.domain.render.render_conversation`,
the judged turn marked ``*``) with the item it came from, minus anything that could anchor the
expert: the item's ``metadata`` (which may carry scores) is dropped, and nothing of any judge's
output is ever read. A *round* is a directory holding:

- ``round.json``: the rubric (id, version, content hash) the round was made for;
- ``tasks.jsonl``: one ``{"task_id", "conversation", "item"}`` per line;
- ``template.csv``: ``task_id,annotator,<dimension ids...>``, one row per task, for an expert
  to copy and fill (one file per expert, or several experts in one file by ``annotator``);
- ``guide.md``: every dimension's definition and the values its scale allows;
- ``label-studio/config.xml`` and ``label-studio/tasks.json``
  (:mod:`judge.labels.label_studio`).

:func:`read_filled` turns filled files back into labelled items (the shape
``judge calibrate`` reads), checking every cell against the rubric's scale; a bad cell is
reported as ``file:line:column`` and never hides the others.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from judge.domain.item import Item, parse_item
from judge.domain.item_fit import check_item_fits
from judge.domain.render import render_conversation
from judge.domain.rubric import Dimension, NominalScale, RankedScale, Rubric, check_label
from judge.errors import ItemInvalid, LabelFileError
from judge.labels.annotator_files import is_missing, read_annotator_file
from judge.labels.label_files import parse_cell, read_jsonl

ROUND_FILE = "round.json"
TASKS_FILE = "tasks.jsonl"
TEMPLATE_FILE = "template.csv"
GUIDE_FILE = "guide.md"
LABELS_DIR = "labels"
TASK_COLUMNS = ("task_id", "annotator")


@dataclass(frozen=True)
class LabellingTask:
    task_id: str
    conversation: str
    item: dict[str, Any]
    #: the panel's scores (dimension -> score), only in a round made for adjudication
    panel: dict[str, Any] | None = None

    @cached_property
    def participants(self) -> tuple[str, ...]:
        """The seeker-side participants: the labels a ranked scale may add for this item."""
        return tuple(p.id for p in parse_item(self.item).clients)

    def as_json(self) -> dict[str, Any]:
        body = {"task_id": self.task_id, "conversation": self.conversation, "item": self.item}
        return body | ({"panel": self.panel} if self.panel is not None else {})


def blind_item(item: Item) -> dict[str, Any]:
    """The item as an expert may see it: no metadata (it may carry judge output)."""
    return item.model_dump(
        mode="json", exclude={"metadata"}, exclude_none=True, exclude_defaults=True
    )


def task_from_item(task_id: str, item: Item, rubric: Rubric) -> LabellingTask:
    check_item_fits(item, rubric)
    body = blind_item(item) | {"id": task_id}
    return LabellingTask(task_id, render_conversation(item, rubric.unit), body)


def tasks_from_file(path: Path, rubric: Rubric) -> list[LabellingTask]:
    """Tasks from a JSON Lines file of items, or of labelled items (``{"item": ...}``: labels
    and anything else beside the item are ignored). Errors name the file, line and field."""
    tasks: list[LabellingTask] = []
    seen: set[str] = set()
    for number, value in enumerate(read_jsonl(path), start=1):
        raw = value.get("item") if isinstance(value, dict) and "item" in value else value
        where = f"{path}:{number}"
        try:
            item = parse_item(raw)
            task_id = (value.get("id") if isinstance(value, dict) else None) or item.id
            task_id = str(task_id or f"{path.stem}-{number}")
            if task_id in seen:
                raise ItemInvalid("id", f"{task_id!r} appears more than once")
            seen.add(task_id)
            tasks.append(task_from_item(task_id, item, rubric))
        except ItemInvalid as exc:
            raise LabelFileError(f"{where}: {exc.message}") from None
    if not tasks:
        raise LabelFileError(f"{path}: no items")
    return tasks


def read_tasks(path: Path) -> list[LabellingTask]:
    """The tasks of a round (its ``tasks.jsonl``)."""
    tasks = []
    for number, value in enumerate(read_jsonl(path), start=1):
        try:
            tasks.append(
                LabellingTask(
                    str(value["task_id"]), value["conversation"], value["item"], value.get("panel")
                )
            )
        except (KeyError, TypeError):
            raise LabelFileError(f"{path}:{number}: not a labelling task") from None
    return tasks


def _allowed(dim: Dimension) -> str:
    scale = dim.scale
    if scale.type == "ordinal":
        return f"an integer {scale.min}..{scale.max}"
    if scale.type == "binary":
        return "true or false"
    if scale.type == "nominal":
        return "one of " + ", ".join(scale.label_ids)
    if scale.type == "ranked":
        labels = list(scale.label_ids())
        if scale.include_participants:
            labels.insert(0, "<a seeker-side participant>")
        return f"up to {scale.k} of {', '.join(labels)}, best first, separated by |"
    return f"text, at most {scale.max_chars} characters"


def render_guide(rubric: Rubric) -> str:
    """Markdown for the expert: the framework, each dimension, its anchors and what to enter."""
    lines = [f"# Labelling guide: {rubric.name} ({rubric.id} v{rubric.version})", ""]
    lines += [rubric.framework.strip(), "", f"Source: {rubric.source.strip()}", ""]
    lines += [
        "Rate each conversation in `tasks.jsonl` without looking at any model's ratings.",
        "The judged turn is marked `*`. Leave a cell empty when you cannot rate it.",
        "",
    ]
    for dim in rubric.dimensions:
        lines += [f"## {dim.name} (`{dim.id}`)", "", dim.definition.strip(), ""]
        scale = dim.scale
        if scale.type == "ordinal":
            lines += [f"- {level}: {anchor.strip()}" for level, anchor in scale.anchors.items()]
        elif scale.type == "binary":
            lines += [f"- true: {scale.yes.strip()}", f"- false: {scale.no.strip()}"]
        elif isinstance(scale, NominalScale | RankedScale):
            lines += [f"- {label.id}: {label.definition.strip()}" for label in scale.labels]
        else:
            lines.append(f"- {scale.guidance.strip()}")
        lines += ["", f"Enter: {_allowed(dim)}.", ""]
    return "\n".join(lines)


def render_template(rubric: Rubric, tasks: Sequence[LabellingTask]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([*TASK_COLUMNS, *(d.id for d in rubric.dimensions)])
    for task in tasks:
        writer.writerow([task.task_id, "", *([""] * len(rubric.dimensions))])
    return out.getvalue()


def _results(path: Path) -> dict[str, dict[str, Any]]:
    """Score results (JSON Lines: ``judge score``, a batch's results, a plan's ``--out``) by
    item id (``item_id``, else ``id``): each one's ``dimensions``."""
    found: dict[str, dict[str, Any]] = {}
    for number, value in enumerate(read_jsonl(path), start=1):
        dims = value.get("dimensions") if isinstance(value, dict) else None
        key = (value.get("item_id") or value.get("id")) if isinstance(value, dict) else None
        if not isinstance(dims, dict) or key is None:
            raise LabelFileError(f"{path}:{number}: not a score result (no dimensions)")
        found[str(key)] = dims
    return found


def with_panel_answers(tasks: Sequence[LabellingTask], results: Path) -> list[LabellingTask]:
    """Tasks for adjudication: each with the panel's scores from a results file; a task
    without a result is an error."""
    scores = _results(results)
    missing = [t.task_id for t in tasks if t.task_id not in scores]
    if missing:
        raise LabelFileError(f"{results}: no result for task {missing[0]!r}")
    return [
        replace(t, panel={d: (r or {}).get("score") for d, r in scores[t.task_id].items()})
        for t in tasks
    ]


def _trusted_everywhere(dims: dict[str, Any]) -> bool:
    levels = [((r or {}).get("reliability") or {}).get("level") for r in dims.values()]
    return bool(levels) and all(level == "trusted" for level in levels)


def select_tasks(
    tasks: Sequence[LabellingTask], results: Path, *, not_trusted: bool = False
) -> list[LabellingTask]:
    """The tasks whose item has a line in ``results`` (a plan's proposal, a batch's results),
    with ``not_trusted`` only those with a dimension whose flag is not ``trusted``. The
    results only choose: nothing of them reaches the tasks."""
    chosen = _results(results)
    by_id = {t.task_id: t for t in tasks}
    unknown = [key for key in chosen if key not in by_id]
    if unknown:
        raise LabelFileError(f"{results}: item {unknown[0]!r} is not among the items given")
    if not_trusted:
        chosen = {k: dims for k, dims in chosen.items() if not _trusted_everywhere(dims)}
    return [by_id[key] for key in chosen]


def round_is_blind(directory: Path) -> bool:
    """False for a round whose tasks show the panel's answer (``--show-panel``)."""
    try:
        return bool(json.loads((directory / ROUND_FILE).read_text()).get("blind", True))
    except (OSError, ValueError, AttributeError):
        return True


def write_round(directory: Path, rubric: Rubric, tasks: Sequence[LabellingTask]) -> list[Path]:
    """Write the plain-file part of a round; returns the files written."""
    from judge.labels.label_studio import labelling_config, studio_tasks

    studio = directory / "label-studio"
    studio.mkdir(parents=True, exist_ok=True)
    (directory / LABELS_DIR).mkdir(exist_ok=True)
    rubric_ref = {"id": rubric.id, "version": rubric.version, "hash": rubric.content_hash}
    blind = all(t.panel is None for t in tasks)
    files = {
        directory / ROUND_FILE: json.dumps(
            {"rubric": rubric_ref, "tasks": len(tasks), "blind": blind}
        )
        + "\n",
        directory / TASKS_FILE: "".join(
            json.dumps(t.as_json(), ensure_ascii=False) + "\n" for t in tasks
        ),
        directory / TEMPLATE_FILE: render_template(rubric, tasks),
        directory / GUIDE_FILE: render_guide(rubric),
        studio / "config.xml": labelling_config(rubric, blind=blind),
        studio / "tasks.json": json.dumps(
            studio_tasks(rubric, tasks), ensure_ascii=False, indent=1
        ),
    }
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)


# -- labels back -------------------------------------------------------------------------


@dataclass
class ImportedLabels:
    """Labelled items in task order, and every cell that could not be used."""

    items: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _cell_value(dim: Dimension, raw: str) -> Any:
    return raw.strip() if dim.scale.type == "free_text" else parse_cell(raw)


@dataclass
class LabelSink:
    """Collects checked labels per task and annotator, and the problems found on the way."""

    rubric: Rubric
    tasks: dict[str, LabellingTask]
    labels: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def add(self, where: str, task_id: str, annotator: str, dim_id: str, value: Any) -> None:
        task = self.tasks.get(task_id)
        if task is None:
            self.problems.append(f"{where}: task_id {task_id!r} is not a task of this round")
            return
        if not annotator:
            self.problems.append(f"{where}: no annotator")
            return
        dim = self.rubric.dimension(dim_id)
        checked, error = check_label(dim, value, task.participants)
        if error:
            self.problems.append(f"{where}: {dim_id}: {value!r}: {error}")
            return
        self.labels.setdefault(task_id, {}).setdefault(annotator, {})[dim_id] = checked

    def result(self, order: Iterable[LabellingTask]) -> ImportedLabels:
        items = [
            {"id": t.task_id, "item": t.item, "labels": self.labels[t.task_id]}
            for t in order
            if self.labels.get(t.task_id)
        ]
        return ImportedLabels(items, self.problems)


def _read_csv(path: Path, sink: LabelSink) -> None:
    table = read_annotator_file(path)
    names = sink.rubric.dimension_names()
    if "task_id" not in table.columns:
        sink.problems.append(f"{path}:1: no task_id column")
        return
    unknown = [c for c in table.columns if c not in names and c not in TASK_COLUMNS]
    for column in unknown:
        col = table.columns.index(column) + 1
        sink.problems.append(f"{path}:1:{col}: {column!r} is not a dimension of {sink.rubric.id}")
    id_col = table.columns.index("task_id") + 1
    for line, cells in table.rows:
        annotator = cells.get("annotator") or table.name
        if cells["task_id"] not in sink.tasks:
            sink.problems.append(
                f"{path}:{line}:{id_col}: task_id {cells['task_id']!r} is not a task of this round"
            )
            continue
        for col, column in enumerate(table.columns, start=1):
            if column not in names or is_missing(cells[column]):
                continue
            dim = sink.rubric.dimension(names[column])
            where = f"{path}:{line}:{col}"
            sink.add(where, cells["task_id"], annotator, dim.id, _cell_value(dim, cells[column]))


def _read_jsonl_labels(path: Path, sink: LabelSink) -> None:
    """``{"task_id", "annotator", "labels": {dim: value}}`` per line."""
    names = sink.rubric.dimension_names()
    for number, value in enumerate(read_jsonl(path), start=1):
        where = f"{path}:{number}"
        labels = value.get("labels") if isinstance(value, dict) else None
        if not isinstance(labels, dict) or "task_id" not in value:
            sink.problems.append(f"{where}: needs task_id and a labels object")
            continue
        annotator = str(value.get("annotator") or path.stem)
        for key, label in labels.items():
            if key not in names:
                sink.problems.append(f"{where}: labels.{key}: not a dimension of {sink.rubric.id}")
            elif label is not None:
                sink.add(
                    f"{where}: labels.{key}", str(value["task_id"]), annotator, names[key], label
                )


def read_filled(
    paths: Sequence[Path], rubric: Rubric, tasks: Sequence[LabellingTask]
) -> ImportedLabels:
    """Labelled items from filled templates (CSV) or label lines (JSON Lines)."""
    sink = LabelSink(rubric, {t.task_id: t for t in tasks})
    for path in paths:
        if path.suffix in (".jsonl", ".ndjson"):
            _read_jsonl_labels(path, sink)
        else:
            _read_csv(path, sink)
    return sink.result(tasks)


def round_rubric_id(directory: Path) -> str:
    """The rubric a round was made for (its ``round.json``)."""
    path = directory / ROUND_FILE
    try:
        return str(json.loads(path.read_text(encoding="utf-8"))["rubric"]["id"])
    except (OSError, ValueError, KeyError, TypeError):
        raise LabelFileError(
            f"{path}: not a labelling round (made by `judge labels export`)"
        ) from None


def round_label_files(directory: Path) -> list[Path]:
    """The filled files of a round: everything under ``labels/``, sorted."""
    folder = directory / LABELS_DIR
    found = sorted(p for p in folder.glob("*") if p.suffix in (".csv", ".jsonl", ".ndjson"))
    if not found:
        raise LabelFileError(f"{folder}: no filled label files (.csv or .jsonl)")
    return found


def round_labels(directory: Path, rubric: Rubric, files: Sequence[Path] = ()) -> ImportedLabels:
    """The labelled items of a round: its tasks with the labels of ``files`` (default: every
    file under its ``labels/``)."""
    tasks = read_tasks(directory / TASKS_FILE)
    return read_filled(list(files) or round_label_files(directory), rubric, tasks)


def label_lines(imported: ImportedLabels) -> str:
    """Labels as ``{"task_id", "annotator", "labels"}`` lines, one per task and annotator."""
    return "".join(
        json.dumps({"task_id": item["id"], "annotator": who, "labels": labels}, ensure_ascii=False)
        + "\n"
        for item in imported.items
        for who, labels in item["labels"].items()
    )
