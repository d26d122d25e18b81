"""Who may read what: a resource belongs to the API key that created it (keyless resources to
no key); ``admin`` reads everything. Every use case that returns a stored resource checks it
here, so that no edge can forget it: a resource the caller may not read is reported as not
found, like one that does not exist."""

from __future__ import annotations

from judge.domain.principal import Principal
from judge.errors import NotFound
from judge.persistence.canaries import ALL, Owners


def can_read(who: Principal, owner: str | None) -> bool:
    return who.admin or owner == who.key_id


def check_readable(who: Principal, owner: str | None, missing: NotFound) -> None:
    """Raise ``missing`` unless ``who`` may read what ``owner`` owns."""
    if not can_read(who, owner):
        raise missing


def readable_owners(who: Principal) -> Owners:
    """The owners whose resources a listing shows ``who``: its own, or every one for admin."""
    return ALL if who.admin else (who.owner,)
