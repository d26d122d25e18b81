"""The OpenAPI document is a contract a client can generate from: ``schemathesis run --checks
all`` (every check it has: no 5xx, responses and status codes as documented, schema-valid
requests accepted and invalid ones refused, ``Allow`` on 405, authentication enforced) is
clean against ``judge serve`` on PostgreSQL with API keys required, and the request examples
the document shows in Swagger's "Try it out" score as sent.

The pass is bounded and deterministic: ``MAX_EXAMPLES`` per operation and phase, seed 1
(``tests/e2e/schemathesis.toml``, which also states the one documented exception).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Page

from tests.fixtures import loopback
from tests.fixtures.browser import visit
from tests.fixtures.stacks import (
    ServiceStack,
    SimulatorProcess,
    create_pg_database,
    drop_pg_database,
    make_stack,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

CONFIG = Path(__file__).with_name("schemathesis.toml")
MAX_EXAMPLES = 3


@pytest.fixture(scope="module")
def keyed_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
    postgres_available: None,
) -> Iterator[tuple[ServiceStack, str]]:
    """``judge serve`` (jobs in process) on PostgreSQL with keys required, and an admin key."""
    name, database_url = create_pg_database()
    workdir = tmp_path_factory.mktemp("contract")
    stack = make_stack(
        workdir,
        database_url=database_url,
        simulator=service_simulator,
        config=service_config,
        redis_url=None,
    )
    # generous per-key and failed-authentication rates: the fuzzer sends hundreds of requests a
    # minute, many without a key on purpose, and should reach the routes, not the quotas
    stack.env |= {
        "JUDGE_API__REQUIRE_KEYS": "true",
        "JUDGE_API__RATE_LIMIT": "1000/second",
        "JUDGE_API__AUTH_FAILURE_LIMIT": "1000/second",
    }
    try:
        key = stack.create_key("contract", "admin")
        stack.start_api()
        yield stack, key
    finally:
        stack.stop()
        drop_pg_database(name)


def _document(stack: ServiceStack) -> dict[str, Any]:
    document: dict[str, Any] = loopback.get(f"{stack.base_url}/schema/openapi.json").json()
    return document


def test_schemathesis_all_checks_clean(
    keyed_stack: tuple[ServiceStack, str], tmp_path: Path
) -> None:
    stack, key = keyed_stack
    schemathesis = Path(sys.executable).with_name("schemathesis")
    run = subprocess.run(
        [
            str(schemathesis),
            "--config-file",
            str(CONFIG),
            "--no-color",
            "run",
            f"{stack.base_url}/schema/openapi.json",
            "--checks",
            "all",
            "--max-examples",
            str(MAX_EXAMPLES),
            "--header",
            f"Authorization: Bearer {key}",
        ],
        cwd=tmp_path,  # its cache (.schemathesis/) stays out of the checkout
        capture_output=True,
        text=True,
        timeout=840,
        check=False,
    )
    summary = run.stdout[run.stdout.find("SUMMARY") :]
    print(summary)
    assert run.returncode == 0, run.stdout[-12_000:]


def test_documented_examples_score_as_sent(keyed_stack: tuple[ServiceStack, str]) -> None:
    stack, key = keyed_stack
    document = _document(stack)
    body = document["paths"]["/v1/scores"]["post"]["requestBody"]["content"]["application/json"]
    examples = body["examples"]
    assert len(examples) == 3  # dyadic shorthand, multi-party, dyadic with turns
    headers = {"Authorization": f"Bearer {key}"}
    for name, example in examples.items():
        answer = loopback.post(
            f"{stack.base_url}/v1/scores",
            params={"wait": 60},
            json=example["value"],
            headers=headers,
            timeout=90,
        )
        assert answer.status_code == 200, (name, answer.text)
        assert answer.json()["status"] == "completed", name
    batch = document["paths"]["/v1/batches"]["post"]["requestBody"]["content"]
    sent = next(iter(batch["application/json"]["examples"].values()))["value"]
    answer = loopback.post(f"{stack.base_url}/v1/batches", json=sent, headers=headers)
    assert answer.status_code == 202, answer.text
    assert answer.json()["rejected"] == 0, answer.text


def test_the_item_is_typed_and_the_key_is_a_security_scheme(
    keyed_stack: tuple[ServiceStack, str],
) -> None:
    stack, _ = keyed_stack
    document = _document(stack)
    schemas = document["components"]["schemas"]
    item = schemas["ScoreRequest"]["properties"]["item"]
    assert item == {"$ref": "#/components/schemas/Item"}
    forms = {ref["$ref"].rsplit("/", 1)[-1] for ref in schemas["Item"]["oneOf"]}
    assert forms == {"Conversation", "ShorthandItem"}
    conversation = schemas["Conversation"]
    assert conversation["additionalProperties"] is False
    assert conversation["properties"]["participants"]["minItems"] == 2
    assert schemas["Turn"]["properties"]["speaker"]["pattern"]
    assert schemas["CanaryRequest"]["properties"]["calibration_id"]["pattern"] == "^[0-9a-f]{32}$"
    assert schemas["BatchRequest"]["properties"]["items"]["minItems"] == 1
    assert document["components"]["securitySchemes"]["apiKey"]["scheme"] == "bearer"
    operations = {
        f"{method.upper()} {path}": operation
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    }
    assert operations["POST /v1/scores"]["security"] == [{"apiKey": []}]
    assert operations["GET /health"]["security"] == []
    assert "404" in operations["POST /v1/calibrations/plan"]["responses"]
    assert not any(path.startswith("/schema") for path in document["paths"])


def test_every_405_and_options_names_the_allowed_methods(
    keyed_stack: tuple[ServiceStack, str],
) -> None:
    stack, key = keyed_stack
    headers = {"Authorization": f"Bearer {key}"}
    for path, methods in _document(stack)["paths"].items():
        url = stack.base_url + path.replace("{", "").replace("}", "")
        documented = {method.upper() for method in methods} | {"OPTIONS"}
        refused = loopback.request("TRACE", url, headers=headers)
        assert refused.status_code == 405, path
        assert set(refused.headers["Allow"].replace(" ", "").split(",")) == documented, path
        options = loopback.options(url, headers=headers)
        assert set(options.headers["Allow"].replace(" ", "").split(",")) == documented, path


def test_try_it_out_in_swagger_scores_the_default_example(
    keyed_stack: tuple[ServiceStack, str],
) -> None:
    """In headless Chromium: Authorize with the key, open POST /v1/scores, "Try it out" with the
    body Swagger fills in (the first documented example), Execute: the item is scored."""
    stack, key = keyed_stack

    async def steps(page: Page) -> dict[str, Any]:
        await page.wait_for_selector(".swagger-ui .info .title", timeout=30_000)
        await page.locator("button.authorize").first.click()
        await page.locator(".auth-container input").first.fill(key)
        await page.locator(".auth-btn-wrapper button.authorize").first.click()
        await page.locator(".auth-btn-wrapper button.btn-done").first.click()
        path = page.locator(".opblock-summary-path", has_text=re.compile(r"^/v1/scores$"))
        operation = page.locator(".opblock-post", has=path).first
        await operation.locator(".opblock-summary").click()
        await operation.locator(".try-out__btn").click()
        await operation.locator('tr[data-param-name="wait"] input').fill("60")
        body = await operation.locator("textarea.body-param__text").input_value()
        await operation.locator(".execute").click()
        status = operation.locator(".live-responses-table .response .response-col_status")
        await status.first.wait_for(timeout=90_000)
        answer = operation.locator(".live-responses-table .response-col_description pre")
        return {
            "body": body,
            "status": (await status.first.inner_text()).strip(),
            "answer": await answer.first.inner_text(),
        }

    seen = visit(f"{stack.base_url}/schema/swagger", "swagger-try-it-out", steps)
    assert seen.problems() == []
    sent = json.loads(seen.result["body"])
    assert sent["rubric"] == "epitome"
    assert "seeker_post" in sent["item"]
    assert seen.result["status"] == "200", seen.result
    assert json.loads(seen.result["answer"])["status"] == "completed"
