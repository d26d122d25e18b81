"""The base of the calibration report's models
(:mod:`empathy_judge_client.calibration_report`): which keys a stored report holds.

A report's JSON is what it always was, and stored runs are read back as they were written:
some keys appear only for some scales or some runs (``f1`` for binary dimensions, ``drift``
for canary runs, and fields added after older runs were stored), and a present key may hold
``null``. So a key is written exactly when its producer set it (pydantic's ``fields_set``:
an explicit ``None`` is written, a field left to its default is not), by every serialisation
(storage, the API, the client), and a key the models do not know fails validation: a renamed
field is a validation error, never a silent ``None``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

#: a label on a rubric's scale: an ordinal level (a consensus may be a half level), a binary
#: answer, a nominal or ranked label id. Kept as it was written: typed ``bool | int | float |
#: str``, the OpenAPI document would say ``oneOf`` integer and number, which no integer meets
ScaleValue = Any
#: a 95% interval, [low, high]; a bound is null when it is undefined (too few units)
Interval = tuple[float | None, float | None]


class ReportPart(BaseModel):
    """A part of a calibration report: unknown keys fail; only the fields set are written."""

    model_config = ConfigDict(extra="forbid")

    def present(self, field: str) -> bool:
        """Whether the report holds ``field`` (perhaps as null); a name that is no field of
        this model raises, so that a renamed field cannot quietly read as absent."""
        if field not in type(self).model_fields:
            raise AttributeError(f"{type(self).__name__} has no field {field!r}")
        return field in self.model_fields_set

    # no return annotation: pydantic would document it as the serialised schema (``Any``: no
    # schema at all) instead of the model's own fields
    @model_serializer(mode="wrap")
    def _only_set_fields(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data = handler(self)
        if not isinstance(data, dict):
            return data
        return {key: value for key, value in data.items() if key in self.model_fields_set}
