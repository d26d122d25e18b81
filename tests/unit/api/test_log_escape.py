"""A caller's text cannot forge or split a log line."""

from __future__ import annotations

import logging

import pytest

from judge.api import log_escape


def test_control_characters_are_escaped() -> None:
    forged = "/v1/scores/x\nINFO fake line\r\x1b[2J\u2028\x85"
    assert log_escape.escape_controls(forged) == (
        "/v1/scores/x\\nINFO fake line\\r\\x1b[2J\\u2028\\x85"
    )
    assert log_escape.escape_controls("José 日本 ok") == "José 日本 ok"


def test_every_record_escapes_its_message(caplog: pytest.LogCaptureFixture) -> None:
    before = logging.getLogRecordFactory()
    try:
        log_escape.install()
        log_escape.install()  # idempotent: one wrapper
        logger = logging.getLogger("judge.test")
        with caplog.at_level(logging.WARNING, logger="judge.test"):
            logger.warning("GET %s -> 500", "/a\nWARNING forged")
        [record] = caplog.records
        assert record.getMessage() == "GET /a\\nWARNING forged -> 500"
        assert "\n" not in caplog.text.rstrip("\n")
    finally:
        logging.setLogRecordFactory(before)
