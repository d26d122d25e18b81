"""Time-to-ready of the service processes, each started alone (no other process of the run
competes for the CPU): ``judge serve`` until ``/ready`` answers 200 (database checked, runtime
built), ``judge worker`` until its metrics endpoint answers (it is served once the worker's
runtime is built, after Celery's ``worker_ready``). Peak RSS during start-up with it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from judge.bench.procs import RssSampler, Service, free_port


def _time_to_ready(
    name: str, args: list[str], env: dict[str, str], log: Path, url: str
) -> dict[str, Any]:
    with RssSampler(interval_s=0.05) as rss:
        started = time.perf_counter()
        with Service(name, args, env, log) as service:
            rss.watch(name, service.pid)
            service.wait_http(url, timeout=120, interval_s=0.02)
            ready_s = time.perf_counter() - started
            rss.unwatch(name)
    return {"ready_s": round(ready_s, 2), "peak_rss_mb": rss.peak_mb(name)}


def api_ready(mode: str, env: dict[str, str], tmp: Path) -> dict[str, Any]:
    port = free_port()
    args = ["serve", "--host=127.0.0.1", f"--port={port}"]
    url = f"http://127.0.0.1:{port}/ready"
    return _time_to_ready(f"api_{mode}", args, env, tmp / f"{mode}-api-startup.log", url)


def worker_ready(env: dict[str, str], tmp: Path) -> dict[str, Any]:
    port = free_port()
    env = env | {"JUDGE_WORKER__METRICS_PORT": str(port), "JUDGE_WORKER__METRICS_HOST": "127.0.0.1"}
    args = ["worker", "--concurrency=1", "--loglevel=WARNING"]
    url = f"http://127.0.0.1:{port}/metrics"
    return _time_to_ready("worker", args, env, tmp / "worker-startup.log", url)
