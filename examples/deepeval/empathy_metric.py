"""DeepEval test cases scored by empathy-judge (EPITOME): one metric per test case, its
score the mean of the dimensions not flagged untrusted, its reason the flags and rationales.

    pip install 'empathy-judge-client[deepeval]'
    JUDGE_URL=http://127.0.0.1:8000 python examples/deepeval/empathy_metric.py
"""

import os

from deepeval import evaluate
from deepeval.test_case import LLMTestCase

from empathy_judge_client.scorers.deepeval_metric import EmpathyJudgeMetric

CASES = [
    LLMTestCase(
        input="I failed my exam again and I feel like giving up.",
        actual_output="That sounds really discouraging. What part of the exam felt hardest?",
    ),
    LLMTestCase(
        input="My best friend moved away and the house feels empty.",
        actual_output="Just keep busy, you will make new friends.",
    ),
]

metric = EmpathyJudgeMetric(
    "epitome",
    url=os.environ.get("JUDGE_URL", "http://127.0.0.1:8000"),
    key=os.environ.get("JUDGE_API_KEY"),
    threshold=0.3,
)

if __name__ == "__main__":
    outcome = evaluate(CASES, [metric])
    for case in outcome.test_results:
        for data in case.metrics_data:
            print(f"{data.name}: score {data.score:.2f} success {data.success}")
            print(data.reason)
