"""Property-based fuzzing of the HTTP API with schemathesis, on PostgreSQL.

Schemathesis reads ``/schema/openapi.json`` from the running service and sends requests
generated from it, valid and invalid ones (NUL characters included), to every operation. Each
response must be no 5xx and must match what the document declares for its status code (the
route's model for a success, a problem-details body for an error). The pass is bounded: at
most ``MAX_EXAMPLES`` requests per operation, about a minute in all.

``test_real_responses_match_the_document`` sends what the fuzzer rarely manages to build (valid
items, existing ids) so that every success body is checked against the document too.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.errors import Unsatisfiable
from pydantic import TypeAdapter
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import response_schema_conformance

from judge.domain.wire import CompletedLine, JobStatusLine
from tests.fixtures.stacks import ServiceStack, finished

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]
# Hypothesis keeps caches in ./.hypothesis by default: keep the checkout clean
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / f"empathy-judge-hypothesis-{os.getuid()}")

#: per operation and mode; ``EMPATHY_JUDGE_FUZZ_EXAMPLES`` raises it for a deeper pass by hand
MAX_EXAMPLES = int(os.environ.get("EMPATHY_JUDGE_FUZZ_EXAMPLES", "25"))
#: ``?wait=`` is capped here, so that a generated wait never holds a request for minutes
MAX_WAIT_S = 2.0


def _capped_wait(case: Any) -> None:
    wait = (case.query or {}).get("wait")
    if isinstance(wait, int | float) and not isinstance(wait, bool) and wait > MAX_WAIT_S:
        case.query["wait"] = MAX_WAIT_S


def _fuzzer(operation: Any, mode: GenerationMode, examples: Counter[str]) -> Any:
    """A Hypothesis test of one operation in one generation mode."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(case: Any) -> None:
        _capped_wait(case)
        examples[f"{operation.label} ({mode.value})"] += 1
        response = case.call(timeout=60)
        case.validate_response(response, checks=[not_a_server_error, response_schema_conformance])

    return fuzz


def fuzz_api(base_url: str) -> tuple[Counter[str], list[str], int]:
    """Fuzz every operation of the service at ``base_url``, valid (positive) and invalid
    (negative) requests: (requests per operation and mode, failures, operations)."""
    schema = schemathesis.openapi.from_url(f"{base_url}/schema/openapi.json")
    examples: Counter[str] = Counter()
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _fuzzer(operation, mode, examples)()
            except Unsatisfiable:  # no parameters and no body: nothing to make invalid
                assert mode is GenerationMode.NEGATIVE
            except (Exception, FailureGroup) as exc:  # collect every failure, report them all
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    return examples, failures, len(operations)


@pytest.fixture(scope="module")
def service_config(service_config: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shared configuration with generous request and failed-authentication rates: the
    fuzzer sends hundreds of requests a minute, many with junk keys on purpose, and the module's
    later test must reach the routes from the same address, not the limiter."""
    config = json.loads(service_config.read_text(encoding="utf-8"))
    config["api"] = {"rate_limit": "1000/second", "auth_failure_limit": "1000/second"}
    path = tmp_path_factory.mktemp("fuzz-config") / "judge.yaml"
    path.write_text(json.dumps(config, indent=2), encoding="utf-8")  # JSON is YAML
    return path


def test_no_5xx_and_every_response_as_documented(postgresql_stack: ServiceStack) -> None:
    started = time.monotonic()
    examples, failures, operations = fuzz_api(postgresql_stack.base_url)
    print(
        f"\nschemathesis: {sum(examples.values())} requests, {operations} operations, "
        f"{time.monotonic() - started:.0f} s; {len(failures)} failing"
    )
    for label, count in sorted(examples.items()):
        print(f"  {count:4d}  {label}")
    assert not failures, "\n\n".join(failures)
    assert operations >= 15
    exercised = {label.rsplit(" (", 1)[0] for label in examples}
    assert len(exercised) == operations, "some operations were not exercised"


# -- success bodies, checked against the same document ------------------------------------
def _item(n: int) -> dict[str, Any]:
    return {
        "id": f"doc-{n}",
        "seeker_post": f"My best friend moved abroad and I feel left behind ({n}).",
        "response": "That is a real loss. What do you miss most about having her near?",
        "metadata": {"n": n},
    }


def _wait_done(client: httpx.Client, path: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        body: dict[str, Any] = client.get(path).json()
        if body["status"] in ("completed", "failed") or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


def test_real_responses_match_the_document(postgresql_stack: ServiceStack) -> None:
    document = schemathesis.openapi.from_url(f"{postgresql_stack.base_url}/schema/openapi.json")
    client = postgresql_stack.client
    checked: list[str] = []

    def check(method: str, template: str, response: httpx.Response, status: int) -> None:
        assert response.status_code == status, response.text
        document[template][method].validate_response(response)
        checked.append(f"{method} {template} {status}")

    queued = client.post("/v1/scores", json={"rubric": "epitome", "item": _item(1)})
    check("POST", "/v1/scores", queued, queued.status_code)
    # ?wait=: 200 with the finished score, or 202 when the wait ran out first (a loaded
    # machine); either answer is checked against the document, then the finished score
    done = client.post(
        "/v1/scores", params={"wait": 60}, json={"rubric": "epitome", "item": _item(2)}
    )
    check("POST", "/v1/scores", done, done.status_code)
    finished(client, done)
    check("GET", "/v1/scores/{job_id}", client.get(f"/v1/scores/{done.json()['id']}"), 200)
    failed = client.post(
        "/v1/scores",
        params={"wait": 60},
        json={"rubric": "epitome", "panel": "unknown-model", "item": _item(3)},
    )
    check("POST", "/v1/scores", failed, failed.status_code)
    assert finished(client, failed)["status"] == "failed"

    batch = client.post("/v1/batches", json={"rubric": "epitome", "items": [_item(4), {"x": 1}]})
    check("POST", "/v1/batches", batch, 202)
    batch_id = batch.json()["id"]
    _wait_done(client, f"/v1/batches/{batch_id}")
    check("GET", "/v1/batches/{batch_id}", client.get(f"/v1/batches/{batch_id}"), 200)
    results = client.get(f"/v1/batches/{batch_id}/results")
    assert results.headers["content-type"].startswith("application/x-ndjson")
    lines = [line for line in results.text.splitlines() if line]
    line_model: TypeAdapter[Any] = TypeAdapter(CompletedLine | JobStatusLine)
    assert [line_model.validate_json(line).line for line in lines] == [1]

    check("GET", "/v1/rubrics", client.get("/v1/rubrics"), 200)
    check("GET", "/v1/rubrics/{rubric_id}", client.get("/v1/rubrics/epitome"), 200)
    labelled = [
        {"id": f"c{n}", "item": _item(10 + n), "labels": {"e1": {"emotional_reactions": n % 3}}}
        for n in range(3)
    ]
    run = client.post(
        "/v1/calibrations", params={"wait": 60}, json={"rubric": "epitome", "items": labelled}
    )
    check("POST", "/v1/calibrations", run, run.status_code)
    run_id = run.json()["id"]
    completed = _wait_done(client, f"/v1/calibrations/{run_id}")
    assert completed["status"] == "completed"
    check("GET", "/v1/calibrations/{run_id}", client.get(f"/v1/calibrations/{run_id}"), 200)
    canary = client.post("/v1/canaries", json={"calibration_id": run_id, "interval_s": 86_400})
    check("POST", "/v1/canaries", canary, 201)
    check("GET", "/v1/canaries", client.get("/v1/canaries"), 200)
    check("GET", "/v1/reliability/{rubric_id}", client.get("/v1/reliability/epitome"), 200)
    check("GET", "/health", client.get("/health"), 200)
    check("GET", "/ready", client.get("/ready"), 200)
    # and one problem of each kind
    check("GET", "/v1/scores/{job_id}", client.get(f"/v1/scores/{'0' * 32}"), 404)
    check("GET", "/v1/scores/{job_id}", client.get("/v1/scores/x"), 422)
    check("POST", "/v1/scores", client.post("/v1/scores", json={"rubric": "nope", "item": {}}), 404)
    assert len(checked) == 18
    # the document is strict enough to catch a wrong body: /health's answer is not /ready's
    with pytest.raises(FailureGroup) as caught:
        document["/ready"]["GET"].validate_response(client.get("/health"))
    assert "Response violates schema" in str(caught.value.exceptions[0])


if __name__ == "__main__":  # fuzz any running server: python -m tests.e2e.test_api_fuzz URL
    import sys

    found_examples, found, n_operations = fuzz_api(sys.argv[1])
    print(f"{sum(found_examples.values())} requests, {n_operations} operations")
    print("\n\n".join(found) or "no failures")
