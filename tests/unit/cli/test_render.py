"""Score tables read well at 80 columns and in a non-TTY: no word that matters is cut, the
notation is explained, and the summary line says what it averages."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from rich.console import Console

from judge.cli._output import console
from judge.cli._render import LEGEND, print_legend, print_result, summary_line
from judge.domain.result import ScoreResult
from tests.fixtures.terminal import table_cells

RESULTS = Path(__file__).parents[2] / "fixtures" / "score_results"


def _result(name: str) -> ScoreResult:
    return ScoreResult.model_validate(json.loads((RESULTS / name).read_text("utf-8")))


def _render(result: ScoreResult, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    out: Console = console()
    out.file = io.StringIO()  # not a terminal
    print_result(out, result, result.id or "item 0")
    print_legend(out)
    text: str = out.file.getvalue()
    return text


@pytest.mark.parametrize("name", ["lend_an_ear.json", "rescue_couple.json"])
def test_nothing_is_cut_at_80_columns(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    result = _result(name)
    text = _render(result, monkeypatch)
    assert max(len(line) for line in text.splitlines()) <= 80
    assert "…" not in text
    dims = list(result.dimensions)
    # a proscriptive dimension carries "(↓ better)" after its id
    assert [cell.replace("(↓better)", "") for cell in table_cells(text, 0)] == dims
    for dim, cell in zip(result.dimensions.values(), table_cells(text, 4), strict=True):
        for reason in dim.reliability.reasons:
            assert reason in cell


def test_the_notation_is_explained(monkeypatch: pytest.MonkeyPatch) -> None:
    text = _render(_result("lend_an_ear.json"), monkeypatch)
    assert "3/2q" in text  # the notation is used...
    joined = " ".join(text.split())
    assert "3/2q = 3 judges answered, the quorum is 2" in joined  # ...and explained
    assert "? = not measured or published" in joined
    assert " ".join(LEGEND.split()) in joined


def test_the_summary_line_names_what_it_averages() -> None:
    rescue = _result("rescue_couple.json")
    line = summary_line(rescue.summary)
    # RESCUE's only ordinal dimension is the client's emotional intensity: not a quality score
    assert line.startswith("summary 0.40 on 0-1 = focus_intensity rescaled")
    assert "overall" not in line
    lend = summary_line(_result("lend_an_ear.json").summary)
    assert "mean of encouraging_elaboration," in lend
    assert "untrusted excluded: validating_emotions" in lend
