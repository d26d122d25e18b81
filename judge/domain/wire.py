"""Re-exported from :mod:`empathy_judge_client.wire` (the client distribution, where the
wire models live so that clients need no server)."""

from empathy_judge_client.wire import (
    NDJSON as NDJSON,
)
from empathy_judge_client.wire import (
    PROBLEM_JSON as PROBLEM_JSON,
)
from empathy_judge_client.wire import (
    RUN_STATUS_DESCRIPTION as RUN_STATUS_DESCRIPTION,
)
from empathy_judge_client.wire import (
    BatchView as BatchView,
)
from empathy_judge_client.wire import (
    CalibrationProgress as CalibrationProgress,
)
from empathy_judge_client.wire import (
    CalibrationView as CalibrationView,
)
from empathy_judge_client.wire import (
    CanaryHistory as CanaryHistory,
)
from empathy_judge_client.wire import (
    CanaryView as CanaryView,
)
from empathy_judge_client.wire import (
    CompletedLine as CompletedLine,
)
from empathy_judge_client.wire import (
    CompletedScore as CompletedScore,
)
from empathy_judge_client.wire import (
    DimensionSummary as DimensionSummary,
)
from empathy_judge_client.wire import (
    Health as Health,
)
from empathy_judge_client.wire import (
    JobStatus as JobStatus,
)
from empathy_judge_client.wire import (
    JobStatusLine as JobStatusLine,
)
from empathy_judge_client.wire import (
    ProbeView as ProbeView,
)
from empathy_judge_client.wire import (
    Problem as Problem,
)
from empathy_judge_client.wire import (
    Readiness as Readiness,
)
from empathy_judge_client.wire import (
    Rejection as Rejection,
)
from empathy_judge_client.wire import (
    RejectionPage as RejectionPage,
)
from empathy_judge_client.wire import (
    ReliabilityHistory as ReliabilityHistory,
)
from empathy_judge_client.wire import (
    RubricDetail as RubricDetail,
)
from empathy_judge_client.wire import (
    RubricRef as RubricRef,
)
from empathy_judge_client.wire import (
    RubricSummary as RubricSummary,
)
from empathy_judge_client.wire import (
    RunSummary as RunSummary,
)
from empathy_judge_client.wire import (
    wire_json as wire_json,
)
