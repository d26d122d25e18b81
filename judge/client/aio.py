"""Re-exported from :mod:`empathy_judge_client.aio` (the ``empathy-judge-client``
distribution)."""

from empathy_judge_client.aio import *  # noqa: F403 (every public name, as it is there)
