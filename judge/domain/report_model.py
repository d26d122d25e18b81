"""Re-exported from :mod:`empathy_judge_client.report_model` (the client distribution, where the
wire models live so that clients need no server)."""

from empathy_judge_client.report_model import (
    Interval as Interval,
)
from empathy_judge_client.report_model import (
    ReportPart as ReportPart,
)
from empathy_judge_client.report_model import (
    ScaleValue as ScaleValue,
)
