"""Binary dimensions on a yes/no-balanced resample, as RESCUE-BENCH scores intervene-now.

The benchmark keeps, per sample (session), as many "yes" as "no" checkpoints, so its F1 and
accuracy are not those of the natural prevalence. Here, per group (or over all items when no
item has a group), ``min(#yes, #no)`` items of each class are drawn without replacement; the
figures are the mean over many such draws, and their 95% interval comes from resampling the
groups (cluster bootstrap) and drawing one balanced subset from each resample. The
always-"yes" answer is scored the same way for comparison.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence

import numpy as np

from judge.calibration._rater_stats import MIN_RESAMPLING_UNITS, RESAMPLE_SEED, finite
from judge.domain.calibration_report import BalancedRates, YesRates
from judge.domain.report_model import Interval

_DRAWS = 200


def _scores(pred: np.ndarray, gold: np.ndarray) -> tuple[float, float]:
    tp = float(np.sum(pred & gold))
    fp = float(np.sum(pred & ~gold))
    fn = float(np.sum(~pred & gold))
    accuracy = float(np.mean(pred == gold))
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return accuracy, f1


def _draw(
    strata: list[tuple[np.ndarray, np.ndarray]], rng: np.random.Generator
) -> np.ndarray | None:
    chosen = []
    for pos, neg in strata:
        m = min(len(pos), len(neg))
        if m:
            chosen += [rng.choice(pos, m, replace=False), rng.choice(neg, m, replace=False)]
    return np.concatenate(chosen) if chosen else None


def balanced_binary(
    pred: Sequence[bool], gold: Sequence[bool], groups: Sequence[Hashable | None], resamples: int
) -> BalancedRates | None:
    """Accuracy and F1 (of "yes") of ``pred`` and of always-"yes" on balanced resamples."""
    by_group: dict[Hashable, tuple[list[int], list[int]]] = defaultdict(lambda: ([], []))
    grouped = any(g is not None for g in groups)
    for i, (g, key) in enumerate(zip(gold, groups, strict=True)):
        by_group[key if grouped else "all"][0 if g else 1].append(i)
    strata = [
        (np.array(p, dtype=np.int64), np.array(n, dtype=np.int64)) for p, n in by_group.values()
    ]
    if not any(min(len(p), len(n)) for p, n in strata):
        return None
    p_arr, g_arr = np.array(pred, dtype=bool), np.array(gold, dtype=bool)
    yes = np.ones_like(g_arr)
    rng = np.random.default_rng(RESAMPLE_SEED)
    judged, always = [], []
    for _ in range(_DRAWS):
        idx = _draw(strata, rng)
        assert idx is not None
        judged.append(_scores(p_arr[idx], g_arr[idx]))
        always.append(_scores(yes[idx], g_arr[idx]))
    boot = []
    for _ in range(resamples):
        if grouped:  # resample whole groups
            picked = rng.integers(0, len(strata), size=len(strata))
            drawn = [strata[k] for k in picked]
        else:  # resample items of each class
            drawn = [(rng.choice(p, len(p)), rng.choice(n, len(n))) for p, n in strata]
        idx = _draw(drawn, rng)
        if idx is not None:
            boot.append(_scores(p_arr[idx], g_arr[idx]))
    arr, base, b = np.array(judged), np.array(always), np.array(boot)
    n_balanced = int(sum(2 * min(len(p), len(n)) for p, n in strata))

    def interval(column: int) -> Interval:
        units = len(strata) if grouped else len(gold)
        if units < MIN_RESAMPLING_UNITS or not len(b):
            return (None, None)  # too few independent groups for an interval
        low, high = np.quantile(b[:, column], [0.025, 0.975])
        return (finite(float(low)), finite(float(high)))

    return BalancedRates(
        n=n_balanced,
        accuracy=finite(float(arr[:, 0].mean())),
        accuracy_ci95=interval(0),
        f1=finite(float(arr[:, 1].mean())),
        f1_ci95=interval(1),
        always_yes=YesRates(
            accuracy=finite(float(base[:, 0].mean())), f1=finite(float(base[:, 1].mean()))
        ),
    )
