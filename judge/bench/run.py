"""One benchmark run, end to end: simulator (fixed latency, no jitter), fresh SQLite databases
migrated with ``judge db upgrade``, the plain LiteLLM baseline, then for each mode (embedded
``judge serve``; ``judge serve`` + ``judge worker`` through Redis and Celery) single items,
a batch, the identical batch again (cache), and, in embedded mode, every rubric's examples."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import httpx
import psutil

from judge.bench import measure, startup
from judge.bench.databases import fresh_databases
from judge.bench.procs import (
    BenchError,
    RssSampler,
    Service,
    free_port,
    provide_redis,
    run_parallel,
    service_env,
)
from judge.bench.profiles import MODES, PANEL_MODELS, Profile
from judge.bench.prompt_cost import measure_prompt_cost
from judge.bench.workload import synthetic_items, to_jsonl
from judge.simulator import SimulatorOptions, SimulatorProcess

Progress = Callable[[str], None]
REPO = Path(__file__).resolve().parents[2]


def checkout_root() -> Path | None:
    """The source checkout this package runs from, if any (results go to its bench/results)."""
    return REPO if (REPO / "pyproject.toml").is_file() and (REPO / "bench").is_dir() else None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=REPO, capture_output=True, text=True, timeout=5, check=False
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def _cpu_model() -> str | None:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return None


def machine_info() -> dict[str, Any]:
    import psutil

    return {
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 1024**3, 1),
        "python": platform.python_version(),
        "versions": {
            p: _version(p)
            for p in ("empathy-judge", "litellm", "litestar", "celery", "sqlalchemy", "uvicorn")
        },
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
    }


class Baseline:
    """The baseline script as a child process: it imports LiteLLM and warms up while the
    services start, then runs when told to (``--wait-for-go``), so its start-up overlaps theirs
    but its measurement runs alone."""

    def __init__(
        self,
        sim: SimulatorProcess,
        profile: Profile,
        items_file: Path,
        log: Path,
        client: str = "litellm",
    ):
        self.log = log
        command = [
            sys.executable,
            "-m",
            "judge.bench.baseline",
            f"--api-base={sim.base_url}",
            f"--items-file={items_file}",
            f"--concurrency={profile.concurrency}",
            f"--rubric={profile.rubric}",
            f"--client={client}",
            "--wait-for-go",
        ]
        with log.open("wb") as err:
            self.proc = subprocess.Popen(
                command,
                env=service_env({}),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )

    def _failed(self) -> BenchError:
        return BenchError(f"the baseline failed:\n{self.log.read_text(errors='replace')[-3000:]}")

    def run(self) -> Any:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != b"ready":
            raise self._failed()
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.flush()
        out, _ = self.proc.communicate(timeout=1800)
        if self.proc.returncode != 0:
            raise self._failed()
        return json.loads(out.decode().strip().splitlines()[-1])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class ModeProcesses:
    """The service processes of one mode: ``judge serve``, plus workers in celery mode."""

    def __init__(self, mode: str, profile: Profile, env: dict[str, str], tmp: Path) -> None:
        self.mode = mode
        self.port = free_port()
        self.api = Service(
            f"api_{mode}",
            ["serve", "--host=127.0.0.1", f"--port={self.port}"],
            env,
            tmp / f"{mode}-api.log",
        )
        self.workers: list[Service] = []
        if mode == "celery":
            per_worker = max(1, -(-profile.concurrency // profile.workers))
            self.workers = [
                Service(
                    f"worker-{n}",
                    ["worker", f"--concurrency={per_worker}", "--loglevel=WARNING"],
                    env,
                    tmp / f"worker-{n}.log",
                )
                for n in range(1, profile.workers + 1)
            ]

    @property
    def all(self) -> list[Service]:
        return [*self.workers, self.api]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, rss: RssSampler) -> None:
        for service in self.all:
            service.start()
            rss.watch(service.name, service.pid)

    def stop(self, rss: RssSampler) -> None:
        for service in self.all:
            if service.proc is not None:
                rss.unwatch(service.name)
            service.stop()

    def cpu_by_process(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for service in self.all:
            with contextlib.suppress(psutil.Error):
                times = psutil.Process(service.pid).cpu_times()
                out[service.name] = times.user + times.system
        return out

    def cpu_seconds(self) -> float:
        return sum(self.cpu_by_process().values())


def _measure_mode(
    procs: ModeProcesses,
    *,
    profile: Profile,
    sim: SimulatorProcess,
    jsonl: bytes,
    with_rubrics: bool,
    progress: Progress,
) -> dict[str, Any]:
    mode = procs.mode
    timeout = 300 + profile.items * 3 * profile.latency_ms / 1000
    out: dict[str, Any] = {}
    with httpx.Client(base_url=procs.base_url, timeout=httpx.Timeout(180.0)) as client:
        progress(f"{mode}: warming up")
        for item in synthetic_items(profile.warmup, tag=f"warmup-{mode}"):
            measure.score_one(client, profile.rubric, item, wait_s=120)
        progress(f"{mode}: {profile.single_samples} single items")
        out["single_item"] = measure.single_items(
            client,
            profile.rubric,
            synthetic_items(profile.single_samples, tag=f"single-{mode}"),
            profile.latency_ms,
        )
        for section, what in (("batch", "batch"), ("repeated_batch", "same batch again (cache)")):
            progress(f"{mode}: {what} of {profile.items} items")
            cpu = procs.cpu_by_process()
            out[section] = measure.run_batch(
                client, sim, profile.rubric, jsonl, poll_s=profile.poll_s, timeout_s=timeout
            )
            used = {k: v - cpu.get(k, 0.0) for k, v in procs.cpu_by_process().items()}
            out[section]["service_cpu_seconds"] = round(sum(used.values()), 2)
            out[section]["service_cpu_ms_per_item"] = round(
                sum(used.values()) * 1000 / profile.items, 2
            )
            out[section]["cpu_ms_per_item_by_process"] = {
                k: round(v * 1000 / profile.items, 2) for k, v in used.items()
            }
            for service in procs.all:
                service.check_alive()
        if with_rubrics:
            progress(f"{mode}: every rubric's expert examples")
            out["rubrics"] = measure.rubric_examples(
                client, sim, poll_s=profile.poll_s, timeout_s=timeout
            )
    return out


def _measure_startup(
    envs: dict[str, dict[str, str]], tmp: Path, progress: Progress
) -> dict[str, Any]:
    """Each service process started alone: seconds until ready, and peak RSS meanwhile."""
    out: dict[str, Any] = {}
    for mode, env in envs.items():
        progress(f"start-up: judge serve ({mode}), alone")
        out[f"api_{mode}"] = startup.api_ready(mode, env, tmp)
        if mode == "celery":
            progress("start-up: judge worker, alone")
            out["worker"] = startup.worker_ready(env, tmp)
    return out


def run_benchmark(
    profile: Profile,
    *,
    modes: Sequence[str] = MODES,
    redis_url: str | None = None,
    redis_db: int | None = None,
    logs_dir: Path | None = None,
    progress: Progress = lambda _: None,
    database: str | None = None,
) -> dict[str, Any]:
    """Run ``profile`` and return the results (the JSON written by ``judge bench``). The
    processes' logs are copied to ``logs_dir`` when given."""
    started = time.perf_counter()
    results: dict[str, Any] = {
        "bench_version": 1,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "profile": profile.as_dict(),
        "machine": machine_info(),
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "panel": list(PANEL_MODELS),
        "single_item": {},
        "batch": {},
        "repeated_batch": {},
        "rss_mb": {},
        "skipped": {},
        "database": "postgresql" if database else "sqlite",
    }
    with (
        tempfile.TemporaryDirectory(prefix="judge-bench-") as tmpdir,
        RssSampler() as rss,
        fresh_databases(database, modes, Path(tmpdir)) as urls,
    ):
        tmp = Path(tmpdir)
        common = {
            "JUDGE_WORKER__CONCURRENCY": str(profile.concurrency),
            "JUDGE_WORKER__CACHE_ENABLED": "true",
        }
        db_env = {mode: service_env(common | {"JUDGE_DATABASE_URL": urls[mode]}) for mode in modes}
        try:
            progress(f"starting the simulator ({profile.latency_ms:g} ms, no jitter)")
            sim = SimulatorProcess(SimulatorOptions(latency_ms=profile.latency_ms, jitter_ms=0))
            with sim, contextlib.ExitStack() as stack:
                progress(f"migrating fresh {results['database']} databases (judge db upgrade)")
                run_parallel(
                    [(["db", "upgrade"], env, tmp / f"{m}-db.log") for m, env in db_env.items()]
                )
                items_file = tmp / "batch.jsonl"
                jsonl = to_jsonl(synthetic_items(profile.items, tag="batch"))
                items_file.write_bytes(jsonl)

                envs: dict[str, dict[str, str]] = {}
                for mode in modes:
                    env = dict(db_env[mode]) | {"JUDGE_SIMULATOR__URL": sim.base_url}
                    if mode == "celery":
                        url, how = stack.enter_context(provide_redis(redis_url, redis_db))
                        if url is None:
                            results["skipped"]["celery"] = how
                            progress(f"celery: skipped ({how})")
                            continue
                        env["JUDGE_REDIS_URL"] = url
                        results["redis"] = how
                    envs[mode] = env
                results["startup"] = _measure_startup(envs, tmp, progress)

                # Every process starts now, in parallel (imports take seconds each); they sit idle
                # while the baseline runs, and each mode is measured alone after it.
                progress("starting the services and the baseline (imports overlap)")
                runs: list[ModeProcesses] = []
                for mode, env in envs.items():
                    procs = ModeProcesses(mode, profile, env, tmp)
                    stack.callback(procs.stop, rss)
                    procs.start(rss)
                    runs.append(procs)
                baseline = Baseline(sim, profile, items_file, tmp / "baseline.log")
                stack.callback(baseline.stop)
                raw = Baseline(sim, profile, items_file, tmp / "raw-baseline.log", client="raw")
                stack.callback(raw.stop)
                for procs in runs:
                    procs.api.wait_http(f"{procs.base_url}/health")

                progress("simulator floor (bare httpx, same prompts)")
                results["simulator_floor"] = measure.simulator_floor(
                    sim, profile.rubric, synthetic_items(11, tag="floor"), PANEL_MODELS
                )
                progress(f"baseline: plain LiteLLM asyncio.gather, {profile.items} items")
                idle_cpu = sum(p.cpu_seconds() for p in runs)
                results["baseline"] = baseline.run()
                # the services sit idle meanwhile; what they used is reported, not hidden
                idle_cpu = sum(p.cpu_seconds() for p in runs) - idle_cpu
                results["baseline"]["idle_services_cpu_seconds"] = round(idle_cpu, 2)
                results["rss_mb"]["baseline"] = results["baseline"]["peak_rss_mb"]
                progress(f"ceiling: raw HTTP asyncio.gather, {profile.items} items")
                results["raw_baseline"] = raw.run()

                for procs in runs:
                    measured = _measure_mode(
                        procs,
                        profile=profile,
                        sim=sim,
                        jsonl=jsonl,
                        with_rubrics=procs is runs[0],
                        progress=progress,
                    )
                    progress(f"{procs.mode}: stopping")
                    procs.stop(rss)
                    for section in ("single_item", "batch", "repeated_batch"):
                        results[section][procs.mode] = measured[section]
                    if "rubrics" in measured:
                        results["rubrics"] = measured["rubrics"]
        finally:
            if logs_dir is not None:
                logs_dir.mkdir(parents=True, exist_ok=True)
                for log in tmp.glob("*.log"):
                    shutil.copy(log, logs_dir / log.name)
        peak = rss.peak_mb("api_embedded")
        if peak is not None:
            results["rss_mb"]["api_embedded"] = peak
        peak = rss.peak_mb("api_celery")
        if peak is not None:
            results["rss_mb"]["api_celery"] = peak
        worker_peaks = [rss.peak_mb(f"worker-{n}") for n in range(1, profile.workers + 1)]
        if any(p is not None for p in worker_peaks):
            results["rss_mb"]["worker"] = max(p for p in worker_peaks if p is not None)
    results["cost_prompt_cache"] = measure_prompt_cost(
        items=min(profile.cost_items, profile.items), rubric=profile.rubric, progress=progress
    )
    base_rate = results["baseline"]["items_per_s"]
    results["ratio"] = {
        mode: round(batch["items_per_s"] / base_rate, 3) for mode, batch in results["batch"].items()
    }
    raw_rate = results["raw_baseline"]["items_per_s"]
    results["ratio_raw"] = {
        mode: round(batch["items_per_s"] / raw_rate, 3) for mode, batch in results["batch"].items()
    }
    results["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    results["duration_s"] = round(time.perf_counter() - started, 1)
    return results
