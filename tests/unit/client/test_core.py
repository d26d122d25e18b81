"""judge.client's requests and problem parsing, without IO (judge/client/_core.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from empathy_judge_client import _core
from empathy_judge_client.errors import InvalidInput, ProblemError, ServiceUnavailable


def test_score_call_caps_the_server_wait_and_carries_an_idempotency_key() -> None:
    first = _core.score_call("epitome", {"response": "x"}, None, 600.0, None)
    second = _core.score_call("epitome", {"response": "x"}, "p", None, "1.0.0")
    assert first.params == {"wait": _core.MAX_SERVER_WAIT_S}
    assert second.params == {}
    assert second.json == {
        "rubric": "epitome",
        "item": {"response": "x"},
        "panel": "p",
        "rubric_version": "1.0.0",
    }
    keys = {c.headers[_core.IDEMPOTENCY_HEADER] for c in (first, second)}
    assert len(keys) == 2  # one key per logical request (retries resend the same request)


def test_jsonl_call_sends_the_file_as_it_is(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"response": "a"}\n\xff\n')
    call = _core.jsonl_call(path, "epitome", None)
    assert call.content == path.read_bytes()
    assert call.params == {"rubric": "epitome"}
    assert call.headers["Content-Type"] == "application/x-ndjson"
    assert "json" not in call.kwargs()


def test_problems_become_typed_exceptions() -> None:
    body = b'{"status": 422, "detail": "must be a string", "field": "item.response"}'
    with pytest.raises(InvalidInput) as invalid:
        _core.raise_for_problem(422, body)
    assert (invalid.value.field, invalid.value.reason) == ("item.response", None)
    with pytest.raises(ServiceUnavailable) as down:
        _core.raise_for_problem(503, b'{"detail": "unavailable: the database does not answer"}')
    assert down.value.reason == "unavailable"
    with pytest.raises(ProblemError) as odd:
        _core.raise_for_problem(502, b"<html>bad gateway</html>")
    assert type(odd.value) is ProblemError
    assert odd.value.detail == "<html>bad gateway</html>"
    _core.raise_for_problem(200, b"not even json")  # not a problem: nothing raised


def test_result_lines_parse_by_status() -> None:
    line = (
        '{"id": "a", "item_id": null, "status": "failed", "rubric": {"id": "r", "version": "1",'
        ' "hash": "h"}, "panel_name": "p", "created_at": "t", "error": "internal_error: x",'
        ' "line": 3, "batch_id": "b"}'
    )
    parsed = _core.parse_line(line)
    assert (parsed.status, parsed.line, parsed.error) == ("failed", 3, "internal_error: x")
