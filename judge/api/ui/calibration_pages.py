"""The viewer's calibration page: the run's flags per dimension, the full report, and the
items where the panel and the experts disagree most (each linking to its item page)."""

from __future__ import annotations

from typing import Any

from litestar import Request, Response, get
from litestar.response import Template

from judge.api.routes._params import JobId
from judge.api.state import api_state
from judge.api.ui.session import viewer
from judge.calibration import render_report_html
from judge.errors import CalibrationNotReady

#: disagreements listed
DISAGREEMENTS = 25


@get("/ui/calibrations/{run_id:str}", include_in_schema=False)
async def calibration_page(request: Request[Any, Any, Any], run_id: JobId) -> Template:
    who = viewer(request, "calibrate")
    calibrations = api_state(request).runtime.calibrations
    view = await calibrations.view(who, run_id)
    found = (
        await calibrations.disagreements(who, run_id, DISAGREEMENTS)
        if view.status == "completed"
        else []
    )
    return Template(
        "calibration.html",
        context={
            "view": view,
            "report": view.report,
            "disagreements": found,
            # a shared run's items belong to its owner: only the owner and admins open them
            "items_readable": view.owned or who.admin,
        },
    )


@get("/ui/calibrations/{run_id:str}/report", include_in_schema=False)
async def calibration_report(request: Request[Any, Any, Any], run_id: JobId) -> Response[str]:
    who = viewer(request, "calibrate")
    view = await api_state(request).runtime.calibrations.view(who, run_id)
    if view.report is None:
        raise CalibrationNotReady(run_id, view.status)
    return Response(render_report_html(view.report), media_type="text/html")
