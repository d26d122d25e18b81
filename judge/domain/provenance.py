"""Where a judge's reply came from: the LLM simulator marks every reply it sends (issue 23).

A run is ``simulated`` when its replies came from the simulator, however the judge reached it
(a simulated persona, or a real model name whose ``api_base`` points at the simulator). The
simulator sends the header ``x-llm-simulator: empathy-judge`` with every response, and, since
LiteLLM's Gemini adapter does not pass response headers on, starts its Gemini ``responseId``
(LiteLLM's reply ``id``) and OpenAI ``id`` with :data:`SIMULATOR_REPLY_ID_PREFIX` too.
"""

from __future__ import annotations

from collections.abc import Mapping

SIMULATOR_HEADER = "x-llm-simulator"
SIMULATOR_MARK = "empathy-judge"
SIMULATOR_REPLY_ID_PREFIX = "empathy-judge-sim-"


def is_simulator_reply(headers: Mapping[str, object] | None, reply_id: object = None) -> bool:
    """True when the response headers (any prefix a client adds to their names, e.g.
    LiteLLM's ``llm_provider-``) or the reply's id carry the simulator's mark."""
    for name, value in (headers or {}).items():
        if str(name).lower().endswith(SIMULATOR_HEADER) and str(value) == SIMULATOR_MARK:
            return True
    return isinstance(reply_id, str) and reply_id.startswith(SIMULATOR_REPLY_ID_PREFIX)
