"""The HTML pages the service serves, opened in headless Chromium with no internet."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.async_api import Page

from judge.calibration._gate_rules import GATE_RULES
from tests.fixtures.browser import visit
from tests.fixtures.sample_texts import POSTS, RESPONSES
from tests.fixtures.stacks import ServiceStack

pytestmark = pytest.mark.integration


def test_swagger_docs_render_offline(embedded_stack: ServiceStack) -> None:
    async def steps(page: Page) -> dict[str, Any]:
        await page.wait_for_selector(".swagger-ui .info .title", timeout=15_000)
        # open one operation: its parameters and responses render from the bundled JS
        await page.locator(".opblock-summary", has_text="/v1/scores").first.click()
        await page.wait_for_selector(".opblock-body .responses-wrapper", timeout=10_000)
        return {
            "title": await page.inner_text(".swagger-ui .info .title"),
            "operations": await page.locator(".opblock").count(),
        }

    seen = visit(f"{embedded_stack.base_url}/schema/swagger", "swagger-docs", steps)
    assert "empathy-judge" in seen.result["title"]
    assert seen.result["operations"] >= 15, seen.result
    assert seen.screenshot is not None
    assert seen.screenshot.stat().st_size > 10_000
    assert seen.problems() == []


def _labelled(n: int) -> dict[str, object]:
    levels = (0, 1, 2)
    return {
        "id": f"c{n}",
        "item": {"seeker_post": POSTS[n % len(POSTS)], "response": RESPONSES[n % len(RESPONSES)]},
        "labels": {
            expert: {
                "emotional_reactions": levels[(n + shift) % 3],
                "interpretations": levels[(n // 2 + shift) % 3],
                "explorations": levels[(n + shift) % 3],
            }
            # three distinct annotators (a copy of another's column would be refused)
            for expert, shift in (("e1", 0), ("e2", n % 2), ("e3", int(n % 5 == 0)))
        },
    }


def test_calibration_report_renders_offline_and_fits_a_laptop_screen(
    embedded_stack: ServiceStack,
) -> None:
    """The report as the API serves it: heatmap with its threshold lines, confusion matrices,
    coverage and CIs, no console errors, nothing fetched from the internet, and no sideways
    scrolling at 1366 px."""
    stack = embedded_stack
    reply = stack.client.post(
        "/v1/calibrations?wait=120",
        json={"rubric": "epitome", "items": [_labelled(n) for n in range(30)]},
        headers=stack.headers(),
    )
    assert reply.status_code in (200, 202), reply.text
    run_id = reply.json()["id"]
    for _ in range(240):
        view = stack.client.get(f"/v1/calibrations/{run_id}", headers=stack.headers()).json()
        if view["status"] == "completed":
            break
        time.sleep(0.5)
    assert view["status"] == "completed", view

    async def steps(page: Page) -> dict[str, Any]:
        heatmap = page.locator("svg").first
        box = await heatmap.bounding_box()
        lines = page.locator("svg line")
        visible_lines = [
            b for b in [await lines.nth(i).bounding_box() for i in range(await lines.count())] if b
        ]
        return {
            "heatmap": box,
            "threshold_lines": len(visible_lines),
            "cells": await page.locator("svg rect:has(title)").count(),
            "svg_text": await heatmap.text_content(),
            "confusion_matrices": await page.locator("table.cm").count(),
            "text": await page.inner_text("body"),
            "rules": await page.locator("ol.rules li").count(),
            "trust_tests": await page.locator("p.trust-test").count(),
            "scroll_width": await page.evaluate("document.documentElement.scrollWidth"),
            "viewport_width": await page.evaluate("window.innerWidth"),
        }

    seen = visit(
        f"{stack.base_url}/v1/calibrations/{run_id}/report",
        "calibration-report",
        steps,
        headers=stack.headers(),
    )
    result = seen.result
    assert result["heatmap"] is not None
    assert result["heatmap"]["width"] > 300
    assert result["heatmap"]["height"] > 50
    assert result["threshold_lines"] == 2  # the floor and the line on the colour scale
    assert "floor 0.40" in result["svg_text"]
    assert "line 0.58" in result["svg_text"]
    assert result["cells"] >= 3 * 4  # dimensions x (3 judges + the panel)
    assert result["confusion_matrices"] >= 3
    for words in ("SIMULATED JUDGES", "coverage", "95% CI", "insufficient_calibration"):
        assert words in result["text"], words
    # every rule of the gate with its error rate, and each dimension's deciding test
    assert result["rules"] == len(GATE_RULES)
    assert "How a dimension earns trusted" in result["text"]
    assert "4.30% of 50-item calibrations" in result["text"]
    assert result["trust_tests"] == 3
    assert "Monte Carlo ±" in result["text"]
    assert "simulated_calibration" in result["text"]  # a simulated run never vouches
    assert result["scroll_width"] <= result["viewport_width"], "the report scrolls sideways"
    assert seen.problems() == []
