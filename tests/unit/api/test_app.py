"""The app declares its handlers the way the pinned Litestar wants (no deprecation warnings)."""

from __future__ import annotations

import warnings

from judge.api.app import create_app
from judge.settings import Settings


def test_building_the_app_warns_about_nothing() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_app(Settings())
    assert [str(w.message) for w in caught] == []
