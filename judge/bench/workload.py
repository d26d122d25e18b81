"""Synthetic seeker/supporter exchanges (about 70-80 words each), all distinct.

Every item carries a unique marker in its text, so no two items share a prompt and the call
cache never serves one item from another's reply: only an identical repeat may hit the cache.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any

_OPENINGS = (
    "I don't really know who else to tell this to.",
    "This has been on my mind all week.",
    "Maybe this is silly, but I need to get it out.",
    "Things have been rough lately.",
    "I keep going back and forth about this.",
)
_SITUATIONS = (
    "My sister stopped talking to me after an argument about our parents' house",
    "I was passed over for a promotion I had worked toward for two years",
    "My partner and I keep fighting about money and it never gets resolved",
    "I moved to a new city for work and I haven't made a single friend",
    "My dog died last month and everyone acts like I should be over it",
    "I failed my driving test for the third time and I feel stupid",
    "My best friend forgot my birthday and then laughed it off",
    "I have been sleeping badly since my father went into hospital",
)
_FEELINGS = (
    "I feel completely alone with it.",
    "I can't stop crying when I think about it.",
    "Honestly I'm just exhausted.",
    "I'm angry and I don't know where to put it.",
    "I feel like I'm letting everyone down.",
)
_REPLIES = (
    "That sounds really painful, and it makes sense that you feel this way.",
    "I'm so sorry you're going through this; it's a lot to carry on your own.",
    "Have you tried just not thinking about it? Things usually work out.",
    "It sounds like this has been building for a while.",
    "You should talk to a professional about that.",
)
_FOLLOW_UPS = (
    "What has been the hardest part for you so far?",
    "Do you have anyone nearby you can lean on right now?",
    "When you say you feel let down, what do you mean by that?",
    "I'd be glad to hear more if you want to share it.",
    "Everyone goes through this at some point.",
)


def synthetic_items(n: int, *, tag: str, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` distinct items in the ``{seeker_post, response}`` shorthand."""
    rng = random.Random(f"{seed}:{tag}")
    items = []
    for i in range(n):
        seeker = " ".join(
            [
                rng.choice(_OPENINGS),
                f"{rng.choice(_SITUATIONS)} (this is message {tag}-{i}).",
                rng.choice(_FEELINGS),
                "I don't know what to do next or whether I'm overreacting.",
            ]
        )
        reply = " ".join([rng.choice(_REPLIES), rng.choice(_FOLLOW_UPS)])
        items.append({"id": f"{tag}-{i}", "seeker_post": seeker, "response": reply})
    return items


def to_jsonl(items: Sequence[Any]) -> bytes:
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items).encode()


def read_jsonl(data: bytes) -> list[Any]:
    return [json.loads(line) for line in data.decode().splitlines() if line.strip()]
