"""The error hierarchy of empathy-judge: every error this package raises on purpose is defined
here. Errors carry data (a message, the input ``field`` they name, ids), never HTTP status
codes::

    JudgeError
    ├── NotFound                  no such resource; ``field`` names the input that named it
    │   ├── RubricNotFound        unknown rubric id (or version); also a RubricError
    │   └── ResourceNotFound      no stored resource with this id
    │       └── ScoreNotFound, BatchNotFound, CalibrationNotFound, ProbeNotFound, CanaryNotFound
    ├── Conflict                  the request contradicts what is stored
    │   ├── IdempotencyKeyReused  an Idempotency-Key sent again with a different request
    │   └── BaselineNotCompleted  a canary's baseline run is unknown or has no report
    ├── NotReady                  the resource exists but cannot do this yet
    │   └── CalibrationNotReady   a run that has no report yet
    ├── TooLarge                  more than a configured cap
    │   └── BatchTooLarge, CalibrationTooLarge
    ├── Unavailable               a dependency does not answer: retry later
    │   ├── DatabaseUnavailable
    │   └── DatabaseNotMigrated   the schema is behind this version (``judge db upgrade``)
    ├── RubricError
    │   ├── RubricNotFound
    │   └── RubricInvalid         a rubric file that does not validate (file, line, field)
    ├── ItemInvalid               an input that does not fit its shape or the rubric (``field``)
    ├── IdempotencyKeyInvalid     an Idempotency-Key that is not 1-255 visible ASCII characters
    ├── JsonLinesInvalid          a line of a JSON Lines file that cannot be decoded
    ├── InputFileInvalid          an input file cannot be read (the message names it)
    │   ├── AnnotatorFileError    an annotator CSV
    │   │   ├── LabelFileError    an expert label file
    │   │   └── AgreementInputError  the input of ``judge agreement``
    │   └── RescueFileError       a RESCUE-BENCH JSON Lines file
    ├── PanelNotFound             a panel name that the configuration does not define
    └── ConfigError               settings or the YAML config file are wrong
        └── JudgeMisconfigured    a judge cannot be called at all (credentials, unknown model)

The API maps these to problem details in one table (:data:`judge.api.problems.PROBLEMS`,
where an error without a row is a bug: a 500); the CLI prints their message.
"""

from __future__ import annotations

from typing import ClassVar


class JudgeError(Exception):
    """Base class of every error this package raises on purpose. ``field``: the input the
    error is about, when the raiser knows how the caller named it (else the edge's default)."""

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


# -- the groups the API maps by ----------------------------------------------------------------
class NotFound(JudgeError):
    """No such resource (or none the caller may read: the two are not told apart)."""


class Conflict(JudgeError):
    """The request contradicts what is stored."""


class NotReady(JudgeError):
    """The resource exists but cannot serve this yet (its run is still going)."""


class TooLarge(JudgeError):
    """The request holds more than a configured cap."""


class Unavailable(JudgeError):
    """A dependency does not answer (or answered that it is going away): retry later."""


# -- resources ---------------------------------------------------------------------------------
class ResourceNotFound(NotFound):
    """No stored resource of this kind (``what``) with the id ``resource_id``."""

    what: ClassVar[str] = "resource"

    def __init__(self, resource_id: str, *, field: str | None = None) -> None:
        super().__init__(f"no {self.what} with id {resource_id!r}", field=field)
        self.resource_id = resource_id


class ScoreNotFound(ResourceNotFound):
    what = "score"


class BatchNotFound(ResourceNotFound):
    what = "batch"


class SessionNotFound(ResourceNotFound):
    what = "session"


class CalibrationNotFound(ResourceNotFound):
    what = "calibration run"


class ProbeNotFound(ResourceNotFound):
    what = "probe run"


class CanaryNotFound(ResourceNotFound):
    what = "canary"


class CalibrationNotReady(NotReady):
    def __init__(self, run_id: str, status: str) -> None:
        super().__init__(f"calibration {run_id} is still {status}")
        self.run_id = run_id
        self.status = status


class BaselineNotCompleted(Conflict):
    """A canary's baseline must be a completed calibration run (an unknown run and another
    key's run are :class:`CalibrationNotFound`, alike)."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"calibration run {run_id!r} has not completed")
        self.run_id = run_id


class IdempotencyKeyInvalid(JudgeError):
    def __init__(self) -> None:
        super().__init__("must be 1 to 255 visible ASCII characters")


class IdempotencyKeyReused(Conflict):
    def __init__(self) -> None:
        super().__init__("this Idempotency-Key was used for a different request; use a new key")


class BatchTooLarge(TooLarge):
    def __init__(self, limit: int, got: int) -> None:
        super().__init__(f"a batch holds at most {limit} items; got {got}")
        self.limit = limit
        self.got = got


class CalibrationTooLarge(TooLarge):
    def __init__(self, limit: int, got: int) -> None:
        super().__init__(f"a calibration holds at most {limit} items; got {got}")
        self.limit = limit
        self.got = got


# -- rubrics, inputs, configuration ------------------------------------------------------------
class RubricError(JudgeError):
    """Something is wrong with a rubric."""


class RubricNotFound(RubricError, NotFound):
    """``field``: where the caller named the rubric (a body's ``rubric`` unless said)."""

    def __init__(
        self, rubric_id: str, version: str | None = None, *, field: str | None = None
    ) -> None:
        what = f"{rubric_id}@{version}" if version else rubric_id
        super().__init__(f"unknown rubric {what!r}", field=field)
        self.rubric_id = rubric_id
        self.version = version


class RubricInvalid(RubricError):
    """A rubric file failed validation; ``problems`` lists every problem found."""

    def __init__(self, path: str, problems: list[RubricProblem]) -> None:
        self.path = path
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class RubricProblem:
    """One validation problem in a rubric file, located by line and field path."""

    def __init__(self, path: str, line: int | None, field: str, message: str) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.message = message

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return (
            f"{where}: {self.field}: {self.message}" if self.field else f"{where}: {self.message}"
        )

    def as_dict(self) -> dict[str, object]:
        return {"file": self.path, "line": self.line, "field": self.field, "message": self.message}


class ItemInvalid(JudgeError):
    """An input item is malformed or does not fit the rubric; ``field`` names the culprit."""

    field: str

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message, field=field)
        self.detail = message


class JsonLinesInvalid(JudgeError):
    """A line of a JSON Lines file that must be read whole cannot be decoded."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.detail = message


class InputFileInvalid(JudgeError):
    """An input file cannot be read; the message names the file (and line or column)."""


class AnnotatorFileError(InputFileInvalid):
    """An annotator CSV file cannot be read."""


class LabelFileError(AnnotatorFileError):
    """An expert label file cannot be read."""


class AgreementInputError(AnnotatorFileError):
    """Bad input for ``judge agreement``; the message names the file and column."""


class RescueFileError(InputFileInvalid):
    """A RESCUE-BENCH JSON Lines file cannot be read or holds no usable session."""


class PanelNotFound(JudgeError):
    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"unknown panel {name!r}; configured panels: {', '.join(known) or 'none'}")
        self.name = name


class ConfigError(JudgeError):
    """The settings or the YAML configuration file are invalid."""


class JudgeMisconfigured(ConfigError):
    """A judge failed in a way no retry or other item can cure (its credentials are missing
    or refused, or the provider does not know the model): the run stops with this error."""

    def __init__(self, model: str, reason: str, detail: str) -> None:
        super().__init__(
            f"judge {model!r} cannot be used ({detail}); check its key (the judge's "
            "api_key_env, JUDGE_LLM__API_KEY or the provider's own variable) and its model "
            "name, then run again"
        )
        self.model = model
        self.reason = reason


class LabelStudioUnavailable(Unavailable):
    """A Label Studio server did not answer, or refused a request (the message says which)."""


class DatabaseUnavailable(Unavailable):
    """The database does not answer (or answered that it is going away): retry later."""


class DatabaseNotMigrated(Unavailable):
    """The database's schema is not this version's: ``judge db upgrade`` fixes it.
    ``where`` is the database's URL with any password already masked."""

    def __init__(self, where: str, current: str | None, head: str) -> None:
        super().__init__(
            f"the database at {where} is at schema revision {current or 'none'}, "
            f"but this version of empathy-judge needs {head}: run `judge db upgrade` first"
        )
