"""Chance-corrected Recall@1 with chance from the rater's own marginal of first choices.

RESCUE's support target ranks an item's candidates (its participants by id, and a group
label such as "Couple"). A uniform chance of 1/k per item credits a rater with skill for a
habit: a ranking that always puts the first-listed client first scores (R@1 - 1/k) /
(1 - 1/k) > 0 whenever the gold is that client more often than 1/k. Here chance is what the
rater's *own* habit would score: its first choices pooled over items give a distribution over
candidate keys (participants by their position in the item's candidate list, since their ids
differ per session; other labels by id), and per item

    chance_i = q(key of the gold) / sum of q over the item's candidates,

the probability that a first choice drawn from that habit, restricted to the item's
candidates, is the gold. The corrected score is sum(hit_i - chance_i) / sum(1 - chance_i), a
constant ranking scores exactly 0 (its chance_i is its hit_i), and a rater that spreads its
first choices like the gold and is right more often than that scores above 0, like kappa's
correction with the gold's side held fixed. An item whose candidates the rater never chose
first falls back to 1/k. The bootstrap re-estimates the habit in every resample.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judge.reliability._kappa_interval import percentile_bounds, tail_levels
from judge.reliability._missing import is_missing
from judge.reliability._resample import group_codes, resample_weights

FloatArray = NDArray[np.float64]


def candidate_keys(
    candidates: Sequence[Hashable], shared: Collection[Hashable] = ()
) -> list[Hashable]:
    """The pooled key of each candidate: its label when it is one of ``shared`` (labels with
    the same meaning in every item, e.g. "Couple"), else its position among the item's other
    candidates ("the first client", "the second client")."""
    keys: list[Hashable] = []
    position = 0
    for c in candidates:
        if c in shared:
            keys.append(("label", c))
        else:
            keys.append(("position", position))
            position += 1
    return keys


@dataclass(frozen=True)
class _Design:
    first_key: NDArray[np.int64]  # the rater's first choice per item, as a key code (-1: none)
    hit: FloatArray
    gold_key: NDArray[np.int64]
    member: FloatArray  # items x keys: 1 where the key is one of the item's candidates
    fallback: FloatArray  # 1/k per item


def _design(
    first: Sequence[Hashable | None],
    gold: Sequence[Hashable],
    candidates: Sequence[Sequence[Hashable]],
    shared: Collection[Hashable],
) -> _Design:
    if not len(first) == len(gold) == len(candidates):
        raise ValueError("first, gold and candidates need one entry per item")
    index: dict[Hashable, int] = {}
    rows: list[tuple[int, int, list[int], float]] = []
    for f, g, cands in zip(first, gold, candidates, strict=True):
        keys = candidate_keys(list(cands), shared)
        codes = [index.setdefault(k, len(index)) for k in keys]
        by_label = dict(zip(cands, codes, strict=True))
        if g not in by_label:
            raise ValueError(f"gold {g!r} is not one of the item's candidates {list(cands)!r}")
        f_code = -1 if is_missing(f) or f not in by_label else by_label[f]
        rows.append((f_code, by_label[g], codes, 1.0 if f == g else 0.0))
    member = np.zeros((len(rows), len(index)), dtype=np.float64)
    for i, (_, _, codes, _) in enumerate(rows):
        member[i, codes] = 1.0
    return _Design(
        first_key=np.array([r[0] for r in rows], dtype=np.int64),
        hit=np.array([r[3] for r in rows], dtype=np.float64),
        gold_key=np.array([r[1] for r in rows], dtype=np.int64),
        member=member,
        fallback=1.0 / np.maximum(member.sum(axis=1), 1.0),
    )


def _scores(design: _Design, weights: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(corrected score, mean chance) per row of ``weights`` (resamples x items)."""
    n_keys = design.member.shape[1]
    chosen = np.zeros((design.hit.size, n_keys), dtype=np.float64)
    ok = design.first_key >= 0
    chosen[np.flatnonzero(ok), design.first_key[ok]] = 1.0
    habit = weights @ chosen  # resamples x keys: how often each key was chosen first
    on_item = habit @ design.member.T  # resamples x items: habit mass on the item's candidates
    on_gold = habit[:, design.gold_key]
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = np.where(on_item > 0, on_gold / on_item, design.fallback[None, :])
        top = (weights * (design.hit[None, :] - chance)).sum(axis=1)
        bottom = (weights * (1.0 - chance)).sum(axis=1)
        score = np.where(bottom > 0, top / bottom, np.nan)
        mean_chance = (weights * chance).sum(axis=1) / weights.sum(axis=1)
    return score, mean_chance


@dataclass(frozen=True)
class ChanceCorrectedRecall:
    """The corrected Recall@1 with its percentile interval (undefined resamples at -1), the
    raw Recall@1 and the mean chance, over ``n`` answered items in ``units`` units."""

    value: float
    low: float
    high: float
    recall_at_1: float
    chance: float
    n: int
    units: int


def marginal_chance_recall_at_1(
    first: Sequence[Hashable | None],
    gold: Sequence[Hashable],
    candidates: Sequence[Sequence[Hashable]],
    *,
    shared: Collection[Hashable] = (),
    groups: Sequence[Hashable | None] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> ChanceCorrectedRecall:
    """The module docstring's score over the items the rater answered (``first`` None = an
    abstention, left out here; count it as a miss by passing a label that is not the gold).
    ``candidates`` lists each item's candidates in the item's own order; ``shared`` names the
    labels that mean the same in every item. With ``groups`` whole groups are resampled.
    ValueError for a gold label outside its item's candidates."""
    keep = [i for i, f in enumerate(first) if not is_missing(f)]
    nan = math.nan
    if not keep:
        return ChanceCorrectedRecall(nan, nan, nan, nan, nan, 0, 0)
    design = _design(
        [first[i] for i in keep], [gold[i] for i in keep], [candidates[i] for i in keep], shared
    )
    kept_groups = None if groups is None else [groups[i] for i in keep]
    codes = group_codes(len(keep), kept_groups)
    value, chance = _scores(design, np.ones((1, len(keep))))
    boot = np.concatenate(
        [_scores(design, w)[0] for w in resample_weights(codes, n_resamples, seed)]
    )
    low, high, _ = percentile_bounds(boot, tail_levels(confidence))
    return ChanceCorrectedRecall(
        value=float(value[0]),
        low=float(max(low, -1.0)),
        high=float(high),
        recall_at_1=float(design.hit.mean()),
        chance=float(chance[0]),
        n=len(keep),
        units=int(codes.max()) + 1,
    )


def marginal_chances(
    first: Sequence[Hashable],
    gold: Sequence[Hashable],
    candidates: Sequence[Sequence[Hashable]],
    *,
    shared: Collection[Hashable] = (),
) -> list[float]:
    """Per answered item, the chance of the module docstring (from the rater's own first
    choices over these items), for callers that resample the (hit - chance, 1 - chance)
    terms themselves; the habit is then estimated once, on the sample."""
    if not first:
        return []
    design = _design(first, gold, candidates, shared)
    chosen = np.zeros((design.hit.size, design.member.shape[1]), dtype=np.float64)
    ok = design.first_key >= 0
    chosen[np.flatnonzero(ok), design.first_key[ok]] = 1.0
    habit = chosen.sum(axis=0)
    on_item = design.member @ habit
    on_gold = habit[design.gold_key]
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = np.where(on_item > 0, on_gold / on_item, design.fallback)
    return [float(c) for c in chance]
