"""The client settings every path reads the same way: retries and configured prices, and
the one client every edge uses (each request on its judge's path)."""

from __future__ import annotations

from judge.llm.calls import ModelPrice, RetryPolicy
from judge.llm.routing import RoutingClient
from judge.settings import Settings


def retry_policy(settings: Settings) -> RetryPolicy:
    return RetryPolicy(
        max_retries=settings.llm.max_retries, backoff_base_s=settings.llm.backoff_base_s
    )


def configured_prices(settings: Settings) -> dict[str, ModelPrice]:
    """USD per million tokens for models the price map does not know (``prices:``)."""
    return {m: ModelPrice(p.input_per_mtok, p.output_per_mtok) for m, p in settings.prices.items()}


def routing_client(settings: Settings) -> RoutingClient:
    return RoutingClient(retry=retry_policy(settings), prices=configured_prices(settings))
