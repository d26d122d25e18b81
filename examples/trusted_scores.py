import os, sys  # noqa: E401
from judge.client import JudgeClient

with JudgeClient(os.environ.get("JUDGE_URL", "http://127.0.0.1:8000")) as judge:
    batch = judge.submit_jsonl(sys.argv[1], rubric="epitome")
    batch.wait(progress=lambda b: print(f"{b.completed + b.failed}/{b.total}", file=sys.stderr))
    for line in batch.results():  # streamed, in submission order
        dims = line.dimensions.items() if line.status == "completed" else []
        trusted = {d: r.score for d, r in dims if r.reliability.level == "trusted"}
        print(line.item_id, trusted or "no trusted dimension")
