"""The worker's Celery consumer: Celery's own, made to survive a lost Redis connection.

When the broker connection is lost, Celery 5.7.0 collects and then closes the old kombu
connection (``Consumer.on_connection_error_after_connected``); ``collect()`` detaches the
Redis transport (``transport.client = None``). Whatever later touches a channel of that old
connection and needs a new connection pool then raises ``AttributeError`` (kombu's Redis
channel reads the host from ``transport.client``), not a connection error:

- the close itself, when it puts the channel's unacknowledged messages back;
- the acknowledgement (or rejection) of a task that was running when the connection was lost
  and finishes after the reconnect (``acks_late``).

Celery catches connection errors in both places, not ``AttributeError``, so the consumer
stops ("Unrecoverable error") and the worker shuts down. Under load this happened in about one
Redis restart in six while the worker held unacknowledged messages
(``tests/e2e/test_service.py::test_redis_restart_mid_batch_still_completes`` restarts Redis ten
times). Here both are logged and ignored: nothing is lost by it, since the broker that held
those messages is gone; the jobs are in the database and the sweeper re-sends any that did not
finish (``judge/runtime/sweeper.py``). ``worker_consumer`` is Celery's documented setting for a
consumer class; both overrides wrap the parent's code instead of copying it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from celery.worker.consumer import Consumer

log = logging.getLogger(__name__)


def _detached_transport_tolerated(what: str, fun: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fun)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return fun(*args, **kwargs)
        except AttributeError as exc:  # the old connection's transport was detached
            log.warning(
                "ignored the failed %s on the lost broker connection (%r); the sweeper "
                "re-sends any job that did not finish",
                what,
                exc,
            )
            return None

    return call


class RecoveringConsumer(Consumer):  # type: ignore[misc]
    def on_connection_error_after_connected(self, exc: Exception) -> None:
        connection: Any = self.connection
        if connection is not None:
            # the parent reads ``connection.close`` when it closes the old connection
            connection.close = _detached_transport_tolerated("close", connection.close)
        super().on_connection_error_after_connected(exc)

    def call_soon_ack(self, p: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Acknowledgements and rejections of finished tasks pass through here."""
        return super().call_soon_ack(
            _detached_transport_tolerated("acknowledgement", p), *args, **kwargs
        )
