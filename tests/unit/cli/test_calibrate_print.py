"""``judge calibrate``'s text report names each dimension's trust bound with its Monte Carlo
error and fits 80 columns."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge.cli.calibrate import print_report
from judge.domain.calibration_report import CalibrationReport

REPORTS = Path(__file__).parents[2] / "fixtures" / "calibration_reports"


def test_trust_bounds_with_their_monte_carlo_error_at_80_columns(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    text = (REPORTS / "epitome.report.json").read_text("utf-8")
    report = CalibrationReport.model_validate_json(text)
    print_report(report)
    out = capsys.readouterr().out
    words = " ".join(out.split())  # the header wraps at 80 columns
    assert "Trust test" in words
    assert f"{report.resamples:,} resamples" in words
    for dim_id, dim in report.dimensions.items():
        like = dim.like_for_like
        if like is not None and like.lower is not None:
            assert f"{dim_id}: kappa lower {like.lower:.3f} ±" in out
    assert max(len(line) for line in out.splitlines()) <= 80
