"""The API's one table from errors to problem details: every JudgeError has a row (a new error
without one fails here), every error is defined in judge/errors.py, each row answers what the
handlers answered before, and an error without a row is a 500, not a silent 422."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from litestar import Litestar, get
from litestar.testing import TestClient

import judge
from judge import errors
from judge.api.problems import PROBLEMS, handle_exception, problem_row
from judge.errors import JudgeError

JUDGE_DIR = Path(judge.__file__).parent


def _subclasses(kind: type[JudgeError]) -> set[type[JudgeError]]:
    found = set(kind.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


ERRORS = sorted(
    (e for e in _subclasses(JudgeError) if e.__module__ == errors.__name__),
    key=lambda e: e.__name__,
)


@pytest.mark.parametrize("kind", ERRORS, ids=lambda e: e.__name__)
def test_every_error_has_a_row(kind: type[JudgeError]) -> None:
    assert problem_row(kind) is not None, f"add {kind.__name__} to judge.api.problems.PROBLEMS"


def test_the_table_names_only_errors_of_errors_py() -> None:
    assert {k.__module__ for k in PROBLEMS} == {errors.__name__}
    assert JudgeError not in PROBLEMS  # the base has no row: an unmapped error is a bug


def test_every_error_class_is_defined_in_errors_py() -> None:
    """No module defines a JudgeError subclass of its own (read from the source, so that a
    module nothing imports here is checked too)."""
    names = {e.__name__ for e in ERRORS} | {JudgeError.__name__}
    elsewhere = []
    for path in sorted(JUDGE_DIR.rglob("*.py")):
        if path == JUDGE_DIR / "errors.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {getattr(b, "id", None) or getattr(b, "attr", "") for b in node.bases}
            if bases & names:
                elsewhere.append(f"{path.relative_to(JUDGE_DIR)}: {node.name}")
    assert elsewhere == []


class Stray(JudgeError):
    """An error nobody gave a row (defined here, so the checks above do not see it)."""


#: (error, status, field, members beyond the standard ones)
CASES: list[tuple[JudgeError, int, str | None, dict[str, Any]]] = [
    (errors.ScoreNotFound("a" * 32), 404, "id", {}),
    (errors.BatchNotFound("a" * 32), 404, "id", {}),
    (errors.CalibrationNotFound("a" * 32), 404, "id", {}),
    (errors.ProbeNotFound("a" * 32), 404, "id", {}),
    (errors.RubricNotFound("nope"), 404, "rubric", {"rubric": "nope"}),
    (errors.RubricNotFound("nope", field="rubric_id"), 404, "rubric_id", {}),
    (errors.CalibrationNotReady("a" * 32, "running"), 409, "id", {}),
    (errors.IdempotencyKeyReused(), 422, "header.Idempotency-Key", {}),
    (errors.IdempotencyKeyInvalid(), 422, "header.Idempotency-Key", {}),
    (errors.BaselineNotCompleted("a" * 32), 422, "calibration_id", {}),
    (errors.BatchTooLarge(10, 11), 413, None, {}),
    (errors.CalibrationTooLarge(10, 11), 413, "items", {}),
    (errors.ItemInvalid("items[0].item", "is not an object"), 422, "items[0].item", {}),
    (errors.PanelNotFound("nope", ["default"]), 422, "panel", {}),
    (errors.JsonLinesInvalid(3, "invalid JSON"), 422, None, {}),
    (errors.RescueFileError("sessions.jsonl: no rows list"), 422, None, {}),
    (errors.ConfigError("api.host is not an address"), 503, None, {}),
]


def _client(error: BaseException) -> TestClient[Litestar]:
    @get("/boom", sync_to_thread=False)
    def boom() -> None:
        raise error

    app = Litestar([boom], exception_handlers={Exception: handle_exception})
    return TestClient(app)


@pytest.mark.parametrize(
    ("error", "status", "field", "members"), CASES, ids=[type(c[0]).__name__ for c in CASES]
)
def test_an_error_answers_its_row(
    error: JudgeError, status: int, field: str | None, members: dict[str, Any]
) -> None:
    with _client(error) as client:
        response = client.get("/boom")
    body = response.json()
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    detail = error.detail if isinstance(error, errors.ItemInvalid) else error.message
    expected = {"type", "title", "status", "detail", "instance", "request_id", *members}
    assert set(body) == expected | ({"field"} if field is not None else set())
    assert (body["status"], body.get("field"), body["detail"]) == (status, field, detail)
    assert {k: body[k] for k in members} == members


def test_a_dependency_down_is_a_503_with_retry_after_and_no_error_text() -> None:
    for error in (errors.DatabaseUnavailable("pg: connection refused"),):
        with _client(error) as client:
            response = client.get("/boom")
        assert response.status_code == 503
        assert response.headers["retry-after"] == "5"
        assert "refused" not in response.text
        assert response.json()["detail"].startswith("unavailable:")


def test_an_error_without_a_row_is_a_500_bug_not_a_422() -> None:
    assert problem_row(Stray) is None
    with _client(Stray("a secret detail")) as client:
        response = client.get("/boom")
    assert response.status_code == 500
    assert "secret" not in response.text
    assert response.json()["detail"].startswith("internal_error:")
