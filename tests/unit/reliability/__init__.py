"""Unit tests of the pure statistics in ``judge.reliability`` (issue 23)."""
