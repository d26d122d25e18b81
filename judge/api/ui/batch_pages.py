"""The viewer's batch page (per dimension distribution, flag shares and reasons; the item
table, filtered and sorted), its CSV export of the filtered rows, and the item page."""

from __future__ import annotations

import csv
import io
from typing import Annotated, Any, Literal

from litestar import Request, Response, get
from litestar.params import Parameter
from litestar.response import Template
from pydantic import ValidationError

from judge.api.routes._params import JobId
from judge.api.state import api_state
from judge.api.ui.session import viewer
from judge.api.ui.svg import distribution_bars
from judge.domain.batch_summary import ItemRow, RowFilter
from judge.domain.item import parse_item
from judge.domain.reason_texts import FLAG_REASONS, GUARANTEE_REASONS, in_words

#: rows shown on the batch page (the CSV has them all)
ROWS_SHOWN = 500
Level = Annotated[
    Literal["trusted", "caution", "untrusted"] | None, Parameter(description="a flag level")
]
Disagreement = Annotated[bool, Parameter(description="only items the judges disagree on")]
Sort = Annotated[Literal["line", "spread"], Parameter(description="the rows' order")]
Dimension = Annotated[str | None, Parameter(max_length=100)]
Reason = Annotated[str | None, Parameter(max_length=100)]


def _filter(
    dimension: str | None, level: str | None, reason: str | None, disagreement: bool, sort: str
) -> RowFilter:
    return RowFilter.model_validate(
        {
            "dimension": dimension or None,
            "level": level or None,
            "reason": reason or None,
            "disagreement": disagreement,
            "sort": sort,
        }
    )


@get("/ui/batches/{batch_id:str}", include_in_schema=False)
async def batch_page(
    request: Request[Any, Any, Any],
    batch_id: JobId,
    dimension: Dimension = None,
    level: Level = None,
    reason: Reason = None,
    disagreement: Disagreement = False,
    sort: Sort = "line",
) -> Template:
    state = api_state(request)
    who = viewer(request, "batch")
    page = state.runtime.settings.api.results_page
    summary, rows = await state.runtime.batches.overview(who, batch_id, page)
    where = _filter(dimension, level, reason, disagreement, sort)
    shown = where.apply(rows)
    reasons = sorted({r for row in rows for rs in row.reasons.values() for r in rs})
    return Template(
        "batch.html",
        context={
            "summary": summary,
            "bars": {
                dim: distribution_bars(d.scores, f"{dim}: items per score")
                for dim, d in summary.dimensions.items()
            },
            "rows": shown[:ROWS_SHOWN],
            "matching": len(shown),
            "dimensions": list(summary.dimensions),
            "shown_dimensions": [where.dimension] if where.dimension else list(summary.dimensions),
            "reasons": reasons,
            "where": where,
            "query": request.url.query,
            "explain": FLAG_REASONS,
        },
    )


def _cell(value: Any) -> Any:
    """A CSV cell; text a spreadsheet would run as a formula gets a leading quote."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def rows_csv(rows: list[ItemRow], dimensions: list[str]) -> str:
    """One line per row: line, job id, item id, status, escalated, then per dimension its
    score, level, reasons (``;``-separated) and spread."""
    out = io.StringIO()
    writer = csv.writer(out)
    header = ["line", "job_id", "id", "status", "escalated"]
    for dim in dimensions:
        header += [f"{dim}.score", f"{dim}.level", f"{dim}.reasons", f"{dim}.spread"]
    writer.writerow(header)
    for row in rows:
        line: list[Any] = [row.line, row.job_id, row.id or "", row.status, row.escalated]
        for dim in dimensions:
            score = row.scores.get(dim)
            line += [
                "" if score is None else score,
                row.levels.get(dim, ""),
                ";".join(row.reasons.get(dim, [])),
                "" if row.spread.get(dim) is None else row.spread[dim],
            ]
        writer.writerow([_cell(v) for v in line])
    return out.getvalue()


@get("/ui/batches/{batch_id:str}/items.csv", include_in_schema=False)
async def batch_csv(
    request: Request[Any, Any, Any],
    batch_id: JobId,
    dimension: Dimension = None,
    level: Level = None,
    reason: Reason = None,
    disagreement: Disagreement = False,
    sort: Sort = "line",
) -> Response[str]:
    state = api_state(request)
    who = viewer(request, "batch")
    page = state.runtime.settings.api.results_page
    summary, rows = await state.runtime.batches.overview(who, batch_id, page)
    where = _filter(dimension, level, reason, disagreement, sort)
    dims = [where.dimension] if where.dimension else list(summary.dimensions)
    return Response(
        rows_csv(where.apply(rows), dims),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="batch-{batch_id}.csv"'},
    )


def _conversation(raw: dict[str, Any]) -> dict[str, Any] | None:
    """The item as the judges saw it: participants, turns with roles, the focus turn."""
    try:
        item = parse_item(raw)
    except (ValidationError, ValueError):
        return None
    roles = {p.id: p.role for p in item.participants}
    return {
        "participants": item.participants,
        "turns": [
            {"speaker": t.speaker, "role": roles.get(t.speaker, "?"), "text": t.text}
            for t in item.turns
        ],
        "focus": item.focus_index,
    }


@get("/ui/items/{job_id:str}", include_in_schema=False)
async def item_page(request: Request[Any, Any, Any], job_id: JobId) -> Template:
    who = viewer(request, "batch")
    stored = await api_state(request).runtime.scores.stored(who, job_id)
    return Template(
        "item.html",
        context={
            "stored": stored,
            "result": stored.result,
            "conversation": _conversation(stored.item),
            "explain": lambda code: in_words(code),
            "explain_guarantee": lambda code: in_words(code, GUARANTEE_REASONS),
        },
    )
