"""Who is calling: the identity every use case is given, whatever edge it came through (the
API builds it from the request's key; the command line acts as the operator)."""

from __future__ import annotations

from dataclasses import dataclass

#: the scope that implies the others and reads every key's data
ADMIN = "admin"


@dataclass(frozen=True)
class Principal:
    """An API key (its id and scopes), or nobody (``key_id`` None) where keys are not
    required. What it creates is owned by ``key_id``."""

    key_id: str | None
    scopes: tuple[str, ...] = ()

    @property
    def admin(self) -> bool:
        return ADMIN in self.scopes

    @property
    def owner(self) -> str | None:
        """What the caller's new jobs, batches, runs and canaries are owned by."""
        return self.key_id


#: a caller without a key, where the API does not require one: reads only keyless data
ANONYMOUS = Principal(key_id=None)
#: the command line on the service's own database: creates keyless data, reads everything
OPERATOR = Principal(key_id=None, scopes=(ADMIN,))
