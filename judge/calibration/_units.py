"""Independent units of a calibration: items linked by a shared ``group`` or shared content.

Two items are one unit when they share a group (a session's checkpoints) or the same content
(:func:`judge.domain.content.content_key`: the same conversation submitted twice), and
transitively so: a conversation repeated under two groups joins them. Every interval, the
evidence gate's ``min_items`` and the level minimum count these units (issue 23).
"""

from __future__ import annotations

from collections.abc import Sequence


def unit_ids(groups: Sequence[str | None], contents: Sequence[str | None]) -> list[str | None]:
    """Per item, the id of its independent unit (None: an item with neither a group nor a
    content key, a unit of its own)."""
    if len(groups) != len(contents):
        raise ValueError("groups and contents must have the same length")
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        root = key
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[key] != root:
            parent[key], key = root, parent[key]
        return root

    def union(a: str, b: str) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    keys = [
        [k for k in (f"g:{g}" if g is not None else None, f"c:{c}" if c else None) if k]
        for g, c in zip(groups, contents, strict=True)
    ]
    for linked in keys:
        for key in linked:
            find(key)
        if len(linked) == 2:
            union(linked[0], linked[1])
    return [find(linked[0]) if linked else None for linked in keys]
