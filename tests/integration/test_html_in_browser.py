"""The HTML pages the service serves, opened in headless Chromium with no internet."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.async_api import Page

from tests.integration.browser import visit
from tests.integration.conftest import ServiceStack

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
