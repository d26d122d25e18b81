"""The ranked scale's side of the weighted refit (issue 23, 8): weighted Borda first choices.

A ranked dimension's aggregate is a Borda count over the judges' top-k lists (``k - position``
points; weighted: each judge's points times its weight). Its first choice is scored by the
statistic the ranked report already uses, chance-corrected Recall@1 with the chance from the
column's *own* first choices (:mod:`judge.reliability._rescue_chance`):

    sum_i (hit_i - chance_i) / sum_i (1 - chance_i),
    chance_i = q(key of the gold) / sum of q over the item's candidate keys,

``q`` the column's first choices pooled by candidate key (a participant by its position among
the item's candidates, a shared label by id). With the same candidates on every item (a
ranked scale of fixed labels) this is Cohen's kappa of the first choices, the metric of such
a scale: ``mean(chance_i) = sum_c p_column(c) p_gold(c)``.

Ties. A Borda tie for first place goes to the tied labels with the most first places (the
judges' weights summed: a count for the equal aggregate), and what still ties is split evenly
(a tied item is ``1 / #tied`` right and spreads its first choice evenly over the habit), for
the equal and the weighted aggregate alike: neither wins from a tie rule. The first-place step
matters: two judges ranking ``[x, y]`` and ``[z, y]`` tie x, y and z at 2 points each, and an
even three-way split credits y, which no judge put first; any unequal weights pick one judge's
first choice instead, so with the split alone two exchangeable judges' weighted aggregate beat
the equal one by 0.022 (chance-corrected Recall@1, 20,000 simulated items) from tie-breaking,
not reliability. (The service's own Borda breaks ties by label order; the refit test does not
use it.) An item whose answering judges all
weigh zero takes the equal Borda count, as :func:`judge.panel.aggregate.weighted_aggregate`
does. The habit (``q``) is re-estimated in every bootstrap resample and every fold, like the
weights, for the judges' own scores (their weights) and for both aggregates.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judge.reliability._missing import is_missing
from judge.reliability._resample import group_codes, n_groups
from judge.reliability._rescue_chance import candidate_keys
from judge.reliability._segment_sums import column_sums

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
BoolArray = NDArray[np.bool_]
_TIE = 1e-12


@dataclass(frozen=True)
class RankedDesign:
    """Per item, slots for its candidates (in the item's order) then any other label a judge
    listed; ``points[j, i, s]`` the Borda points judge ``j`` gave slot ``s`` of item ``i``;
    ``first[j, i]`` its first choice's slot (-1: abstained); ``slot_key`` each slot's pooled
    key code (-1: padding or outside the item's candidates); ``member[i, key]`` whether the
    key is one of item ``i``'s candidates; ``gold`` the slot of the gold first choice."""

    points: FloatArray  # judges x items x slots
    first: IntArray  # judges x items
    gold: IntArray
    slot_key: IntArray  # items x slots
    member: FloatArray  # items x keys
    units: IntArray
    #: single experts' columns are not measured on ranked scales (no like-for-like here)
    experts: None = None

    @property
    def n_units(self) -> int:
        return n_groups(self.units)

    @property
    def n_judges(self) -> int:
        return int(self.points.shape[0])

    @property
    def n_items(self) -> int:
        return int(self.gold.size)

    @property
    def gold_key(self) -> IntArray:
        out: IntArray = self.slot_key[np.arange(self.n_items), self.gold]
        return out

    @property
    def fallback(self) -> FloatArray:
        """1/k per item: the chance of an item whose candidates the column never chose first."""
        out: FloatArray = 1.0 / np.maximum(self.member.sum(axis=1), 1.0)
        return out


def ranked_design(
    rankings: Sequence[Sequence[Sequence[Hashable] | None]],
    gold: Sequence[Hashable],
    candidates: Sequence[Sequence[Hashable]],
    *,
    k: int,
    shared: Collection[Hashable] = (),
    groups: Sequence[Hashable | None] | None = None,
) -> RankedDesign:
    """From per-item judge rankings (``rankings[i][j]``, best first, None or empty =
    abstained; only the first ``k`` count), each item's gold first choice and its candidates
    in the item's own order; ``shared`` names labels that mean the same on every item (e.g.
    a group label); ``groups`` each item's unit. ValueError for a gold outside its item's
    candidates."""
    if not len(rankings) == len(gold) == len(candidates):
        raise ValueError("rankings, gold and candidates need one entry per item")
    judges = len(rankings[0]) if rankings else 0
    key_index: dict[Hashable, int] = {}
    slots: list[list[Hashable]] = []
    keys: list[list[int]] = []
    for row, cands in zip(rankings, candidates, strict=True):
        if len(row) != judges:
            raise ValueError("every item needs one ranking (or None) per judge")
        labels = list(cands)
        codes = [
            key_index.setdefault(key, len(key_index)) for key in candidate_keys(labels, shared)
        ]
        for ranking in row:
            for label in [] if ranking is None else ranking[:k]:
                if label not in labels:
                    labels.append(label)
                    codes.append(-1)
        slots.append(labels)
        keys.append(codes)
    n, width = len(slots), max((len(s) for s in slots), default=1)
    points = np.zeros((judges, n, width), dtype=np.float64)
    first = np.full((judges, n), -1, dtype=np.int64)
    slot_key = np.full((n, width), -1, dtype=np.int64)
    member = np.zeros((n, max(len(key_index), 1)), dtype=np.float64)
    gold_slot = np.empty(n, dtype=np.int64)
    for i, (row, labels, codes, g) in enumerate(zip(rankings, slots, keys, gold, strict=True)):
        slot_key[i, : len(codes)] = codes
        member[i, [c for c in codes if c >= 0]] = 1.0
        if is_missing(g) or g not in labels[: len(candidates[i])]:
            raise ValueError(f"gold {g!r} is not one of the item's candidates {candidates[i]!r}")
        gold_slot[i] = labels.index(g)
        for j, ranking in enumerate(row):
            listed = [] if ranking is None else list(ranking[:k])
            for position, label in enumerate(listed):
                points[j, i, labels.index(label)] += k - position
            if listed:
                first[j, i] = labels.index(listed[0])
    return RankedDesign(points, first, gold_slot, slot_key, member, group_codes(n, groups))


def ranked_answers(d: RankedDesign, weights: FloatArray) -> FloatArray:
    """Each item's first choice as a distribution over its slots, per row of ``weights``
    (resamples x judges): the weighted Borda winner; a tie goes to the tied labels with the
    most (weighted) first places, and a tie that remains is split evenly; an item whose
    answering judges all weigh zero takes the equal count."""
    answered = (d.first >= 0).astype(np.float64)  # judges x items
    shape = (weights.shape[0], d.n_items, d.points.shape[2])
    points, firsts = np.zeros(shape, dtype=np.float64), np.zeros(shape, dtype=np.float64)
    voting = np.zeros((weights.shape[0], d.n_items), dtype=np.float64)
    given = np.flatnonzero(d.first.ravel() >= 0)  # flat (judge, item) with a first choice
    first_place = np.zeros((d.n_judges, d.n_items, d.points.shape[2]), dtype=np.float64)
    first_place[given // d.n_items, given % d.n_items, d.first.ravel()[given]] = 1.0
    for j in range(d.n_judges):  # a few judges: no matrix product (BLAS threads contend)
        points += weights[:, j, None, None] * d.points[j][None]
        firsts += weights[:, j, None, None] * first_place[j][None]
        voting += weights[:, j, None] * answered[j][None]
    fallback = (voting <= 0)[:, :, None]
    points = np.where(fallback, d.points.sum(axis=0)[None], points)
    firsts = np.where(fallback, first_place.sum(axis=0)[None], firsts)
    winners = _top(points) & (points.max(axis=2, keepdims=True) > 0)
    winners &= _top(np.where(winners, firsts, -1.0))  # then the most first places
    count = winners.sum(axis=2, keepdims=True)
    out: FloatArray = np.where(count > 0, winners / np.maximum(count, 1), 0.0)
    return out


def _top(values: FloatArray) -> BoolArray:
    """Where ``values`` reach their maximum over the last axis (within rounding)."""
    top = values.max(axis=2, keepdims=True)
    out: BoolArray = values >= top - _TIE * np.maximum(1.0, np.abs(top))
    return out


def ranked_score(d: RankedDesign, answers: FloatArray, item_weights: FloatArray) -> FloatArray:
    """The module docstring's chance-corrected Recall@1 of the first-choice distributions
    ``answers`` ((1 or resamples) x items x slots), per row of ``item_weights`` (resamples x
    items: multiplicities, 0 = not in this sample); an item without an answer is a miss at
    chance 1/k. NaN where undefined (every chance 1)."""
    r = item_weights.shape[0]
    mass = item_weights[:, :, None] * answers  # r x n x slots
    habit = column_sums(mass.reshape(r, -1), d.slot_key.ravel(), d.member.shape[1])
    on_item = (habit[:, None, :] * d.member[None]).sum(axis=2)  # r x n
    on_gold = habit[:, d.gold_key]
    given = answers.sum(axis=2) > 0
    hit = answers[:, np.arange(d.n_items), d.gold]
    with np.errstate(divide="ignore", invalid="ignore"):
        chance = np.where(given & (on_item > 0), on_gold / on_item, d.fallback[None, :])
        top = (item_weights * (hit - chance)).sum(axis=1)
        bottom = (item_weights * (1.0 - chance)).sum(axis=1)
        out: FloatArray = np.where(bottom > _TIE, top / bottom, np.nan)
    return out


def ranked_judge_scores(d: RankedDesign, item_weights: FloatArray) -> FloatArray:
    """Each judge's own score over the items it answered (resamples x judges), its habit
    from its own first choices on those items (the service's ``judge_agreement``)."""
    out = np.empty((item_weights.shape[0], d.n_judges), dtype=np.float64)
    items = np.arange(d.n_items)
    for j in range(d.n_judges):
        answered = d.first[j] >= 0
        one_hot = np.zeros((1, d.n_items, d.points.shape[2]), dtype=np.float64)
        one_hot[0, items[answered], d.first[j][answered]] = 1.0
        out[:, j] = ranked_score(d, one_hot, item_weights * answered[None, :])
    return out
