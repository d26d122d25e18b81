"""What request handlers share: the service runtime, how jobs are dispatched and awaited,
and the authentication policy."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from litestar import Request

from judge.api.quotas import Quotas
from judge.api.waiting import UntilDisconnect
from judge.runtime.composition import ServiceRuntime
from judge.services.jobs import ClaimedRunner, CompletionWaiter, Dispatcher
from judge.services.keys import KeyCache
from judge.services.submission import Intake


@dataclass
class ApiState:
    runtime: ServiceRuntime
    dispatcher: Dispatcher
    waiter: CompletionWaiter
    mode: str  # "embedded" or "celery"
    keys: KeyCache
    quotas: Quotas
    extras: dict[str, Any] = field(default_factory=dict)
    #: embedded mode: the job thread's runner, which takes single scores already claimed
    runner: ClaimedRunner | None = None

    def intake(self, request: Request[Any, Any, Any]) -> Intake:
        """This process's quotas, dispatcher and waiter, for the use cases that submit jobs
        (:func:`judge.services.submission.submit_and_wait`) in ``request``: its waits end
        when its client disconnects."""
        api = self.runtime.settings.api
        return Intake(
            quota=self.quotas,
            dispatcher=self.dispatcher,
            waiter=UntilDisconnect(self.waiter, request),
            database=self.runtime.database,
            max_wait_s=api.max_wait_s,
            idempotency_ttl_s=api.idempotency_ttl_s,
            runner=self.runner,
        )


def api_state(request: Request[Any, Any, Any]) -> ApiState:
    """The state ``create_app`` stored for the handlers."""
    state: ApiState = request.app.state.api
    return state
