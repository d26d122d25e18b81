"""Bundled sample conversations for ``judge demo`` (written for this project)."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

#: (file, rubric id, label) for each bundled sample.
SAMPLES = (
    ("reddit_style_post.json", "epitome", "dyadic post and reply"),
    ("workplace_chat.json", "lend-an-ear", "dyadic multi-turn chat"),
    ("couple_session.json", "rescue-couple", "couple therapy checkpoint"),
)


def load_sample(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(resources.files(__name__).joinpath(name).read_text("utf-8"))
    return data
