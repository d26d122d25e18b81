"""Re-exported from :mod:`empathy_judge_client.guarantees` (the client distribution, where the
wire models live so that clients need no server)."""

from empathy_judge_client.guarantees import (
    CascadeCalibration as CascadeCalibration,
)
from empathy_judge_client.guarantees import (
    ConformalBin as ConformalBin,
)
from empathy_judge_client.guarantees import (
    ConformalCalibration as ConformalCalibration,
)
from empathy_judge_client.guarantees import (
    DimensionGuarantee as DimensionGuarantee,
)
from empathy_judge_client.guarantees import (
    GuaranteePolicy as GuaranteePolicy,
)
from empathy_judge_client.guarantees import (
    GuaranteeStatus as GuaranteeStatus,
)
from empathy_judge_client.guarantees import (
    ItemGuarantee as ItemGuarantee,
)
from empathy_judge_client.guarantees import (
    NotGuaranteedReason as NotGuaranteedReason,
)
from empathy_judge_client.guarantees import (
    PredictionSet as PredictionSet,
)
from empathy_judge_client.guarantees import (
    ScoreInterval as ScoreInterval,
)
from empathy_judge_client.guarantees import (
    SelectiveCalibration as SelectiveCalibration,
)
from empathy_judge_client.guarantees import (
    ThresholdPoint as ThresholdPoint,
)
