"""Re-exported from :mod:`empathy_judge_client.aio` (the ``empathy-judge-client`` distribution)."""

from empathy_judge_client.aio import (
    AsyncBatchHandle as AsyncBatchHandle,
)
from empathy_judge_client.aio import (
    AsyncJudgeClient as AsyncJudgeClient,
)
from empathy_judge_client.aio import (
    Progress as Progress,
)
