"""An Inspect AI task scored by empathy-judge: each sample's reply is judged with EPITOME.

    pip install 'empathy-judge-client[inspect-ai]'
    JUDGE_URL=http://127.0.0.1:8000 inspect eval examples/inspect_ai/empathy_task.py \
        --model mockllm/model

The replies here are given (``given_reply`` puts each sample's ``reply`` as the output);
with a real model, use ``generate()`` as the solver instead.
"""

import os

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from empathy_judge_client.scorers.inspect_ai_scorer import empathy_judge

SAMPLES = [
    (
        "I failed my exam again and I feel like giving up.",
        "That sounds really discouraging. What part of the exam felt hardest?",
    ),
    (
        "My best friend moved away and the house feels empty.",
        "Just keep busy, you will make new friends.",
    ),
    (
        "I can't sleep since I lost my job.",
        "Losing a job is a real shock; it makes sense that your nights feel restless.",
    ),
]


@solver
def given_reply() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content("given", state.metadata["reply"])
        return state

    return solve


@task
def empathy() -> Task:
    return Task(
        dataset=[Sample(input=post, metadata={"reply": reply}) for post, reply in SAMPLES],
        solver=given_reply(),
        scorer=empathy_judge(
            "epitome",
            url=os.environ.get("JUDGE_URL", "http://127.0.0.1:8000"),
            key=os.environ.get("JUDGE_API_KEY"),
        ),
    )
