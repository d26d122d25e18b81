"""Combining raters: the per-item median."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from judge.reliability._missing import as_number, check_same_length, is_missing


def median_rater(*raters: Sequence[object]) -> list[float | None]:
    """Per-item median of the raters' numeric ratings, ignoring missing ones (None/NaN).

    An item nobody rated is None in the result (never imputed). With an even number of
    ratings the median is the mean of the middle two (``numpy.median``), e.g. 2.5 from
    2 and 3. ValueError for no raters, sequences of different lengths, or a non-numeric
    rating.
    """
    if not raters:
        raise ValueError("median_rater needs at least one rater")
    n = check_same_length(*raters)
    result: list[float | None] = []
    for i in range(n):
        values = [as_number(r[i]) for r in raters if not is_missing(r[i])]
        result.append(float(np.median(values)) if values else None)
    return result
