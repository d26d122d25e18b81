"""Re-exported from :mod:`empathy_judge_client.batch_summary` (the client distribution, where
the wire models live so that clients need no server)."""

from empathy_judge_client.batch_summary import *  # noqa: F403 (every public name, as it is there)
