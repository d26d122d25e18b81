"""Who may read what: a key reads its own resources, admin reads every key's, and nobody's
keyless resources are readable by a key."""

from __future__ import annotations

import pytest

from judge.domain.principal import ANONYMOUS, OPERATOR, Principal
from judge.errors import ScoreNotFound
from judge.persistence.canaries import ALL
from judge.services.access import can_read, check_readable, readable_owners

ALICE = Principal(key_id="a" * 32, scopes=("score",))
ADMIN = Principal(key_id="b" * 32, scopes=("admin",))


def test_admin_reads_every_owner_and_others_only_their_own() -> None:
    assert can_read(ALICE, "a" * 32)
    assert not can_read(ALICE, "c" * 32)
    assert not can_read(ALICE, None)  # keyless data is not a key's
    assert can_read(ADMIN, "c" * 32)
    assert can_read(ADMIN, None)
    assert can_read(ANONYMOUS, None)
    assert not can_read(ANONYMOUS, "a" * 32)
    assert can_read(OPERATOR, "a" * 32)  # the command line on the service's own database


def test_what_may_not_be_read_is_not_found() -> None:
    check_readable(ALICE, "a" * 32, ScoreNotFound("x" * 32))
    with pytest.raises(ScoreNotFound, match="no score with id"):
        check_readable(ALICE, "c" * 32, ScoreNotFound("x" * 32))


def test_listings_show_a_key_its_own_and_admin_everything() -> None:
    assert readable_owners(ALICE) == ("a" * 32,)
    assert readable_owners(ANONYMOUS) == (None,)
    assert readable_owners(ADMIN) is ALL
    assert ALICE.owner == "a" * 32
    assert not ALICE.admin
