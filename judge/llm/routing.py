"""Which client path serves a judge: the direct OpenAI-compatible client or LiteLLM.

``client: auto`` (the default) takes the direct path for ``openai/...`` and ``hosted_vllm/...``
judges and LiteLLM for every other provider; ``client: openai`` also serves a model without a
provider prefix at an ``api_base`` (a self-hosted OpenAI-compatible server); ``client:
litellm`` always uses LiteLLM. LiteLLM is imported only when a request needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from judge.domain.providers import OPENAI_COMPATIBLE, ClientChoice, provider_of
from judge.errors import ConfigError
from judge.llm.calls import ModelPrice, RetryPolicy
from judge.llm.client import ChatClient, ChatRequest, ChatResult

if TYPE_CHECKING:
    from judge.llm.openai_client import OpenAIClient

ClientPath = Literal["litellm", "openai"]


def client_path(choice: ClientChoice, model: str, api_base: str | None) -> ClientPath:
    """The path for a judge; ``client: openai`` where it cannot work is a configuration error
    (raised when panels are resolved, before any call)."""
    provider = provider_of(model)
    direct_ok = provider in OPENAI_COMPATIBLE or (provider == "" and api_base is not None)
    if choice == "openai":
        if not direct_ok:
            raise ConfigError(
                f"judge {model!r}: client 'openai' needs an OpenAI-compatible endpoint "
                "(an openai/... or hosted_vllm/... model, or a model without a provider prefix "
                "and an api_base); use client 'auto' or 'litellm' for this provider"
            )
        if provider == "hosted_vllm" and api_base is None:
            raise ConfigError(f"judge {model!r}: client 'openai' needs the server's api_base")
        return "openai"
    if (
        choice == "auto"
        and provider in OPENAI_COMPATIBLE
        and not (provider == "hosted_vllm" and api_base is None)
    ):
        return "openai"
    return "litellm"


class RoutingClient:
    """A :class:`ChatClient` sending each request down its judge's path."""

    def __init__(
        self, *, retry: RetryPolicy | None = None, prices: dict[str, ModelPrice] | None = None
    ) -> None:
        self._retry = retry
        self._prices = prices
        self._direct: OpenAIClient | None = None
        self._litellm: ChatClient | None = None

    def path_client(self, path: ClientPath) -> ChatClient:
        if path == "openai":
            if self._direct is None:
                from judge.llm.openai_client import OpenAIClient

                self._direct = OpenAIClient(retry=self._retry, prices=self._prices)
            return self._direct
        if self._litellm is None:
            from judge.llm.litellm_client import LiteLLMClient

            self._litellm = LiteLLMClient(retry=self._retry, prices=self._prices)
        return self._litellm

    async def complete(self, request: ChatRequest) -> ChatResult:
        path = client_path(request.client, request.model, request.api_base)
        return await self.path_client(path).complete(request)

    async def aclose(self) -> None:
        """Close the direct path's connections (call on the loop that used them)."""
        if self._direct is not None:
            await self._direct.aclose()
