"""Single-item overhead, this checkout against another, request by request (issue 30).

Two services run side by side, one on this checkout and one on the checkout at ``--against``
(``PYTHONPATH``), each with a fresh database and, in celery mode, a worker and a Redis
database of its own, against one simulator (SIMULATED judges, ``--latency-ms`` a call, no
jitter). Single items with ``?wait=`` go to one then the other, the order swapped every
pair, so both sides meet the same load on a shared machine; the overhead is the end-to-end
time minus the simulator's latency. Prints each side's p50 and p95 and the median of the
paired differences.

    uv run --group dev python -m evidence.single_item_pairs --against ../main
        [--mode embedded|celery] [--samples 60] [--database postgresql://postgres@127.0.0.1:5432]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from judge.bench.databases import fresh_databases
from judge.bench.measure import percentile
from judge.bench.procs import Service, free_port, provide_redis, run_judge, service_env
from judge.bench.workload import synthetic_items
from judge.simulator import SimulatorOptions, SimulatorProcess

SIDES = ("this", "against")
THIS_CHECKOUT = Path(__file__).resolve().parents[1]


def _services(
    side: str, env: dict[str, str], mode: str, tmp: Path, stack: contextlib.ExitStack
) -> str:
    """Start one side's API (and worker); its base URL once it answers."""
    run_judge(["db", "upgrade"], env, tmp / f"{side}-db.log")
    port = free_port()
    api = Service(
        f"api-{side}", ["serve", "--host=127.0.0.1", f"--port={port}"], env, tmp / f"{side}-api.log"
    )
    stack.enter_context(api)
    if mode == "celery":
        worker = Service(
            f"worker-{side}",
            ["worker", "--concurrency=8", "--loglevel=WARNING"],
            env,
            tmp / f"{side}-worker.log",
        )
        stack.enter_context(worker)
    api.wait_http(f"http://127.0.0.1:{port}/health")
    return f"http://127.0.0.1:{port}"


def _one(client: httpx.Client, base: str, item: dict[str, Any]) -> float:
    started = time.perf_counter()
    response = client.post(
        f"{base}/v1/scores", params={"wait": 60}, json={"rubric": "epitome", "item": item}
    )
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"{base}: {response.status_code} {response.text[:300]}")
    return elapsed


def measure(args: argparse.Namespace) -> dict[str, Any]:
    against = str(Path(args.against).resolve())
    with (
        tempfile.TemporaryDirectory(prefix="judge-pairs-") as tmpdir,
        contextlib.ExitStack() as stack,
    ):
        tmp = Path(tmpdir)
        # services start here, each side's judge/ on PYTHONPATH: ``-m judge`` puts the working
        # directory first on the path, so a checkout's own directory would win for both sides
        os.chdir(tmp)
        sim = stack.enter_context(
            SimulatorProcess(SimulatorOptions(latency_ms=args.latency_ms, jitter_ms=0))
        )
        urls = stack.enter_context(fresh_databases(args.database, SIDES, tmp))
        bases: dict[str, str] = {}
        for side in SIDES:
            extra = {
                "JUDGE_DATABASE_URL": urls[side],
                "JUDGE_SIMULATOR__URL": sim.base_url,
                "JUDGE_WORKER__CACHE_ENABLED": "true",
            }
            extra["PYTHONPATH"] = against if side == "against" else str(THIS_CHECKOUT)
            if args.mode == "celery":
                redis, how = stack.enter_context(provide_redis(None, None))
                if redis is None:
                    raise SystemExit(f"celery mode needs Redis: {how}")
                extra["JUDGE_REDIS_URL"] = redis
            bases[side] = _services(side, service_env(extra), args.mode, tmp, stack)
        overhead: dict[str, list[float]] = {side: [] for side in SIDES}
        with httpx.Client(timeout=120) as client:
            for side in SIDES:  # warm-up
                for item in synthetic_items(5, tag=f"warm-{side}"):
                    _one(client, bases[side], item)
            items = synthetic_items(args.samples * 2, tag="pairs")
            for n in range(args.samples):
                order = SIDES if n % 2 == 0 else SIDES[::-1]
                for k, side in enumerate(order):
                    e2e = _one(client, bases[side], items[2 * n + k])
                    overhead[side].append(e2e - args.latency_ms)
    diffs = [a - b for a, b in zip(overhead["this"], overhead["against"], strict=True)]
    return {
        "mode": args.mode,
        "database": "postgresql" if args.database else "sqlite",
        "samples": args.samples,
        "latency_ms": args.latency_ms,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        **{f"{side}_p50_ms": round(percentile(overhead[side], 50), 2) for side in SIDES},
        **{f"{side}_p95_ms": round(percentile(overhead[side], 95), 2) for side in SIDES},
        "paired_difference_median_ms": round(statistics.median(diffs), 2),
        "this_wins": sum(d < 0 for d in diffs),
        **{f"{side}_ms": [round(v, 1) for v in overhead[side]] for side in SIDES},
        "ratio_of_p50": round(
            percentile(overhead["this"], 50) / percentile(overhead["against"], 50), 3
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", required=True, help="the other checkout (its judge/)")
    parser.add_argument("--mode", choices=("embedded", "celery"), default="embedded")
    parser.add_argument("--samples", type=int, default=60, help="pairs of single items")
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--database", default=None, help="a PostgreSQL server URL (default SQLite)")
    print(json.dumps(measure(parser.parse_args()), indent=2))


if __name__ == "__main__":
    main()
