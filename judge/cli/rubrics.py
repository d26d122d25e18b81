"""``judge rubrics list | show ID | validate [PATH...]``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from judge.cli._output import FORMAT_OPTION, console, fail, print_json, wrapping_table
from judge.domain.rubric import Rubric
from judge.errors import JudgeError, RubricInvalid
from judge.rubrics import RubricRegistry, default_rubrics_dir, load_rubric_file
from judge.rubrics.registry import rubric_files
from judge.settings import load_settings

DIR_OPTION = click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="a directory of rubrics added to the bundled ones (default: JUDGE_RUBRICS_DIR)",
)


def rubric_summary(rubric: Rubric) -> dict[str, Any]:
    return {
        "id": rubric.id,
        "version": rubric.version,
        "name": rubric.name,
        "unit": rubric.unit,
        "setting": rubric.setting,
        "dimensions": [d.id for d in rubric.dimensions],
        "hash": rubric.content_hash,
    }


def normalised(rubric: Rubric) -> dict[str, Any]:
    """The full rubric as JSON, defaults filled in, plus its content hash."""
    data = rubric.model_dump(mode="json")
    data["hash"] = rubric.content_hash
    return data


def _registry(directory: Path | None) -> RubricRegistry:
    try:
        return RubricRegistry.from_directory(directory or load_settings().rubrics_dir)
    except JudgeError as exc:
        fail(f"{exc.message}\n(run `judge rubrics validate` for every problem)")
        raise AssertionError from exc  # unreachable: fail() exits


@click.group()
def rubrics() -> None:
    """List, show and validate rubrics."""


@rubrics.command("list")
@DIR_OPTION
@FORMAT_OPTION
def list_rubrics(directory: Path | None, fmt: str) -> None:
    """List the available rubrics."""
    registry = _registry(directory)
    if fmt == "json":
        print_json([rubric_summary(r) for r in registry.all()])
        return
    # the unit is in `rubrics show` and the JSON; the id, what every other command takes,
    # keeps its width at 80 columns
    table = wrapping_table("id", "version", "name", "setting", "dims", "sha256")
    table.columns[0].min_width = max((len(r.id) for r in registry.all()), default=2)
    table.columns[2].max_width, table.columns[3].max_width = 14, 8
    for r in registry.all():
        digest = r.content_hash.removeprefix("sha256:")[:8]
        table.add_row(r.id, r.version, r.name, r.setting, str(len(r.dimensions)), digest)
    console().print(table)


@rubrics.command("show")
@click.argument("rubric_id")
@DIR_OPTION
@FORMAT_OPTION
def show_rubric(rubric_id: str, directory: Path | None, fmt: str) -> None:
    """Show one rubric: dimensions, scales, labels, polarity and published priors."""
    try:
        rubric = _registry(directory).get(rubric_id)
    except JudgeError as exc:
        fail(exc.message)
        return
    if fmt == "json":
        print_json(normalised(rubric))
        return
    out = console()
    out.print(
        f"[bold]{rubric.name}[/bold]  ({rubric.id} v{rubric.version}, {rubric.content_hash[:19]})"
    )
    out.print(f"unit: {rubric.unit}   setting: {rubric.setting}   source: {rubric.source}")
    policy = rubric.reliability
    out.print(f"reliability: floor {policy.floor}, line {policy.line}, quorum {policy.quorum}")
    if rubric.priors_note:
        out.print(f"priors: {rubric.priors_note}")
    table = wrapping_table("dimension", "scale", "polarity", "expert κ", "LLM κ", "definition")
    for d in rubric.dimensions:
        table.add_row(
            f"{d.id}\n({d.name})",
            _scale_text(d.scale),
            d.polarity,
            _fmt(d.prior.expert_kappa if d.prior else None),
            _fmt(d.prior.judge_kappa if d.prior else None),
            d.definition,
        )
    out.print(table)
    out.print(f"{len(rubric.expert_examples)} expert examples")


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _scale_text(scale: Any) -> str:
    if scale.type == "ordinal":
        return f"ordinal {scale.min}-{scale.max}"
    if scale.type == "nominal":
        return "nominal: " + ", ".join(scale.label_ids)
    if scale.type == "ranked":
        labels = ", ".join(
            scale.label_ids(("<participants>",) if scale.include_participants else ())
        )
        return f"ranked top-{scale.k}: {labels}"
    return str(scale.type)


@rubrics.command("validate")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@FORMAT_OPTION
def validate(paths: tuple[Path, ...], fmt: str) -> None:
    """Validate rubric files (default: every bundled rubric). Exit 1 if any is invalid."""
    files: list[Path] = []
    for path in paths or (default_rubrics_dir(),):
        files.extend(rubric_files(path) if path.is_dir() else [path])
    results: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for path in files:
        try:
            if not path.exists():
                raise RubricInvalid(str(path), [])
            rubric = load_rubric_file(path)
        except RubricInvalid as exc:
            problems = [p.as_dict() for p in exc.problems] or [
                {"file": str(path), "line": None, "field": "", "message": "no such file"}
            ]
            results.append({"file": str(path), "valid": False, "problems": problems})
            continue
        problems = []
        if rubric.id in seen:
            problems.append(
                {
                    "file": str(path),
                    "line": None,
                    "field": "id",
                    "message": f"rubric id {rubric.id!r} is also used by {seen[rubric.id]}",
                }
            )
        seen.setdefault(rubric.id, str(path))
        results.append(
            {
                "file": str(path),
                "valid": not problems,
                "problems": problems,
                **({} if problems else rubric_summary(rubric)),
            }
        )
    if fmt == "json":
        print_json(results)
    else:
        for result in results:
            if result["valid"]:
                click.echo(
                    f"ok     {result['file']}  ({result['id']} v{result['version']}, "
                    f"{len(result['dimensions'])} dimensions)"
                )
            else:
                for p in result["problems"]:
                    where = f"{p['file']}:{p['line']}" if p["line"] else p["file"]
                    field = f" {p['field']}:" if p["field"] else ""
                    click.echo(f"error  {where}:{field} {p['message']}")
    if not files:
        fail("no rubric files found")
    if not all(r["valid"] for r in results):
        raise SystemExit(1)
