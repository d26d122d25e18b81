"""Where a single item's overhead goes, step by step (issue 30: "the profile that explains the
remainder"), in-process and through Redis and Celery.

Starts the simulator (``--latency-ms`` a call, no jitter), a fresh SQLite database (or
PostgreSQL with ``--database``), ``judge serve`` and, in celery mode, one ``judge worker``;
scores ``--samples`` items one after another with ``?wait=``. Each service process loads a
``sitecustomize`` module (written to a temporary directory on ``PYTHONPATH``) that wraps a
few of the service's own functions and records when each is entered or left, with
``time.perf_counter`` (CLOCK_MONOTONIC on Linux: one clock for every process of the machine).
Prints the p50 and mean of each step over the samples and of the end-to-end overhead (end to
end minus the latency). The wrappers cost a few microseconds each; nothing else is changed.

    uv run --group dev python -m evidence.single_item_steps [--mode embedded|celery]
        [--samples 60] [--latency-ms 100] [--database postgresql://postgres@127.0.0.1:5432]
        [--checkout ../main]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from judge.bench.databases import fresh_databases
from judge.bench.measure import percentile
from judge.bench.procs import Service, free_port, provide_redis, run_judge, service_env
from judge.bench.workload import synthetic_items
from judge.simulator import SimulatorOptions, SimulatorProcess

THIS_CHECKOUT = Path(__file__).resolve().parents[1]

#: the functions each service process wraps: (module, class, method, event on entry, on exit)
WRAPPED = [
    ("judge.services.scores", "ScoreService", "submit", "api.submit", "api.answered"),
    ("judge.services.jobs", "JobService", "submit_score", None, "api.inserted"),
    ("judge.runtime.job_thread", "JobThread", "dispatch_claimed", "api.dispatch", None),
    ("judge.runtime.outbox", "OutboxDispatcher", "dispatch", "api.dispatch", "api.sent"),
    ("judge.services.jobs", "JobService", "run", "job.start", "job.end"),
    ("judge.services.scoring", "Scorer", "score", None, "job.scored"),
    ("judge.llm.openai_client", "OpenAIClient", "complete", "call.sent", "call.back"),
    ("judge.services.jobs", "JobService", "_store", "job.store", "job.stored"),
    ("judge.runtime.in_process", "JobWaiter", "notify", "api.notified", None),
]

SITECUSTOMIZE = """
import functools, importlib, inspect, os, time

_OUT = open(os.environ["JUDGE_STEPS_FILE"], "a", buffering=1)


def _mark(name):
    _OUT.write(f"{name} {time.perf_counter():.6f}\\n")


def _wrap(module, cls, method, enter, leave):
    owner = getattr(importlib.import_module(module), cls)
    inner = getattr(owner, method)
    if inspect.iscoroutinefunction(inner):
        @functools.wraps(inner)
        async def wrapped(*args, **kwargs):
            if enter:
                _mark(enter)
            try:
                return await inner(*args, **kwargs)
            finally:
                if leave:
                    _mark(leave)
    else:
        @functools.wraps(inner)
        def wrapped(*args, **kwargs):
            if enter:
                _mark(enter)
            try:
                return inner(*args, **kwargs)
            finally:
                if leave:
                    _mark(leave)
    setattr(owner, method, wrapped)


for _spec in __WRAPPED__:
    _wrap(*_spec)
"""

#: (step, from event, to event); "first"/"last" pick among repeated events of one item
STEPS = [
    ("HTTP in (parse, middleware, auth) to the service", "client.send", "api.submit"),
    ("insert the job (quota count in its session)", "api.submit", "api.inserted"),
    ("hand-over to the runner (Celery: send, broker, worker)", "api.inserted", "job.start"),
    ("job start to the first LLM call (claim, cache read, prompts)", "job.start", "call.sent"),
    ("the calls, minus the latency (client and simulator)", "call.sent", "call.back"),
    ("scoring after the calls (parse, aggregate, flags)", "call.back", "job.scored"),
    ("from scored to the store", "job.scored", "job.store"),
    ("store the result (finish transaction)", "job.store", "job.stored"),
    ("notice to the API (Celery: Redis pub/sub)", "job.stored", "api.notified"),
    ("answer built after the notice", "api.notified", "api.answered"),
    ("HTTP out (JSON, response) to the client", "api.answered", "client.recv"),
]


def _services(args: argparse.Namespace, tmp: Path, stack: contextlib.ExitStack) -> str:
    site = tmp / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE.replace("__WRAPPED__", repr(WRAPPED)))
    sim = stack.enter_context(
        SimulatorProcess(SimulatorOptions(latency_ms=args.latency_ms, jitter_ms=0))
    )
    urls = stack.enter_context(fresh_databases(args.database, ["steps"], tmp))
    extra = {
        "JUDGE_DATABASE_URL": urls["steps"],
        "JUDGE_SIMULATOR__URL": sim.base_url,
        "JUDGE_WORKER__CACHE_ENABLED": "true",
        "JUDGE_STEPS_FILE": str(tmp / "events.txt"),
        "PYTHONPATH": f"{site}{os.pathsep}{Path(args.checkout).resolve()}",
    }
    if args.mode == "celery":
        redis, how = stack.enter_context(provide_redis(None, None))
        if redis is None:
            raise SystemExit(f"celery mode needs Redis: {how}")
        extra["JUDGE_REDIS_URL"] = redis
    env = service_env(extra)
    run_judge(["db", "upgrade"], env, tmp / "db.log")
    port = free_port()
    api = Service("api", ["serve", "--host=127.0.0.1", f"--port={port}"], env, tmp / "api.log")
    stack.enter_context(api)
    if args.mode == "celery":
        worker = ["worker", "--concurrency=8", "--loglevel=WARNING"]
        stack.enter_context(Service("worker", worker, env, tmp / "worker.log"))
    api.wait_http(f"http://127.0.0.1:{port}/health")
    return f"http://127.0.0.1:{port}"


def _events(path: Path) -> list[tuple[str, float]]:
    found = []
    for line in path.read_text().splitlines():
        name, at = line.split()
        found.append((name, float(at)))
    return sorted(found, key=lambda e: e[1])


def measure(args: argparse.Namespace) -> dict[str, Any]:
    windows: list[tuple[float, float]] = []
    with (
        tempfile.TemporaryDirectory(prefix="judge-steps-") as tmpdir,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(tmpdir)
        os.chdir(tmp)  # ``-m judge`` must import this checkout's package from PYTHONPATH
        base = _services(args, tmp, stack)
        events_file = tmp / "events.txt"
        with httpx.Client(base_url=base, timeout=120) as client:
            for item in synthetic_items(5, tag="warm-up"):
                client.post(
                    "/v1/scores", params={"wait": 60}, json={"rubric": "epitome", "item": item}
                )
            time.sleep(0.5)
            for item in synthetic_items(args.samples, tag="steps"):
                sent = time.perf_counter()
                response = client.post(
                    "/v1/scores", params={"wait": 60}, json={"rubric": "epitome", "item": item}
                )
                windows.append((sent, time.perf_counter()))
                if response.status_code != 200 or response.json().get("status") != "completed":
                    raise SystemExit(f"{response.status_code}: {response.text[:300]}")
                time.sleep(0.05)  # the store's write-behind work settles between items
        time.sleep(0.5)
        events = _events(events_file)
    per_step: dict[str, list[float]] = defaultdict(list)
    overhead: list[float] = []
    for sent, received in windows:
        inside = [(n, t) for n, t in events if sent <= t <= received]
        marks: dict[str, float] = {"client.send": sent, "client.recv": received}
        for name, at in inside:
            if name == "call.back" or name not in marks:  # the last call back, else the first
                marks[name] = at
        overhead.append((received - sent) * 1000 - args.latency_ms)
        for step, start, end in STEPS:
            if start in marks and end in marks:
                took = (marks[end] - marks[start]) * 1000
                per_step[step].append(took - args.latency_ms if start == "call.sent" else took)
    return {
        "checkout": str(Path(args.checkout).resolve()),
        "mode": args.mode,
        "database": "postgresql" if args.database else "sqlite",
        "samples": args.samples,
        "latency_ms": args.latency_ms,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "overhead_p50_ms": round(percentile(overhead, 50), 2),
        "overhead_mean_ms": round(statistics.fmean(overhead), 2),
        "steps_ms": {
            step: {
                "p50": round(percentile(per_step[step], 50), 2),
                "mean": round(statistics.fmean(per_step[step]), 2),
                "n": len(per_step[step]),
            }
            for step, _, _ in STEPS
            if per_step[step]
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("embedded", "celery"), default="embedded")
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--database", default=None, help="a PostgreSQL server URL (default SQLite)")
    parser.add_argument(
        "--checkout", default=str(THIS_CHECKOUT), help="the checkout whose judge/ the services run"
    )
    print(json.dumps(measure(parser.parse_args()), indent=2))


if __name__ == "__main__":
    main()
