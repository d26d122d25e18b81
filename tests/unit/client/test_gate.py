"""The CI gate (empathy_judge_client.gate, gate_cli): numbers against a hand-computed batch,
exit codes 0/1/2 and their messages, 80-column output, and ``judge gate`` on the command
line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from empathy_judge_client.gate import GateUsageError, evaluate, parse_threshold
from empathy_judge_client.gate_cli import main
from tests.fixtures.cli import run_judge


def line(dims: dict[str, tuple[Any, str]], *, status: str = "completed") -> dict[str, Any]:
    """A result line: dimension -> (score, flag level); as the simulator's panel marks it."""
    if status != "completed":
        return {"id": "x", "status": status, "line": 1, "batch_id": "b"}
    return {
        "status": status,
        "simulated": True,
        "dimensions": {
            name: {"score": score, "reliability": {"level": level}}
            for name, (score, level) in dims.items()
        },
    }


#: empathy: 1 trusted, 2 trusted, 3 untrusted (left out of the mean) -> mean 1.5 over n=2,
#: trusted share 2/3; dismissing (proscriptive): 0, 1, 0 all caution -> mean 1/3, share 0
BATCH = [
    line({"empathy": (1, "trusted"), "dismissing": (0, "caution")}),
    line({"empathy": (2, "trusted"), "dismissing": (1, "caution")}),
    line({"empathy": (3, "untrusted"), "dismissing": (0, "caution")}),
]


def test_the_numbers_match_a_hand_computed_batch() -> None:
    report = evaluate(BATCH, minimums={"empathy": 1.5})
    empathy, dismissing = report.dimensions["empathy"], report.dimensions["dismissing"]
    assert (empathy.items, empathy.scored, empathy.untrusted, empathy.trusted) == (3, 2, 1, 2)
    assert empathy.mean == pytest.approx(1.5)
    # normal interval: 1.5 +- 1.96 * sd(1, 2) / sqrt(2) = 1.5 +- 0.98
    assert empathy.ci95 == pytest.approx((0.52, 2.48))
    assert empathy.trusted_share == pytest.approx(2 / 3)
    assert dismissing.mean == pytest.approx(1 / 3)
    assert dismissing.trusted_share == 0.0
    assert report.exit_code == 0


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"minimums": {"empathy": 1.5}}, 0),
        ({"minimums": {"empathy": 1.51}}, 1),
        ({"maximums": {"dismissing": 0.34}}, 0),
        ({"maximums": {"dismissing": 0.33}}, 1),
        ({"min_trusted_share": {"empathy": 0.66}}, 0),
        ({"min_trusted_share": {"empathy": 0.67}}, 1),
        ({"min_trusted_share": {None: 0.5}}, 1),  # every dimension: dismissing has 0
        ({"minimums": {"empathy": 1.0}, "require_trusted": True}, 2),  # 1 untrusted item
        ({"maximums": {"dismissing": 1.0}, "require_trusted": True}, 0),  # caution only
    ],
)
def test_exit_codes(kwargs: dict[str, Any], code: int) -> None:
    assert evaluate(BATCH, **kwargs).exit_code == code


def test_an_item_that_did_not_complete_is_missing_evidence() -> None:
    results = [*BATCH[:2], line({}, status="failed")]
    loose = evaluate(results, maximums={"dismissing": 1.0})
    assert (loose.completed, loose.incomplete, loose.exit_code) == (2, 1, 0)
    strict = evaluate(results, maximums={"dismissing": 1.0}, require_trusted=True)
    assert strict.exit_code == 2
    assert strict.unusable == ["1 items did not complete"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"minimums": {"empathi": 1}}, "--min empathi=1: no result has a dimension 'empathi'"),
        ({"min_trusted_share": {None: 1.5}}, "a share is between 0 and 1"),
        ({"min_trusted_share": {"x": 0.5}}, "no result has a dimension 'x'"),
    ],
)
def test_usage_errors_name_the_threshold(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(GateUsageError, match=message):
        evaluate(BATCH, **kwargs)


def test_a_label_dimension_has_no_mean() -> None:
    labelled = [line({"strategy": ("reflection", "caution")})]
    with pytest.raises(GateUsageError, match="'strategy' has non-numeric scores"):
        evaluate(labelled, minimums={"strategy": 1})
    assert evaluate(labelled, min_trusted_share={"strategy": 0.0}).exit_code == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("empathy", "expected DIMENSION=VALUE"),
        ("empathy=high", "'high' is not a number"),
        ("=1", "the dimension is empty"),
        ("empathy=nan", "must be finite"),
    ],
)
def test_malformed_thresholds(text: str, message: str) -> None:
    with pytest.raises(GateUsageError, match=message):
        parse_threshold(text)


def test_summary_fits_80_columns_and_labels_simulated_judges() -> None:
    long_name = "a_dimension_with_a_name_longer_than_its_column"
    results = [*BATCH, line({long_name: (1, "trusted")})]
    report = evaluate(results, minimums={"empathy": 2}, min_trusted_share={None: 0.9})
    lines = report.lines()
    assert all(len(text) <= 80 for text in lines), lines
    assert "SIMULATED judges" in lines[1]
    assert "FAIL  empathy mean 1.500 >= 2" in lines
    assert lines[-1] == "result: FAILED: 3 of 4 thresholds (exit 1)"


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_cli_exit_codes_and_messages(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = str(_write(tmp_path / "results.jsonl", BATCH))
    assert main([results, "--min", "empathy=1.5", "--min-trusted-share", "empathy=0.6"]) == 0
    assert "result: PASSED: 2 thresholds (exit 0)" in capsys.readouterr().out
    assert main([results, "--min", "empathy=2"]) == 1
    assert main([results, "--min", "empathy=1", "--fail-on", "untrusted"]) == 2
    assert "UNUSABLE  empathy: flagged untrusted on 1 items" in capsys.readouterr().out
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(BATCH[0]) + "\n{oops\n", encoding="utf-8")
    assert main([str(bad), "--min", "empathy=1"]) == 2
    assert f"{bad}:2: not JSON" in capsys.readouterr().err
    assert main([str(tmp_path / "missing.jsonl"), "--min", "empathy=1"]) == 2
    assert "No such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage:
        main([])
    assert usage.value.code == 2


def test_judge_gate_on_the_command_line(tmp_path: Path) -> None:
    results = _write(tmp_path / "results.jsonl", BATCH)
    done = run_judge("gate", str(results), "--max", "dismissing=0.2", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "FAIL  dismissing mean 0.333 <= 0.2" in done.stdout
    piped = run_judge("gate", "-", "--min", "empathy=1", cwd=tmp_path, stdin=results.read_text())
    assert piped.returncode == 0, piped.stderr
