"""The viewer's runs list (batches, calibrations, probes, canaries) and drift page."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar import Request, get
from litestar.params import Parameter
from litestar.response import Redirect, Template

from judge.api.routes._params import PanelFilter, RubricFilter
from judge.api.state import api_state
from judge.api.ui.session import ScopeMissing, viewer
from judge.api.ui.svg import kappa_chart
from judge.domain.listing import ListFilter
from judge.domain.wire import ReliabilityHistory

#: runs per kind on the runs page
SHOWN = 50
BATCH_STATUSES = ("queued", "running", "completed")


def _may(request: Request[Any, Any, Any], scope: str) -> bool:
    try:
        viewer(request, scope)
    except ScopeMissing:
        return False
    return True


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
) -> Template:
    """Every run the session's key may read, newest first, with the filters applied."""
    runtime = api_state(request).runtime
    where = ListFilter(rubric=rubric, panel=panel, status=status, limit=SHOWN)
    context: dict[str, Any] = {
        "filters": {"rubric": rubric or "", "panel": panel or "", "status": status or ""},
        "rubrics": sorted(runtime.registry.ids()),
        "batches": None,
        "calibrations": None,
        "probes": None,
        "canaries": None,
    }
    if _may(request, "batch"):
        who = viewer(request, "batch")
        found = (
            await runtime.batches.listed(who, where) if status in (None, *BATCH_STATUSES) else None
        )
        context["batches"] = found.batches if found else []
    if _may(request, "calibrate"):
        who = viewer(request, "calibrate")
        calibrations, _ = await runtime.calibrations.listed(who, where)
        context["calibrations"] = calibrations
        context["probes"], _ = await runtime.probes.listed(who, where)
        context["canaries"] = [
            c
            for c in await runtime.canaries.listed(who)
            if (not rubric or c.rubric_id == rubric) and (not panel or c.panel_name == panel)
        ]
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
