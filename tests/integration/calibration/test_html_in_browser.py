"""The calibration report page as people see it: rendered by headless Chromium, offline.

A report with every kind of section (ordinal heatmap row, confusion matrices, the balanced
intervene-now table, a given-target strategy, the simulated banner) is written to a file and
opened with ``--dump-dom`` (the DOM after layout and any script) and ``--screenshot``.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from judge.calibration import ScoredItem, calibration_report, render_report_html
from judge.domain.calibration_report import CalibrationReport, PanelRef
from judge.rubrics import RubricRegistry

pytestmark = [pytest.mark.integration]

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def _report() -> CalibrationReport:
    couple = RubricRegistry.from_directory().get("rescue-couple")
    items = []
    for i in range(40):
        truth = i % 3 == 0
        strategy = ["track", "evoke", "reframe"][i % 3]
        items.append(
            ScoredItem(
                labels={"rescue-bench": {"intervene_now": truth, "support_strategy": strategy,
                                         "focus_intensity": i % 11}},
                judges={"openai/accurate": {"intervene_now": truth or i % 7 == 0,
                                            "support_strategy": [strategy, "join"],
                                            "focus_intensity": (i + 1) % 11}},
                aggregate={"intervene_now": truth or i % 7 == 0,
                           "support_strategy": [strategy, "join"], "focus_intensity": (i + 1) % 11},
                group=f"s{i % 6}",
            )
        )  # fmt: skip
        items.append(
            ScoredItem(
                labels={"rescue-bench": {"support_strategy": strategy}},
                judges={"openai/accurate": {"support_strategy": [strategy]}},
                aggregate={"support_strategy": [strategy]},
                group=f"s{i % 6}",
                given={"support_target": "Couple"},
            )
        )
    report = calibration_report(
        couple, items, ["openai/accurate"], "browser-check", resamples=100, simulated=True
    )
    report.panel = PanelRef(name="simulated", judges=["openai/accurate"])
    return report


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "profile"
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium is not installed")
def test_the_report_renders_offline_in_headless_chromium(tmp_path: Path) -> None:
    report = _report()
    page = render_report_html(report)
    assert not re.search(r"""(src|href)=["']?https?:""", page)  # nothing to fetch
    html = tmp_path / "report.html"
    html.write_text(page, encoding="utf-8")

    dom = _chromium(tmp_path, "--dump-dom", html.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    text = dom.stdout
    assert "SIMULATED JUDGES" in text
    assert "<svg" in text
    assert "line 0.58" in text
    assert text.count('<table class="cm">') == 3 * 2  # three dimensions x (judge, panel)
    assert "always-yes F1" in text
    assert "Given support_target" in text
    assert "insufficient_calibration" in text
    # per-label reliability under the confusion view (issue 31): support_strategy's labels
    assert text.count('<table class="labels">') == 1
    assert "label_never_observed" in text

    shot = tmp_path / "report.png"
    done = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1400,2000", html.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1400, 2000)
    assert len(data) > 20_000  # a rendered page, not a blank canvas
