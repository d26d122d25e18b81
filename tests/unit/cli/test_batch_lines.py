"""`judge batch list` and `judge batch summary` fit 80 columns and never cut a reason code."""

from __future__ import annotations

from pathlib import Path

from judge.cli.batch import listing_lines, summary_lines
from judge.domain.batch_summary import BatchSummary, digest, item_row
from judge.domain.wire import BatchListing, BatchPage, RubricRef

RESULTS = Path(__file__).parents[2] / "fixtures" / "score_results"


def test_summary_lines_wrap_at_80_columns_keeping_every_reason_whole() -> None:
    text = (RESULTS / "lend_an_ear.json").read_text(encoding="utf-8")
    rows = [
        item_row(line=n, job_id=f"j{n}", item_id=None, status="completed", result_json=text)
        for n in range(3)
    ]
    summary = BatchSummary(
        batch_id="a" * 32,
        status="completed",
        rubric={"id": "lend-an-ear", "version": "1", "hash": "h"},
        panel_name="default",
        total=3,
        completed=3,
        failed=0,
        simulated=True,
        dimensions=digest(rows),
    )
    lines = summary_lines(summary)
    assert max(len(line) for line in lines) <= 80
    text = " ".join(lines)
    assert "SIMULATED" in lines[0]
    for dim in summary.dimensions.values():
        for reason in dim.top_reasons:
            assert f"{reason.reason} {reason.count}" in text
    at = lines.index("validating_emotions (n=3)")
    assert lines[at + 1] == "  centre   mean 2  median 2  (scored 3)"


def test_summary_lines_name_the_modal_label_of_a_nominal_dimension() -> None:
    text = (RESULTS / "rescue_couple.json").read_text(encoding="utf-8")
    row = item_row(line=1, job_id="j", item_id=None, status="completed", result_json=text)
    summary = BatchSummary(
        batch_id="c" * 32,
        status="completed",
        rubric={"id": "rescue-couple", "version": "1", "hash": "h"},
        panel_name="default",
        total=1,
        completed=1,
        failed=0,
        simulated=False,
        dimensions=digest([row]),
    )
    lines = summary_lines(summary)
    assert max(len(line) for line in lines) <= 80
    assert "  centre   modal attack_attack  (scored 1)" in lines
    assert "  centre   modal first detach  (scored 1)" in lines
    assert "  centre   none  (scored 0)" in lines  # free text


def test_listing_lines_fit_80_columns() -> None:
    batch = BatchListing(
        id="b" * 32,
        status="completed",
        rubric=RubricRef(id="rescue-response-long-name", version="1", hash="h"),
        panel_name="a-very-long-panel-name",
        simulated=True,
        total=100_000,
        queued=0,
        running=0,
        completed=99_000,
        failed=1_000,
        rejected=0,
        created_at="2026-01-01T00:00:00+00:00",
    )
    lines = listing_lines(BatchPage(offset=0, limit=1, next_offset=1, batches=[batch]))
    assert max(len(line) for line in lines) <= 80, lines
    assert lines[0].startswith("b" * 32)
    about = " ".join(lines[1:-1])
    for words in ("SIMULATED", "rescue-response-long-name", "a-very-long-panel-name"):
        assert words in about, words
    assert lines[-1] == "more: --offset 1"
