"""The worker's consumer tolerates Celery 5.7.0's failures on a lost Redis connection (the
end-to-end check is tests/e2e/test_service.py::test_redis_restart_mid_batch_still_completes)."""

from __future__ import annotations

import logging

import pytest
from celery import Celery
from celery.utils.imports import symbol_by_name

from judge.worker.consumer import RecoveringConsumer, _detached_transport_tolerated


def detached_ack() -> None:
    raise AttributeError("'NoneType' object has no attribute 'hostname'")


def test_a_detached_transport_is_logged_and_ignored(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="judge.worker.consumer"):
        assert _detached_transport_tolerated("acknowledgement", detached_ack)() is None
    assert "ignored the failed acknowledgement" in caplog.text
    assert "hostname" in caplog.text


def test_other_errors_are_not_swallowed() -> None:
    def lost() -> None:
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379")

    with pytest.raises(ConnectionError):
        _detached_transport_tolerated("acknowledgement", lost)()


def test_the_wrapped_call_passes_arguments_and_result() -> None:
    assert _detached_transport_tolerated("close", lambda a, b=0: a + b)(1, b=2) == 3


def test_the_worker_app_runs_the_recovering_consumer() -> None:
    from judge.settings import load_settings
    from judge.worker.app import create_celery

    app: Celery = create_celery(load_settings())
    assert symbol_by_name(app.conf.worker_consumer) is RecoveringConsumer
