"""What request handlers share: the service runtime, how jobs are dispatched and awaited,
and the authentication policy."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from litestar import Request

from judge.services.jobs import CompletionWaiter, Dispatcher
from judge.services.runtime import ServiceRuntime


@dataclass
class ApiState:
    runtime: ServiceRuntime
    dispatcher: Dispatcher
    waiter: CompletionWaiter
    mode: str  # "embedded" or "celery"
    extras: dict[str, Any] = field(default_factory=dict)
    _keys_checked_at: float = -1e9
    _active_keys: int = 0

    async def auth_required(self) -> bool:
        """Keys are required as soon as one active key exists (re-checked every 2 s)."""
        now = time.monotonic()
        if now - self._keys_checked_at > 2.0:
            self._active_keys = await self.runtime.keys.count_active()
            self._keys_checked_at = now
        return self._active_keys > 0


def api_state(request: Request[Any, Any, Any]) -> ApiState:
    """The state ``create_app`` stored for the handlers."""
    state: ApiState = request.app.state.api
    return state
