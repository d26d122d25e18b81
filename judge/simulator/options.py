"""Settings of one simulator server, and their command-line form."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class SimulatorOptions:
    """Everything a simulator server needs; :meth:`to_args` gives the matching CLI options."""

    latency_ms: float = 50.0
    jitter_ms: float = 10.0
    slow_latency_ms: float = 30_000.0
    flaky_rate: float = 0.3
    malformed_rate: float = 0.5
    noise_rate: float = 0.35
    retry_after_ms: int = 1_000
    seed: int = 0
    #: how long a provider batch takes from creation to ``completed`` (judge.simulator.batches)
    batch_delay_ms: float = 2_000.0
    aliases: dict[str, str] = field(default_factory=dict)
    replay: dict[str, Path] = field(default_factory=dict)
    labels: tuple[Path, ...] = ()
    rubrics_dir: Path | None = None
    #: model each provider's prompt cache (judge.simulator.prefix_cache); entries' lifetime
    prompt_cache: bool = True
    prompt_cache_ttl_s: float = 300.0

    def to_args(self) -> list[str]:
        args = [
            f"--latency-ms={self.latency_ms:g}",
            f"--jitter-ms={self.jitter_ms:g}",
            f"--slow-latency-ms={self.slow_latency_ms:g}",
            f"--flaky-rate={self.flaky_rate:g}",
            f"--malformed-rate={self.malformed_rate:g}",
            f"--noise-rate={self.noise_rate:g}",
            f"--retry-after-ms={self.retry_after_ms}",
            f"--seed={self.seed}",
            f"--batch-delay-ms={self.batch_delay_ms:g}",
        ]
        for name, persona in self.aliases.items():
            args.append(f"--alias={name}={persona}")
        for name, path in self.replay.items():
            args.append(f"--replay={name}={path}")
        for path in self.labels:
            args.append(f"--labels={path}")
        if self.rubrics_dir is not None:
            args.append(f"--rubrics-dir={self.rubrics_dir}")
        if not self.prompt_cache:
            args.append("--no-prompt-cache")
        if self.prompt_cache_ttl_s != 300.0:
            args.append(f"--prompt-cache-ttl-s={self.prompt_cache_ttl_s:g}")
        return args
