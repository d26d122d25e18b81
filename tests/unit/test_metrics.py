"""judge.metrics: helpers update the right series with bounded labels; multiprocess mode sums
over processes (checked in subprocesses, so this process's prometheus_client state is moot)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from judge import metrics
from judge.domain.result import (
    Agreement,
    DimensionResult,
    JudgeRating,
    ReliabilityFlag,
    ScoreResult,
    Usage,
)
from tests.conftest import REPO

ALLOWED_LABELS = {
    "rubric",
    "dimension",
    "model",
    "status",
    "reason",
    "level",
    "outcome",
    "method",
    "route",
    "kind",
    "le",
}


def _families() -> list[Any]:
    from prometheus_client.parser import text_string_to_metric_families

    body, content_type = metrics.render_latest()
    assert content_type.startswith("text/plain")
    return list(text_string_to_metric_families(body.decode()))


def value(name: str, **labels: str) -> float:
    """Sum of the samples called ``name`` whose labels include ``labels``."""
    return float(
        sum(
            s.value
            for family in _families()
            for s in family.samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        )
    )


def _flag(level: str, *reasons: str) -> ReliabilityFlag:
    return ReliabilityFlag(
        level=level,
        reasons=list(reasons),
        expert_kappa=0.6,
        judge_kappa=None,
        threshold=0.58,
        floor=0.4,
        source="rubric-prior",
    )


def make_result(rubric: str = "unit-rubric") -> ScoreResult:
    ordinal = DimensionResult(
        score=4,
        scale={"type": "ordinal", "min": 1, "max": 5},
        polarity="prescriptive",
        judges=[
            JudgeRating(model="m/a", rating=4, status="ok"),
            JudgeRating(model="m/b", rating=5, status="ok"),
            JudgeRating(model="m/c", status="abstained", reason="unparseable"),
        ],
        agreement=Agreement(valid=2, quorum=2, spread=1.0),
        reliability=_flag("caution", "uncalibrated", "judges below line!"),
    )
    binary = DimensionResult(
        score=True,
        scale={"type": "binary"},
        polarity="prescriptive",
        judges=[
            JudgeRating(model="m/a", rating=True, status="ok"),
            JudgeRating(model="m/b", rating=False, status="ok"),
            # a reason this version does not know (a result stored by a newer one): bounded
            JudgeRating.model_construct(model="m/c", status="abstained", reason="something new"),
        ],
        agreement=Agreement(valid=2, quorum=2, modal_share=0.5, tie=True),
        reliability=_flag("untrusted", "insufficient_judges"),
    )
    nominal = DimensionResult(
        score="x",
        scale={"type": "nominal", "labels": ["x", "y"]},
        polarity="prescriptive",
        judges=[
            JudgeRating(model="m/a", rating="x", status="ok"),
            JudgeRating(model="m/b", rating="x", status="ok"),
        ],
        agreement=Agreement(valid=2, quorum=2, modal_share=1.0),
        reliability=_flag("trusted"),
    )
    return ScoreResult(
        id="item-123",
        status="completed",
        rubric={"id": rubric, "version": "1", "hash": "h"},
        panel_name="p",
        panel=[],
        dimensions={"warmth": ordinal, "validates": binary, "strategy": nominal},
        summary={},
        input_flags=[],
        usage=Usage(),
        timings_ms={},
    )


def test_importing_the_module_does_not_import_prometheus_client() -> None:
    code = "import sys, judge.metrics; print('prometheus_client' in sys.modules)"
    assert _run(code, env={}).strip() == "False"


def test_configure_after_prometheus_client_import_in_the_other_mode_fails(tmp_path: Path) -> None:
    code = f"""
    import prometheus_client
    from pathlib import Path
    from judge import metrics
    try:
        metrics.configure_metrics(Path({str(tmp_path / "mp")!r}))
    except RuntimeError as exc:
        print("refused:", exc)
    """
    assert "refused: judge.metrics: prometheus_client was imported" in _run(code, env={})


def test_http_requests_use_bounded_labels() -> None:
    route = "/v1/scores/{id}"
    before = value("judge_http_requests_total", method="GET", route=route, status="200")
    metrics.observe_http("get", route, 200, 0.02)
    metrics.observe_http("BREW", route, 999, -1.0)
    assert value("judge_http_requests_total", method="GET", route=route, status="200") == (
        before + 1
    )
    assert value("judge_http_requests_total", method="other", route=route, status="other") >= 1
    assert value("judge_http_request_duration_seconds_bucket", route=route, le="0.025") >= 1


def test_job_helpers() -> None:
    rubric = "jobs-rubric"
    metrics.job_submitted(rubric, n=3)
    metrics.job_submitted(rubric, n=0)
    assert value("judge_jobs_submitted_total", rubric=rubric) == 3
    with metrics.job_running(rubric):
        assert value("judge_jobs_running", rubric=rubric) == 1
    assert value("judge_jobs_running", rubric=rubric) == 0
    with pytest.raises(ValueError, match="boom"), metrics.job_running(rubric):
        raise ValueError("boom")
    assert value("judge_jobs_running", rubric=rubric) == 0
    metrics.job_finished(rubric, "completed", seconds=2.0)
    metrics.job_finished(rubric, "exploded")
    assert value("judge_jobs_finished_total", rubric=rubric, status="completed") == 1
    assert value("judge_jobs_finished_total", rubric=rubric, status="other") == 1
    assert value("judge_job_duration_seconds_count", rubric=rubric) == 1
    metrics.set_queue_depth(17)
    assert value("judge_queue_depth") == 17


def test_llm_calls_tokens_cost_and_cache() -> None:
    model = "openai/unit-llm"
    metrics.observe_llm_call(model, "ok", 0.3, 120, 40, 0.002, False)
    metrics.observe_llm_call(model, "weird failure text", 5.0, 0, 0, 0.0, False)
    metrics.observe_llm_call(model, "ok", 0.0, 120, 40, 0.002, True)
    assert value("judge_llm_calls_total", model=model, outcome="ok") == 1
    assert value("judge_llm_calls_total", model=model, outcome="other") == 1
    assert value("judge_llm_call_duration_seconds_count", model=model) == 2
    assert value("judge_llm_tokens_total", model=model, kind="prompt") == 120
    assert value("judge_llm_tokens_total", model=model, kind="completion") == 40
    assert value("judge_llm_cost_usd_total", model=model) == pytest.approx(0.002)
    assert value("judge_llm_cache_hits_total", model=model) == 1


def test_observe_call_record() -> None:
    from judge.domain.result import CallRecord

    model = "openai/unit-record"
    record = CallRecord(
        requested_model=model,
        resolved_model="x",
        params={},
        prompt_hash="h",
        purpose="judge",
        prompt_tokens=10,
        completion_tokens=5,
        cost_usd=0.0,
        latency_ms=1500.0,
        attempts=2,
        outcome="timed_out",
    )
    metrics.observe_call_record(record)
    assert value("judge_llm_calls_total", model=model, outcome="timed_out") == 1
    assert value("judge_llm_call_duration_seconds_sum", model=model) == pytest.approx(1.5)


def test_prompt_tokens_read_from_the_providers_cache_are_counted_apart() -> None:
    from judge.domain.result import CallRecord

    model = "anthropic/unit-prompt-cache"
    record = CallRecord(
        requested_model=model, resolved_model="x", params={}, prompt_hash="h", purpose="judge",
        prompt_tokens=1800, completion_tokens=200, cost_usd=0.004, latency_ms=1.0, attempts=1,
        outcome="ok", cached_prompt_tokens=1734,
    )  # fmt: skip
    metrics.observe_call_record(record)
    assert value("judge_llm_tokens_total", model=model, kind="prompt") == 1800
    assert value("judge_llm_tokens_total", model=model, kind="cached_prompt") == 1734


def test_observe_result_walks_dimensions() -> None:
    rubric = "unit-rubric"
    metrics.observe_result(rubric, make_result(rubric))
    # Ordinal: (4-1)/4 = 0.75 and (5-1)/4 = 1.0; binary: 1 and 0; nominal: not observed.
    assert value("judge_rating_normalised_sum", rubric=rubric, dimension="warmth") == 1.75
    assert value("judge_rating_normalised_count", rubric=rubric, model="m/a") == 2
    assert value("judge_rating_normalised_sum", rubric=rubric, dimension="validates") == 1.0
    assert value("judge_rating_normalised_count", rubric=rubric, dimension="strategy") == 0
    assert value("judge_rating_normalised_bucket", dimension="warmth", le="0.7") == 0
    assert value("judge_rating_normalised_bucket", dimension="warmth", le="0.8") == 1
    assert value("judge_judgments_total", rubric=rubric, status="ok") == 6
    assert value("judge_judgments_total", rubric=rubric, status="abstained") == 2
    assert value("judge_abstentions_total", rubric=rubric, reason="unparseable") == 1
    assert value("judge_abstentions_total", rubric=rubric, model="m/c", reason="other") == 1
    # Agreement: ordinal 1 - 1/4; binary modal share 0.5; nominal 1.0.
    assert value("judge_panel_agreement_sum", rubric=rubric, dimension="warmth") == 0.75
    assert value("judge_panel_agreement_sum", rubric=rubric) == 2.25
    assert value("judge_dimension_results_total", rubric=rubric, level="caution") == 1
    assert value("judge_dimension_results_total", rubric=rubric, level="untrusted") == 1
    assert value("judge_reliability_reasons_total", rubric=rubric, reason="uncalibrated") == 1
    assert value("judge_reliability_reasons_total", rubric=rubric, reason="other") == 1


@pytest.mark.parametrize(
    ("scale", "rating", "expected"),
    [
        ({"type": "ordinal", "min": 1, "max": 5}, 1, 0.0),
        ({"type": "ordinal", "min": 1, "max": 5}, 5, 1.0),
        ({"type": "ordinal", "min": 0, "max": 2}, 1, 0.5),
        ({"type": "ordinal", "min": 0, "max": 2}, 1.5, 0.75),
        ({"type": "ordinal", "min": 0, "max": 2}, 7, 1.0),
        ({"type": "ordinal", "min": 0, "max": 2}, True, None),
        ({"type": "ordinal", "min": 2, "max": 2}, 2, None),
        ({"type": "binary"}, True, 1.0),
        ({"type": "binary"}, False, 0.0),
        ({"type": "binary"}, 1, None),
        ({"type": "nominal", "labels": ["a"]}, "a", None),
        ({"type": "ranked", "k": 3}, ["a", "b"], None),
        ({"type": "free_text"}, "text", None),
    ],
)
def test_normalise_rating(scale: dict[str, Any], rating: Any, expected: float | None) -> None:
    assert metrics.normalise_rating(scale, rating) == expected


def test_every_judge_series_has_bounded_label_names_and_explicit_buckets() -> None:
    metrics.observe_result("labels-rubric", make_result("labels-rubric"))
    families = [f for f in _families() if f.name.startswith("judge_")]
    assert len(families) >= 18
    for family in families:
        for sample in family.samples:
            assert set(sample.labels) <= ALLOWED_LABELS, sample
    buckets = {
        s.labels["le"]
        for f in families
        if f.name == "judge_rating_normalised"
        for s in f.samples
        if s.name.endswith("_bucket")
    }
    assert buckets == {f"{i / 10:.1f}" for i in range(11)} | {"+Inf"}


def test_serve_metrics_exposes_the_registry() -> None:
    import urllib.request

    metrics.job_submitted("served-rubric")
    server, thread = metrics.serve_metrics(0, "127.0.0.1")
    try:
        url = f"http://127.0.0.1:{server.server_port}/metrics"
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read().decode()
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
    assert 'judge_jobs_submitted_total{rubric="served-rubric"} 1.0' in body


def test_mark_process_dead_is_a_no_op_in_single_process_mode() -> None:
    """Without a multiprocess directory there are no per-process files to forget: the live
    gauges of this process stay as they were."""
    metrics.set_queue_depth(7)
    assert b"\njudge_queue_depth 7.0\n" in metrics.render_latest()[0]
    metrics.mark_process_dead(os.getpid())
    assert b"\njudge_queue_depth 7.0\n" in metrics.render_latest()[0]


# --- multiprocess mode, across real processes ------------------------------------------------


def _run(code: str, env: dict[str, str], timeout: float = 60) -> str:
    full_env = {k: v for k, v in os.environ.items() if not k.lower().startswith("prometheus_")}
    full_env |= env
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


_WRITER = """
import json, os, sys
from pathlib import Path
from judge import metrics
metrics.configure_metrics(Path(sys.argv[1]))
metrics.observe_llm_call("m/a", "ok", 0.5, 100, 20, 0.01, False)
metrics.job_submitted("mp", n=2)
running = metrics.job_running("mp")
running.__enter__()  # a job still running when the process dies (os._exit below: no cleanup)
metrics.set_queue_depth(int(sys.argv[2]))
print(os.getpid(), flush=True)
os._exit(0)
"""


def test_multiprocess_counters_sum_and_gauges_aggregate(tmp_path: Path) -> None:
    directory = tmp_path / "multiproc"
    writer = tmp_path / "writer.py"
    writer.write_text(_WRITER, encoding="utf-8")

    def write(depth: int) -> int:
        out = _run(
            f"""
            import runpy, sys
            sys.argv = ["writer", {str(directory)!r}, "{depth}"]
            runpy.run_path({str(writer)!r}, run_name="__main__")
            """,
            env={},
        )
        return int(out.strip())

    metrics.clean_multiproc_dir(directory)
    first = write(5)
    second = write(9)  # written later: its queue depth wins
    assert len(list(directory.glob("*.db"))) >= 3

    reader = f"""
    import json, multiprocessing, os
    from pathlib import Path
    from judge import metrics
    metrics.configure_metrics(Path({str(directory)!r}))

    def child():  # a prefork-style child: inherits the module state, writes its own files
        metrics.observe_llm_call("m/a", "ok", 0.5, 1, 1, 0.0, False)

    proc = multiprocessing.get_context("fork").Process(target=child)
    proc.start()
    proc.join()
    from prometheus_client.parser import text_string_to_metric_families

    def read():
        body, _ = metrics.render_latest()
        out = {{}}
        for family in text_string_to_metric_families(body.decode()):
            for s in family.samples:
                key = s.name + json.dumps(s.labels, sort_keys=True)
                out[key] = s.value
        return out

    before = read()
    metrics.mark_process_dead({first})
    print(json.dumps({{"before": before, "after": read(), "child": proc.pid}}))
    """
    data = json.loads(_run(reader, env={}))
    before, after = data["before"], data["after"]
    assert before['judge_llm_calls_total{"model": "m/a", "outcome": "ok"}'] == 3
    assert before['judge_llm_tokens_total{"kind": "prompt", "model": "m/a"}'] == 201
    assert before['judge_jobs_submitted_total{"rubric": "mp"}'] == 4
    assert before['judge_jobs_running{"rubric": "mp"}'] == 2  # livesum over both writers
    assert after['judge_jobs_running{"rubric": "mp"}'] == 1  # the first one was marked dead
    assert before["judge_queue_depth{}"] == 9  # mostrecent
    assert (directory / f"counter_{data['child']}.db").is_file()
    assert second != first

    metrics.clean_multiproc_dir(directory)
    assert list(directory.glob("*.db")) == []
