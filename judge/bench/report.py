"""Targets (docs/DESIGN.md section 7), the terminal table, the JSON file and ``--compare``."""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

#: (name, path into the results, comparison, threshold): docs/DESIGN.md section 7 (issue 30)
TARGETS: tuple[tuple[str, str, str, float], ...] = (
    ("single item p50 overhead, in-process (ms)", "single_item.embedded.overhead_p50_ms", "<=", 10),
    (
        "single item p50 overhead, Redis + Celery (ms)",
        "single_item.celery.overhead_p50_ms",
        "<=",
        15,
    ),
    ("batch throughput / baseline, in-process", "ratio.embedded", ">=", 1.5),
    ("batch throughput / baseline, Redis + Celery", "ratio.celery", ">=", 1.3),
    ("batch throughput / raw HTTP ceiling, in-process", "ratio_raw.embedded", ">=", 0.4),
    (
        "service CPU per item, in-process batch (ms)",
        "batch.embedded.service_cpu_ms_per_item",
        "<=",
        8,
    ),
    ("status poll p95 during an in-process batch (ms)", "batch.embedded.poll_p95_ms", "<", 50),
    ("/health p95 during an in-process batch (ms)", "batch.embedded.health_p95_ms", "<", 50),
    ("LLM calls per judge per item (batch)", "_calls_per_judge", "==", 1),
    ("LLM calls per judge per item (every rubric)", "_rubric_calls_per_judge", "==", 1),
    ("LLM calls of the repeated identical batch", "_repeated_calls", "==", 0),
    ("worker peak RSS (MB)", "rss_mb.worker", "<", 500),
    (
        "cost per item with prompt caching / list price (SIMULATED panel)",
        "cost_prompt_cache.ratio",
        "<=",
        0.5,
    ),
)

#: how each comparison of :data:`TARGETS` is decided (``==`` within 1e-9)
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">=": operator.ge,
    "==": lambda value, goal: math.isclose(value, goal, abs_tol=1e-9),
}

#: numbers shown by ``--compare`` (paths into the results)
COMPARED = (
    "single_item.embedded.overhead_p50_ms",
    "single_item.embedded.overhead_p95_ms",
    "single_item.celery.overhead_p50_ms",
    "single_item.celery.overhead_p95_ms",
    "baseline.items_per_s",
    "batch.embedded.items_per_s",
    "batch.celery.items_per_s",
    "ratio.embedded",
    "ratio.celery",
    "repeated_batch.embedded.llm_calls",
    "repeated_batch.celery.llm_calls",
    "repeated_batch.embedded.items_per_s",
    "repeated_batch.celery.items_per_s",
    "rss_mb.api_embedded",
    "rss_mb.api_celery",
    "rss_mb.worker",
    "startup.api_embedded.ready_s",
    "startup.api_celery.ready_s",
    "startup.worker.ready_s",
    "cost_prompt_cache.ratio",
    "duration_s",
)


def lookup(results: dict[str, Any], path: str) -> Any:
    node: Any = results
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _derived(results: dict[str, Any], path: str) -> Any:
    judges = len(results.get("panel") or []) or 1
    if path == "_calls_per_judge":
        values = [
            b["llm_calls_per_item"] / judges
            for b in results.get("batch", {}).values()
            if "llm_calls_per_item" in b
        ]
        return max(values, default=None)
    if path == "_rubric_calls_per_judge":
        values = [
            r["calls_per_judge_per_item"]
            for r in (results.get("rubrics") or {}).values()
            if r.get("calls_per_judge_per_item") is not None
        ]
        return max(values, default=None)
    if path == "_repeated_calls":
        values = [b["llm_calls"] for b in results.get("repeated_batch", {}).values()]
        return sum(values) if values else None
    return lookup(results, path)


def evaluate_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for name, path, op, threshold in TARGETS:
        value = _derived(results, path)
        ok = None if value is None else _COMPARE[op](value, threshold)
        out.append({"target": name, "value": value, "goal": f"{op} {threshold:g}", "met": ok})
    return out


def default_output(root: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return root / "bench" / "results" / f"{stamp}.json"


def write_results(results: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def print_results(console: Console, results: dict[str, Any]) -> None:
    p = results["profile"]
    machine = results.get("machine", {})
    console.print(
        f"[bold]judge bench[/bold] profile {p['name']}: {p['items']} items x "
        f"{len(results.get('panel', []))} judges, simulator {p['latency_ms']:g} ms (no jitter), "
        f"{p['concurrency']} items in flight, {results.get('database', 'sqlite')} database; "
        f"{machine.get('cpus')} CPUs "
        f"({machine.get('cpu') or '?'}), Python {machine.get('python')}, "
        f"litellm {machine.get('versions', {}).get('litellm')}; "
        f"run took {results.get('duration_s', 0):.0f} s"
    )
    for mode, why in results.get("skipped", {}).items():
        console.print(f"[yellow]{mode} skipped: {why}[/yellow]")

    single = Table(title="Single item, 3 judges, POST /v1/scores?wait= (ms over the latency)")
    for col in (
        "mode",
        "n",
        "e2e p50",
        "overhead p50",
        "overhead p95",
        "adapter",
        "panel",
        "outside",
    ):
        single.add_column(col, justify="left" if col == "mode" else "right")
    floor = results.get("simulator_floor")
    if floor:
        single.add_row(
            "bare httpx floor",
            _fmt(floor["samples"]),
            "-",
            _fmt(floor["overhead_p50_ms"]),
            _fmt(floor["overhead_p95_ms"]),
            "-",
            "-",
            "-",
        )
    for mode, s in results.get("single_item", {}).items():
        b = s["breakdown_p50_ms"]
        single.add_row(
            mode,
            _fmt(s["samples"]),
            _fmt(s["e2e_p50_ms"]),
            _fmt(s["overhead_p50_ms"]),
            _fmt(s["overhead_p95_ms"]),
            _fmt(b["adapter_slowest_call"]),
            _fmt(b["panel_after_calls"]),
            _fmt(b["outside_scoring"]),
        )
    console.print(single)
    console.print(
        "  adapter = slowest LLM call as the adapter timed it, minus the latency; panel = scoring "
        "after the calls; outside = HTTP, database, dispatch, queue and completion notice",
        style="dim",
    )

    batch = Table(title=f"Batch: {p['items']} items x 3 judges (items/s)")
    for col in (
        "run",
        "seconds",
        "items/s",
        "ratio",
        "LLM calls/item",
        "failed",
        "repeat: LLM calls",
        "repeat: items/s",
        "poll p95 ms",
    ):
        batch.add_column(col, justify="left" if col == "run" else "right")
    base = results.get("baseline")
    if base:
        batch.add_row(
            "plain LiteLLM gather",
            _fmt(base["seconds"], 2),
            _fmt(base["items_per_s"]),
            "1.00",
            _fmt(base["llm_calls"] / max(1, base["items"]), 2),
            _fmt(base["llm_errors"]),
            "-",
            "-",
            "-",
        )
    raw = results.get("raw_baseline")
    if raw and base:
        batch.add_row(
            "raw HTTP gather (ceiling)",
            _fmt(raw["seconds"], 2),
            _fmt(raw["items_per_s"]),
            _fmt(raw["items_per_s"] / base["items_per_s"], 2),
            _fmt(raw["llm_calls"] / max(1, raw["items"]), 2),
            _fmt(raw["llm_errors"]),
            "-",
            "-",
            "-",
        )
    for mode, b in results.get("batch", {}).items():
        again = results.get("repeated_batch", {}).get(mode, {})
        batch.add_row(
            f"service, {mode}",
            _fmt(b["seconds"], 2),
            _fmt(b["items_per_s"]),
            _fmt(results.get("ratio", {}).get(mode), 2),
            _fmt(b["llm_calls_per_item"], 2),
            _fmt(b["failed"]),
            _fmt(again.get("llm_calls")),
            _fmt(again.get("items_per_s")),
            _fmt(b.get("poll_p95_ms")),
        )
    console.print(batch)

    rubrics = results.get("rubrics") or {}
    if rubrics:
        table = Table(title="Per rubric: its expert examples scored by the panel")
        for col in (
            "rubric",
            "items",
            "dims",
            "LLM calls/item",
            "calls/judge/item",
            "prompt tok/item",
            "completion tok/item",
            "extra calls",
        ):
            table.add_column(col, justify="left" if col == "rubric" else "right")
        for rid, r in rubrics.items():
            table.add_row(
                rid,
                _fmt(r["items"]),
                _fmt(r["dimensions"]),
                _fmt(r["llm_calls_per_item"], 2),
                _fmt(r["calls_per_judge_per_item"], 2),
                _fmt(r["prompt_tokens_per_item"], 0),
                _fmt(r["completion_tokens_per_item"], 0),
                _fmt(r["extra_calls"]),
            )
        console.print(table)

    print_prompt_cost(console, results.get("cost_prompt_cache"))

    rss = results.get("rss_mb", {})
    if rss:
        console.print(
            "Peak RSS (MB): " + ", ".join(f"{name} {_fmt(v, 0)}" for name, v in rss.items())
        )

    started = results.get("startup", {})
    if started:
        console.print(
            "Time to ready, each process alone (s, peak RSS MB): "
            + ", ".join(
                f"{name} {_fmt(v.get('ready_s'), 2)} ({_fmt(v.get('peak_rss_mb'), 0)})"
                for name, v in started.items()
            )
        )

    targets = Table(title="docs/DESIGN.md section 7 targets")
    for col in ("target", "value", "goal", "met"):
        targets.add_column(col, justify="left" if col == "target" else "right")
    for t in results.get("targets") or evaluate_targets(results):
        met = {True: "[green]yes[/green]", False: "[red]NO[/red]", None: "-"}[t["met"]]
        targets.add_row(t["target"], _fmt(t["value"], 2), t["goal"], met)
    console.print(targets)


def print_prompt_cost(console: Console, cost: dict[str, Any] | None) -> None:
    """Cost per item at list price and with provider prompt caching (a simulated panel)."""
    if not cost:
        return
    table = Table(
        title=f"Cost per item, {cost['rubric']}: SIMULATED judges at real models' list prices"
    )
    for col in ("run", "items", "USD/item", "calls", "prompt tok", "cached tok", "compl. tok"):
        table.add_column(col, justify="left" if col == "run" else "right")
    for name, label in (("list_price", "no cache"), ("prompt_cache", "cached")):
        run = cost[name]
        table.add_row(
            label,
            _fmt(run["items"]),
            f"{run['cost_per_item_usd']:.5f}",
            _fmt(run["calls_per_item"], 1),
            _fmt(run["prompt_tokens_per_item"], 0),
            _fmt(run["cached_prompt_tokens_per_item"], 0),
            _fmt(run["completion_tokens_per_item"], 0),
        )
    console.print(table)
    judges = ", ".join(f"{m} {_fmt(r, 2)}" for m, r in cost["ratio_by_judge"].items())
    console.print(
        f"  cached/list: {_fmt(cost['ratio'], 3)} (after the first item "
        f"{_fmt(cost['ratio_after_first_item'], 3)}; prompt part alone "
        f"{_fmt(cost['prompt_ratio'], 3)}); per judge: {judges}",
        style="dim",
    )


def print_comparison(console: Console, old: dict[str, Any], new: dict[str, Any]) -> None:
    table = Table(
        title=f"Compared with {old.get('created_at', '?')} "
        f"(profile {lookup(old, 'profile.name')}, commit {lookup(old, 'machine.git_commit')})"
    )
    for col in ("metric", "old", "new", "delta", "%"):
        table.add_column(col, justify="left" if col == "metric" else "right")
    for path in COMPARED:
        a, b = lookup(old, path), lookup(new, path)
        if not isinstance(a, int | float) or not isinstance(b, int | float):
            continue
        delta = b - a
        pct = f"{100 * delta / a:+.1f}" if a else "-"
        table.add_row(path, _fmt(float(a), 2), _fmt(float(b), 2), f"{delta:+.2f}", pct)
    console.print(table)
