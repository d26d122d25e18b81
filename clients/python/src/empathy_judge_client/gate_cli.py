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

_EPILOG = (
    "exit status: 0 passed, 1 a threshold failed, 2 usage error or (with --require-trusted) "
    "untrusted or missing evidence"
)


def _parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Check a batch's results against score and trust thresholds.",
        epilog=_EPILOG,
    )
    parser.add_argument(
        "results", nargs="?", help="JSON Lines results file (`judge batch results`), or -"
    )
    parser.add_argument("--batch", help="read the results of this batch from the server")
    parser.add_argument("--url", default=os.environ.get("JUDGE_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--key", default=os.environ.get("JUDGE_API_KEY"))
    parser.add_argument(
        "--min", action="append", default=[], metavar="DIM=VALUE", help="least mean score"
    )
    parser.add_argument(
        "--max",
        action="append",
        default=[],
        metavar="DIM=VALUE",
        help="greatest mean score (proscriptive dimensions: higher is worse)",
    )
    parser.add_argument(
        "--min-trusted-share",
        action="append",
        default=[],
        metavar="[DIM=]SHARE",
        help="least share of items flagged trusted (all dimensions, or DIM)",
    )
    parser.add_argument(
        "--require-trusted",
        action="store_true",
        help="exit 2 when a gated dimension is flagged untrusted or an item did not complete",
    )
    parser.add_argument(
        "--fail-on", choices=["untrusted"], help="--fail-on untrusted: as --require-trusted"
    )
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


def _results(args: argparse.Namespace) -> list[Any]:
    if args.batch:
        from empathy_judge_client.sync import JudgeClient

        with JudgeClient(args.url, args.key) as client:
            return list(client.batch(args.batch).results())
    if args.results == "-":
        return list(_jsonl(sys.stdin, "<stdin>"))
    try:
        with open(args.results, encoding="utf-8") as stream:
            return list(_jsonl(stream, args.results))
    except OSError as exc:
        raise GateUsageError(f"{args.results}: {exc.strerror}") from None


def main(argv: Sequence[str] | None = None, prog: str = "judge-gate") -> int:
    """Run the gate; returns the exit status (and prints the summary on standard output)."""
    parser = _parser(prog)
    args = parser.parse_args(argv)
    if bool(args.results) == bool(args.batch):
        parser.error("give a RESULTS file (or -) or --batch ID, not both")
    try:
        minimums = dict(_bound(parse_threshold(text, option="--min")) for text in args.min)
        maximums = dict(_bound(parse_threshold(text, option="--max")) for text in args.max)
        shares = dict(
            parse_threshold(text, option="--min-trusted-share", bare=True)
            for text in args.min_trusted_share
        )
        report = evaluate(
            _results(args),
            minimums=minimums,
            maximums=maximums,
            min_trusted_share=shares,
            require_trusted=args.require_trusted or args.fail_on == "untrusted",
        )
    except (GateUsageError, JudgeClientError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return UNUSABLE
    print("\n".join(report.lines()))
    return report.exit_code


def _bound(pair: tuple[str | None, float]) -> tuple[str, float]:
    name, value = pair
    assert name is not None  # parse_threshold without ``bare`` always names it
    return name, value


def run() -> None:
    """The ``judge-gate`` console script."""
    sys.exit(main())
