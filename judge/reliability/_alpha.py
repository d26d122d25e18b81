"""Krippendorff's alpha, via the ``krippendorff`` package, with explicit edge cases."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

import krippendorff
import numpy as np

from judge.reliability._missing import as_number, check_same_length, is_missing, label

Level = Literal["nominal", "ordinal", "interval", "ratio"]
_LEVELS = ("nominal", "ordinal", "interval", "ratio")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def krippendorff_alpha(
    reliability_data: Sequence[Sequence[Hashable]],
    level: Level = "interval",
    *,
    value_domain: Sequence[Hashable] | None = None,
) -> float:
    """Krippendorff's alpha of a raters x items matrix (None/NaN = not rated).

    Computed by ``krippendorff.alpha`` at the given level of measurement (default
    ``interval``, as in that package). Units (items) with fewer than two ratings are not
    pairable and do not count; missing ratings are never imputed. Numeric ratings are used
    as they are. Non-numeric labels (e.g. strings) are allowed at the nominal level; at the
    ordinal level they need ``value_domain`` (the labels in order); interval/ratio need
    numbers. ``value_domain`` may also list numeric values.

    Edge cases: NaN when no item has two ratings, or when every pairable rating is the same
    value (expected disagreement 0: alpha is 0/0). The krippendorff package raises there.
    ValueError for rows of different lengths, an unknown level, or labels outside
    ``value_domain``.
    """
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {', '.join(_LEVELS)}, got {level!r}")
    n_items = check_same_length(*reliability_data)
    rows = [[None if is_missing(v) else label(v) for v in row] for row in reliability_data]
    present = [v for row in rows for v in row if v is not None]
    domain = [label(v) for v in value_domain] if value_domain is not None else None
    numeric = all(_is_number(v) for v in present) and (
        domain is None or all(_is_number(v) for v in domain)
    )
    if numeric:
        data = np.array(
            [[math.nan if v is None else as_number(v) for v in row] for row in rows],
            dtype=np.float64,
        ).reshape(len(rows), n_items)
        kdomain = None if domain is None else np.array([as_number(v) for v in domain])
        if kdomain is not None and not np.isin(data[~np.isnan(data)], kdomain).all():
            raise ValueError("the reliability data contains values outside value_domain")
    else:
        if domain is None:
            if level != "nominal":
                raise ValueError(
                    f"non-numeric labels at the {level} level need an ordered value_domain"
                )
            domain = list(dict.fromkeys(present))
        elif level in ("interval", "ratio"):
            raise ValueError(f"the {level} level needs numeric ratings")
        codes = {v: i for i, v in enumerate(domain)}
        unknown = [v for v in present if v not in codes]
        if unknown:
            raise ValueError(f"label {unknown[0]!r} is not in value_domain")
        data = np.array(
            [[math.nan if v is None else float(codes[v]) for v in row] for row in rows],
            dtype=np.float64,
        ).reshape(len(rows), n_items)
        kdomain = np.arange(len(domain), dtype=np.float64)
    # Pairable values: ratings of items that have at least two ratings.
    rated = ~np.isnan(data)
    pairable = data[:, rated.sum(0) >= 2]
    pairable_values = np.unique(pairable[~np.isnan(pairable)])
    if len(pairable_values) < 2:
        return math.nan
    if kdomain is None:
        kdomain = np.unique(data[rated])
    return float(
        krippendorff.alpha(reliability_data=data, value_domain=kdomain, level_of_measurement=level)
    )
