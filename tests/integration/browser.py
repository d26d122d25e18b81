"""Headless Chromium (Debian's ``chromium``) driven by Playwright, for tests that look at the
HTML the service serves the way a person would.

Every request to a host other than loopback is aborted and recorded, so a page that needs the
internet (a CDN script, a web font) fails its test instead of silently working on a connected
workstation. Console errors and uncaught page errors are recorded too. Screenshots are kept
under ``build/test-artifacts/`` (ignored by git) for a person to look at.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Request, Route, sync_playwright

from tests.conftest import REPO
from tests.integration.conftest import skip_or_fail

ARTIFACTS = REPO / "build" / "test-artifacts"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass
class PageLog:
    """What a page did besides rendering: console errors, page errors, refused requests."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    external_requests: list[str] = field(default_factory=list)

    def problems(self) -> list[str]:
        return (
            [f"console: {m}" for m in self.console_errors]
            + [f"page error: {m}" for m in self.page_errors]
            + [f"needs the internet: {u}" for u in self.external_requests]
        )


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        skip_or_fail("Debian's chromium is not installed (apt-get install chromium)")
    assert found is not None
    return found


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    path = chromium_path()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def _is_local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("data", "blob", "about") or (parts.hostname or "") in LOOPBACK


def open_page(
    browser: Browser, url: str, *, width: int = 1366, height: int = 900
) -> tuple[Page, PageLog]:
    """A new page on ``url`` (a laptop-sized viewport by default), offline but for loopback."""
    log = PageLog()
    context = browser.new_context(viewport={"width": width, "height": height})

    def route(route: Route, request: Request) -> None:
        if _is_local(request.url):
            route.continue_()
        else:
            log.external_requests.append(request.url)
            route.abort("internetdisconnected")

    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            log.console_errors.append(message.text)

    context.route("**/*", route)
    page = context.new_page()
    page.on("console", console)
    page.on("pageerror", lambda exc: log.page_errors.append(str(exc)))
    page.goto(url, wait_until="networkidle")
    return page, log


def screenshot(page: Page, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
