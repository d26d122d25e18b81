"""The service processes' start-up objects leave the collector's full passes, and young
collections run less often (judge.runtime.gc_pauses)."""

from __future__ import annotations

import gc

from judge.runtime.gc_pauses import YOUNG_THRESHOLD, freeze_startup_objects


def test_what_exists_at_start_is_frozen_and_young_collections_are_rarer() -> None:
    before = gc.get_threshold()
    alive = [object() for _ in range(100)]
    try:
        freeze_startup_objects()
        frozen = gc.get_freeze_count()
        threshold = gc.get_threshold()
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    assert frozen >= len(alive)
    assert threshold == (YOUNG_THRESHOLD, before[1], before[2])
    assert before[0] < YOUNG_THRESHOLD
