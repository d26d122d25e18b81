"""A verbosity probe's table shows each dimension's verdict, at 80 columns."""

from __future__ import annotations

from typing import Any

import pytest

from judge.cli.probe import print_probe
from tests.fixtures.terminal import table_cells

JUDGES = ["openai/accurate", "openai/verbose"]


def _dimension(shift: float, sensitive: bool) -> dict[str, Any]:
    return {
        "shift": {"mean": shift, "ci95": [shift - 0.1, shift + 0.1], "n": 12},
        "judges": {judge: {"mean": shift} for judge in JUDGES},
        "length_sensitive": sensitive,
    }


def test_the_verdict_is_in_the_table(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    print_probe(
        {
            "kind": "verbosity",
            "simulated": True,
            "rubric": {"id": "epitome"},
            "panel": {"name": "simulated", "judges": JUDGES},
            "n_items": 12,
            "cost": {"calls_per_item": 4, "measured_calls_per_item": 4.0},
            "dimensions": {
                "emotional_reactions": _dimension(0.9, True),
                "explorations": _dimension(0.0, False),
            },
        }
    )
    text = capsys.readouterr().out
    assert max(len(line) for line in text.splitlines()) <= 80
    # one row per dimension, in order: the verdicts are the last column
    assert table_cells(text, 0) == ["emotional_reactionsexplorations"]
    assert table_cells(text, 6) == ["length_sensitivenotsensitive"]
    assert "shift = padded - original score" in " ".join(text.split())
