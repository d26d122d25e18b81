"""Re-exported from :mod:`empathy_judge_client.calibration_report` (the client distribution,
where the wire models live so that clients need no server)."""

from empathy_judge_client.calibration_report import (
    AggregationComparison as AggregationComparison,
)
from empathy_judge_client.calibration_report import (
    AgreementEstimate as AgreementEstimate,
)
from empathy_judge_client.calibration_report import (
    AutoChoice as AutoChoice,
)
from empathy_judge_client.calibration_report import (
    BalancedRates as BalancedRates,
)
from empathy_judge_client.calibration_report import (
    BalancedResamples as BalancedResamples,
)
from empathy_judge_client.calibration_report import (
    CalibrationReport as CalibrationReport,
)
from empathy_judge_client.calibration_report import (
    CallCost as CallCost,
)
from empathy_judge_client.calibration_report import (
    CanaryRef as CanaryRef,
)
from empathy_judge_client.calibration_report import (
    DifferenceEstimate as DifferenceEstimate,
)
from empathy_judge_client.calibration_report import (
    DimensionReport as DimensionReport,
)
from empathy_judge_client.calibration_report import (
    ExpertBaseline as ExpertBaseline,
)
from empathy_judge_client.calibration_report import (
    ExpertBaselineUsed as ExpertBaselineUsed,
)
from empathy_judge_client.calibration_report import (
    ExpertPair as ExpertPair,
)
from empathy_judge_client.calibration_report import (
    ExpertVsOthers as ExpertVsOthers,
)
from empathy_judge_client.calibration_report import (
    GivenEvaluation as GivenEvaluation,
)
from empathy_judge_client.calibration_report import (
    InterJudge as InterJudge,
)
from empathy_judge_client.calibration_report import (
    JudgeStability as JudgeStability,
)
from empathy_judge_client.calibration_report import (
    LikeForLike as LikeForLike,
)
from empathy_judge_client.calibration_report import (
    MajorityBaseline as MajorityBaseline,
)
from empathy_judge_client.calibration_report import (
    PanelRef as PanelRef,
)
from empathy_judge_client.calibration_report import (
    Prevalence as Prevalence,
)
from empathy_judge_client.calibration_report import (
    RaterDrift as RaterDrift,
)
from empathy_judge_client.calibration_report import (
    RubricRef as RubricRef,
)
from empathy_judge_client.calibration_report import (
    YesRates as YesRates,
)
