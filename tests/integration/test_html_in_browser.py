"""The HTML pages the service serves, opened in headless Chromium with no internet."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from tests.integration.browser import browser, open_page, screenshot
from tests.integration.conftest import ServiceStack

pytestmark = pytest.mark.integration
__all__ = ["browser"]  # the fixture, re-exported for pytest


def test_swagger_docs_render_offline(embedded_stack: ServiceStack, browser: Browser) -> None:
    page, log = open_page(browser, f"{embedded_stack.base_url}/schema/swagger")
    page.wait_for_selector(".swagger-ui .info .title", timeout=15_000)
    assert "empathy-judge" in page.inner_text(".swagger-ui .info .title")
    operations = page.locator(".opblock").count()
    assert operations >= 15, f"only {operations} operations rendered"
    # open one operation: its parameters and responses render from the bundled JS
    page.locator(".opblock-summary", has_text="/v1/scores").first.click()
    page.wait_for_selector(".opblock-body .responses-wrapper", timeout=10_000)
    shot = screenshot(page, "swagger-docs")
    assert shot.stat().st_size > 10_000
    assert log.problems() == []
