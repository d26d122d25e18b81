"""What a failed job's error may say: no exception text, no credentials."""

from __future__ import annotations

from judge.services.jobs import failure_message


def test_a_failed_jobs_error_holds_no_exception_text() -> None:
    exc = RuntimeError("(psycopg.errors.X) password=hunter2 at postgres://u:p@db/x")
    message = failure_message(exc, 8)
    assert message.startswith("internal_error: scoring raised RuntimeError on 8 attempt(s)")
    assert "hunter2" not in message
    assert "postgres://" not in message
