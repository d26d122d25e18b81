"""Label Studio's side of a round: the labelling config generated from a rubric, the tasks
as Label Studio imports them, and its exported annotations read back as expert labels.

Per scale: ordinal -> single choice per level, the anchor as the hint; binary -> yes/no with
their meanings; nominal -> single choice with each label's definition; ranked -> one single
choice per rank (``<dim>__1`` best, up to k), the options per task when the scale includes the
conversation's participants; free text -> a text area. Pure functions: the HTTP calls are in
:mod:`judge.labels.label_studio_api`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from judge.domain.rubric import Dimension, RankedScale, Rubric

if TYPE_CHECKING:
    from judge.labels.tasks import LabellingTask, LabelSink

TEXT_NAME = "conversation"
PANEL_NAME = "panel_answer"
_RANK = re.compile(r"^(?P<dim>.+)__(?P<rank>\d+)$")


def _choices(parent: ET.Element, name: str, options: Sequence[tuple[str, str]]) -> ET.Element:
    block = ET.SubElement(
        parent, "Choices", name=name, toName=TEXT_NAME, choice="single", showInline="false"
    )
    for value, hint in options:
        ET.SubElement(block, "Choice", value=value, hint=" ".join(hint.split()))
    return block


def _ranked(view: ET.Element, dim: Dimension, scale: RankedScale) -> None:
    options = [(label.id, label.definition) for label in scale.labels]
    if scale.group_label:
        options.append((scale.group_label, "all of them together"))
    for rank in range(1, scale.k + 1):
        ET.SubElement(view, "Header", value=f"choice {rank} (optional)", size="6")
        name = f"{dim.id}__{rank}"
        if scale.include_participants:
            block = ET.SubElement(
                view,
                "Choices",
                name=name,
                toName=TEXT_NAME,
                choice="single",
                value=f"${dim.id}_options",
            )
            block.set("allowNested", "false")
        else:
            _choices(view, name, options)


def labelling_config(rubric: Rubric, *, blind: bool = True) -> str:
    """The XML labelling config for ``rubric``: the conversation, then one block per dimension
    (and, unless ``blind``, the panel's answer to adjudicate)."""
    view = ET.Element("View")
    ET.SubElement(view, "Header", value=f"{rubric.name} ({rubric.id} v{rubric.version})")
    ET.SubElement(view, "Text", name=TEXT_NAME, value=f"${TEXT_NAME}")
    if not blind:
        ET.SubElement(view, "Header", value="The panel's answer (adjudication round)", size="5")
        ET.SubElement(view, "Text", name=PANEL_NAME, value=f"${PANEL_NAME}")
    for dim in rubric.dimensions:
        ET.SubElement(view, "Header", value=dim.name, size="4")
        ET.SubElement(view, "Header", value=" ".join(dim.definition.split()), size="6")
        scale = dim.scale
        if scale.type == "ordinal":
            _choices(view, dim.id, [(str(lv), anchor) for lv, anchor in scale.anchors.items()])
        elif scale.type == "binary":
            _choices(view, dim.id, [("yes", scale.yes), ("no", scale.no)])
        elif scale.type == "nominal":
            _choices(view, dim.id, [(label.id, label.definition) for label in scale.labels])
        elif isinstance(scale, RankedScale):
            _ranked(view, dim, scale)
        else:
            ET.SubElement(
                view,
                "TextArea",
                name=dim.id,
                toName=TEXT_NAME,
                maxSubmissions="1",
                placeholder=" ".join(scale.guidance.split()),
                rows="3",
            )
    ET.indent(view)
    return ET.tostring(view, encoding="unicode") + "\n"


def studio_tasks(rubric: Rubric, tasks: Sequence[LabellingTask]) -> list[dict[str, Any]]:
    """Tasks as Label Studio imports them; ``task_id`` links an annotation to its task."""
    out = []
    for task in tasks:
        data: dict[str, Any] = {"task_id": task.task_id, TEXT_NAME: task.conversation}
        if task.panel is not None:
            data[PANEL_NAME] = "; ".join(f"{d}: {v}" for d, v in task.panel.items())
        for dim in rubric.dimensions:
            scale = dim.scale
            if isinstance(scale, RankedScale) and scale.include_participants:
                ids = scale.label_ids(task.participants)
                data[f"{dim.id}_options"] = [{"value": v} for v in ids]
        out.append({"data": data})
    return out


def _result_value(dim: Dimension, entry: dict[str, Any]) -> Any:
    value = entry.get("value") or {}
    if dim.scale.type == "free_text":
        texts = value.get("text") or []
        return "\n".join(str(t) for t in texts) if texts else None
    choices = value.get("choices") or []
    if not choices:
        return None
    choice = str(choices[0])
    if dim.scale.type == "binary":
        return {"yes": True, "no": False}.get(choice, choice)
    if dim.scale.type == "ordinal":
        return int(choice) if choice.lstrip("-").isdigit() else choice
    return choice


def pseudonym(email: str) -> str:
    """A stable stand-in for an annotator's email (the same email, the same pseudonym)."""
    return "expert-" + hashlib.sha256(email.strip().lower().encode()).hexdigest()[:10]


def annotator_id(annotation: dict[str, Any], users: dict[int, str]) -> str:
    """A stable id per Label Studio user: its email, else ``label-studio-user-<id>``."""
    who = annotation.get("completed_by")
    if isinstance(who, dict):
        who = who.get("id")
    known = users.get(who) if isinstance(who, int) else None
    return known or f"label-studio-user-{who}"


def read_annotations(
    exported: Sequence[dict[str, Any]],
    rubric: Rubric,
    sink: LabelSink,
    source: str,
    users: dict[int, str],
) -> None:
    """Feed an export (tasks with their ``annotations``) into ``sink``: one annotator per
    Label Studio user; cancelled (skipped) annotations are ignored."""
    for task in exported:
        data = task.get("data") or {}
        task_id = str(data.get("task_id", ""))
        for annotation in task.get("annotations") or []:
            if annotation.get("was_cancelled"):
                continue
            who = annotator_id(annotation, users)
            where = f"{source}: task {task.get('id')} annotation {annotation.get('id')}"
            ranks: dict[str, dict[int, Any]] = {}
            for entry in annotation.get("result") or []:
                name = str(entry.get("from_name", ""))
                match = _RANK.match(name)
                dim_id = match["dim"] if match else name
                try:
                    dim = rubric.dimension(dim_id)
                except KeyError:
                    continue
                value = _result_value(dim, entry)
                if value is None:
                    continue
                if match:
                    ranks.setdefault(dim_id, {})[int(match["rank"])] = value
                else:
                    sink.add(where, task_id, who, dim_id, value)
            for dim_id, by_rank in ranks.items():
                sink.add(where, task_id, who, dim_id, [by_rank[r] for r in sorted(by_rank)])
