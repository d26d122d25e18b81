"""An economy batch's provider side as ``judge batch status`` and the progress bar print it:
the stage, held items and each provider batch's counts, within 80 columns."""

from __future__ import annotations

from judge.cli import batch
from judge.domain.wire import BatchView


def economy_view(stage: str, held: int) -> BatchView:
    return BatchView.model_validate(
        {
            "id": "b" * 32, "status": "queued", "mode": "economy",
            "rubric": {"id": "epitome", "version": "1", "hash": "h"}, "panel_name": "p",
            "total": 4, "queued": held, "running": 0, "completed": 4 - held,
            "failed": 0, "rejected": 0, "rejections": [], "created_at": "now",
            "results": "/r",
            "economy": {
                "stage": stage, "held": held,
                "provider_batches": [
                    {"model": "openai/" + "x" * 60, "status": "in_progress", "requests": 4000,
                     "completed": 1234, "failed": 56},
                    {"model": "openai/accurate", "status": "fetched", "requests": 4,
                     "completed": 4, "failed": 0},
                ],
            },
        }
    )  # fmt: skip


def test_the_provider_side_fits_80_columns() -> None:
    lines = batch.economy_lines(economy_view("in progress", 4))
    assert lines[0] == "economy: in progress, 4 item(s) waiting for the provider"
    assert "in_progress" in lines[1]
    assert "1234/4000 answered, 56 failed" in lines[1]
    assert "openai/accurate" in lines[2]
    assert all(len(line) <= 80 for line in lines)


def test_an_interactive_batch_prints_no_provider_side() -> None:
    view = economy_view("released", 0).model_copy(update={"economy": None, "mode": "interactive"})
    assert batch.economy_lines(view) == []
