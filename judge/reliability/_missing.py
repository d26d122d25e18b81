"""Missing-value handling shared by the statistics: ``None`` and NaN mean "no rating"."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Any


def is_missing(value: object) -> bool:
    """True for ``None`` and for any float NaN (Python or numpy); never for strings."""
    if value is None:
        return True
    if isinstance(value, float):  # numpy.float64 is a float subclass
        return math.isnan(value)
    try:
        return bool(value != value)  # numpy float32/float16 NaN, decimal NaN, ...
    except (TypeError, ValueError):
        return False


def check_same_length(*sequences: Sequence[Any]) -> int:
    """The common length of ``sequences``; ValueError when they differ."""
    lengths = {len(s) for s in sequences}
    if len(lengths) > 1:
        raise ValueError(f"sequences differ in length: {sorted(lengths)}")
    return lengths.pop() if lengths else 0


def paired(a: Sequence[Any], b: Sequence[Any]) -> tuple[list[Any], list[Any]]:
    """The items where both ``a`` and ``b`` have a value (never imputes)."""
    check_same_length(a, b)
    keep = [(x, y) for x, y in zip(a, b, strict=True) if not is_missing(x) and not is_missing(y)]
    return [x for x, _ in keep], [y for _, y in keep]


def as_number(value: object) -> float:
    """``value`` as a finite float; ValueError for text, booleans-as-text, inf."""
    if isinstance(value, str | bytes):
        raise ValueError(f"non-numeric rating {value!r}")
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise ValueError(f"non-numeric rating {value!r}") from exc
    if not math.isfinite(number):
        raise ValueError(f"non-finite rating {value!r}")
    return number


def label(value: Hashable) -> Hashable:
    """A category label usable as a dict key (numpy scalars become Python scalars)."""
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, str | bytes):
        try:
            result: Hashable = item()
            return result
        except (TypeError, ValueError):
            return value
    return value
