"""What a calibration item holds once scored: the experts' labels beside the judges' ratings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ScoredItem:
    """One calibration item: expert labels and what each judge (and the panel) said."""

    labels: dict[str, dict[str, Any]]  # expert -> dimension -> value
    judges: dict[str, dict[str, Any]]  # model -> dimension -> rating (missing = abstained)
    aggregate: dict[str, Any]  # dimension -> panel score (None when below quorum)
    group: str | None = None  # items of one group are resampled together
    participants: tuple[str, ...] = ()  # the item's non-supporter participant ids
    given: Mapping[str, Any] = field(default_factory=dict)  # labels the judges were told
    #: model -> dimension -> the judge's k samples (only for judges with samples > 1)
    judge_samples: dict[str, dict[str, list[Any]]] = field(default_factory=dict)
    llm_calls: int = 0  # LLM calls the item cost (cache hits excluded)
    #: the item's content key (:func:`judge.domain.content.content_key`): repeated content is
    #: one independent unit
    content: str | None = None
    #: the independent unit (:mod:`judge.calibration._units`), set by the report
    unit: str | None = None
    #: a session's checkpoint: (its 1-based row, the session's rows), for the trajectory
    #: figures (issue 31); None for other items
    position: tuple[int, int] | None = None

    @property
    def resampling_group(self) -> str | None:
        """What an interval resamples this item with: its unit, else its group."""
        return self.unit if self.unit is not None else self.group


def experts_labelling(items: Sequence[ScoredItem], dim_id: str) -> list[str]:
    """The experts who labelled ``dim_id`` on any of ``items``, sorted."""
    return sorted({e for it in items for e, labels in it.labels.items() if dim_id in labels})


def expert_column(items: Sequence[ScoredItem], expert: str, dim_id: str) -> list[Any]:
    """``expert``'s label of ``dim_id`` on each item (None: not labelled)."""
    return [it.labels.get(expert, {}).get(dim_id) for it in items]
