"""``judge-gate`` (and ``judge gate``): fail a CI job when a batch's scores miss a threshold.

    judge-gate results.jsonl --min emotional_reactions=1 --min-trusted-share 0.8
    judge-gate --batch ID --url http://judge:8000 --max dismissing=0.5 --require-trusted

Exit 0: every threshold holds; 1: a threshold failed; 2: a usage error, or (with
``--require-trusted``, alias ``--fail-on untrusted``) evidence the gate cannot stand on.
Written with argparse so that the client distribution needs no CLI library.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from empathy_judge_client.errors import JudgeClientError
from empathy_judge_client.gate import UNUSABLE, GateUsageError, evaluate, parse_threshold

EPILOG = (
    "exit status: 0 passed, 1 a threshold failed, 2 usage error or (with --require-trusted) "
    "untrusted or missing evidence"
)


#: what ``--help`` says of each option (shared with ``judge gate``)
HELP = {
    "results": "JSON Lines results file (`judge batch results`), or -",
    "batch": "read the results of this batch from the server",
    "min": "least mean score of a dimension (DIM=VALUE)",
    "max": "greatest mean score (DIM=VALUE; proscriptive dimensions, higher is worse)",
    "min_trusted_share": "least share of items flagged trusted ([DIM=]SHARE; no DIM: all)",
    "require_trusted": "exit 2 when a gated dimension is flagged untrusted or an item did "
    "not complete",
}


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check a batch's results against score and trust thresholds.",
        epilog=EPILOG,
    )
    parser.add_argument("results", nargs="?", help=HELP["results"])
    parser.add_argument("--batch", help=HELP["batch"])
    parser.add_argument("--url", default=os.environ.get("JUDGE_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--key", default=os.environ.get("JUDGE_API_KEY"))
    for name, metavar in (
        ("min", "DIM=VALUE"),
        ("max", "DIM=VALUE"),
        ("min_trusted_share", "SHARE"),
    ):
        option = "--" + name.replace("_", "-")
        parser.add_argument(option, action="append", default=[], metavar=metavar, help=HELP[name])
    parser.add_argument("--require-trusted", action="store_true", help=HELP["require_trusted"])
    parser.add_argument("--fail-on", choices=["untrusted"], help="untrusted: --require-trusted")
    return parser


def _jsonl(stream: TextIO, name: str) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GateUsageError(f"{name}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise GateUsageError(f"{name}:{number}: not a result object")
        yield row


def _results(results: str | None, batch: str | None, url: str, key: str | None) -> list[Any]:
    if batch:
        from empathy_judge_client.sync import JudgeClient

        with JudgeClient(url, key) as client:
            return list(client.batch(batch).results())
    if results == "-" or results is None:
        return list(_jsonl(sys.stdin, "<stdin>"))
    try:
        with open(results, encoding="utf-8") as stream:
            return list(_jsonl(stream, results))
    except OSError as exc:
        raise GateUsageError(f"{results}: {exc.strerror}") from None


def _named(text: str, option: str) -> tuple[str, float]:
    name, value = parse_threshold(text, option=option)
    assert name is not None  # parse_threshold without ``bare`` always names it
    return name, value


def run_gate(
    results: str | None,
    *,
    batch: str | None = None,
    url: str = "http://127.0.0.1:8000",
    key: str | None = None,
    minimums: Sequence[str] = (),
    maximums: Sequence[str] = (),
    trusted_shares: Sequence[str] = (),
    require_trusted: bool = False,
    prog: str = "judge-gate",
) -> int:
    """Read the results (a JSON Lines file, ``-`` for standard input, or ``batch`` from the
    server), check the thresholds (as given on the command line: ``DIM=VALUE``), print the
    summary; the exit status."""
    try:
        report = evaluate(
            _results(results, batch, url, key),
            minimums=dict(_named(text, "--min") for text in minimums),
            maximums=dict(_named(text, "--max") for text in maximums),
            min_trusted_share=dict(
                parse_threshold(text, option="--min-trusted-share", bare=True)
                for text in trusted_shares
            ),
            require_trusted=require_trusted,
        )
    except (GateUsageError, JudgeClientError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return UNUSABLE
    print("\n".join(report.lines()))
    return report.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """``judge-gate``'s command line; returns the exit status."""
    parser = _parser("judge-gate")
    args = parser.parse_args(argv)
    if bool(args.results) == bool(args.batch):
        parser.error("give a RESULTS file (or -) or --batch ID, not both")
    return run_gate(
        args.results,
        batch=args.batch,
        url=args.url,
        key=args.key,
        minimums=args.min,
        maximums=args.max,
        trusted_shares=args.min_trusted_share,
        require_trusted=args.require_trusted or args.fail_on == "untrusted",
    )


def console() -> None:
    """The ``judge-gate`` console script."""
    sys.exit(main())
