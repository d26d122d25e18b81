"""``judge score``: score items from a file or stdin with a panel, no server needed."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import click

from judge.cli._output import console, fail, print_json
from judge.cli._render import print_legend, print_result
from judge.cli._runtime import adhoc_panel, service_runtime
from judge.cli.score_session import score_session
from judge.domain.item import Item
from judge.domain.jsonl import parse_jsonl
from judge.domain.result import ScoreResult
from judge.domain.rubric import Rubric
from judge.domain.wire import Rejection
from judge.errors import ItemInvalid, JudgeError
from judge.rubrics import RubricRegistry
from judge.services import schema
from judge.services.panels import panel_spec, resolve_panel
from judge.services.scoring import validate_for_rubric
from judge.settings import PanelSpec, Settings, load_settings


def read_items(text: str, source: str) -> tuple[list[Any], str]:
    """Items from a JSON object, a JSON array, or JSON Lines. Returns (items, shape)."""
    lines, shape = read_lines(text, source)
    rejected = [value for _, value in lines if isinstance(value, Rejection)]
    if rejected:
        raise JudgeError(f"{source}: line {rejected[0].line}: {rejected[0].message}")
    return [value for _, value in lines], shape


def read_lines(text: str, source: str) -> tuple[list[tuple[int, Any]], str]:
    """(line or position, item) pairs from a JSON object, a JSON array, or JSON Lines, and the
    shape; a JSON Lines line that cannot be decoded is a :class:`Rejection` (that line only,
    as in the API's batches)."""
    stripped = text.strip()
    if not stripped:
        raise JudgeError(f"{source}: no input")
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        return parse_jsonl(stripped), "jsonl"
    if isinstance(data, list):
        return list(enumerate(data)), "array"
    return [(0, data)], "object"


def _validated(
    lines: list[tuple[int, Any]], shape: str, rubric: Rubric
) -> tuple[list[Item], list[Rejection]]:
    """The items that fit ``rubric``; in JSON Lines, the lines that do not are rejected one by
    one (a JSON object or array is refused as a whole, naming the field)."""
    items: list[Item] = []
    rejected: list[Rejection] = []
    for number, raw in lines:
        if isinstance(raw, Rejection):
            rejected.append(raw)
            continue
        prefix = {"object": "item", "array": f"items[{number}]"}.get(shape, "item")
        try:
            items.append(validate_for_rubric(raw, rubric, field_prefix=prefix))
        except ItemInvalid as exc:
            if shape != "jsonl":
                raise
            rejected.append(Rejection(line=number, field=exc.field or "item", message=exc.detail))
    return items, rejected


@click.command("score")
@click.option("--rubric", "rubric_id", required=True, help="rubric id, e.g. epitome")
@click.option("--panel", "panel_name", default=None, help="configured panel name")
@click.option(
    "--model", "models", multiple=True, help="ad-hoc judge (LiteLLM model string, or sim:<persona>)"
)
@click.option(
    "--per-dimension", is_flag=True, help="one call per dimension instead of one per judge"
)
@click.option(
    "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True
)
@click.option(
    "--session",
    "as_session",
    is_flag=True,
    help="SOURCE is a whole session: judge every checkpoint, print the timeline",
)
@click.argument("source", type=click.Path(allow_dash=True, dir_okay=False))
def score(
    rubric_id: str,
    panel_name: str | None,
    models: tuple[str, ...],
    per_dimension: bool,
    fmt: str,
    as_session: bool,
    source: str,
) -> None:
    """Score the item(s) in SOURCE (a JSON file, JSON Lines, or - for stdin).

    Exits with status 3 (after printing every result) when every judge abstained on every
    dimension of some item, naming the judges' reasons on stderr; 2 on bad input."""
    if panel_name and models:
        fail("use either --panel or --model, not both")
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        if as_session:
            _session(rubric_id, panel_name, models, fmt, text, source)
            return
        lines, shape = read_lines(text, "stdin" if source == "-" else source)
        settings = load_settings()
        # Validate the input before importing LiteLLM and starting the simulator: a bad item
        # is reported at once.
        registry = RubricRegistry.from_directory(settings.rubrics_dir)
        rubric = registry.get(rubric_id)
        parsed, rejected = _validated(lines, shape, rubric)
        for rejection in rejected:
            click.echo(
                f"error: line {rejection.line}: {rejection.field}: {rejection.message} "
                "(line skipped)",
                err=True,
            )
        if not parsed:
            fail("no line could be scored")
        if models:
            name, spec = "adhoc", adhoc_panel(models)
        else:
            name, spec = panel_spec(settings, panel_name)
        if per_dimension:
            spec = spec.model_copy(update={"per_dimension_calls": True})
        results = asyncio.run(_score_all(settings, rubric, parsed, name, spec))
    except (JudgeError, OSError, UnicodeDecodeError) as exc:
        fail(getattr(exc, "message", None) or str(exc))
        return
    if fmt == "json":
        dumped = [r.model_dump(mode="json") for r in results]
        if shape == "jsonl":
            for row in dumped:
                sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
        else:
            print_json(dumped[0] if shape == "object" else dumped)
    else:
        out = console()
        for n, result in enumerate(results):
            print_result(out, result, result.id or f"item {n}")
        print_legend(out)
    unscored = [
        (result.id or f"item {n}", reasons)
        for n, result in enumerate(results)
        if (reasons := all_abstained(result)) is not None
    ]
    for name, reasons in unscored:
        listed = "; ".join(f"{model}: {', '.join(why)}" for model, why in reasons.items())
        click.echo(f"error: {name}: every judge abstained on every dimension ({listed})", err=True)
    if unscored:
        sys.exit(ALL_ABSTAINED_EXIT)
    if rejected:
        sys.exit(BAD_INPUT_EXIT)


def _session(
    rubric_id: str,
    panel_name: str | None,
    models: tuple[str, ...],
    fmt: str,
    text: str,
    source: str,
) -> None:
    settings = load_settings()
    rubric = RubricRegistry.from_directory(settings.rubrics_dir).get(rubric_id)
    name, spec = ("adhoc", adhoc_panel(models)) if models else panel_spec(settings, panel_name)
    score_session(settings, rubric, text, source, name, spec, fmt)


async def _score_all(
    settings: Settings, rubric: Rubric, items: list[Item], name: str, spec: PanelSpec
) -> list[ScoreResult]:
    """Score ``items`` as the service would (same limits, cache, reliability settings and
    stored calibrations); without a migrated database, with none of what it stores."""
    stored = await schema.schema_ready(settings.database_url)
    if not stored:
        click.echo(
            f"note: no database at this version's schema at "
            f"{schema.shown_url(settings.database_url)}: scoring without the call cache and "
            "without stored calibrations (flags rest on the rubrics' published priors); "
            "`judge db upgrade` creates it",
            err=True,
        )
    async with service_runtime(settings, stored=stored, panels=[spec]) as runtime:
        panel = resolve_panel(
            runtime.settings, spec, name=name, simulator_url=runtime.settings.simulator.url
        )
        # Bounded: a large JSON Lines file must not open a connection per item at once.
        limit = asyncio.Semaphore(settings.worker.concurrency)

        async def one(item: Item) -> ScoreResult:
            async with limit:
                return await runtime.jobs.scorer.score(rubric, item, panel, owner=None)

        return list(await asyncio.gather(*(one(i) for i in items)))


#: Exit status when some item got no rating from any judge (2 is bad input or configuration).
ALL_ABSTAINED_EXIT = 3
#: some JSON Lines lines were rejected (the others were scored and printed)
BAD_INPUT_EXIT = 2


def all_abstained(result: ScoreResult) -> dict[str, list[str]] | None:
    """Per judge, its abstention reasons, when no judge rated any dimension of ``result``;
    None when at least one rating was given."""
    reasons: dict[str, list[str]] = {}
    for dim in result.dimensions.values():
        for judged in dim.judges:
            if judged.status != "abstained":
                return None
            why = reasons.setdefault(judged.model, [])
            if (judged.reason or "unknown") not in why:
                why.append(judged.reason or "unknown")
    return reasons or None
