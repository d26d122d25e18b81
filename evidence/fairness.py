"""Fair scheduling (issue 24): how long one key's interactive score waits behind another
key's 2,000-item batch, on SIMULATED judges.

Starts a real stack in a temporary directory: the bundled simulator (each call ``--latency``
ms), SQLite, Redis (127.0.0.1:6379's first free bench database, else a private
``redis-server``), ``judge serve`` and one Celery worker (``--concurrency`` threads). Key A
submits the batch; once the worker is busy with it, key B scores one item with ``?wait=``
``--samples`` times in a row, and the script prints each score's latency and how many of A's
items were still queued when it was answered.

    uv run --group dev python -m evidence.fairness [--items 2000] [--samples 5] [--concurrency 8]

To measure the code before a change, run it with ``PYTHONPATH`` pointing at that checkout
(child processes inherit it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from judge.bench.procs import provide_redis
from judge.simulator.options import SimulatorOptions
from judge.simulator.process import SimulatorProcess
from tests.fixtures.stacks import child_env, make_stack, query, sqlite_url

PANEL = ("openai/accurate", "openai/noisy", "openai/lenient")


def item(n: int) -> dict[str, str]:
    return {"seeker_post": f"Post {n}: I can't sleep before exams.", "response": "That's hard."}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--latency", type=float, default=100.0, help="ms per simulated call")
    args = parser.parse_args()

    options = SimulatorOptions(latency_ms=args.latency, jitter_ms=args.latency / 10)
    with (
        tempfile.TemporaryDirectory(prefix="judge-fairness-") as tmp,
        provide_redis(None, None) as (redis_url, redis_how),
        SimulatorProcess(options, env=child_env()) as simulator,
    ):
        workdir = Path(tmp)
        config = workdir / "judge.yaml"
        panel = {"judges": [{"model": m, "simulated": True} for m in PANEL]}
        config.write_text(json.dumps({"default_panel": "default", "panels": {"default": panel}}))
        stack = make_stack(
            workdir,
            database_url=sqlite_url(workdir),
            simulator=simulator,
            config=config,
            redis_url=redis_url,
        )
        stack.env |= {"JUDGE_API__MAX_QUEUED_PER_KEY": str(max(args.items, 100_000))}
        try:
            stack.start_worker(f"--concurrency={args.concurrency}")
            stack.start_api()
            key_a = {"Authorization": f"Bearer {stack.create_key('a', 'batch')}"}
            key_b = {"Authorization": f"Bearer {stack.create_key('b', 'score')}"}
            client = httpx.Client(base_url=stack.base_url, timeout=600)
            body = "".join(json.dumps(item(n)) + "\n" for n in range(args.items))
            batch = client.post(
                "/v1/batches",
                params={"rubric": "epitome"},
                content=body,
                headers=key_a | {"Content-Type": "application/x-ndjson"},
            )
            batch.raise_for_status()
            batch_id = batch.json()["id"]
            queued = (
                "SELECT count(*) FROM score_jobs "
                f"WHERE batch_id = '{batch_id}' AND status = 'queued'"
            )
            while query(stack.database_url, queued)[0][0] >= args.items:
                time.sleep(0.1)  # the worker has started on the batch
            print(f"simulated judges: {', '.join(PANEL)}; call latency {args.latency:.0f} ms")
            print(f"worker threads {args.concurrency}; Redis: {redis_how}")
            print(f"key A: batch of {args.items} items; key B: one score at a time (?wait=600)")
            print(f"{'sample':>6} {'latency s':>10} {'A items still queued':>21}")
            latencies = []
            for sample in range(1, args.samples + 1):
                started = time.monotonic()
                got = client.post(
                    "/v1/scores",
                    params={"wait": 600},
                    json={"rubric": "epitome", "item": item(10**6 + sample)},
                    headers=key_b,
                )
                latency = time.monotonic() - started
                got.raise_for_status()
                left = query(stack.database_url, queued)[0][0]
                latencies.append(latency)
                print(f"{sample:>6} {latency:>10.2f} {left:>21}")
            print(
                f"median {statistics.median(latencies):.2f} s, "
                f"max {max(latencies):.2f} s over {len(latencies)} scores"
            )
            client.close()
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
