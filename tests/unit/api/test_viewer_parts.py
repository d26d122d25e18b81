"""The viewer's CSV export and SVG chart, without a server."""

from __future__ import annotations

import csv
import xml.etree.ElementTree as ET

from judge.api.security_headers import page_csp
from judge.api.ui.batch_pages import rows_csv
from judge.api.ui.svg import kappa_chart
from judge.domain.batch_summary import ItemRow


def test_csv_rows_keep_their_values_and_defuse_formulas() -> None:
    rows = [
        ItemRow(
            line=1,
            job_id="j1",
            id='=HYPERLINK("http://x")',
            status="completed",
            scores={"er": 2},
            levels={"er": "untrusted"},
            reasons={"er": ["low_expert_agreement", "panel_disagreement"]},
            spread={"er": 1.0},
        ),
        ItemRow(line=2, job_id="j2", id=None, status="failed"),
    ]
    parsed = list(csv.DictReader(rows_csv(rows, ["er"]).splitlines()))
    assert parsed[0]["id"].startswith("'=")  # a spreadsheet shows it as text
    assert parsed[0]["er.score"] == "2"
    assert parsed[0]["er.reasons"] == "low_expert_agreement;panel_disagreement"
    assert parsed[1] == {
        "line": "2",
        "job_id": "j2",
        "id": "",
        "status": "failed",
        "escalated": "False",
        "er.score": "",
        "er.level": "",
        "er.reasons": "",
        "er.spread": "",
    }


def test_the_kappa_chart_draws_each_judge_the_floor_and_the_line() -> None:
    svg = kappa_chart(
        "drift <of> er",
        ["2026-01-01", "2026-01-02", "2026-01-03"],
        {"openai/a": [0.7, 0.6, None], "<b>": [0.3, 0.2, 0.1]},
        floor=0.4,
        line=0.58,
    )
    tree = ET.fromstring(str(svg))  # well-formed, every text escaped
    ns = "{http://www.w3.org/2000/svg}"
    assert tree.find(f"{ns}title") is None  # no namespace declared: plain tags
    assert tree.find("title").text == "drift <of> er"
    assert len(tree.findall("polyline")) == 2
    assert len(tree.findall("circle")) == 5  # the unmeasured run has no point
    texts = [t.text for t in tree.iter("text")]
    assert "floor 0.40" in texts
    assert "line 0.58" in texts
    assert "<b>" in texts


def test_viewer_pages_get_a_policy_with_no_script() -> None:
    policy = page_csp("/ui/batches/x")
    assert "default-src 'none'" in policy
    assert "script-src" not in policy
    assert "form-action 'self'" in policy
    assert page_csp("/v1/calibrations/x/report") != policy
    assert page_csp("/uiother") != policy
