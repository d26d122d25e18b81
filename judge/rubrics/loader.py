"""Load rubric YAML files into :class:`~judge.domain.rubric.Rubric`, with located errors.

Every problem is reported as ``file:line: field.path: message``. The line comes from the YAML
node of the offending field (or of its nearest existing parent).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from judge.domain.item import parse_item
from judge.domain.item_fit import check_item_fits
from judge.domain.rubric import Rubric
from judge.errors import ItemInvalid, RubricInvalid, RubricProblem

Loc = tuple[int | str, ...]


def _line_of(node: yaml.Node | None, loc: Loc) -> int | None:
    """The 1-based line of the node at ``loc``, or of its deepest existing ancestor."""
    if node is None:
        return None
    line = node.start_mark.line + 1
    for part in loc:
        child: yaml.Node | None = None
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if str(key_node.value) == str(part):
                    child = value_node
                    line = key_node.start_mark.line + 1
                    break
        elif (
            isinstance(node, yaml.SequenceNode)
            and isinstance(part, int)
            and 0 <= part < len(node.value)
        ):
            child = node.value[part]
            line = child.start_mark.line + 1
        if child is None:
            return line
        node = child
    return line


def _named_loc(data: Any, loc: Loc) -> str:
    """The field path, naming list items by their id: ``dimensions[empathy].scale``."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            item = node[part]
            ident = item.get("id") if isinstance(item, dict) else None
            out += f"[{ident}]" if isinstance(ident, str) else f"[{part}]"
            node = item
        else:
            out += f".{part}" if out else str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return out


def _pydantic_loc(loc: tuple[int | str, ...]) -> Loc:
    # Discriminated unions add the tag ("ordinal") to the location; drop such parts.
    tags = {"ordinal", "binary", "nominal", "ranked", "free_text"}
    out: list[int | str] = []
    for i, part in enumerate(loc):
        if part in tags and i > 0 and loc[i - 1] == "scale":
            continue
        if isinstance(part, str) and part.startswith("function-after"):
            continue
        out.append(part)
    return tuple(out)


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key (not part of the rubric schema)"
    if kind == "missing":
        return "required field is missing"
    if kind == "union_tag_invalid":
        ctx = error.get("ctx", {})
        return f"unknown scale type {ctx.get('tag')!r}; expected one of {ctx.get('expected_tags')}"
    if kind == "union_tag_not_found":
        return "scale needs a type (ordinal, binary, nominal, ranked or free_text)"
    msg = str(error["msg"])
    return msg.removeprefix("Value error, ")


#: libyaml's safe loader where PyYAML was built with it: the pure-Python one took about a
#: quarter second of CPU for the bundled rubrics, in every process and test module that loads
#: them (issue 22)
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_rubric(text: str, path: str) -> Rubric:
    """Parse and validate one rubric document; raise :class:`RubricInvalid` on any problem."""
    try:
        root = yaml.compose(text, Loader=_Loader)
        data = yaml.load(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise RubricInvalid(
            path, [RubricProblem(path, line, "", f"invalid YAML: {problem}")]
        ) from None
    if not isinstance(data, dict):
        raise RubricInvalid(path, [RubricProblem(path, 1, "", "a rubric must be a YAML mapping")])
    try:
        rubric = Rubric.model_validate(data)
    except ValidationError as exc:
        problems = []
        errors = exc.errors()
        locs = [tuple(e["loc"]) for e in errors]
        for error in errors:
            loc = _pydantic_loc(tuple(error["loc"]))
            if error["type"] == "too_short" and any(
                len(other) > len(error["loc"]) and other[: len(error["loc"])] == error["loc"]
                for other in locs
            ):
                continue  # a container reported empty only because its items failed
            if error["type"] == "union_tag_invalid":
                loc = (*loc, "type")
            problems.append(
                RubricProblem(path, _line_of(root, loc), _named_loc(data, loc), _message(error))
            )
        raise RubricInvalid(path, problems) from None
    problems = [
        RubricProblem(path, _line_of(root, loc), _named_loc(data, loc), msg)
        for loc, msg in _semantic_problems(rubric)
    ]
    if problems:
        raise RubricInvalid(path, problems)
    return rubric


def _duplicates(ids: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    dupes: list[str] = []
    for i in ids:
        if i in seen and i not in dupes:
            dupes.append(i)
        seen.add(i)
    return dupes


def _semantic_problems(rubric: Rubric) -> list[tuple[Loc, str]]:
    """Cross-field rules that a field-by-field schema cannot express."""
    problems: list[tuple[Loc, str]] = []
    dim_ids = [d.id for d in rubric.dimensions]
    for dupe in _duplicates(dim_ids):
        problems.append(
            (
                ("dimensions", dim_ids.index(dupe, dim_ids.index(dupe) + 1), "id"),
                f"duplicate dimension id {dupe!r}",
            )
        )
    example_ids = [e.id for e in rubric.expert_examples]
    for dupe in _duplicates(example_ids):
        idx = example_ids.index(dupe, example_ids.index(dupe) + 1)
        problems.append((("expert_examples", idx, "id"), f"duplicate example id {dupe!r}"))
    seen_ratings: dict[str, list[str]] = {d: [] for d in dim_ids}
    for n, example in enumerate(rubric.expert_examples):
        try:
            item = parse_item(example.input, field_prefix="input")
        except ItemInvalid as exc:
            problems.append((("expert_examples", n, *exc.field.split(".")), exc.detail))
            continue
        try:
            check_item_fits(item, rubric)
        except ItemInvalid as exc:
            problems.append((("expert_examples", n, "input", *exc.field.split(".")), exc.detail))
            continue
        participants = tuple(p.id for p in item.clients)
        for dim_id, value in example.ratings.items():
            loc: Loc = ("expert_examples", n, "ratings", dim_id)
            if dim_id not in dim_ids:
                problems.append((loc, f"rates unknown dimension {dim_id!r}"))
                continue
            scale = rubric.dimension(dim_id).scale
            error = (
                scale.check(value, participants) if scale.type == "ranked" else scale.check(value)
            )
            if error:
                problems.append((loc, f"expert rating {error}"))
                continue
            seen_ratings[dim_id].append(json_key(value))
    for i, dim_id in enumerate(dim_ids):
        distinct = set(seen_ratings[dim_id])
        if len(seen_ratings[dim_id]) < 2 or len(distinct) < 2:
            problems.append(
                (
                    ("dimensions", i, "id"),
                    f"needs at least two expert examples with different ratings (has "
                    f"{len(seen_ratings[dim_id])}, {len(distinct)} distinct)",
                )
            )
    return problems


def json_key(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def load_rubric_file(path: Path) -> Rubric:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RubricInvalid(
            str(path), [RubricProblem(str(path), None, "", f"cannot read: {exc}")]
        ) from None
    return parse_rubric(text, str(path))
