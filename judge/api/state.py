"""What request handlers share: the service runtime, how jobs are dispatched and awaited,
and the authentication policy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from litestar import Request

from judge.api.quotas import Quotas
from judge.runtime.composition import ServiceRuntime
from judge.services.jobs import CompletionWaiter, Dispatcher
from judge.services.keys import KeyCache


@dataclass
class ApiState:
    runtime: ServiceRuntime
    dispatcher: Dispatcher
    waiter: CompletionWaiter
    mode: str  # "embedded" or "celery"
    keys: KeyCache
    quotas: Quotas
    extras: dict[str, Any] = field(default_factory=dict)


def api_state(request: Request[Any, Any, Any]) -> ApiState:
    """The state ``create_app`` stored for the handlers."""
    state: ApiState = request.app.state.api
    return state
