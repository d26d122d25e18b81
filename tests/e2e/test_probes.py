"""Bias probes and self-consistency on the real stack: ``judge serve`` and a Celery worker on
SQLite and Redis, the simulator's personas as judges over HTTP through LiteLLM. Each probe
finds the persona built to fail it and stays quiet on ``accurate`` (simulated judges)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from evidence.probe_evidence import DYADIC as BENCH_DYADIC
from evidence.probe_evidence import NAMES, couple, sims
from judge.simulator.process import SimulatorProcess
from tests.fixtures.stacks import (
    RedisDatabases,
    ServiceStack,
    make_stack,
    query,
    sqlite_url,
)

DYADIC = BENCH_DYADIC[:8]
COUPLES = NAMES[:5]


PANELS = {
    "accurate": {"judges": sims("accurate@1", "accurate@2", "accurate@3")},
    "verbose": {"judges": sims("verbose@1", "verbose@2", "accurate")},
    "order-biased": {"judges": sims("order-biased@1", "order-biased@2", "accurate")},
    "unstable": {"judges": sims("unstable", "accurate@1", "accurate@2", samples=3)},
    "accurate-k3": {"judges": sims("accurate@1", "accurate@2", "accurate@3", samples=3)},
    "families": {
        "judges": [
            {"model": "openai/lenient@gpt", "simulated": True, "family": "openai"},
            {"model": "openai/accurate@claude", "simulated": True, "family": "anthropic"},
            {"model": "openai/accurate@gemini", "simulated": True, "family": "google"},
        ],
        "quorum": 2,
    },
}
PANELS["families-keep"] = {**PANELS["families"], "self_preference": "keep"}
# every judge through LiteLLM's adapter (``auto`` would take the direct OpenAI-compatible path)
for _panel in PANELS.values():
    _panel["judges"] = [judge | {"client": "litellm"} for judge in _panel["judges"]]


@pytest.fixture(scope="module")
def probe_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    redis_databases: RedisDatabases,
) -> Iterator[ServiceStack]:
    workdir = tmp_path_factory.mktemp("probe-stack")
    config = workdir / "judge.yaml"
    config.write_text(json.dumps({"default_panel": "accurate", "panels": PANELS}))
    url = redis_databases.acquire()
    stack = make_stack(
        workdir,
        database_url=sqlite_url(workdir),
        simulator=service_simulator,
        config=config,
        redis_url=url,
    )
    try:
        stack.start_worker()
        stack.start_api()
        yield stack
    finally:
        stack.stop()
        redis_databases.release(url)


def run_probe(stack: ServiceStack, **body: Any) -> dict[str, Any]:
    response = stack.client.post("/v1/probes", params={"wait": 60}, json=body)
    view = stack.finished(response)
    assert view["status"] == "completed", view
    report: dict[str, Any] = view["report"]
    assert report["simulated"] is True
    return report


def score(stack: ServiceStack, panel: str, item: dict[str, Any]) -> dict[str, Any]:
    body = {"rubric": "epitome", "panel": panel, "item": item}
    response = stack.client.post("/v1/scores", params={"wait": 30}, json=body)
    result = stack.finished(response)
    assert result["status"] == "completed", result
    return result


def reasons(result: dict[str, Any], dim: str) -> list[str]:
    found: list[str] = result["dimensions"][dim]["reliability"]["reasons"]
    return found


EPITOME = ("emotional_reactions", "interpretations", "explorations")


def test_verbosity_probe_finds_the_verbose_persona_and_flags_until_cleared(
    probe_stack: ServiceStack,
) -> None:
    item = DYADIC[0]
    assert not any(
        "length_sensitive" in reasons(score(probe_stack, "verbose", item), d) for d in EPITOME
    )
    report = run_probe(
        probe_stack, rubric="epitome", panel="verbose", kind="verbosity", items=DYADIC
    )
    assert report["cost"]["calls_per_item"] == 6  # 3 judges x (original + padded)
    assert sorted(report["length_sensitive"]) == sorted(EPITOME)
    for dim in EPITOME:
        shift = report["dimensions"][dim]["shift"]
        assert shift["n"] == len(DYADIC)
        assert shift["mean"] > 0.25
        assert shift["ci95"][0] > 0
        assert report["dimensions"][dim]["judges"]["openai/accurate"]["mean"] == 0
    time.sleep(5.5)  # the scoring process remembers probe lookups for 5 s
    flagged = score(probe_stack, "verbose", DYADIC[1])
    assert all("length_sensitive" in reasons(flagged, d) for d in EPITOME)
    # a later probe that finds nothing clears the flag (a huge tolerance stands in for a fix)
    cleared = run_probe(
        probe_stack, rubric="epitome", panel="verbose", kind="verbosity", items=DYADIC, tolerance=5
    )
    assert cleared["length_sensitive"] == []
    time.sleep(5.5)
    again = score(probe_stack, "verbose", DYADIC[2])
    assert not any("length_sensitive" in reasons(again, d) for d in EPITOME)


def test_verbosity_probe_is_quiet_on_accurate(probe_stack: ServiceStack) -> None:
    report = run_probe(
        probe_stack, rubric="epitome", panel="accurate", kind="verbosity", items=DYADIC
    )
    assert report["length_sensitive"] == []
    for dim in EPITOME:
        assert report["dimensions"][dim]["shift"]["mean"] == 0


def _participant_dims(report: dict[str, Any]) -> list[str]:
    return [d for d, v in report["dimensions"].items() if v.get("participant_labels")]


def test_order_probe_finds_the_order_biased_persona(probe_stack: ServiceStack) -> None:
    items = [couple(a, b) for a, b in COUPLES]
    biased = run_probe(
        probe_stack, rubric="rescue-couple", panel="order-biased", kind="order", items=items
    )
    accurate = run_probe(
        probe_stack, rubric="rescue-couple", panel="accurate", kind="order", items=items
    )
    targets = _participant_dims(biased)
    assert targets
    for dim in targets:
        rate = biased["dimensions"][dim]["change_rate"]
        assert rate["n"] == len(items)
        assert rate["mean"] == 1.0
        assert biased["dimensions"][dim]["judges"]["openai/accurate"]["mean"] == 0
    for dim, entry in accurate["dimensions"].items():
        assert entry["change_rate"]["mean"] == 0, dim


def test_order_probe_needs_a_multi_party_rubric(probe_stack: ServiceStack) -> None:
    body = {"rubric": "epitome", "kind": "order", "items": DYADIC}
    response = probe_stack.client.post("/v1/probes", json=body)
    assert response.status_code == 422
    assert response.json()["field"] == "kind"


def test_samples_flag_the_unstable_persona_and_calibration_measures_stability(
    probe_stack: ServiceStack,
) -> None:
    unstable = [score(probe_stack, "unstable", item) for item in DYADIC]
    steady = [score(probe_stack, "accurate-k3", item) for item in DYADIC]
    # three judges, three samples each (a timeout retry on a busy machine adds calls)
    assert all(r["usage"]["llm_calls"] + r["usage"]["cache_hits"] >= 9 for r in unstable)
    flagged = sum("judge_unstable" in reasons(r, d) for r in unstable for d in EPITOME)
    assert flagged > 0
    assert not any("judge_unstable" in reasons(r, d) for r in steady for d in EPITOME)
    judge = unstable[0]["dimensions"]["explorations"]["judges"][0]
    assert judge["model"] == "openai/unstable"
    assert len(judge["samples"]["values"]) == 3
    labelled = [{"item": item, "labels": {"expert": dict.fromkeys(EPITOME, 1)}} for item in DYADIC]
    response = probe_stack.client.post(
        "/v1/calibrations",
        params={"wait": 60},
        json={"rubric": "epitome", "panel": "unstable", "items": labelled},
    )
    report = probe_stack.finished(response)["report"]
    assert report["cost"]["calls_per_item"] == 9
    for dim in EPITOME:
        stability = report["stability"][dim]
        assert stability["openai/accurate@1"]["share_identical"] == 1.0
        assert stability["openai/unstable"]["samples"] == 3
    shares = [report["stability"][d]["openai/unstable"]["share_identical"] for d in EPITOME]
    assert min(shares) < 1.0


GENERATORS = ["gpt-4o", "claude-3-7-sonnet", "gemini-2.5-pro", "gpt-4o-mini"]


def test_self_preference_excludes_by_default_and_reports_own_family_means(
    probe_stack: ServiceStack,
) -> None:
    items = [
        {**item, "metadata": {"generator_model": GENERATORS[n % len(GENERATORS)]}}
        for n, item in enumerate(DYADIC)
    ]
    excluded = score(probe_stack, "families", items[0])  # generated by gpt-4o
    kept = score(probe_stack, "families-keep", items[0])
    for dim in EPITOME:
        assert "self_preference_excluded" in reasons(excluded, dim)
        assert excluded["dimensions"][dim]["agreement"]["valid"] == 2
        assert excluded["dimensions"][dim]["judges"][0]["self_preference"] == "excluded"
        assert "self_preference_kept" in reasons(kept, dim)
        assert kept["dimensions"][dim]["agreement"]["valid"] == 3
    report = run_probe(
        probe_stack, rubric="epitome", panel="families", kind="self-preference", items=items
    )
    assert report["self_preference"]["items_with_generator"] == len(items)
    gpt = report["self_preference"]["judges"]["openai/lenient@gpt"]
    assert gpt["family"] == "openai"
    for dim in EPITOME:
        assert gpt["dimensions"][dim]["own_family"]["n"] == 4  # gpt-4o and gpt-4o-mini items
        assert gpt["dimensions"][dim]["others"]["n"] == 4
    missing = probe_stack.client.post(
        "/v1/probes", json={"rubric": "epitome", "kind": "self-preference", "items": DYADIC}
    )
    assert missing.status_code == 422
    assert missing.json()["field"] == "items[0].metadata.generator_model"


def test_probe_records_the_key_that_created_it(probe_stack: ServiceStack) -> None:
    probe_stack.create_key("prober", "admin")
    response = probe_stack.client.post(
        "/v1/probes",
        params={"wait": 30},
        headers=probe_stack.headers("prober"),
        json={"rubric": "epitome", "kind": "verbosity", "items": DYADIC[:2]},
    )
    assert response.status_code in (200, 202), response.text
    run_id = response.json()["id"]
    rows = query(
        probe_stack.database_url, f"SELECT owner_key_id FROM probe_runs WHERE id = '{run_id}'"
    )
    keys = query(probe_stack.database_url, "SELECT id FROM api_keys WHERE name = 'prober'")
    assert rows == [(keys[0][0],)]
