"""The direct OpenAI-compatible path's own decisions: what each status means, a missing key,
and a success status without a JSON object (over real HTTP on loopback, aiohttp's server)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from aiohttp import web

from judge.llm.calls import RetryPolicy, public_error, retry_after
from judge.llm.client import ChatRequest, ChatResult
from judge.llm.openai_client import OpenAIClient, ProviderStatusError, classify, status_error


def error_of(status: int, body: bytes = b"{}", **headers: str) -> ProviderStatusError:
    return status_error(status, headers, body)


@pytest.mark.parametrize(
    ("status", "body", "expected"),
    [
        (400, b'{"error": {"code": "invalid_prompt", "message": "blocked"}}', ("refused", False)),
        (400, b'{"error": {"code": "content_filter"}}', ("refused", False)),
        (400, b'{"error": {"code": "invalid_value"}}', ("bad_request", False)),
        (400, b"not json", ("bad_request", False)),
        (401, b"{}", ("auth_error", False)),
        (403, b"{}", ("auth_error", False)),
        (404, b"{}", ("unknown_model", False)),
        (422, b"{}", ("bad_request", False)),
        (408, b"{}", ("timed_out", True)),
        (409, b"{}", ("provider_error", True)),
        (429, b"{}", ("rate_limit", True)),
        (500, b"{}", ("provider_error", True)),
        (503, b"{}", ("provider_error", True)),
        (418, b"{}", ("provider_error", False)),
    ],
)
def test_each_status_is_a_reason(status: int, body: bytes, expected: tuple[str, bool]) -> None:
    assert classify(error_of(status, body)) == expected


@pytest.mark.parametrize(
    ("status", "name"),
    [(400, "BadRequestError"), (401, "AuthenticationError"), (404, "NotFoundError"),
     (429, "RateLimitError"), (500, "InternalServerError"), (529, "InternalServerError"),
     (418, "ProviderStatusError")],
)  # fmt: skip
def test_each_status_family_keeps_the_name_callers_know(status: int, name: str) -> None:
    assert type(error_of(status)).__name__ == name


def test_the_retry_delay_is_read_from_the_status_error_headers() -> None:
    assert retry_after(error_of(429, **{"retry-after-ms": "1500"})) == 1.5
    assert retry_after(error_of(429, **{"retry-after": "2"})) == 2.0


def test_provider_text_stays_out_of_the_public_error() -> None:
    exc = error_of(401, b'{"error": {"message": "Incorrect API key sk-abc...xyz"}}')
    assert "sk-abc" in str(exc)  # for this process's log
    reason, _ = classify(exc)
    assert public_error(reason, exc, 1) == (
        "auth_error: the provider refused the credentials, or none were configured "
        "(HTTP 401; AuthenticationError; 1 attempt)"
    )


@asynccontextmanager
async def endpoint() -> AsyncIterator[tuple[str, list[str]]]:
    """A loopback server: ``/text/...`` answers 200 with a body that is not JSON,
    ``/list/...`` a JSON array; every request's Authorization header is recorded."""
    seen: list[str] = []

    async def text(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        return web.Response(text="<html>gateway</html>", content_type="text/html")

    async def array(request: web.Request) -> web.Response:
        seen.append(request.headers.get("Authorization", ""))
        return web.json_response([1, 2])

    app = web.Application()
    app.router.add_post("/text/chat/completions", text)
    app.router.add_post("/list/chat/completions", array)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", seen
    finally:
        await runner.cleanup()


async def call(request: ChatRequest) -> ChatResult:
    client = OpenAIClient(retry=RetryPolicy(max_retries=2, backoff_base_s=0.01))
    try:
        return await client.complete(request)
    finally:
        await client.aclose()


@pytest.mark.parametrize("route", ["text", "list"])
def test_a_success_status_without_a_json_object_is_an_abstention(route: str) -> None:
    async def scenario() -> tuple[ChatResult, list[str]]:
        async with endpoint() as (base, seen):
            request = ChatRequest(
                model="openai/accurate",
                messages=[{"role": "user", "content": "hi"}],
                api_base=f"{base}/{route}",
                api_key="k-1",
            )
            return await call(request), seen

    result, seen = asyncio.run(scenario())
    assert result.failure == "provider_error"
    assert result.content is None
    assert result.attempts == 1  # not retried: the server answered, with nothing usable
    assert seen == ["Bearer k-1"]


def test_no_key_is_an_auth_error_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    async def scenario() -> tuple[ChatResult, list[str]]:
        async with endpoint() as (base, seen):
            request = ChatRequest(
                model="openai/accurate", messages=[{"role": "user", "content": "hi"}], api_base=base
            )
            return await call(request), seen

    result, seen = asyncio.run(scenario())
    assert (result.failure, result.attempts) == ("auth_error", 1)
    assert seen == []


def test_the_proxy_of_the_environment_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """HTTP_PROXY applies, as it did with the SDK: a judge behind a proxy reaches a host this
    machine cannot resolve (the loopback 'proxy' answers the call itself)."""
    reply = {
        "model": "accurate",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": '{"ok": true}'}}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2},
    }  # fmt: skip
    targets: list[str] = []

    async def proxy(request: web.Request) -> web.Response:
        targets.append(f"{request.host}{request.path}")
        return web.json_response(reply)

    async def scenario() -> ChatResult:
        app = web.Application()
        app.router.add_post("/{tail:.*}", proxy)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{runner.addresses[0][1]}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        try:
            return await call(
                ChatRequest(
                    model="openai/accurate",
                    messages=[{"role": "user", "content": "hi"}],
                    api_base="http://judge-endpoint.invalid/v1",
                    api_key="k",
                )
            )
        finally:
            await runner.cleanup()

    result = asyncio.run(scenario())
    assert (result.failure, result.content, result.prompt_tokens) == (None, '{"ok": true}', 3)
    assert targets == ["judge-endpoint.invalid/v1/chat/completions"]
