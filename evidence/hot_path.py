"""The job path's CPU per item (issue 30, point 3): a batch run by the embedded runner in this
process, against the simulator, on SQLite or PostgreSQL.

Submits ``--items`` distinct items as one batch, dispatches them to an :class:`InProcessRunner`
(64 in flight) and waits for the last; prints this process's CPU milliseconds per item (the
simulator is another process) and the rate. With ``--against PATH`` it alternates, round by
round, with the same script run on the checkout at PATH (``PYTHONPATH``), and prints each
side's median and their ratio: CPU time, not wall time, so a machine loaded by others still
compares the two fairly.

    uv run --group dev python -m evidence.hot_path [--items 1000] [--rounds 2]
        [--database postgresql://postgres@127.0.0.1:5432] [--against ../main]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from judge.bench.databases import fresh_databases
from judge.bench.workload import synthetic_items
from judge.runtime.composition import build_runtime
from judge.runtime.in_process import InProcessRunner, JobWaiter
from judge.settings import load_settings
from judge.simulator import SimulatorOptions, SimulatorProcess


def _cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


async def _batch(database_url: str, simulator_url: str, items: int) -> dict[str, Any]:
    settings = load_settings(
        database_url=database_url, simulator={"url": simulator_url}, worker={"concurrency": 64}
    )
    runtime = build_runtime(settings)
    await runtime.database.upgrade()
    waiter = JobWaiter(runtime.jobs)
    runner = InProcessRunner(runtime.jobs, waiter, concurrency=64)
    await runner.start()
    try:
        for tag, n in (("warm-up", 20), ("batch", items)):
            lines = list(enumerate(synthetic_items(n, tag=tag), 1))
            _, ids = await runtime.jobs.submit_batch(
                rubric_id="epitome", panel_name=None, lines=lines
            )
            cpu, wall = _cpu_s(), time.perf_counter()
            await runner.dispatch(ids)
            await waiter.wait(ids, 1800)
            cpu, wall = _cpu_s() - cpu, time.perf_counter() - wall
        left = await runtime.jobs.unfinished_among(ids)
    finally:
        await runner.stop()
        await runtime.close()
    return {
        "items": items,
        "unfinished": len(left),
        "cpu_ms_per_item": round(cpu * 1000 / items, 2),
        "items_per_s": round(items / wall, 1),
    }


def _one(args: argparse.Namespace) -> dict[str, Any]:
    options = SimulatorOptions(latency_ms=args.latency_ms, jitter_ms=0)
    with (
        tempfile.TemporaryDirectory(prefix="judge-hot-path-") as tmp,
        fresh_databases(args.database, ["hot"], Path(tmp)) as urls,
        SimulatorProcess(options) as simulator,
    ):
        return asyncio.run(_batch(urls["hot"], simulator.base_url, args.items))


def _child(args: argparse.Namespace, checkout: str | None) -> dict[str, Any]:
    # by path: the other checkout may have no such script, and imports judge from PYTHONPATH
    command = [sys.executable, __file__, "--json", f"--items={args.items}"]
    command += [f"--latency-ms={args.latency_ms}"]
    if args.database:
        command.append(f"--database={args.database}")
    env = dict(os.environ)
    if checkout is not None:  # the other checkout's judge package
        env["PYTHONPATH"] = str(Path(checkout).resolve())
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--latency-ms", type=float, default=100.0)
    parser.add_argument("--database", default=None, help="a PostgreSQL server (default SQLite)")
    parser.add_argument("--against", default=None, help="another checkout to compare with")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="one run, one JSON line")
    args = parser.parse_args()
    if args.json:
        print(json.dumps(_one(args)))
        return
    sides: dict[str, list[dict[str, Any]]] = {"this": [], "against": []}
    for n in range(1, args.rounds + 1):
        for side, checkout in (("against", args.against), ("this", None)):
            if side == "against" and checkout is None:
                continue
            found = _child(args, checkout)
            sides[side].append(found)
            print(f"round {n} {side:8} {found}", flush=True)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    median = {
        side: statistics.median(r["cpu_ms_per_item"] for r in runs)
        for side, runs in sides.items()
        if runs
    }
    print(f"median CPU ms per item: {median} (load average {load})")
    if "against" in median:
        print(f"CPU per item, this / against: {median['this'] / median['against']:.2f}")


if __name__ == "__main__":
    main()
