"""Request bodies Litestar cannot infer: ``POST /v1/batches`` reads its body itself, because it
takes either JSON or JSON Lines (and a JSON Lines body must be read line by line, so that one
bad line rejects only that line)."""

from __future__ import annotations

from dataclasses import dataclass

from litestar.openapi.spec import (
    OpenAPIMediaType,
    OpenAPIType,
    Operation,
    Reference,
    RequestBody,
    Schema,
)

#: the JSON form: ``BatchRequest``, documented by :mod:`judge.api.openapi_document`
_BATCH_JSON = Reference(ref="#/components/schemas/BatchRequest")
_BATCH_JSONL = Schema(
    type=OpenAPIType.STRING,
    description="one item per line (UTF-8); needs ?rubric=ID; blank lines are skipped",
)


@dataclass
class BatchOperation(Operation):
    """The batch route's operation, with both body formats documented."""

    def __post_init__(self) -> None:
        self.request_body = RequestBody(
            required=True,
            content={
                "application/json": OpenAPIMediaType(schema=_BATCH_JSON),
                "application/x-ndjson": OpenAPIMediaType(schema=_BATCH_JSONL),
            },
        )
