"""A batch's item rows, their per-dimension digest and the viewer's row filter, from stored
results (tests/fixtures/score_results)."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.domain.batch_summary import ItemRow, RowFilter, digest, item_row

RESULTS = Path(__file__).parents[2] / "fixtures" / "score_results"


def _row(name: str, line: int) -> ItemRow:
    text = (RESULTS / f"{name}.json").read_text(encoding="utf-8")
    return item_row(
        line=line, job_id=f"job{line}", item_id=name, status="completed", result_json=text
    )


def test_a_row_carries_scores_levels_reasons_and_disagreement() -> None:
    row = _row("lend_an_ear", 1)
    assert row.scores["validating_emotions"] == 2
    assert row.levels["validating_emotions"] == "untrusted"
    assert "panel_disagreement" in row.reasons["validating_emotions"]
    assert row.spread["validating_emotions"] == 2.0
    assert row.max_spread() == 2.0
    assert row.max_spread("advice_giving") == 1.0
    assert row.simulated
    labels = _row("rescue_couple", 2)
    assert labels.spread["relation_pattern"] == pytest.approx(0.3333)  # 1 - modal share
    assert labels.spread["support_strategy"] == 0.0  # 1 - top-1 agreement
    assert labels.spread["viewpoints"] is None  # free text: nothing to compare
    pending = item_row(line=3, job_id="j", item_id=None, status="queued", result_json=None)
    assert (pending.levels, pending.max_spread()) == ({}, 0.0)


def test_the_digest_counts_scores_levels_shares_and_reasons() -> None:
    rows = [_row("lend_an_ear", 1), _row("lend_an_ear", 2), _row("rescue_couple", 3)]
    found = digest(rows)
    validating = found["validating_emotions"]
    assert validating.n == 2
    assert validating.scores == {"2": 2}
    assert validating.levels == {"trusted": 0, "caution": 0, "untrusted": 2}
    assert validating.shares["untrusted"] == 1.0
    assert (validating.guaranteed, validating.escalated) == (0, 0)
    top = validating.top_reasons[0]
    assert (top.reason, top.count) == ("low_expert_agreement", 2)
    assert found["viewpoints"].scores == {"none": 1}  # free text has no aggregate score
    assert set(found) >= {"advice_giving", "relation_pattern"}


def _scored(line: int, scores: dict[str, object], scales: dict[str, str]) -> ItemRow:
    row = item_row(line=line, job_id=f"j{line}", item_id=None, status="completed", result_json=None)
    row.scores, row.scales = dict(scores), dict(scales)
    row.levels = dict.fromkeys(scores, "caution")
    return row


def test_the_digest_gives_mean_and_median_of_ordinal_scores_and_the_modal_label() -> None:
    scales = {"empathy": "ordinal", "pattern": "nominal", "now": "binary", "target": "ranked"}
    rows = [
        _scored(1, {"empathy": 1, "pattern": "a", "now": True, "target": ["x", "y"]}, scales),
        _scored(2, {"empathy": 2, "pattern": "b", "now": True, "target": ["y", "x"]}, scales),
        _scored(3, {"empathy": 4.5, "pattern": "b", "now": False, "target": ["x"]}, scales),
        _scored(4, {"empathy": 4, "pattern": "a", "now": None, "target": ["y"]}, scales),
        _scored(5, {"empathy": None, "pattern": None, "now": None, "target": None}, scales),
    ]
    found = digest(rows)
    empathy = found["empathy"]  # 1, 2, 4.5 and 4 (the fifth below quorum)
    assert (empathy.scale, empathy.n, empathy.scored) == ("ordinal", 5, 4)
    assert empathy.mean == 2.875  # 11.5 / 4
    assert empathy.median == 3.0  # (2 + 4) / 2
    assert empathy.modal == []
    pattern = found["pattern"]
    assert (pattern.scored, pattern.mean, pattern.median) == (4, None, None)
    assert pattern.modal == ["a", "b"]  # two each: both reported
    assert (found["now"].scored, found["now"].modal) == (3, ["True"])
    assert found["target"].modal == ["x", "y"]  # first choices x, y, x, y


def test_the_fixtures_centre_follows_their_scales() -> None:
    found = digest([_row("lend_an_ear", 1), _row("rescue_couple", 2), _row("rescue_couple", 3)])
    assert (found["validating_emotions"].mean, found["validating_emotions"].median) == (2.0, 2.0)
    assert found["relation_pattern"].modal == ["attack_attack"]
    assert found["support_strategy"].modal == ["detach"]
    viewpoints = found["viewpoints"]  # free text: no score, no centre
    assert (viewpoints.scale, viewpoints.scored, viewpoints.modal) == ("free_text", 0, [])


def test_the_row_filter_keeps_what_it_names_and_sorts_by_spread() -> None:
    rows = [_row("rescue_couple", 1), _row("lend_an_ear", 2)]
    failed = item_row(line=3, job_id="j3", item_id="x", status="failed", result_json=None)
    rows.append(failed)
    assert RowFilter().apply(rows) == rows  # no filter: every row, failed ones too
    untrusted = RowFilter(level="untrusted").apply(rows)
    assert [r.line for r in untrusted] == [2]
    reason = RowFilter(reason="judges_below_line").apply(rows)
    assert [r.line for r in reason] == [2]
    assert RowFilter(dimension="viewpoints", disagreement=True).apply(rows) == []
    assert [r.line for r in RowFilter(dimension="focus_intensity").apply(rows)] == [1]
    by_spread = RowFilter(sort="spread").apply(rows)
    assert [r.line for r in by_spread] == [1, 2, 3]  # 2.0, 2.0 (stable), then none
    assert [r.line for r in RowFilter(sort="spread", dimension="advice_giving").apply(rows)] == [2]
