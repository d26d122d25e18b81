"""The expert loop through a real Label Studio: ``judge labels push`` a round of a rubric
with every scale type, two annotators label it through Label Studio's own API, ``judge labels
pull`` reads them back, ``judge calibrate --from-labels`` turns them into a calibration."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from judge.sample_conversations import load_sample
from tests.fixtures.cli import JUDGE, calibrate_round, invoke_judge, judge_env
from tests.fixtures.label_studio import ADMIN, LabelStudioServer, choice

# a first start migrates Label Studio's empty database: minutes on a busy machine
pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]

EXPERT_B = "expert.b@example.org"
CHECKPOINTS = (3, 4, 5)
#: how long a following pull may take to see a new annotation (a bound, not a measurement)
FOLLOW_DEADLINE_S = 120


def _items(path: Path) -> Path:
    session = load_sample("couple_session.json")
    lines = [
        session | {"id": f"cp{focus}", "focus": focus, "group": "session-1"}
        for focus in CHECKPOINTS
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _result(intensity: int, target: str, strategy: list[str], intervene: str) -> list[Any]:
    result = [
        choice("focus_intensity", str(intensity)),
        choice("intervene_now", intervene),
        choice("relation_pattern", "pursue_withdraw"),
        choice("support_target__1", target),
        {
            "from_name": "focus_emotion",
            "to_name": "conversation",
            "type": "textarea",
            "value": {"text": ["feels unheard"]},
        },
    ]
    result += [choice(f"support_strategy__{i}", s) for i, s in enumerate(strategy, start=1)]
    return result


def _annotate(server: LabelStudioServer, project: int) -> None:
    """Two annotators label every task through Label Studio's REST API."""
    with server.api() as api:
        created = api.post(
            "/api/users/", json={"email": EXPERT_B, "username": "expert_b", "first_name": "B"}
        )
        assert created.status_code == 201, created.text
        users = {ADMIN: 1, EXPERT_B: created.json()["id"]}
        tasks = api.get("/api/tasks/", params={"project": project}).json()["tasks"]
        assert len(tasks) == len(CHECKPOINTS)
        for n, task in enumerate(tasks):
            for who, shift in ((ADMIN, 0), (EXPERT_B, n % 2)):
                body = {
                    "completed_by": users[who],
                    "result": _result(
                        4 + n + shift, "dana", ["track", "reframe"][: 1 + shift], "yes"
                    ),
                }
                posted = api.post(f"/api/tasks/{task['id']}/annotations/", json=body)
                assert posted.status_code == 201, posted.text


def _export(tmp_path: Path) -> Path:
    round_dir = tmp_path / "round"
    items = _items(tmp_path / "items.jsonl")
    done = invoke_judge(
        "labels",
        "export",
        "--rubric",
        "rescue-couple",
        "--out",
        str(round_dir),
        str(items),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    return round_dir


def test_push_annotate_pull_calibrate(label_studio: LabelStudioServer, tmp_path: Path) -> None:
    ls_env = {"LABEL_STUDIO_TOKEN": label_studio.token}
    round_dir = _export(tmp_path)
    pushed = invoke_judge(
        "labels", "push", str(round_dir), "--to", label_studio.url, cwd=tmp_path, extra=ls_env
    )
    assert pushed.returncode == 0, pushed.stderr
    assert "created: 3 tasks imported, 0 already there" in pushed.stdout
    project = json.loads((round_dir / "label-studio" / "project.json").read_text())["project"]
    again = invoke_judge(
        "labels", "push", str(round_dir), "--to", label_studio.url, cwd=tmp_path, extra=ls_env
    )
    assert "updated: 0 tasks imported, 3 already there" in again.stdout, again.stderr

    _annotate(label_studio, project)
    pulled = invoke_judge("labels", "pull", str(round_dir), cwd=tmp_path, extra=ls_env)
    assert pulled.returncode == 0, pulled.stderr
    assert f"3 labelled tasks, 0 bad cells; 2 annotators: {ADMIN}, {EXPERT_B}" in pulled.stdout
    # three checkpoints of one session: one independent unit, so no interval
    assert f"focus_intensity {ADMIN} ~ {EXPERT_B}: " in pulled.stdout
    assert "n=3, units=1" in pulled.stdout
    lines = [
        json.loads(line)
        for line in (round_dir / "labels" / "label-studio.jsonl").read_text().splitlines()
    ]
    first = {line["annotator"]: line["labels"] for line in lines if line["task_id"] == "cp3"}
    assert first[ADMIN] == {
        "focus_intensity": 4,
        "intervene_now": True,
        "relation_pattern": "pursue_withdraw",
        "support_target": ["dana"],
        "focus_emotion": "feels unheard",
        "support_strategy": ["track"],
    }
    assert first[EXPERT_B]["focus_intensity"] == 4

    hidden = invoke_judge(
        "labels", "pull", str(round_dir), "--pseudonymise", cwd=tmp_path, extra=ls_env
    )
    assert hidden.returncode == 0, hidden.stderr
    assert "2 annotators: expert-" in hidden.stdout
    assert ADMIN not in (round_dir / "labels" / "label-studio.jsonl").read_text()
    invoke_judge("labels", "pull", str(round_dir), cwd=tmp_path, extra=ls_env)

    database = {"JUDGE_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path / 'judge.db'}"}
    assert invoke_judge("db", "upgrade", cwd=tmp_path, extra=database).returncode == 0
    report = calibrate_round(round_dir, tmp_path, database)["report"]
    assert report["rubric"]["id"] == "rescue-couple"
    assert report["n_items"] == len(CHECKPOINTS)
    assert sorted(report["experts"]) == [ADMIN, EXPERT_B]
    assert report["simulated"] is True
    flags = {d: dim["flag"] for d, dim in report["dimensions"].items() if dim.get("flag")}
    assert "focus_intensity" in flags
    # three items cannot vouch for anything
    assert all(flag["level"] != "trusted" for flag in flags.values())


def _wait_for(path: Path, text: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + FOLLOW_DEADLINE_S
    while text not in path.read_text(encoding="utf-8"):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{text!r} never reached {path}"
        time.sleep(0.5)


def test_pull_follow_keeps_the_labels_in_sync(
    label_studio: LabelStudioServer, tmp_path: Path
) -> None:
    ls_env = {"LABEL_STUDIO_TOKEN": label_studio.token}
    round_dir = _export(tmp_path)
    pushed = invoke_judge(
        "labels",
        "push",
        str(round_dir),
        "--to",
        label_studio.url,
        "--title",
        "follow round",
        cwd=tmp_path,
        extra=ls_env,
    )
    assert pushed.returncode == 0, pushed.stderr
    project = json.loads((round_dir / "label-studio" / "project.json").read_text())["project"]
    target = round_dir / "labels" / "label-studio.jsonl"
    follower = subprocess.Popen(
        [*JUDGE, "labels", "pull", str(round_dir), "--follow", "1"],
        cwd=tmp_path,
        env=judge_env(ls_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # SIGINT as a terminal gives it, whatever this test process inherited: a child keeps
        # an ignored SIGINT across exec, and an earlier test in the same worker may have left
        # SIGINT ignored (then Python installs no KeyboardInterrupt and the follower never stops)
        preexec_fn=_default_sigint,
    )
    try:
        _wait_for_file(target, follower)
        with label_studio.api() as api:
            task = api.get("/api/tasks/", params={"project": project}).json()["tasks"][0]
            body = {"result": [choice("focus_intensity", "9")]}
            assert api.post(f"/api/tasks/{task['id']}/annotations/", json=body).status_code == 201
        _wait_for(target, '"focus_intensity": 9', follower)
    finally:
        follower.send_signal(signal.SIGINT)
        try:
            out, err = follower.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            follower.kill()  # never leave the follower running past the test
            out, err = follower.communicate()
            raise AssertionError(f"the follower ignored SIGINT: {out}\n{err}") from None
    assert follower.returncode == 0, err
    assert "stopped following" in err
    assert out.count("Wrote ") == 2  # once empty, once with the new annotation


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _wait_for_file(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + FOLLOW_DEADLINE_S
    while not path.exists():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{path} never written"
        time.sleep(0.5)
