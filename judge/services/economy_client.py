"""The client an economy job scores through: each call is answered from its provider batch's
reply when there is one, else made interactively.

An economy job runs the same scoring as an interactive one (the same prompts, parsing, repair,
abstentions, aggregation, flags and persistence); only where the replies come from differs. A
request is found by :func:`request_key`, the same key its batch line was sent under. A request
without a reply (its line failed at the provider, the provider batch failed or expired, or a
repair call the batch could not foresee) is made through the interactive client at the full
price, and its outcome, a reply or an abstention with its reason, is the job's."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass

from judge.llm.batch_api import line_result
from judge.llm.calls import ModelPrice
from judge.llm.client import ChatClient, ChatRequest, ChatResult
from judge.persistence import economy as repo
from judge.persistence.database import Database
from judge.settings import Settings

log = logging.getLogger(__name__)


def request_key(request: ChatRequest) -> str:
    """Identifies a request within its batch: model, messages, format, parameters, sample."""
    payload = [
        request.model,
        request.messages,
        request.response_format,
        request.params,
        request.sample,
    ]
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def batch_prices(settings: Settings) -> dict[str, ModelPrice]:
    """The configured prices (``prices:``), which batch replies are priced from at the
    discount."""
    return {m: ModelPrice(p.input_per_mtok, p.output_per_mtok) for m, p in settings.prices.items()}


@dataclass
class EconomyClient:
    """Replies of ``batch_id``'s provider batches first, then ``inner``."""

    inner: ChatClient
    database: Database
    batch_id: str
    prices: dict[str, ModelPrice]

    async def complete(self, request: ChatRequest) -> ChatResult:
        key = request_key(request)
        async with self.database.session() as session:
            found = await repo.reply(session, self.batch_id, key)
        if found is not None and found.body_json is not None:
            body = json.loads(found.body_json)
            return line_result(request, body, self.prices, simulated=found.simulated)
        why = found.error if found is not None else "no batch line (a repair call)"
        log.info("batch %s: %s made interactively (%s)", self.batch_id, request.model, why)
        return await self.inner.complete(request)
