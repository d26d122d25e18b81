"""Re-exported from :mod:`empathy_judge_client.result` (the client distribution, where the
wire models live so that clients need no server)."""

from empathy_judge_client.result import (
    ABSTENTION_REASONS as ABSTENTION_REASONS,
)
from empathy_judge_client.result import (
    CALL_FAILURES as CALL_FAILURES,
)
from empathy_judge_client.result import (
    AbstentionReason as AbstentionReason,
)
from empathy_judge_client.result import (
    AggregationInfo as AggregationInfo,
)
from empathy_judge_client.result import (
    Agreement as Agreement,
)
from empathy_judge_client.result import (
    CallFailure as CallFailure,
)
from empathy_judge_client.result import (
    CallRecord as CallRecord,
)
from empathy_judge_client.result import (
    DimensionResult as DimensionResult,
)
from empathy_judge_client.result import (
    JudgeRating as JudgeRating,
)
from empathy_judge_client.result import (
    PanelMember as PanelMember,
)
from empathy_judge_client.result import (
    ReliabilityFlag as ReliabilityFlag,
)
from empathy_judge_client.result import (
    SampleInfo as SampleInfo,
)
from empathy_judge_client.result import (
    ScoreResult as ScoreResult,
)
from empathy_judge_client.result import (
    StageUsage as StageUsage,
)
from empathy_judge_client.result import (
    Usage as Usage,
)
