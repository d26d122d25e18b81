"""Batch intake off the event loop (issue 24): how long ``GET /health`` takes while the API
reads and validates a large JSON Lines batch.

Starts ``judge serve`` on SQLite with Redis and no worker (the jobs stay queued: only the
intake is measured), posts one ``--lines``-line batch, and meanwhile asks ``/health`` every
50 ms; prints the batch request's duration and the slowest and median ``/health``.

    uv run --group dev python -m evidence.intake_stall [--lines 20000]

To measure the code before a change, run it with ``PYTHONPATH`` pointing at that checkout.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx

from judge.bench.procs import provide_redis
from judge.simulator.process import SimulatorProcess
from tests.fixtures.stacks import child_env, make_stack, sqlite_url


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=20_000)
    args = parser.parse_args()
    line = json.dumps({"seeker_post": "I can't sleep before exams.", "response": "That's hard."})
    body = (line + "\n") * args.lines
    with (
        tempfile.TemporaryDirectory(prefix="judge-intake-") as tmp,
        provide_redis(None, None) as (redis_url, _),
        SimulatorProcess(env=child_env()) as simulator,
    ):
        workdir = Path(tmp)
        config = workdir / "judge.yaml"
        config.write_text("{}")
        stack = make_stack(
            workdir,
            database_url=sqlite_url(workdir),
            simulator=simulator,
            config=config,
            redis_url=redis_url,
        )
        stack.env |= {
            "JUDGE_API__MAX_QUEUED_PER_KEY": str(max(args.lines, 100_000)),
            "JUDGE_API__MAX_BODY_BYTES": "20000000",
        }
        try:
            stack.start_api()
            health: list[float] = []
            done = threading.Event()

            def probe() -> None:
                with httpx.Client(base_url=stack.base_url, timeout=120) as client:
                    while not done.is_set():
                        started = time.monotonic()
                        client.get("/health").raise_for_status()
                        health.append(time.monotonic() - started)
                        time.sleep(0.05)

            prober = threading.Thread(target=probe)
            prober.start()
            time.sleep(0.5)
            started = time.monotonic()
            with httpx.Client(base_url=stack.base_url, timeout=600) as client:
                got = client.post(
                    "/v1/batches",
                    params={"rubric": "epitome"},
                    content=body,
                    headers={"Content-Type": "application/x-ndjson"},
                )
            took = time.monotonic() - started
            done.set()
            prober.join()
            if got.status_code != 202:
                raise SystemExit(f"the batch was refused: {got.status_code} {got.text}")
            print(f"batch of {args.lines} lines: {got.status_code} in {took:.2f} s")
            print(
                f"/health during it: max {max(health) * 1000:.0f} ms, "
                f"median {statistics.median(health) * 1000:.0f} ms over {len(health)} requests"
            )
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
