"""``judge simulate-llm``: the OpenAI-compatible LLM simulator (docs/DESIGN.md section 6)."""

from __future__ import annotations

from pathlib import Path

import click

from judge.cli._output import fail


def _pairs(values: tuple[str, ...], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, target = value.partition("=")
        if not sep or not name.strip() or not target.strip():
            raise click.BadParameter(f"expected NAME=VALUE, got {value!r}", param_hint=option)
        out[name.strip()] = target.strip()
    return out


@click.command("simulate-llm")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to bind")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8901,
    show_default=True,
    help="0: any free port",
)
@click.option(
    "--port-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="write the bound port to this file once listening",
)
@click.option("--latency-ms", type=click.FloatRange(min=0), default=50.0, show_default=True)
@click.option(
    "--jitter-ms",
    type=click.FloatRange(min=0),
    default=10.0,
    show_default=True,
    help="latency varies uniformly by up to this much either way",
)
@click.option(
    "--slow-latency-ms",
    type=click.FloatRange(min=0),
    default=30_000.0,
    show_default=True,
    help="latency of the `slow` persona",
)
@click.option(
    "--flaky-rate",
    type=click.FloatRange(0, 1),
    default=0.3,
    show_default=True,
    help="share of `flaky` calls that fail (429, 500 or 503)",
)
@click.option(
    "--malformed-rate",
    type=click.FloatRange(0, 1),
    default=0.5,
    show_default=True,
    help="share of `malformed` calls whose reply is broken",
)
@click.option(
    "--noise-rate",
    type=click.FloatRange(0, 1),
    default=0.35,
    show_default=True,
    help="per-dimension probability that `noisy` moves a rating by one level",
)
@click.option(
    "--retry-after-ms",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    help="Retry-After sent with simulated 429s",
)
@click.option("--seed", type=int, default=0, show_default=True, help="base random seed")
@click.option(
    "--batch-delay-ms",
    type=click.FloatRange(min=0),
    default=2000.0,
    show_default=True,
    help="how long an OpenAI batch (/v1/batches) takes to complete",
)
@click.option(
    "--alias",
    "aliases",
    multiple=True,
    metavar="NAME=PERSONA",
    help="serve model NAME as PERSONA (repeatable; also PUT /_simulator/aliases/NAME)",
)
@click.option(
    "--replay",
    "replays",
    multiple=True,
    metavar="NAME=PATH.csv",
    help="persona replay-NAME serves the ratings recorded in PATH (repeatable)",
)
@click.option(
    "--labels",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="reference labels for the `accurate` persona (annotation CSV; repeatable)",
)
@click.option(
    "--rubrics-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="rubrics whose aliases map annotation columns (default: the bundled rubrics/)",
)
@click.option(
    "--prompt-cache/--no-prompt-cache",
    default=True,
    show_default=True,
    help="model each provider's prompt cache (cached tokens in usage)",
)
@click.option(
    "--prompt-cache-ttl-s",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    help="seconds a cached prompt prefix lives (refreshed by a hit)",
)
@click.option("--access-log/--no-access-log", default=False, show_default=True)
@click.option(
    "--exit-with-parent",
    "parent_pid",
    type=int,
    default=None,
    metavar="PID",
    help="stop when process PID, the one that started this one, dies (Linux; judge commands "
    "set it)",
)
@click.option(
    "--log-level",
    type=click.Choice(["critical", "error", "warning", "info", "debug"]),
    default="warning",
    show_default=True,
)
def simulate_llm(
    host: str,
    port: int,
    port_file: Path | None,
    latency_ms: float,
    jitter_ms: float,
    slow_latency_ms: float,
    flaky_rate: float,
    malformed_rate: float,
    noise_rate: float,
    retry_after_ms: int,
    seed: int,
    batch_delay_ms: float,
    aliases: tuple[str, ...],
    replays: tuple[str, ...],
    labels: tuple[Path, ...],
    rubrics_dir: Path | None,
    prompt_cache: bool,
    prompt_cache_ttl_s: float,
    access_log: bool,
    parent_pid: int | None,
    log_level: str,
) -> None:
    """Run the LLM simulator (simulated judges, never a real model). It speaks the OpenAI,
    Anthropic and Gemini APIs.

    Personas are chosen by the model name, `<persona>[@<tag>]` (the tag varies the seed):
    accurate, noisy, lenient, random, malformed, slow, flaky, refusing, blocked, wrong-tool,
    verbose (ratings rise with reply length), order-biased (ranks the first-listed participant
    first), unstable (samples vary), fail<status>-N (status 400, 401, 429 or 500),
    overloaded-N, replay-NAME (judge.simulator.personas.DESCRIPTIONS says what each does); real
    model names
    are aliased with --alias (e.g. --alias gpt-4o=accurate). With LiteLLM: model="openai/accurate",
    api_base="http://HOST:PORT/v1"; model="anthropic/accurate", api_base="http://HOST:PORT";
    model="gemini/accurate", api_base="http://HOST:PORT/v1beta".
    """
    if parent_pid is not None:
        _exit_with_parent(parent_pid)
    from judge.errors import JudgeError
    from judge.simulator import ReplayFileError, SimError, SimulatorOptions, build_state, create_app
    from judge.simulator.server import serve

    options = SimulatorOptions(
        latency_ms=latency_ms,
        jitter_ms=jitter_ms,
        slow_latency_ms=slow_latency_ms,
        flaky_rate=flaky_rate,
        malformed_rate=malformed_rate,
        noise_rate=noise_rate,
        retry_after_ms=retry_after_ms,
        seed=seed,
        batch_delay_ms=batch_delay_ms,
        aliases=_pairs(aliases, "--alias"),
        replay={name: Path(path) for name, path in _pairs(replays, "--replay").items()},
        labels=labels,
        rubrics_dir=rubrics_dir,
        prompt_cache=prompt_cache,
        prompt_cache_ttl_s=prompt_cache_ttl_s,
    )
    try:
        state = build_state(options)
    except (ReplayFileError, JudgeError) as exc:
        fail(str(exc))
        return
    except SimError as exc:  # an --alias naming no persona
        fail(f"--alias: {exc.message}")
        return
    app = create_app(state=state)
    for name, table in state.engine.replay.items():
        click.echo(
            f"replay-{name}: {len(table)} conversations from {table.path}"
            + (f" ({table.duplicates} duplicate rows ignored)" if table.duplicates else ""),
            err=True,
        )
    try:
        serve(
            app,
            host=host,
            port=port,
            port_file=port_file,
            access_log=access_log,
            log_level=log_level,
        )
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc}")


def _exit_with_parent(parent: int) -> None:
    """Ask Linux to send SIGTERM when the parent dies (``prctl(PR_SET_PDEATHSIG)``): a
    simulator started by ``judge serve`` must not outlive it, even when the server is
    SIGKILLed or uvicorn ends it by re-raising SIGTERM before any cleanup runs."""
    import ctypes
    import os
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, signal.SIGTERM)
    if os.getppid() != parent:  # it died before the request was made
        sys.exit(0)
