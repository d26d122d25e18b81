"""Request bodies Litestar cannot infer: ``POST /v1/batches`` reads its body itself, because it
takes either JSON or JSON Lines (and a JSON Lines body must be read line by line, so that one
bad line rejects only that line)."""

from __future__ import annotations

from dataclasses import dataclass

from litestar.openapi.spec import OpenAPIMediaType, OpenAPIType, Operation, RequestBody, Schema

_BATCH_JSON = Schema(
    type=OpenAPIType.OBJECT,
    required=["rubric", "items"],
    properties={
        "rubric": Schema(type=OpenAPIType.STRING, min_length=1, max_length=100),
        "panel": Schema(
            one_of=[Schema(type=OpenAPIType.STRING, max_length=100), Schema(type=OpenAPIType.NULL)]
        ),
        "items": Schema(
            type=OpenAPIType.ARRAY,
            items=Schema(description="an item, as in POST /v1/scores"),
            description="each item is validated on its own: a bad one is rejected, not the batch",
        ),
    },
    additional_properties=False,
)
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
