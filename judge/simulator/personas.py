"""Personas: how a simulated judge departs from the ``accurate`` reading.

Model names follow ``<persona>[@<tag>]``; the tag only changes the random seed, so ``noisy@1``
and ``noisy@2`` are two different noisy judges. LiteLLM strips its ``openai/`` prefix; any other
``provider/`` prefix is dropped here too.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from judge.simulator.schema import DimSpec

SIMPLE_PERSONAS = (
    "accurate",
    "noisy",
    "lenient",
    "random",
    "malformed",
    "slow",
    "flaky",
    "refusing",
    "blocked",
    "wrong-tool",
    "verbose",
    "order-biased",
    "unstable",
)
FAULT_KINDS = ("fail429", "fail500", "overloaded", "fail401", "fail400")
_FAIL = re.compile(r"^(fail429|fail500|overloaded|fail401|fail400)-(\d{1,6})$")
_REPLAY = re.compile(r"^replay-([A-Za-z0-9_.\-]+)$")
DESCRIPTIONS = {
    "accurate": "reference labels when known, else a deterministic reading of the text",
    "noisy": "accurate, moved one level with some probability per dimension",
    "lenient": "accurate shifted up (inflated), clamped to the scale",
    "random": "uniform over the valid values",
    "malformed": "sometimes invalid JSON, truncated JSON, an off-scale rating or a gap",
    "slow": "accurate after a long delay",
    "flaky": "sometimes a rate limit (with a retry delay), a server error or an overload",
    "refusing": "declines every item (OpenAI refusal, Anthropic stop_reason refusal, Gemini "
    "finishReason SAFETY)",
    "blocked": "the input is blocked by a safety filter (OpenAI 400 content_filter, Anthropic "
    "stop_reason refusal, Gemini promptFeedback.blockReason)",
    "wrong-tool": "answers with a call to a tool the caller did not ask for",
    "verbose": "accurate, one level higher per 50 words of the judged text (at most two): "
    "ratings rise with reply length",
    "order-biased": "accurate, but ranks the first-listed participant first",
    "unstable": "accurate, but about half the dimensions get a uniformly drawn value, drawn anew "
    "on every call (samples vary)",
    "fail429-N": "the first N calls per distinct prompt get HTTP 429, then accurate",
    "fail401-N": "the first N calls per distinct prompt get HTTP 401 (key refused), then accurate",
    "fail400-N": "the first N calls per distinct prompt get HTTP 400 (bad request), then accurate",
    "fail500-N": "the first N calls per distinct prompt get HTTP 500, then accurate",
    "overloaded-N": "the first N calls per distinct prompt are overloaded (Anthropic 529, "
    "OpenAI and Gemini 503), then accurate",
    "replay-NAME": "ratings recorded in an annotation file (--replay NAME=PATH)",
}


class UnknownPersona(ValueError):
    """A model name that names no persona."""


@dataclass(frozen=True)
class Persona:
    kind: str  # one of SIMPLE_PERSONAS, FAULT_KINDS or "replay"
    tag: str = ""
    fail_count: int = 0
    replay_name: str = ""

    @property
    def label(self) -> str:
        """How the persona names itself in rationales."""
        if self.kind in FAULT_KINDS:
            base = f"{self.kind}-{self.fail_count}"
        elif self.kind == "replay":
            base = f"replay-{self.replay_name}"
        else:
            base = self.kind
        return f"{base}@{self.tag}" if self.tag else base


def strip_provider(model: str) -> str:
    return model.rsplit("/", 1)[-1] if "/" in model else model


def parse_persona(name: str, replay_names: frozenset[str] | set[str] | None = None) -> Persona:
    """Parse ``<persona>[@<tag>]``; raise :class:`UnknownPersona` when nothing matches."""
    base, _, tag = strip_provider(name.strip()).partition("@")
    if base in SIMPLE_PERSONAS:
        return Persona(base, tag)
    fail = _FAIL.match(base)
    if fail:
        return Persona(fail.group(1), tag, fail_count=int(fail.group(2)))
    replay = _REPLAY.match(base)
    if replay:
        if replay_names is not None and replay.group(1) not in replay_names:
            known = ", ".join(sorted(replay_names)) or "none (start with --replay NAME=PATH)"
            raise UnknownPersona(
                f"no replay file named {replay.group(1)!r} is loaded; loaded: {known}"
            )
        return Persona("replay", tag, replay_name=replay.group(1))
    raise UnknownPersona(
        f"the model {name!r} names no simulator persona; use <persona>[@<tag>] with persona "
        f"one of {', '.join(SIMPLE_PERSONAS)}, fail429-N, fail500-N, fail401-N, fail400-N, "
        "overloaded-N, "
        "replay-NAME, or an alias"
    )


def seeded(*parts: object) -> random.Random:
    """A generator that depends only on ``parts`` (str seeds are hashed with SHA-512)."""
    return random.Random("\x1f".join(str(p) for p in parts))


def all_values(spec: DimSpec) -> list[Any]:
    if spec.kind == "ordinal":
        return list(spec.levels)
    if spec.kind == "binary":
        return [False, True]
    return list(spec.labels)


def random_value(spec: DimSpec, rng: random.Random) -> Any:
    """A uniformly drawn valid rating."""
    if spec.kind == "ranked":
        return rng.sample(list(spec.labels), rng.randint(1, spec.k))
    if spec.kind == "free_text":
        return f"[simulated random judge] impression #{rng.randint(1, 999)}."[: spec.max_chars]
    return rng.choice(all_values(spec))


def step(spec: DimSpec, value: Any, delta: int) -> Any:
    """Move an ordinal or binary rating ``delta`` levels, clamped to the scale."""
    if spec.kind == "binary":
        return True if delta > 0 else False if delta < 0 else value
    levels = list(spec.levels)
    index = levels.index(value) if value in levels else 0
    return levels[max(0, min(len(levels) - 1, index + delta))]


def noisy_value(spec: DimSpec, value: Any, rng: random.Random, rate: float) -> Any:
    """With probability ``rate``, a neighbouring value (one level up or down; another label;
    two labels swapped), else ``value``."""
    if rng.random() >= rate:
        return value
    if spec.kind == "ordinal":
        levels = list(spec.levels)
        index = levels.index(value) if value in levels else 0
        if index == 0:
            direction = 1
        elif index == len(levels) - 1:
            direction = -1
        else:
            direction = rng.choice((-1, 1))
        return levels[index + direction]
    if spec.kind == "binary":
        return not value
    if spec.kind == "nominal":
        others = [label for label in spec.labels if label != value]
        return rng.choice(others) if others else value
    if spec.kind == "ranked" and isinstance(value, list):
        if len(value) >= 2:
            swapped = list(value)
            swapped[0], swapped[1] = swapped[1], swapped[0]
            return swapped
        others = [label for label in spec.labels if label not in value]
        return [rng.choice(others)] if others else value
    return value


def lenient_value(spec: DimSpec, value: Any) -> Any:
    """Inflated: one level up (two on scales with 7 or more levels); true for binary."""
    if spec.kind == "ordinal":
        return step(spec, value, 2 if len(spec.levels) >= 7 else 1)
    if spec.kind == "binary":
        return True
    return value


#: words of judged text per level the ``verbose`` persona adds (at most ``VERBOSE_MAX_STEPS``)
VERBOSE_WORDS_PER_STEP = 50
VERBOSE_MAX_STEPS = 2
#: the share of dimensions the ``unstable`` persona draws at random on each call
UNSTABLE_RATE = 0.5


def verbose_value(spec: DimSpec, value: Any, words: int) -> Any:
    """Longer judged text, higher rating (ordinal and binary; other scales unchanged)."""
    steps = min(VERBOSE_MAX_STEPS, words // VERBOSE_WORDS_PER_STEP)
    if steps == 0 or spec.kind not in ("ordinal", "binary"):
        return value
    return step(spec, value, steps)


def first_listed_first(spec: DimSpec, value: Any, first: str | None) -> Any:
    """A ranked list with the first-listed participant moved to the top."""
    if spec.kind != "ranked" or first is None or first not in spec.labels:
        return value
    rest = [v for v in value if v != first] if isinstance(value, list) else []
    return [first, *rest][: spec.k]
