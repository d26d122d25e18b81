"""Path and query parameters, and texts, that several resources share."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from litestar.params import Parameter
from pydantic import BeforeValidator, ConfigDict, WithJsonSchema
from pydantic_core import PydanticCustomError

from judge.api.idempotency import HEADER as IDEMPOTENCY_KEY

#: request bodies: no fields beyond the documented ones, as their OpenAPI schemas state
REQUEST_CONFIG = ConfigDict(extra="forbid")


def _json_number(value: Any) -> Any:
    if isinstance(value, bool | str):  # pydantic's lax mode (Litestar's) would take them
        raise PydanticCustomError("number_type", "must be a number, not a string or a boolean")
    return value


#: a number field of a request body is a JSON number, not ``true`` or ``"1"``:
#: ``Annotated[int, Field(ge=1), JSON_NUMBER]`` (bounds first, so that the schema states them)
JSON_NUMBER = BeforeValidator(_json_number)

#: ids the service hands out (uuid4 hex); any other path id is refused before a query
ID_PATTERN = r"^[0-9a-f]{32}$"


JobId = Annotated[str, Parameter(pattern=ID_PATTERN, description="an id the service returned")]

#: ``?wait=S`` of the routes that can answer with the result (the bound inside, so that the
#: OpenAPI document states it)
Wait = Annotated[
    Annotated[float, Parameter(ge=0)] | None,
    Parameter(ge=0, description="seconds to wait for the result (else 202 and a Location to poll)"),
]

#: a request field that holds one item (documented with the typed ``Item`` schema; read as a
#: plain object so that :func:`judge.domain.item.parse_item` can name the field at fault)
#: (pydantic resolves a ``$ref`` itself, so the schemas say ``x-component`` and
#: :func:`judge.api.openapi_document.request_schemas` turns it into the ``$ref``)
ITEM_REF = {"x-component": "Item"}
ItemField = Annotated[dict[str, Any], WithJsonSchema(ITEM_REF)]
#: a list of items, each validated on its own: a bad one is rejected (listed in the answer's
#: ``rejections``), not the request, so any value is accepted in the list
ItemList = Annotated[
    list[Any],
    WithJsonSchema(
        {
            "type": "array",
            "minItems": 1,
            "items": {
                "anyOf": [ITEM_REF, {}],
                "description": "an Item; anything else is rejected on its own (`rejections`)",
            },
        }
    ),
]
#: expert-labelled items of a calibration run
LabelledItemList = Annotated[
    list[Any],
    WithJsonSchema(
        {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": ["string", "null"], "maxLength": 200},
                    "item": ITEM_REF,
                    "labels": {
                        "type": "object",
                        "minProperties": 1,
                        "description": "expert -> dimension id -> label",
                        "additionalProperties": {"type": "object"},
                    },
                },
                "required": ["item", "labels"],
                "additionalProperties": False,
            },
        }
    ),
]


#: bounds of the columns these names are stored in (judge/persistence/tables.py)
RUBRIC_ID_MAX, RUBRIC_VERSION_MAX, PANEL_MAX = 100, 20, 100


IDEMPOTENCY_DOC = (
    f"Send an `{IDEMPOTENCY_KEY}` header (any 1-255 visible ASCII characters) to make a "
    "retry safe: the same key with the same request returns the first submission (for 24 h)."
)

#: the page of a listing (``GET /v1/batches``, ``/v1/calibrations``, ``/v1/probes``)
ListOffset = Annotated[int, Parameter(ge=0, le=10_000_000, description="runs to skip")]
ListLimit = Annotated[int, Parameter(ge=1, le=100, description="runs per page")]
#: a listing's filters (compared in SQL): names, so no control character (NUL is a 422,
#: not a database error)
NAME_PATTERN = r"^[^\x00-\x1f\x7f]+$"
#: a listing's filters: runs of this rubric, of this panel
RubricFilter = Annotated[
    str | None,
    Parameter(
        min_length=1, max_length=RUBRIC_ID_MAX, pattern=NAME_PATTERN, description="a rubric id"
    ),
]
PanelFilter = Annotated[
    str | None,
    Parameter(
        min_length=1,
        max_length=PANEL_MAX,
        pattern=NAME_PATTERN,
        description="a panel name (configured now or when the runs were made)",
    ),
]
BatchStatus = Annotated[
    Literal["queued", "running", "completed"] | None,
    Parameter(description="only batches in this status"),
]
RunStatus = Annotated[
    Literal["running", "completed", "failed"] | None,
    Parameter(description="only runs in this status"),
]
