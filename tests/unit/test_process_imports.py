"""What a process imports before it does anything: scipy's statistics and alembic are
imported when a statistic is computed or a migration read, not by every ``judge`` process
(measured, issue 22: about 2 s of CPU per ``judge score``, API or worker process)."""

from __future__ import annotations

import subprocess
import sys

#: the modules each ``judge`` process starts from: a CLI command, the API, the worker
ENTRY_POINTS = ("judge.cli.score", "judge.cli.calibrate", "judge.api.app", "judge.worker.app")
LAZY = ("scipy.stats", "scipy.special", "scipy.optimize", "alembic")


def test_entry_points_leave_scipy_and_alembic_unimported() -> None:
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in ENTRY_POINTS)
        + f"print(' '.join(m for m in {LAZY!r} if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []
