"""Calibration runs, their aggregation comparison and labelling plans over HTTP (``calibrate``
scope). A run belongs to the key that started it and decides only that key's flags: other keys
get 404 (``admin`` reads all), unless an admin shared it (``PUT .../shared``), which makes it
apply to, and readable by, every key until withdrawn (``DELETE .../shared``)."""

from __future__ import annotations

from typing import Annotated, Any

from litestar import Request, Response, delete, get, post, put
from litestar.params import JSONBody, Parameter
from pydantic import BaseModel, Field

from judge.api.auth import principal
from judge.api.disconnect import unless_disconnected
from judge.api.problems import ProblemError
from judge.api.routes._params import (
    ID_PATTERN,
    JSON_NUMBER,
    PANEL_MAX,
    REQUEST_CONFIG,
    RUBRIC_ID_MAX,
    JobId,
    LabelledItemList,
    ListLimit,
    ListOffset,
    PanelFilter,
    RubricFilter,
    RunStatus,
    Wait,
)
from judge.api.schemas import responses
from judge.api.state import api_state
from judge.calibration import (
    DEFAULT_FOLDS,
    DEFAULT_REPEATS,
    REFIT_RESAMPLES,
    RESAMPLE_SEED,
    render_report_html,
)
from judge.domain.item import StoredId
from judge.domain.listing import ListFilter
from judge.domain.wire import CalibrationPage, CalibrationView
from judge.errors import CalibrationNotReady


class CalibrationRequest(BaseModel):
    """Expert-labelled items: ``{"id"?, "item": {...}, "labels": {expert: {dim: value}}}``."""

    model_config = REQUEST_CONFIG

    rubric: str = Field(min_length=1, max_length=RUBRIC_ID_MAX)
    panel: str | None = Field(default=None, max_length=PANEL_MAX)
    label: StoredId | None = None
    items: LabelledItemList


@post(
    "/v1/calibrations",
    opt={"scope": "calibrate"},
    status_code=202,
    summary="Start a calibration run",
    responses=responses({200: CalibrationView, 202: CalibrationView}, 404, 413, 429),
)
async def create_calibration(
    request: Request[Any, Any, Any],
    data: JSONBody[CalibrationRequest],
    wait: Wait = None,
) -> Response[CalibrationView]:
    state = api_state(request)
    view = await state.runtime.calibrations.start(
        principal(request),
        state.intake(request),
        rubric_id=data.rubric,
        panel_name=data.panel,
        items=data.items,
        label=data.label,
        wait=wait,
    )
    status = 200 if view.status == "completed" else 202
    return Response(view, status_code=status, headers={"Location": f"/v1/calibrations/{view.id}"})


@get(
    "/v1/calibrations/{run_id:str}",
    opt={"scope": "calibrate"},
    summary="A calibration run",
    responses=responses({200: CalibrationView}, 404),
)
async def get_calibration(request: Request[Any, Any, Any], run_id: JobId) -> CalibrationView:
    return await api_state(request).runtime.calibrations.view(principal(request), run_id)


@get(
    "/v1/calibrations/{run_id:str}/report",
    opt={"scope": "calibrate"},
    summary="The run's agreement heatmap and table (HTML)",
    media_type="text/html",
    responses=responses({200: str}, 404, 409, media_type="text/html"),
)
async def get_calibration_report(request: Request[Any, Any, Any], run_id: JobId) -> Response[str]:
    view = await api_state(request).runtime.calibrations.view(principal(request), run_id)
    if view.report is None:
        raise CalibrationNotReady(run_id, view.status)
    return Response(render_report_html(view.report), media_type="text/html")


@put(
    "/v1/calibrations/{run_id:str}/shared",
    opt={"scope": "admin"},
    summary="Share a run: its evidence decides every key's flags (admin)",
    responses=responses({200: CalibrationView}, 404),
)
async def share_calibration(request: Request[Any, Any, Any], run_id: JobId) -> CalibrationView:
    calibrations = api_state(request).runtime.calibrations
    return await calibrations.share(principal(request), run_id, shared=True)


@delete(
    "/v1/calibrations/{run_id:str}/shared",
    opt={"scope": "admin"},
    status_code=200,
    summary="Withdraw a shared run: it decides its owner's flags only (admin)",
    responses=responses({200: CalibrationView}, 404),
)
async def unshare_calibration(request: Request[Any, Any, Any], run_id: JobId) -> CalibrationView:
    calibrations = api_state(request).runtime.calibrations
    return await calibrations.share(principal(request), run_id, shared=False)


#: repeats x resamples of one aggregation comparison: 20x the defaults (10 x 1,000)
MAX_AGGREGATION_WORK = 200_000


class PlanRequest(BaseModel):
    """How many more expert labels each dimension needs, and (with a pool) which items."""

    model_config = REQUEST_CONFIG

    rubric: str = Field(min_length=1)
    panel: str | None = None
    target_ci_lower: Annotated[float, Field(ge=-1, le=1), JSON_NUMBER] | None = Field(
        default=None,
        description="the line the CI's lower bound must reach (default: the rubric's line)",
    )
    dimensions: list[str] = Field(default_factory=list, max_length=200)
    pool: list[Any] | None = Field(
        default=None, description="score results of unlabelled items (as GET /v1/scores/{id})"
    )
    pool_batch: str | None = Field(
        default=None, pattern=ID_PATTERN, description="a batch scored by this panel: its results"
    )
    budget: Annotated[int, Field(ge=1, le=100_000), JSON_NUMBER] | None = None
    seed: Annotated[int, JSON_NUMBER] = 0
    assurance: Annotated[float, Field(ge=0.5, le=0.99), JSON_NUMBER] = Field(
        default=0.8,
        description="the probability of reaching the target the plan is for (0.5-0.99)",
    )


@post(
    "/v1/calibrations/plan",
    opt={"scope": "calibrate"},
    status_code=200,
    summary="Plan expert labelling: items needed per dimension, and a stratified proposal",
    responses=responses({200: dict[str, Any]}, 404, 413),
)
async def plan_calibration(
    request: Request[Any, Any, Any], data: JSONBody[PlanRequest]
) -> dict[str, Any]:
    return await api_state(request).runtime.insights.plan(
        principal(request),
        rubric_id=data.rubric,
        panel_name=data.panel,
        target=data.target_ci_lower,
        dimensions=data.dimensions,
        pool=data.pool,
        pool_batch=data.pool_batch,
        budget=data.budget,
        seed=data.seed,
        assurance=data.assurance,
    )


@get(
    "/v1/calibrations/{run_id:str}/aggregation",
    opt={"scope": "calibrate"},
    summary="Equal vs reliability-weighted aggregation on a run's items, cross-validated",
    responses=responses({200: dict[str, Any]}, 404, 409),
)
async def get_aggregation_comparison(
    request: Request[Any, Any, Any],
    run_id: JobId,
    folds: Annotated[int, Parameter(ge=2, le=10)] = DEFAULT_FOLDS,
    repeats: Annotated[int, Parameter(ge=1, le=200)] = DEFAULT_REPEATS,
    seed: Annotated[int, Parameter(ge=0, description="bootstrap and fold seed")] = RESAMPLE_SEED,
    resamples: Annotated[int, Parameter(ge=100, le=20_000)] = REFIT_RESAMPLES,
) -> dict[str, Any]:
    """CPU-bound (seconds): ``repeats`` x ``resamples`` is bounded, a few run at once per
    process (429 beyond), and the work stops when the client disconnects."""
    if repeats * resamples > MAX_AGGREGATION_WORK:
        raise ProblemError(
            422,
            f"repeats x resamples is at most {MAX_AGGREGATION_WORK:,} "
            f"({repeats} x {resamples} asked)",
            field="query.resamples",
        )
    state = api_state(request)
    async with state.quotas.aggregation_slot():
        return await unless_disconnected(
            request,
            state.runtime.insights.compare_aggregation(
                principal(request),
                run_id,
                folds=folds,
                repeats=repeats,
                seed=seed,
                resamples=resamples,
            ),
        )


@get(
    "/v1/calibrations",
    opt={"scope": "calibrate"},
    summary="The caller's calibrations, newest first, without reports (admin: every key's)",
    responses=responses({200: CalibrationPage}),
)
async def list_calibrations(
    request: Request[Any, Any, Any],
    rubric: RubricFilter = None,
    panel: PanelFilter = None,
    status: RunStatus = None,
    offset: ListOffset = 0,
    limit: ListLimit = 50,
) -> CalibrationPage:
    where = ListFilter(rubric=rubric, panel=panel, status=status, offset=offset, limit=limit)
    service = api_state(request).runtime.calibrations
    found, next_offset = await service.listed(principal(request), where)
    return CalibrationPage(offset=offset, limit=limit, next_offset=next_offset, calibrations=found)


#: this resource's route handlers, registered by :func:`judge.api.app.create_app`
HANDLERS = [
    list_calibrations,
    create_calibration,
    get_calibration,
    get_calibration_report,
    get_aggregation_comparison,
    plan_calibration,
    share_calibration,
    unshare_calibration,
]
