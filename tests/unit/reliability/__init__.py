"""Unit tests of the pure statistics in judge.reliability."""
