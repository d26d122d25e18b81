"""Re-exported from :mod:`empathy_judge_client.errors` (the ``empathy-judge-client``
distribution)."""

from empathy_judge_client.errors import *  # noqa: F403 (every public name, as it is there)
