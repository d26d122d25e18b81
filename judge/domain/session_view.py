"""A session's view from its jobs' results (pure): each checkpoint's dimensions read from the
window its task is judged with, then the trajectory and the supporter's measures
(:mod:`empathy_judge_client.trajectory`, :mod:`empathy_judge_client.supporter_measures`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from empathy_judge_client.session_view import (
    Checkpoint,
    CheckpointDimension,
    SessionView,
    Window,
)
from empathy_judge_client.supporter_measures import supporter_measures
from empathy_judge_client.trajectory import trajectory
from judge.domain.session import RECENT, Session, turn_refs, window_of

__all__ = ["JobState", "checkpoints", "session_view"]


@dataclass(frozen=True)
class JobState:
    """What the view needs of one job: its place in the plan, status, result and error."""

    checkpoint: int
    window: str
    start: int
    end: int
    truncated: bool
    status: str
    result_json: str | None = None
    error: str | None = None


def _dimension(found: dict[str, Any]) -> CheckpointDimension:
    score = found.get("score")
    if score is None:  # free text (not aggregated): the first valid judge's text
        score = next(
            (j.get("rating") for j in found.get("judges", []) if j["status"] == "ok"), None
        )
    flag = found.get("reliability") or {}
    return CheckpointDimension(
        score=score, level=flag.get("level", "caution"), reasons=list(flag.get("reasons", []))
    )


def _status(states: Sequence[JobState]) -> str:
    found = {s.status for s in states}
    for status in ("failed", "running", "queued"):
        if status in found:
            return status
    return "completed"


def checkpoints(session: Session, jobs: Sequence[JobState]) -> tuple[list[Checkpoint], bool]:
    """Every checkpoint with its dimensions, and whether a simulator judged any of them."""
    by_checkpoint: dict[int, dict[str, JobState]] = {}
    for job in jobs:
        by_checkpoint.setdefault(job.checkpoint, {})[job.window] = job
    turns = session.item.turns
    simulated = False
    out = []
    for c, states in sorted(by_checkpoint.items()):
        results: dict[str, dict[str, Any]] = {}
        for window, state in states.items():
            if state.status == "completed" and state.result_json:
                result = json.loads(state.result_json)
                simulated = simulated or bool(result.get("simulated"))
                results[window] = result.get("dimensions", {})
        dims: dict[str, CheckpointDimension] = {}
        for window, found in results.items():
            for dim_id, dim in found.items():
                if window_of(dim_id) == window or (
                    window == RECENT and window_of(dim_id) not in states
                ):
                    dims[dim_id] = _dimension(dim)
        errors = [s.error for s in states.values() if s.error]
        out.append(
            Checkpoint(
                index=c,
                speaker=turns[c].speaker,
                status=_status(list(states.values())),
                windows={
                    w: Window(start=s.start, end=s.end, truncated=s.truncated)
                    for w, s in states.items()
                },
                dimensions=dims,
                supporter_next=turns[c + 1].speaker == session.supporter
                if c + 1 < len(turns)
                else None,
                error=errors[0] if errors else None,
            )
        )
    return out, simulated


def session_view(session: Session, jobs: Sequence[JobState], **head: Any) -> SessionView:
    """The view: ``head`` gives id, batch_id, status, rubric, panel_name, created_at and the
    job counts."""
    found, simulated = checkpoints(session, jobs)
    refs = turn_refs(session)
    path = trajectory(found)
    done = any(c.status == "completed" for c in found)
    return SessionView(
        **head,
        supporter=session.supporter,
        simulated=simulated,
        turns=refs,
        checkpoints=found,
        trajectory=path,
        measures=supporter_measures(refs, session.supporter, path) if done else None,
    )
