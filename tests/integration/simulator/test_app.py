"""The LLM simulator as a real HTTP server, called through LiteLLM and raw httpx (no mocks)."""

from __future__ import annotations

import asyncio
import csv
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import litellm
import pytest

from judge.domain.item import Item, parse_item
from judge.domain.judgment_schema import (
    ParseOutcome,
    judgment_schema,
    parse_judgment,
    response_format,
)
from judge.domain.render import render_conversation
from judge.rubrics import RubricRegistry
from judge.simulator import SimulatorOptions, SimulatorProcess
from tests.fixtures import loopback

pytestmark = [
    pytest.mark.integration,
    # litellm 1.110.2 builds a pydantic schema for a TypedDict with ReadOnly items on its first
    # call; pydantic warns about it. Third-party noise, not ours.
    pytest.mark.filterwarnings("ignore:Items? .* `ReadOnly` qualifier:UserWarning"),
]

EPITOME = RubricRegistry.from_directory().get("epitome")
DIMS = list(EPITOME.dimensions)
RESPONSE_FORMAT = response_format(judgment_schema(EPITOME, DIMS, ()))
KUMAR = Path("kumar2025-empathic-communication-judging/annotations")

PAIRS = [
    (
        "I moved for a new job three months ago and I still eat dinner alone every night.",
        "I'm so sorry, that sounds really lonely. Is eating dinner alone the hardest part of "
        "your day?",
    ),
    (
        "Failed my driving test for the second time today.",
        "I know how you feel. Just book it again, lots of people need three tries.",
    ),
    ("I can't sleep since my dad got sick.", "Try magnesium and keep your phone out of the room."),
    ("My cat died this morning and the house feels empty.", "Hang in there."),
    (
        "I got passed over for the promotion I worked so hard for.",
        "That must be so frustrating and discouraging after all that effort. What did your "
        "manager say about it?",
    ),
    ("Nobody came to my birthday party.", "What happened?"),
    (
        "I feel like I'm failing at everything lately.",
        "I'm sorry you're going through this. It sounds like you feel overwhelmed and "
        "exhausted. Do you want to tell me more about what has been piling up?",
    ),
    ("My best friend stopped talking to me.", "Don't worry, you'll find new friends."),
    (
        "I'm scared about my surgery next week.",
        "That makes total sense, surgery is scary. I had one last year and I was anxious too.",
    ),
    ("I lost my job today.", "At least you have more free time now. Have you tried freelancing?"),
    (
        "My parents are divorcing and I feel stuck in the middle.",
        "It sounds like you are being pulled in two directions, that must be painful. How "
        "are you coping with your parents asking you to take sides?",
    ),
    ("I failed my exam.", "ok"),
]
ITEMS = [parse_item({"seeker_post": s, "response": r}) for s, r in PAIRS]


def messages_for(item: Item) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You rate empathy in peer-support replies (EPITOME)."},
        {
            "role": "user",
            "content": "Rate the reply marked with *.\n" + render_conversation(item, EPITOME.unit),
        },
    ]


def chat_body(model: str, item: Item, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "messages": messages_for(item)}
    body.update({"response_format": RESPONSE_FORMAT, **extra})
    return body


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatorProcess]:
    options = SimulatorOptions(
        latency_ms=5,
        jitter_ms=2,
        slow_latency_ms=400,
        retry_after_ms=0,
        aliases={"panel-judge": "noisy@7"},
    )
    with SimulatorProcess(options) as process:
        yield process


@pytest.fixture(scope="module")
def replay_sim(shared_data: Path) -> Iterator[SimulatorProcess]:
    folder = shared_data / KUMAR
    options = SimulatorOptions(
        latency_ms=5,
        replay={
            "gemini": folder / "epitome" / "gemini_ratings.csv",
            "ed": folder / "empatheticdialogues" / "gemini_ratings.csv",
            "lae": folder / "lend_an_ear" / "gemini_ratings.csv",
        },
        labels=(folder.parent / "original_data" / "sample_epitome.csv",),
    )
    with SimulatorProcess(options) as process:
        yield process


async def _contents(base_url: str, model: str, items: list[Item]) -> list[str]:
    async def one(item: Item) -> str:
        reply = await litellm.acompletion(
            model=f"openai/{model}",
            api_base=base_url,
            api_key="sim",
            messages=messages_for(item),
            response_format=RESPONSE_FORMAT,
        )
        content = reply.choices[0].message.content
        assert isinstance(content, str)
        return content

    return list(await asyncio.gather(*(one(item) for item in items)))


def judge_all(sim: SimulatorProcess, model: str, items: list[Item] = ITEMS) -> list[str]:
    return asyncio.run(_contents(sim.base_url, model, items))


def ratings_of(contents: list[str]) -> list[dict[str, Any]]:
    """Ratings per item; every reply must be complete and on scale."""
    out = []
    for content in contents:
        parsed: ParseOutcome = parse_judgment(content, DIMS, ())
        assert parsed.complete, (parsed.problems, content)
        for rating in parsed.ratings.values():
            assert rating.rationale.startswith("[simulated "), rating.rationale
        out.append({dim: r.rating for dim, r in parsed.ratings.items()})
    return out


def test_reply_is_an_openai_chat_completion(sim: SimulatorProcess) -> None:
    response = loopback.post(
        f"{sim.base_url}/chat/completions", json=chat_body("accurate", ITEMS[0])
    )
    assert response.status_code == 200
    assert response.headers["x-llm-simulator"] == "empathy-judge"
    data = response.json()
    assert data["object"] == "chat.completion"
    assert data["id"].startswith("chatcmpl-")
    assert data["model"] == "accurate"
    assert isinstance(data["created"], int)
    assert data["system_fingerprint"] == "empathy-judge-simulator"
    choice = data["choices"][0]
    assert choice["finish_reason"] == "stop"
    assert choice["message"]["role"] == "assistant"
    assert set(json.loads(choice["message"]["content"])["ratings"]) == {d.id for d in DIMS}
    usage = data["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    # Also served without the /v1 prefix, and /v1/models lists the personas.
    bare = loopback.post(f"{sim.root_url}/chat/completions", json=chat_body("accurate", ITEMS[0]))
    assert bare.status_code == 200
    models = loopback.get(f"{sim.base_url}/models").json()
    assert {"accurate", "noisy", "lenient", "panel-judge"} <= {m["id"] for m in models["data"]}
    assert loopback.get(f"{sim.root_url}/health").json()["status"] == "ok"


def test_accurate_is_deterministic_and_on_scale(sim: SimulatorProcess) -> None:
    first = ratings_of(judge_all(sim, "accurate"))
    assert first == ratings_of(judge_all(sim, "accurate"))
    # The heuristics read the text: an empathic, curious reply beats a curt one.
    assert first[0] == {"emotional_reactions": 2, "interpretations": 2, "explorations": 2}
    assert first[-1] == {"emotional_reactions": 0, "interpretations": 0, "explorations": 0}
    assert len({json.dumps(r, sort_keys=True) for r in first}) >= 5


def test_noisy_moves_some_ratings_by_one_level(sim: SimulatorProcess) -> None:
    accurate = ratings_of(judge_all(sim, "accurate"))
    noisy = ratings_of(judge_all(sim, "noisy@1"))
    assert noisy == ratings_of(judge_all(sim, "noisy@1"))  # deterministic per seed
    moves = [noisy[i][dim] - accurate[i][dim] for i in range(len(ITEMS)) for dim in accurate[i]]
    assert any(moves)
    assert {abs(m) for m in moves} <= {0, 1}
    assert 0.1 < sum(1 for m in moves if m) / len(moves) < 0.6
    assert ratings_of(judge_all(sim, "noisy@2")) != noisy  # another tag, another judge


def test_lenient_is_never_below_accurate(sim: SimulatorProcess) -> None:
    accurate = ratings_of(judge_all(sim, "accurate"))
    lenient = ratings_of(judge_all(sim, "lenient"))
    pairs = [(lenient[i][d], accurate[i][d]) for i in range(len(ITEMS)) for d in accurate[i]]
    assert all(high >= low for high, low in pairs)
    assert any(high > low for high, low in pairs)


def test_random_is_on_scale_and_seeded(sim: SimulatorProcess) -> None:
    first = ratings_of(judge_all(sim, "random@3"))
    assert first == ratings_of(judge_all(sim, "random@3"))
    assert first != ratings_of(judge_all(sim, "random@4"))


def test_malformed_breaks_replies_at_about_its_rate(sim: SimulatorProcess) -> None:
    contents = judge_all(sim, "malformed", ITEMS * 5)
    broken = sum(1 for c in contents if not parse_judgment(c, DIMS, ()).complete)
    assert 0.25 <= broken / len(contents) <= 0.75, broken


def test_fail429_fails_twice_per_prompt_then_answers(sim: SimulatorProcess) -> None:
    url = f"{sim.base_url}/chat/completions"
    with httpx.Client() as client:
        codes = [client.post(url, json=chat_body("fail429-2", ITEMS[1])) for _ in range(3)]
        assert [r.status_code for r in codes] == [429, 429, 200]
        assert codes[0].headers["retry-after"] == "0"
        error = codes[0].json()["error"]
        assert error["type"] == "rate_limit_error"
        assert error["code"] == "rate_limit_exceeded"
        assert error["message"]
        # Each distinct prompt has its own count.
        assert client.post(url, json=chat_body("fail429-2", ITEMS[2])).status_code == 429
        server_errors = [client.post(url, json=chat_body("fail500-1", ITEMS[1])) for _ in range(2)]
        assert [r.status_code for r in server_errors] == [500, 200]
        assert server_errors[0].json()["error"]["type"] == "server_error"


def test_flaky_fails_some_calls_with_429_or_5xx(sim: SimulatorProcess) -> None:
    url = f"{sim.base_url}/chat/completions"
    with httpx.Client() as client:
        codes = [client.post(url, json=chat_body("flaky", item)).status_code for item in ITEMS * 4]
    failures = [c for c in codes if c != 200]
    assert failures
    assert set(failures) <= {429, 500, 503}
    assert 0.1 <= len(failures) / len(codes) <= 0.6


def test_slow_waits_for_its_latency(sim: SimulatorProcess) -> None:
    start = time.perf_counter()
    ratings_of(judge_all(sim, "slow", ITEMS[:3]))
    assert time.perf_counter() - start >= 0.4


def test_alias_switches_persona_without_renaming_the_judge(sim: SimulatorProcess) -> None:
    sim.set_alias("judge-a", "accurate")
    before = ratings_of(judge_all(sim, "judge-a"))
    assert before == ratings_of(judge_all(sim, "accurate"))
    sim.set_alias("judge-a", "lenient")
    after = ratings_of(judge_all(sim, "judge-a"))
    assert after == ratings_of(judge_all(sim, "lenient"))
    assert after != before
    aliases = loopback.get(f"{sim.root_url}/_simulator/aliases").json()["aliases"]
    assert aliases["judge-a"] == "lenient"
    assert aliases["panel-judge"] == "noisy@7"  # from --alias at start-up
    assert ratings_of(judge_all(sim, "panel-judge")) == ratings_of(judge_all(sim, "noisy@7"))
    bad = loopback.put(f"{sim.root_url}/_simulator/aliases/x", json={"persona": "genius"})
    assert bad.status_code == 400
    assert "persona" in bad.json()["error"]["message"]


def test_stats_count_calls_per_model(sim: SimulatorProcess) -> None:
    sim.reset_stats()
    judge_all(sim, "accurate@stats", ITEMS[:4])
    stats = sim.stats()["models"]["accurate@stats"]
    assert stats["calls"] == stats["ok"] == 4
    assert stats["prompt_tokens"] > 0
    assert stats["completion_tokens"] > 0


def test_usage_is_positive_and_grows_with_the_prompt(sim: SimulatorProcess) -> None:
    short = parse_item({"seeker_post": "Sad.", "response": "Sorry."})
    long = parse_item({"seeker_post": "I feel sad. " * 200, "response": "I'm so sorry. " * 20})

    async def usage(item: Item) -> Any:
        reply = await litellm.acompletion(
            model="openai/accurate",
            api_base=sim.base_url,
            api_key="sim",
            messages=messages_for(item),
            response_format=RESPONSE_FORMAT,
        )
        return reply.usage

    small, big = asyncio.run(usage(short)), asyncio.run(usage(long))
    assert 0 < small.prompt_tokens < big.prompt_tokens
    assert small.completion_tokens > 0
    assert big.total_tokens == big.prompt_tokens + big.completion_tokens
    assert big.prompt_tokens > 500  # ~4 characters per token


def test_without_a_schema_the_answer_is_plain_text(sim: SimulatorProcess) -> None:
    body = chat_body("accurate", ITEMS[0])
    del body["response_format"]
    content = loopback.post(f"{sim.base_url}/chat/completions", json=body).json()["choices"][0]
    assert content["message"]["content"].startswith("[simulated accurate judge]")


def test_errors_are_openai_shaped(sim: SimulatorProcess) -> None:
    url = f"{sim.base_url}/chat/completions"
    unknown = loopback.post(url, json=chat_body("gpt-17", ITEMS[0]))
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == "model_not_found"
    assert unknown.headers["x-llm-simulator"] == "empathy-judge"
    not_json = loopback.post(url, content=b"{nope", headers={"content-type": "application/json"})
    assert not_json.status_code == 400
    assert not_json.json()["error"]["type"] == "invalid_request_error"
    no_messages = loopback.post(url, json={"model": "accurate"})
    assert no_messages.status_code == 400
    assert loopback.get(url).status_code == 405
    assert loopback.get(f"{sim.root_url}/nowhere").status_code == 404


# -- replay of recorded annotations ---------------------------------------------------------


def kumar_item(full_conversation: str, *, unit: str, clean: bool) -> Item:
    """An item built straight from a ``full_conversation`` cell: empty turns and the
    ``_comma_`` escape kept as they are (or cleaned, with ``clean``)."""
    turns = []
    for line in full_conversation.split("\n"):
        match = re.match(r"\s*(Seeker|Supporter):\s?(.*)$", line)
        if match:
            text = match.group(2).replace("_comma_", ",") if clean else match.group(2)
            turns.append({"speaker": match.group(1).lower(), "text": text})
        elif line.strip() and turns:
            turns[-1]["text"] += "\n" + line
    if clean:
        turns = [t for t in turns if t["text"].strip()]
    supporter_turns = [i for i, t in enumerate(turns) if t["speaker"] == "supporter"]
    return Item.model_validate(
        {
            "participants": [
                {"id": "seeker", "role": "seeker"},
                {"id": "supporter", "role": "supporter"},
            ],
            "turns": turns,
            "focus": supporter_turns[-1] if unit == "response" else None,
        }
    )


def read_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.data
def test_replay_serves_the_recorded_epitome_levels(
    replay_sim: SimulatorProcess, shared_data: Path
) -> None:
    rows = read_rows(shared_data / KUMAR / "epitome" / "gemini_ratings.csv")
    chosen = [rows[0], rows[7], rows[23]]
    items = [kumar_item(r["full_conversation"], unit="response", clean=False) for r in chosen]
    got = ratings_of(judge_all(replay_sim, "replay-gemini", items))
    expected = [{d.id: int(row[f"level_{d.id}"]) for d in DIMS} for row in chosen]
    assert got == expected

    unknown = judge_all(replay_sim, "replay-gemini", [ITEMS[0]])[0]
    assert unknown.startswith("[simulated replay-gemini judge] I'm sorry")
    assert not parse_judgment(unknown, DIMS, ()).ratings


@pytest.mark.data
def test_accurate_uses_reference_labels_when_it_knows_the_conversation(
    replay_sim: SimulatorProcess, shared_data: Path
) -> None:
    """``--labels`` in the seeker_post/response_post layout; items built from the other
    layout (full_conversation) are recognised as the same conversations."""
    labels = {
        (r["sp_id"], r["rp_id"]): r
        for r in read_rows(shared_data / KUMAR.parent / "original_data" / "sample_epitome.csv")
    }
    rows = read_rows(shared_data / KUMAR / "epitome" / "gemini_ratings.csv")[:12]
    items = [kumar_item(r["full_conversation"], unit="response", clean=False) for r in rows]
    got = ratings_of(judge_all(replay_sim, "accurate", items))
    expected = [
        {d.id: int(labels[(r["sp_id"], r["rp_id"])][f"level_{d.id}"]) for d in DIMS} for r in rows
    ]
    assert got == expected
    # A conversation the labels do not cover is read from its text instead.
    assert ratings_of(judge_all(replay_sim, "accurate", ITEMS[:1])) == ratings_of(
        judge_all(replay_sim, "accurate", ITEMS[:1])
    )


@pytest.mark.data
@pytest.mark.parametrize(
    ("name", "folder", "rubric_id"),
    [
        ("ed", "empatheticdialogues", "empathetic-dialogues"),
        ("lae", "lend_an_ear", "lend-an-ear"),
    ],
)
def test_replay_keys_survive_comma_escapes_and_empty_turns(
    replay_sim: SimulatorProcess, shared_data: Path, name: str, folder: str, rubric_id: str
) -> None:
    rubric = RubricRegistry.from_directory().get(rubric_id)
    dims = list(rubric.dimensions)
    fmt = response_format(judgment_schema(rubric, dims, ()))
    rows = read_rows(shared_data / KUMAR / folder / "gemini_ratings.csv")
    with httpx.Client() as client:
        for row in rows[:10]:
            expected = {d.id: int(row[d.aliases[0]]) for d in dims}
            for clean in (False, True):
                item = kumar_item(row["full_conversation"], unit=rubric.unit, clean=clean)
                body = {
                    "model": f"replay-{name}",
                    "messages": [
                        {"role": "user", "content": render_conversation(item, rubric.unit)}
                    ],
                    "response_format": fmt,
                }
                reply = client.post(f"{replay_sim.base_url}/chat/completions", json=body)
                content = reply.json()["choices"][0]["message"]["content"]
                parsed = parse_judgment(content, dims, ())
                assert {k: v.rating for k, v in parsed.ratings.items()} == expected, content
