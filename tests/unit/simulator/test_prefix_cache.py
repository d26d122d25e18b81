"""The simulator's model of each provider's prompt cache: what counts as a hit, the minimum
lengths, OpenAI's 128-token steps, Anthropic's breakpoints, reads and writes, and the TTL."""

from __future__ import annotations

from judge.simulator.formats.common import JudgeCall
from judge.simulator.prefix_cache import CacheHit, PrefixCache, minimum_tokens

RUBRIC = "r" * 4 * 1500  # a system block of 1,500 tokens (four characters per token)
SHORT = "s" * 4 * 500


def call(
    model: str, system: str = RUBRIC, item: str = "an item", breakpoints: tuple[int, ...] = ()
) -> JudgeCall:
    messages = [{"role": "system", "content": system}, {"role": "user", "content": item}]
    return JudgeCall(model=model, messages=messages, cache_breakpoints=breakpoints)


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def system_tokens(system: str = RUBRIC) -> int:
    """Tokens up to the end of the system block: 3 of framing, 4 per message, the text."""
    return 3 + 4 + len(system) // 4


def test_openai_caches_long_prefixes_by_itself_in_128_token_steps() -> None:
    cache = PrefixCache()
    assert cache.lookup("openai", call("gpt-4.1", item="first")) == CacheHit()
    hit = cache.lookup("openai", call("gpt-4.1", item="second"))
    prefix = system_tokens()
    assert hit.read == 1024 + (prefix - 1024) // 128 * 128
    assert hit.read <= prefix
    assert hit.write == 0
    # the same prompt again: its whole length, still in steps
    again = call("gpt-4.1", item="second")
    assert cache.lookup("openai", again).read == 1024 + (again.prompt_tokens - 1024) // 128 * 128
    # each model has its own cache
    assert cache.lookup("openai", call("gpt-4o", item="third")) == CacheHit()


def test_short_prompts_are_never_cached() -> None:
    cache = PrefixCache()
    for wire in ("openai", "gemini", "anthropic"):
        for n in range(2):
            hit = cache.lookup(wire, call("m", system=SHORT, item=str(n), breakpoints=(0,)))
            assert hit == CacheHit(), wire


def test_anthropic_caches_only_at_breakpoints_writing_first_then_reading() -> None:
    cache = PrefixCache()
    for n in range(2):
        assert cache.lookup("anthropic", call("claude-sonnet-4-5", item=str(n))) == CacheHit()
    marked = ("claude-sonnet-4-5", RUBRIC)
    first = cache.lookup("anthropic", call(*marked, item="a", breakpoints=(0,)))
    assert first == CacheHit(read=0, write=system_tokens())
    second = cache.lookup("anthropic", call(*marked, item="b", breakpoints=(0,)))
    assert second == CacheHit(read=system_tokens(), write=0)
    # a breakpoint after the item too: the rubric is read, the rest written
    both = call(*marked, item="c", breakpoints=(0, 1))
    assert cache.lookup("anthropic", both) == CacheHit(
        read=system_tokens(), write=both.prompt_tokens - system_tokens()
    )


def test_minimums_differ_per_model() -> None:
    assert minimum_tokens("anthropic", "claude-haiku-4-5") == 2048
    assert minimum_tokens("anthropic", "claude-sonnet-4-5") == 1024
    assert minimum_tokens("gemini", "gemini-2.5-pro") == 2048
    assert minimum_tokens("gemini", "gemini-2.5-flash") == 1024
    assert minimum_tokens("openai", "gpt-4.1") == 1024
    cache = PrefixCache()  # 1,500 tokens: enough for Sonnet and Flash, not Haiku and Pro
    for wire, model in (("anthropic", "claude-haiku-4-5"), ("gemini", "gemini-2.5-pro")):
        for n in range(2):
            assert cache.lookup(wire, call(model, item=str(n), breakpoints=(0,))) == CacheHit()


def test_gemini_caches_implicitly_the_longest_prefix_seen() -> None:
    cache = PrefixCache()
    assert cache.lookup("gemini", call("gemini-2.5-flash", item="a")) == CacheHit()
    assert cache.lookup("gemini", call("gemini-2.5-flash", item="b")) == CacheHit(
        read=system_tokens()
    )


def test_entries_expire_after_their_ttl_unless_hit() -> None:
    clock = Clock()
    cache = PrefixCache(ttl_s=300, clock=clock)
    cache.lookup("anthropic", call("claude-sonnet-4-5", item="a", breakpoints=(0,)))
    clock.now = 299
    assert cache.lookup("anthropic", call("claude-sonnet-4-5", item="b", breakpoints=(0,))).read
    clock.now = 598  # the hit at 299 refreshed it
    assert cache.lookup("anthropic", call("claude-sonnet-4-5", item="c", breakpoints=(0,))).read
    clock.now = 1000
    late = cache.lookup("anthropic", call("claude-sonnet-4-5", item="d", breakpoints=(0,)))
    assert late == CacheHit(read=0, write=system_tokens())
    cache.lookup("openai", call("gpt-4.1", item="a"))
    clock.now = 1400
    assert cache.lookup("openai", call("gpt-4.1", item="b")) == CacheHit()
