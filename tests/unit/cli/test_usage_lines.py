"""A batch's usage (provider prompt-cache tokens included) adds up its items' and is shown in
`judge batch summary` within 80 columns; an item's usage line names the cached tokens."""

from __future__ import annotations

from pathlib import Path

from judge.cli._render import usage_text
from judge.cli.batch import summary_lines
from judge.domain.batch_summary import BatchSummary, digest, item_row, total_usage
from judge.domain.result import ScoreResult, Usage

RESULTS = Path(__file__).parents[2] / "fixtures" / "score_results"


def _result(cached: int, written: int, cost: float) -> str:
    result = ScoreResult.model_validate_json((RESULTS / "lend_an_ear.json").read_text("utf-8"))
    usage = Usage(
        llm_calls=3, prompt_tokens=5400, completion_tokens=600, cost_usd=cost,
        cached_prompt_tokens=cached, cache_write_tokens=written,
    )  # fmt: skip
    return result.model_copy(update={"usage": usage}).model_dump_json()


def test_a_batchs_usage_adds_up_its_completed_items() -> None:
    done = [_result(0, 1734, 0.0158), _result(5132, 0, 0.0069)]
    rows = [
        item_row(line=n, job_id=str(n), item_id=None, status="completed", result_json=text)
        for n, text in enumerate(done)
    ]
    rows.append(item_row(line=2, job_id="c", item_id=None, status="queued", result_json=None))
    total = total_usage(rows)
    assert (total.llm_calls, total.prompt_tokens, total.completion_tokens) == (6, 10800, 1200)
    assert (total.cached_prompt_tokens, total.cache_write_tokens) == (5132, 1734)
    assert total.cost_usd == 0.0227
    summary = BatchSummary(
        batch_id="a" * 32, status="running", rubric={"id": "lend-an-ear", "version": "1"},
        panel_name="default", total=3, completed=2, failed=0, simulated=True,
        dimensions=digest(rows), usage=total,
    )  # fmt: skip
    lines = summary_lines(summary)
    assert max(len(line) for line in lines) <= 80
    text = " ".join(lines)
    assert "10800 prompt (5132 cached, 1734 cache-written)" in text
    assert "$0.022700" in text


def test_an_items_usage_names_cached_tokens_only_when_there_are_some() -> None:
    plain = Usage(llm_calls=3, prompt_tokens=5400, completion_tokens=600, cost_usd=0.0145)
    assert usage_text(plain) == "3 LLM calls, 5400 prompt + 600 completion tokens, $0.014500"
    cached = plain.model_copy(update={"cached_prompt_tokens": 5132})
    assert "5400 prompt (5132 cached) + 600" in usage_text(cached)
