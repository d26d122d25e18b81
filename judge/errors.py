"""The error hierarchy of empathy-judge. Errors carry data, never HTTP status codes::

    JudgeError
    ├── RubricError
    │   ├── RubricNotFound        unknown rubric id (or version)
    │   └── RubricInvalid         a rubric file that does not validate (file, line, field)
    ├── ItemInvalid               an input item that does not fit the item shape or the rubric
    ├── JsonLinesInvalid          a line of a JSON Lines file that cannot be decoded
    ├── PanelNotFound             a panel name that the configuration does not define
    └── ConfigError               settings or the YAML config file are wrong
        └── JudgeMisconfigured    a judge cannot be called at all (credentials, unknown model)

The API edge maps these to problem details; the CLI prints their message.
"""

from __future__ import annotations


class JudgeError(Exception):
    """Base class of every error this package raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class RubricError(JudgeError):
    """Something is wrong with a rubric."""


class RubricNotFound(RubricError):
    def __init__(self, rubric_id: str, version: str | None = None) -> None:
        what = f"{rubric_id}@{version}" if version else rubric_id
        super().__init__(f"unknown rubric {what!r}")
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

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field
        self.detail = message


class JsonLinesInvalid(JudgeError):
    """A line of a JSON Lines file that must be read whole cannot be decoded."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.detail = message


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


class DatabaseUnavailable(JudgeError):
    """The database does not answer (or answered that it is going away): retry later."""


class DatabaseNotMigrated(JudgeError):
    """The database's schema is not this version's: ``judge db upgrade`` fixes it.
    ``where`` is the database's URL with any password already masked."""

    def __init__(self, where: str, current: str | None, head: str) -> None:
        super().__init__(
            f"the database at {where} is at schema revision {current or 'none'}, "
            f"but this version of empathy-judge needs {head}: run `judge db upgrade` first"
        )
