"""Re-exported from :mod:`empathy_judge_client.sync` (the ``empathy-judge-client`` distribution)."""

from empathy_judge_client.sync import (
    BatchHandle as BatchHandle,
)
from empathy_judge_client.sync import (
    JudgeClient as JudgeClient,
)
from empathy_judge_client.sync import (
    Progress as Progress,
)
