"""The OpenAPI document as served: Litestar's generated document, finished with what Litestar
does not carry over from the request models.

Litestar builds its own schema for pydantic models and drops what a client (or a fuzzer) needs
to send a valid request: ``pattern`` and bounds on optional fields, ``additionalProperties:
false`` of models that forbid extras, and the typed item (routes read the item as a plain
object so that :func:`judge.domain.item.parse_item` can name the field that does not fit).
Here the request models are documented with pydantic's own JSON Schema, the item gets its
typed components and working examples (the bundled samples), and an API-key security scheme
is declared (the Authorize button in Swagger UI) on every route that needs a key.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from judge.domain.item import item_schemas
from judge.sample_conversations import load_sample

#: where components are referenced from
REF = "#/components/schemas/{model}"
#: the security scheme's name in the document
API_KEY = "apiKey"

_SECURITY_SCHEME = {
    "type": "http",
    "scheme": "bearer",
    "description": (
        "An API key from `judge keys create NAME`, sent as `Authorization: Bearer <key>`. "
        "On loopback with `api.require_keys` unset, keyless requests are served."
    ),
}


def _examples() -> dict[str, dict[str, Any]]:
    """Request bodies that work as sent (Swagger's "Try it out"), per request model."""
    post = load_sample("reddit_style_post.json")
    couple = load_sample("couple_session.json")
    chat = load_sample("workplace_chat.json")
    return {
        "ScoreRequest": {
            "post and reply (shorthand)": {"rubric": "epitome", "item": post},
            "couple session (multi-party)": {"rubric": "rescue-couple", "item": couple},
            "chat (dyadic, turns)": {"rubric": "lend-an-ear", "item": chat},
        },
        "BatchRequest": {
            "two items": {"rubric": "epitome", "items": [post, {**post, "id": "sample-post-2"}]},
        },
        "CalibrationRequest": {
            "one labelled item": {
                "rubric": "epitome",
                "items": [{"id": "c1", "item": post, "labels": {"e1": {"explorations": 2}}}],
            },
        },
        "ProbeRequest": {
            "verbosity": {"rubric": "epitome", "kind": "verbosity", "items": [post]},
        },
    }


def _resolve(schema: Any) -> Any:
    """``schema`` with each ``{"x-component": NAME}`` replaced by a ``$ref`` to NAME, and each
    optional scalar (pydantic's ``anyOf: [{type: T, bounds}, {type: null}]``) written as
    ``type: [T, "null"]`` with its bounds, which every generator and fuzzer reads alike."""
    if isinstance(schema, dict):
        if "x-component" in schema:  # pydantic may have added a title: the component has one
            return {"$ref": REF.format(model=schema["x-component"])}
        resolved = {key: _resolve(value) for key, value in schema.items()}
        options = resolved.get("anyOf")
        if (
            isinstance(options, list)
            and len(options) == 2
            and options[1] == {"type": "null"}
            and isinstance(options[0].get("type"), str)
            and options[0]["type"] not in ("object", "array")
        ):
            scalar = resolved.pop("anyOf")[0]
            resolved |= scalar | {"type": [scalar["type"], "null"]}
        return resolved
    if isinstance(schema, list):
        return [_resolve(value) for value in schema]
    return schema


def request_schemas(models: list[type[BaseModel]]) -> dict[str, Any]:
    """Components for ``models`` (and the models they use), from pydantic's JSON Schema."""
    out: dict[str, Any] = item_schemas(REF)
    for model in models:
        schema = _resolve(model.model_json_schema(ref_template=REF))
        out.update(schema.pop("$defs", {}))
        out[model.__name__] = schema
    return out


def _name_panels(schema: dict[str, Any] | None, panels: list[str]) -> None:
    """The string form of a ``panel`` field: one of the configured panels (another name is a
    422, ``field: panel``)."""
    for option in (schema or {}).get("anyOf", (schema or {}).get("oneOf", [schema])):
        if option and option.get("type") == "string":
            option["enum"] = panels


_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")


def _operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    paths = document.get("paths", {}).values()
    return [op for path in paths for method, op in path.items() if method in _METHODS]


def finish_document(
    document: dict[str, Any],
    *,
    models: list[type[BaseModel]],
    panels: list[str],
    min_canary_interval_s: float,
) -> dict[str, Any]:
    """``document`` (Litestar's, as a dict) finished in place, and returned. ``panels``: the
    configured panel names; ``min_canary_interval_s``: the floor of a canary's interval."""
    components = document.setdefault("components", {})
    if API_KEY in components.get("securitySchemes", {}):
        return document  # finished already (Litestar caches the document per app)
    components.setdefault("schemas", {}).update(request_schemas(models))
    components["securitySchemes"] = {API_KEY: _SECURITY_SCHEME}
    for schema in components["schemas"].values():
        _name_panels(schema.get("properties", {}).get("panel"), panels)
    interval = components["schemas"]["CanaryRequest"]["properties"]["interval_s"]
    interval.pop("exclusiveMinimum", None)
    interval["minimum"] = min_canary_interval_s
    examples = _examples()
    # a panel to score with is a configured one; a listing's ``panel`` filter (GET) may also
    # name one configured no more: its runs are still listed
    listings = {id(path["get"]) for path in document.get("paths", {}).values() if "get" in path}
    for operation in _operations(document):
        # a route that can answer 401 needs a key; the others are public
        operation["security"] = [{API_KEY: []}] if "401" in operation["responses"] else []
        for parameter in operation.get("parameters", []):
            if parameter["name"] == "panel" and id(operation) not in listings:
                _name_panels(parameter["schema"], panels)
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        ref = (body or {}).get("schema", {}).get("$ref", "")
        named = examples.get(ref.rsplit("/", 1)[-1])
        if body is not None and named:
            body["examples"] = {name: {"value": value} for name, value in named.items()}
    return document
