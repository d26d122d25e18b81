"""JSON Lines input: every bad line fails alone, with its number."""

from __future__ import annotations

import json

from judge.domain.jsonl import parse_jsonl
from judge.domain.wire import Rejection


def test_every_jsonl_line_fails_alone_with_its_number() -> None:
    good = json.dumps({"seeker_post": "a", "response": "b"}).encode()
    lines = [
        b"\xef\xbb\xbf" + good,  # a byte order mark before the first line is fine
        b"[" * 100_000 + b"]" * 100_000,
        b'{"m": NaN}',
        b'{"m": ' + b"9" * 5_000 + b"}",
        b'{"m": "caf\xe9"}',
        b'{"m": ',
        b"   ",
        good + b"\r",
    ]
    parsed = parse_jsonl(b"\n".join(lines))
    assert [n for n, _ in parsed] == [1, 2, 3, 4, 5, 6, 8]
    assert parsed[0][1] == {"seeker_post": "a", "response": "b"}
    assert parsed[-1][1] == {"seeker_post": "a", "response": "b"}
    rejected = {n: v for n, v in parsed if isinstance(v, Rejection)}
    assert set(rejected) == {2, 3, 4, 5, 6}
    assert all(r.field == "line" for r in rejected.values())
    assert "nested too deeply" in rejected[2].message
    assert "NaN" in rejected[3].message
    assert "4300 digits" in rejected[4].message
    assert "not UTF-8" in rejected[5].message
