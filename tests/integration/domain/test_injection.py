"""Prompt-injection detection on real support talk (the shared research data, about 50,000
utterances: tens of seconds, so not in the unit lane): almost no false flags."""

from __future__ import annotations

import json
from typing import Any

import pytest

from judge.domain.injection import text_contains_instructions


@pytest.mark.data
def test_real_support_talk_is_almost_never_flagged(shared_data: Any) -> None:
    """EPITOME (Reddit posts and replies), ESConv and AnnoMI: ~50,000 utterances of real support
    talk. Instructions to a rater are absent from them, so every flag would be a false one."""
    import csv

    texts: list[str] = []
    for name in ("emotional-reactions", "explorations", "interpretations"):
        with (shared_data / "epitome" / f"{name}-reddit.csv").open(encoding="utf-8") as f:
            texts += [
                t for row in csv.DictReader(f) for t in (row["seeker_post"], row["response_post"])
            ]
    for split in ("train", "valid", "test"):
        for line in (shared_data / "esconv" / f"{split}.json").read_text().splitlines():
            if line.strip():
                texts += [turn.get("text", "") for turn in json.loads(line).get("dialog", [])]
    with (shared_data / "annomi" / "AnnoMI-full.csv").open(encoding="utf-8") as f:
        texts += [row["utterance_text"] for row in csv.DictReader(f)]
    unique = list(dict.fromkeys(t for t in texts if t))
    assert len(unique) > 40_000
    flagged = [t for t in unique if text_contains_instructions(t)]
    assert len(flagged) <= 5, flagged
