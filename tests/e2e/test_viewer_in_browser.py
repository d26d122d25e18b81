"""The results viewer (/ui) in headless Chromium, offline, against ``judge serve`` with keys
required: a person logs in with a key, opens the runs, a batch, filters it to untrusted items,
downloads those rows as CSV, opens an item (its conversation and each judge's rationale), the
calibration and the drift pages; another key sees none of it. Every page: no console error,
nothing fetched from the internet, no serious or critical axe-core violation, no sideways
scrolling at 1366 px or at phone width. Screenshots go to build/test-artifacts/viewer-*.png.
All judges are the simulator's personas (the pages say SIMULATED)."""

from __future__ import annotations

import csv
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Page

from tests.e2e.test_html_in_browser import _labelled
from tests.e2e.test_service import item
from tests.fixtures import loopback
from tests.fixtures.axe import axe_source, axe_violations, blocking
from tests.fixtures.browser import ARTIFACTS, visit
from tests.fixtures.stacks import ServiceStack, SimulatorProcess, make_stack, sqlite_url

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

PHONE = {"width": 390, "height": 844}


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def _done(client: httpx.Client, url: str, headers: dict[str, str]) -> dict[str, Any]:
    deadline = time.monotonic() + 240
    while True:
        data: dict[str, Any] = client.get(url, headers=headers).json()
        if data["status"] in ("completed", "failed"):
            return data
        assert time.monotonic() < deadline, data
        time.sleep(0.3)


@pytest.fixture(scope="module")
def viewer_stack(
    tmp_path_factory: pytest.TempPathFactory,
    service_simulator: SimulatorProcess,
    service_config: Path,
) -> Iterator[dict[str, Any]]:
    """``judge serve`` (keys required) with Alice's calibration, canary run and batch."""
    workdir = tmp_path_factory.mktemp("viewer-stack")
    stack: ServiceStack = make_stack(
        workdir,
        database_url=sqlite_url(workdir),
        simulator=service_simulator,
        config=service_config,
        redis_url=None,
    )
    stack.env |= {"JUDGE_API__REQUIRE_KEYS": "true", "JUDGE_API__MIN_CANARY_INTERVAL_S": "1"}
    try:
        stack.start_api()
        alice = stack.create_key("alice", "batch", "calibrate")
        bob = stack.create_key("bob", "batch", "calibrate")
        client, headers = stack.client, _bearer(alice)
        started = client.post(
            "/v1/calibrations?wait=120",
            json={"rubric": "epitome", "items": [_labelled(n) for n in range(30)]},
            headers=headers,
        )
        assert started.status_code in (200, 202), started.text
        run = _done(client, f"/v1/calibrations/{started.json()['id']}", headers)
        canary = client.post(
            "/v1/canaries",
            json={"calibration_id": run["id"], "interval_s": 3600, "name": "nightly"},
            headers=headers,
        )
        assert canary.status_code in (200, 201), canary.text
        beat = stack.judge("beat", "--once", timeout=240)
        assert beat.returncode == 0, beat.stderr
        items = [item("viewer", n) for n in range(10)]
        items[0] = {
            "id": "viewer-dialogue",
            "participants": [
                {"id": "sam", "role": "seeker"},
                {"id": "kit", "role": "supporter"},
            ],
            "turns": [
                {"speaker": "sam", "text": "I failed my driving test again and feel stupid."},
                {"speaker": "kit", "text": "That sounds really discouraging. What happened?"},
                {"speaker": "sam", "text": "I panicked at the roundabout."},
                {
                    "speaker": "kit",
                    "text": "Panicking under pressure is so common; it "
                    "does not make you stupid. Want to talk through it?",
                },
            ],
        }
        submitted = client.post(
            "/v1/batches", json={"rubric": "epitome", "items": items}, headers=headers
        )
        assert submitted.status_code == 202, submitted.text
        batch = _done(client, f"/v1/batches/{submitted.json()['id']}", headers)
        results = [
            json.loads(line)
            for line in client.get(f"/v1/batches/{batch['id']}/results", headers=headers)
            .text.strip()
            .splitlines()
        ]
        yield {
            "stack": stack,
            "alice": alice,
            "bob": bob,
            "run": run,
            "batch": batch,
            "results": results,
        }
    finally:
        stack.stop()


def _untrusted(results: list[dict[str, Any]]) -> set[str]:
    return {
        r["item_id"]
        for r in results
        if any(d["reliability"]["level"] == "untrusted" for d in r["dimensions"].values())
    }


def _job_of(results: list[dict[str, Any]], item_id: str) -> str:
    job: str = next(r["id"] for r in results if r["item_id"] == item_id)
    return job


async def _check_page(page: Page, name: str, seen: dict[str, Any]) -> None:
    """Screenshot, accessibility and width checks of the page now shown."""
    await page.screenshot(path=str(ARTIFACTS / f"viewer-{name}.png"), full_page=True)
    seen["axe"][name] = await axe_violations(page)
    width = await page.evaluate(
        """() => [document.documentElement.scrollWidth, window.innerWidth,
            [...document.querySelectorAll("main *")]
                .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1
                             && !e.closest(".scroll"))
                .slice(0, 5).map(e => e.tagName + "." + e.className)]"""
    )
    seen["widths"][name] = width


def test_a_person_browses_a_batch_an_item_a_calibration_and_drift(
    viewer_stack: dict[str, Any],
) -> None:
    stack: ServiceStack = viewer_stack["stack"]
    batch_id, run_id = viewer_stack["batch"]["id"], viewer_stack["run"]["id"]
    dialogue = _job_of(viewer_stack["results"], "viewer-dialogue")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)

    async def steps(page: Page) -> dict[str, Any]:
        seen: dict[str, Any] = {"axe": {}, "widths": {}}
        await _check_page(page, "login", seen)
        await page.fill("#key", viewer_stack["alice"])
        await page.click("button[type=submit]")
        await page.wait_for_url("**/ui/runs")
        await _check_page(page, "runs", seen)
        seen["runs_text"] = await page.inner_text("main")
        seen["canary_links"] = await page.locator("#canaries a").count()

        await page.click(f"#batches a[href='/ui/batches/{batch_id}']")
        await page.wait_for_url(f"**/ui/batches/{batch_id}")
        await _check_page(page, "batch", seen)
        seen["all_rows"] = await page.locator("tr.item-row").count()
        seen["batch_text"] = await page.inner_text("main")

        await page.select_option("#f-level", "untrusted")
        await page.click("form.filters button[type=submit]")
        await page.wait_for_url("**level=untrusted**")
        await _check_page(page, "batch-untrusted", seen)
        seen["untrusted_rows"] = await page.locator("tr.item-row").count()
        seen["untrusted_ids"] = await page.locator("tr.item-row td:nth-child(2)").all_inner_texts()
        async with page.expect_download() as download:
            await page.click("#csv")
        saved = ARTIFACTS / "viewer-untrusted.csv"
        await (await download.value).save_as(str(saved))
        seen["csv"] = list(csv.DictReader(saved.read_text(encoding="utf-8").splitlines()))

        reason = f"{stack.base_url}/ui/batches/{batch_id}?dimension=interpretations"
        await page.goto(f"{reason}&reason=panel_disagreement")
        seen["reason_ids"] = await page.locator("tr.item-row td:nth-child(2)").all_inner_texts()
        await page.goto(f"{stack.base_url}/ui/batches/{batch_id}?level=trusted")
        seen["trusted_rows"] = await page.locator("tr.item-row").count()
        await page.goto(f"{stack.base_url}/ui/batches/{batch_id}?sort=spread&disagreement=true")
        seen["spreads"] = [
            float(t)
            for t in await page.locator("tr.item-row td:nth-last-child(2)").all_inner_texts()
        ]

        await page.goto(f"{stack.base_url}/ui/batches/{batch_id}")
        await page.click("tr.item-row a:text-is('viewer-dialogue')")
        await page.wait_for_url("**/ui/items/**")
        await _check_page(page, "item", seen)
        seen["focus_text"] = await page.inner_text(".turn.focus")
        seen["turns"] = await page.locator(".turn").count()
        seen["participants"] = await page.inner_text(".participants")
        seen["rationales"] = await page.locator("table.judges td.rationale").all_inner_texts()
        seen["judge_tables"] = await page.locator("table.judges").count()
        seen["item_text"] = await page.inner_text("main")
        seen["calls"] = await page.locator("table.calls tbody tr").all_inner_texts()

        await page.goto(f"{stack.base_url}/ui/calibrations/{run_id}")
        await _check_page(page, "calibration", seen)
        seen["disagreements"] = await page.locator("#disagreements tbody tr").count()
        seen["calibration_text"] = await page.inner_text("main")
        await page.locator("#disagreements tbody tr a").first.click()
        await page.wait_for_url("**/ui/items/**")
        seen["disagreement_item"] = await page.inner_text("main")
        await page.goto(f"{stack.base_url}/ui/calibrations/{run_id}/report")
        seen["report_text"] = await page.inner_text("body")

        await page.goto(f"{stack.base_url}/ui/drift?rubric=epitome")
        await _check_page(page, "drift", seen)
        seen["charts"] = await page.locator("svg.chart").count()
        seen["chart_text"] = await page.locator("svg.chart").first.text_content()

        await page.set_viewport_size(PHONE)
        for name, path in (
            ("phone-runs", "/ui/runs"),
            ("phone-batch", f"/ui/batches/{batch_id}"),
            ("phone-item", f"/ui/items/{dialogue}"),
            ("phone-calibration", f"/ui/calibrations/{run_id}"),
            ("phone-drift", "/ui/drift"),
        ):
            await page.goto(f"{stack.base_url}{path}")
            await _check_page(page, name, seen)
        await page.click("form.logout button")
        await page.wait_for_url("**/ui/login")
        await page.goto(f"{stack.base_url}/ui/runs")
        seen["after_logout"] = page.url
        return seen

    seen_visit = visit(
        f"{stack.base_url}/ui/login", "viewer-final", steps, init_script=axe_source()
    )
    seen = seen_visit.result
    results = viewer_stack["results"]

    # the runs list: the batch, the calibration (SIMULATED) and the canary
    assert batch_id[:12] in seen["runs_text"]
    assert run_id[:12] in seen["runs_text"]
    assert "SIMULATED" in seen["runs_text"]
    assert seen["canary_links"] == 1
    # the batch: every item, the summary with its reasons in words
    assert seen["all_rows"] == len(results) == 10
    assert "low_expert_agreement" in seen["batch_text"]
    assert "SIMULATED" in seen["batch_text"]
    # filtered to untrusted: exactly the items with an untrusted dimension, in the CSV too
    expected = _untrusted(results)
    assert expected, "the epitome prior makes interpretations untrusted"
    assert set(seen["untrusted_ids"]) == expected
    assert {row["id"] for row in seen["csv"]} == expected
    by_id = {r["item_id"]: r for r in results}
    for row in seen["csv"]:
        result = by_id[row["id"]]
        for dim_id, dim in result["dimensions"].items():
            assert row[f"{dim_id}.level"] == dim["reliability"]["level"]
            assert row[f"{dim_id}.score"] == ("" if dim["score"] is None else str(dim["score"]))
    # other filters: a reason on one dimension, and a level no item has
    disagreeing = {
        r["item_id"]
        for r in results
        if "panel_disagreement" in r["dimensions"]["interpretations"]["reliability"]["reasons"]
    }
    assert set(seen["reason_ids"]) == disagreeing
    trusted = [
        r
        for r in results
        if any(d["reliability"]["level"] == "trusted" for d in r["dimensions"].values())
    ]
    assert seen["trusted_rows"] == len(trusted)
    # sorted by spread, largest first, and only where the judges disagree
    assert seen["spreads"] == sorted(seen["spreads"], reverse=True)
    assert all(s > 0 for s in seen["spreads"])
    # the item: the conversation with its focus turn and participants, each judge's rationale
    assert seen["turns"] == 4
    assert "Panicking under pressure" in seen["focus_text"]
    assert "judged turn" in seen["focus_text"]
    assert "sam (seeker)" in seen["participants"]
    assert "kit (supporter)" in seen["participants"]
    assert seen["judge_tables"] == 3  # one per dimension
    assert len(seen["rationales"]) == 9  # 3 judges x 3 dimensions
    assert all(r.strip() for r in seen["rationales"])
    assert len(seen["calls"]) == 3  # one call per judge: its tokens, cost, latency
    assert all(" ms" in call for call in seen["calls"])
    # the calibration's items came first: the provider's prompt cache serves the rubric
    assert all(" cached)" in call for call in seen["calls"]), seen["calls"]
    assert "from the providers' prompt caches" in seen["item_text"]
    for words in ("Experts themselves agree below the floor", "n=", "95% CI", "cache hits"):
        assert words in seen["item_text"], words
    # the calibration: its flags, the disagreements with the experts, each item linked
    assert seen["disagreements"] > 0
    assert "e1:" in seen["calibration_text"]
    assert "Conversation as the judges saw it" in seen["disagreement_item"]
    assert "SIMULATED JUDGES" in seen["report_text"]
    # drift: one chart per dimension of the canary, with the floor and the line
    assert seen["charts"] == 3
    assert "floor 0.40" in seen["chart_text"]
    assert "line 0.58" in seen["chart_text"]
    # logged out: back to the login page
    assert seen["after_logout"].endswith("/ui/login")
    # every page: accessible, no sideways scrolling, nothing failed or fetched from outside
    serious = {name: blocking(v) for name, v in seen["axe"].items() if blocking(v)}
    assert serious == {}, serious
    wide = {name: w for name, w in seen["widths"].items() if w[0] > w[1]}
    assert wide == {}, wide
    assert seen_visit.problems() == []


def test_another_key_sees_none_of_it(viewer_stack: dict[str, Any]) -> None:
    stack: ServiceStack = viewer_stack["stack"]
    batch_id, run_id = viewer_stack["batch"]["id"], viewer_stack["run"]["id"]
    job_id = _job_of(viewer_stack["results"], "viewer-dialogue")
    secret_texts = ("viewer-dialogue", "driving test", batch_id[:12], run_id[:12])

    async def steps(page: Page) -> dict[str, Any]:
        await page.fill("#key", viewer_stack["bob"])
        await page.click("button[type=submit]")
        await page.wait_for_url("**/ui/runs")
        seen: dict[str, Any] = {"runs": await page.inner_text("main"), "pages": {}}
        for path in (
            f"/ui/batches/{batch_id}",
            f"/ui/batches/{batch_id}/items.csv",
            f"/ui/items/{job_id}",
            f"/ui/calibrations/{run_id}",
            f"/ui/calibrations/{run_id}/report",
            "/ui/drift?rubric=epitome",
        ):
            response = await page.request.get(f"{stack.base_url}{path}")
            seen["pages"][path] = (response.status, await response.text())
        await page.goto(f"{stack.base_url}/ui/batches/{batch_id}")
        await page.screenshot(path=str(ARTIFACTS / "viewer-other-key-404.png"), full_page=True)
        seen["violations"] = blocking(await axe_violations(page))
        return seen

    seen_visit = visit(
        f"{stack.base_url}/ui/login", "viewer-other-key", steps, init_script=axe_source()
    )
    seen = seen_visit.result
    for text in secret_texts:
        assert text not in seen["runs"], text
    for path, (status, body) in seen["pages"].items():
        if path.startswith("/ui/drift"):
            assert status == 200
            assert "No canary runs" in body  # Alice's canary is not Bob's
        else:
            assert status == 404, (path, status)
        for text in secret_texts[:2]:
            assert text not in body, (path, text)
    assert seen["violations"] == []
    # a wrong key gets the login page again, and no session
    wrong = loopback.post(f"{stack.base_url}/ui/login", data={"key": "ej_wrong"})
    assert wrong.status_code == 401
    assert "unknown or revoked" in wrong.text
    assert "set-cookie" not in wrong.headers
    # without a session every page sends the person to the login page
    anonymous = loopback.get(f"{stack.base_url}/ui/batches/{batch_id}")
    assert anonymous.status_code == 303
    assert anonymous.headers["location"] == "/ui/login"
    # the one console error: the browser logging the 404 page it was sent to on purpose
    assert seen_visit.problems() == [
        "console: Failed to load resource: the server responded with a status of 404 (Not Found)"
    ]


def test_the_batch_commands_list_summarise_and_cancel(viewer_stack: dict[str, Any]) -> None:
    """``judge batch list|summary|cancel`` against the server, at 80 columns."""
    stack: ServiceStack = viewer_stack["stack"]
    batch_id = viewer_stack["batch"]["id"]
    remote = ("--url", stack.base_url)

    def run(*args: str, key: str = viewer_stack["alice"]) -> str:
        done = stack.judge("batch", *args, *remote, "--key", key)
        assert done.returncode == 0, done.stderr
        assert max(len(line) for line in done.stdout.splitlines()) <= 80, done.stdout
        return done.stdout

    listed = run("list")
    assert listed.splitlines()[0].startswith(f"{batch_id} completed")
    assert "SIMULATED" in listed
    assert batch_id not in run("list", key=viewer_stack["bob"])
    summary = run("summary", batch_id)
    for words in ("interpretations (n=10)", "low_expert_agreement 10", "untrusted 100%"):
        assert words in summary, words
    # a finished batch: nothing left to cancel, nothing changes
    cancelled = run("cancel", batch_id)
    assert "10 completed, 0 failed" in cancelled
    refused = stack.judge("batch", "cancel", batch_id, *remote, "--key", viewer_stack["bob"])
    assert refused.returncode != 0
    assert "no batch" in (refused.stderr + refused.stdout).lower()
