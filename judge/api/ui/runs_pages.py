"""The viewer's runs list (batches, sessions, calibrations, probes, canaries; a page of each
kind at a time) and drift page."""

from __future__ import annotations

from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from litestar import Request, get
from litestar.params import Parameter
from litestar.response import Redirect, Template

from judge.api.routes._params import ListLimit, ListOffset, PanelFilter, RubricFilter
from judge.api.state import api_state
from judge.api.ui.session import ScopeMissing, viewer
from judge.api.ui.svg import kappa_chart
from judge.domain.listing import ListFilter
from judge.domain.wire import ReliabilityHistory

#: runs per kind on a page of the runs list
SHOWN = 50
BATCH_STATUSES = ("queued", "running", "completed")
#: the paged kinds: each has its own ``?<kind>_offset=`` (a section pages on its own)
PAGED = ("batches", "sessions", "calibrations", "probes")


def _may(request: Request[Any, Any, Any], scope: str) -> bool:
    try:
        viewer(request, scope)
    except ScopeMissing:
        return False
    return True


def page_links(
    filters: dict[str, str | int], offsets: dict[str, int], kind: str, next_offset: int | None
) -> dict[str, str | None]:
    """The runs page's URLs for ``kind``'s older and newest runs (None: no such page), the
    filters and the other kinds' offsets kept."""

    def at(offset: int) -> str:
        query = {k: v for k, v in filters.items() if v}
        query |= {f"{k}_offset": o for k, o in (offsets | {kind: offset}).items() if o}
        return "/ui/runs" + (f"?{urlencode(query)}" if query else "")

    return {
        "older": None if next_offset is None else at(next_offset),
        "newest": at(0) if offsets[kind] else None,
    }


@get("/ui", include_in_schema=False)
async def home() -> Redirect:
    return Redirect("/ui/runs", status_code=303)


@get("/ui/runs", include_in_schema=False)
async def runs_page(
    request: Request[Any, Any, Any],
    rubric: RubricFilter = None,
    panel: PanelFilter = None,
    status: Annotated[
        Literal["queued", "running", "completed", "failed"] | None, Parameter(description="status")
    ] = None,
    batches_offset: ListOffset = 0,
    sessions_offset: ListOffset = 0,
    calibrations_offset: ListOffset = 0,
    probes_offset: ListOffset = 0,
    limit: ListLimit = SHOWN,
) -> Template:
    """Every run the session's key may read, newest first, a page per kind, with the filters
    applied."""
    runtime = api_state(request).runtime
    filters = {"rubric": rubric or "", "panel": panel or "", "status": status or ""}
    offsets = {
        "batches": batches_offset,
        "sessions": sessions_offset,
        "calibrations": calibrations_offset,
        "probes": probes_offset,
    }

    def where(kind: str) -> ListFilter:
        return ListFilter(
            rubric=rubric, panel=panel, status=status, offset=offsets[kind], limit=limit
        )

    context: dict[str, Any] = {
        "filters": filters,
        "rubrics": sorted(runtime.registry.ids()),
        "batches": None,
        "sessions": None,
        "calibrations": None,
        "probes": None,
        "canaries": None,
        "pages": {},
    }
    nexts: dict[str, int | None] = dict.fromkeys(PAGED)
    if _may(request, "batch"):
        who = viewer(request, "batch")
        context["batches"], context["sessions"] = [], []
        if status in (None, *BATCH_STATUSES):
            batches = await runtime.batches.listed(who, where("batches"))
            sessions = await runtime.sessions.listed(who, where("sessions"))
            context["batches"], nexts["batches"] = batches.batches, batches.next_offset
            context["sessions"], nexts["sessions"] = sessions.sessions, sessions.next_offset
    if _may(request, "calibrate"):
        who = viewer(request, "calibrate")
        context["calibrations"], nexts["calibrations"] = await runtime.calibrations.listed(
            who, where("calibrations")
        )
        context["probes"], nexts["probes"] = await runtime.probes.listed(who, where("probes"))
        context["canaries"] = [
            c
            for c in await runtime.canaries.listed(who)
            if (not rubric or c.rubric_id == rubric) and (not panel or c.panel_name == panel)
        ]
    kept: dict[str, str | int] = {**filters, "limit": limit if limit != SHOWN else 0}
    context["pages"] = {k: page_links(kept, offsets, k, nexts[k]) for k in PAGED}
    return Template("runs.html", context=context)


def drift_charts(history: ReliabilityHistory, floor: float, line: float) -> list[dict[str, Any]]:
    """Per canary and dimension: a chart of each judge's kappa over the canary's runs."""
    charts = []
    for canary in history.canaries:
        runs = sorted(canary.runs, key=lambda r: r.created_at)
        dims = list(dict.fromkeys(d for r in runs for d in r.dimensions))
        for dim in dims:
            raters = dict.fromkeys(
                rater for r in runs if dim in r.dimensions for rater in r.dimensions[dim].kappa
            )
            series = {
                rater: [
                    r.dimensions[dim].kappa.get(rater) if dim in r.dimensions else None
                    for r in runs
                ]
                for rater in raters
            }
            title = f"{canary.name}: {dim}, kappa with the experts per run"
            times = [r.created_at for r in runs]
            charts.append(
                {
                    "canary": canary,
                    "dimension": dim,
                    "runs": len(runs),
                    "simulated": any(r.simulated for r in runs),
                    "svg": kappa_chart(title, times, series, floor=floor, line=line),
                }
            )
    return charts


@get("/ui/drift", include_in_schema=False)
async def drift_page(
    request: Request[Any, Any, Any],
    rubric: Annotated[str, Parameter(min_length=1, max_length=100)] = "epitome",
) -> Template:
    """Each canary's judges' kappa with the experts over time, with the floor and the line."""
    who = viewer(request, "calibrate")
    runtime = api_state(request).runtime
    policy = runtime.registry.get(rubric, field="query.rubric").reliability
    history = await runtime.canaries.history(who, rubric, limit=200)
    return Template(
        "drift.html",
        context={
            "rubric": rubric,
            "rubrics": sorted(runtime.registry.ids()),
            "floor": policy.floor,
            "line": policy.line,
            "charts": drift_charts(history, policy.floor, policy.line),
            "canaries": history.canaries,
        },
    )
